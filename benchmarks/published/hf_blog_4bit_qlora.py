"""Frozen, verdict rows only: the Hugging Face blog "Making LLMs even more accessible with bitsandbytes, 4-bit
quantization and QLoRA" (May 2023), its T4 table ("OOM" / "No OOM").

The page: LLaMA 7B and 13B (decapoda-research/llama-7b-hf and llama-13b-hf: LLaMA-1, the shapes of Llama 2 7B and
13B: same hidden size, layers, MLP and 32,000-token vocabulary, 2,048 positions instead of 4,096) fine-tuned with
TRL's SFTTrainer on NVIDIA T4 16 GB cards, batch 1, accumulation 4, AdamW, seq_len 512 or 1024. Each cell says
whether the run went out of memory: "No OOM" is a run measured to fit (the estimate must not say "does not fit"),
"OOM" one measured not to fit (the estimate must not say "fits"). No peak is printed, so nothing is scored.

Not printed (the benchmarking script is a gist the page links, not in the repository), assumed from TRL's own
SFT example of the same weeks (examples/scripts/sft_trainer.py, June 2023): LoRA r=64 alpha 16 dropout 0.05 on
PEFT's default Llama targets (q_proj, v_proj); SFTTrainer without packing (each sample truncated at seq_len, each
batch padded to its own longest: --varying-lengths); fp16 mixed precision (the Trainer refuses bf16 on a T4, so
"bf16 CD" is bitsandbytes' compute dtype only). The LLM.int8 rows (8-bit base) have no --method and are kept as
not expressible; so is the 13B NF4 row at 1024 tokens without nested quantization (the CLI's QLoRA
double-quantizes, and its row with nested quantization is the next one).
"""

from __future__ import annotations

_URL = ("https://github.com/huggingface/blog/blob/1b4d85d958048f85f13b749fd305136a94df97e2/"
        "4bit-transformers-bitsandbytes.md")
_SETTINGS = (
    "HF blog 'Making LLMs even more accessible with bitsandbytes, 4-bit quantization and QLoRA', T4 table: {model} "
    "on {gpus} T4 16 GB, {method}, batch 1, accumulation 4, AdamW, seq_len {seq}; assumed (the gist is not in the "
    "repository): TRL's SFTTrainer without packing, LoRA r=64 alpha 16 dropout 0.05 on q_proj and v_proj, fp16 "
    "mixed precision"
)
_LLAMA1 = ("LLaMA-1 ({size}, decapoda-research) has Llama 2 {size}'s shapes and parameter count; the argv names "
           "the Llama 2 preset (its 4,096 positions are not used at these lengths)")
_UNEXPRESSED = [
    "the LoRA settings, the Trainer's precision and the dataset's lengths (the benchmarking gist is not in the "
    "repository; TRL's June 2023 SFT example assumed)",
    "transformers from its main branch of May 2023 (4.30.0.dev0: eager attention only, the argv says --attention "
    "eager and --stack transformers==4.30; bitsandbytes 0.39.0 is in the argv too)",
]
_COLUMNS = ("| {model:<35} | {half:<33} | {hw:<26} | {method:<91} | 1          | 4                           "
            "| AdamW             | {seq:<7} | {result:<6} |")


def _quote(size: str, hw: str, method: str, seq: int, ran: bool) -> str:
    """The page's table line, as printed (its column widths)."""
    return _COLUMNS.format(model=f"decapoda-research/llama-{size.lower()}-hf", half="14GB" if size == "7B" else "27GB",
                           hw=hw, method=method, seq=seq, result="**No OOM**" if ran else "OOM")


def _row(size: str, method: str, seq: int, ran: bool, *, gc: bool, nf4: bool = True, nq: bool = False) -> dict:
    quote = _quote(size, "1xNVIDIA-T4 / 16GB", method, seq, ran)
    row = {"key": f"hf-4bit-llama-{size.lower()}-{'nf4' if nf4 else 'fp4'}-{'gc' if gc else 'nogc'}"
                  f"{'-nq' if nq else ''}-{seq}-{'ran' if ran else 'oom'}"
                  + ("-fp16cd" if "fp16 CD" in method else ""),
           "source": "hf-blog-4bit-qlora", "url": _URL, "quote": quote,
           "printed": "**No OOM**" if ran else "OOM", "measured_bytes": None, "metric": "reserved", "ran": ran,
           "argv": f"estimate --model llama-2-{size.lower()} --system 1xT4 --strategy single --precision mixed "
                   "--qlora --lora-rank 64 --lora-target q_proj --lora-target v_proj --lora-dropout 0.05 "
                   f"--micro-batch 1 --gradient-accumulation 4 --seq-len {seq} --varying-lengths "
                   f"{'--gradient-checkpointing' if gc else '--no-gradient-checkpointing'} --attention eager "
                   # the page's stack: bitsandbytes 0.39 keeps every 4-bit linear's input (its own cast of an fp32
                   # one), transformers before 4.49 copies the logits for the shifted loss
                   "--stack bitsandbytes==0.39.0 --stack transformers==4.30 --format json",
           "assumptions": _SETTINGS.format(model=f"LLaMA {size}", gpus=1, method=method, seq=seq),
           "unexpressed": [*_UNEXPRESSED, _LLAMA1.format(size=size)]}
    if not nf4:
        row["unexpressed"].append("FP4 instead of NF4 (the same 4 bits per weight and block constants)")
    if not nq:
        row["unexpressed"].append("no nested quantization (the CLI's QLoRA double-quantizes: about 0.4 bits per "
                                  "parameter less, 0.3 GB on 7B)")
    if "fp16 CD" not in method:
        row["unexpressed"].append("bf16 compute dtype on a T4 (bitsandbytes dequantizes to bf16; same bytes as fp16)")
    return row


def _not_expressible(key: str, size: str, hw: str, method: str, seq: int, ran: bool, why: str) -> dict:
    return {"key": key, "source": "hf-blog-4bit-qlora", "url": _URL, "quote": _quote(size, hw, method, seq, ran),
            "printed": "**No OOM**" if ran else "OOM", "measured_bytes": None, "metric": "reserved", "ran": ran,
            "argv": None, "not_expressible": why,
            "assumptions": _SETTINGS.format(model=f"LLaMA {size}", gpus=hw[0], method=method, seq=seq)}


_INT8 = "LLM.int8 (8-bit) + GC"
_INT8_WHY = "an LLM.int8 (8-bit) base under LoRA: the CLI has full, LoRA on a 16-bit base and QLoRA on NF4 only"
ROWS = [
    _not_expressible("hf-4bit-llama-7b-int8-gc-512-ran", "7B", "1xNVIDIA-T4 / 16GB", _INT8, 512, True, _INT8_WHY),
    _not_expressible("hf-4bit-llama-7b-int8-gc-1024-oom", "7B", "1xNVIDIA-T4 / 16GB", _INT8, 1024, False, _INT8_WHY),
    _row("7B", "4bit + NF4 + bf16 CD + no GC", 512, True, gc=False),
    _row("7B", "4bit + FP4 + bf16 CD + no GC", 512, True, gc=False, nf4=False),
    _row("7B", "4bit + NF4 + bf16 CD + no GC", 1024, False, gc=False),
    _row("7B", "4bit + FP4 + bf16 CD + no GC", 1024, False, gc=False, nf4=False),
    _row("7B", "4bit + NF4 + bf16 CD + GC", 1024, True, gc=True),
    _not_expressible("hf-4bit-llama-13b-int8-gc-512-2gpu-ran", "13B", "2xNVIDIA-T4 / 32GB", _INT8, 512, True,
                     _INT8_WHY + "; and the model split over two T4s by device_map (naive model parallelism)"),
    _not_expressible("hf-4bit-llama-13b-int8-gc-512-oom", "13B", "1xNVIDIA-T4 / 16GB", _INT8, 512, False, _INT8_WHY),
    _row("13B", "4bit + FP4 + bf16 CD + no GC", 512, False, gc=False, nf4=False),
    _row("13B", "4bit + FP4 + fp16 CD + no GC", 512, False, gc=False, nf4=False),
    _row("13B", "4bit + NF4 + fp16 CD + GC", 512, True, gc=True),
    _not_expressible("hf-4bit-llama-13b-nf4-gc-1024-oom", "13B", "1xNVIDIA-T4 / 16GB", "4bit + NF4 + fp16 CD + GC",
                     1024, False, "NF4 without nested quantization at 1,024 tokens: the CLI's QLoRA always "
                     "double-quantizes, and the same run with nested quantization is the next row (it ran)"),
    _row("13B", "4bit + NF4 + fp16 CD + GC + NQ", 1024, True, gc=True, nq=True),
]
