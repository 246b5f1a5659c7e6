"""Design (frozen until issue 28's sixteenth round; moved when LitGPT's own GPT became expressible, `--stack
litgpt==VERSION`: estimate/litgpt_model.py): GPU memory printed in Lightning-AI/litgpt's issue threads (source
`litgpt-issues-memory`).

Issues only (not the PRs #275 and #596, nor the tutorials, resource tables or config hub, which are other sources),
each read in the code of its day (the repository's history, the commit named per row):

- #1112 (2024-03-13, rasbt, "Higher memory use with QLoRA"): TinyLlama 1.1B (the 3T-token checkpoint) LoRA through
  the new `litgpt finetune lora` on the wip branch (092a759, the issue's day), the two runs' full settings printed in
  the thread: precision bf16-true, LoRA r=32 alpha 16 dropout 0.05 on query and value, micro-batch 8 (global 8: no
  accumulation), max_seq_length 512 on Alpaca2k, torch AdamW; the QLoRA run changes one line (`quantize: bnb.nf4`).
  The last lines of each run: "Memory used: 14.49 GB" (LoRA) and "18.15 GB" (QLoRA), lora.py's
  `torch.cuda.max_memory_allocated() / 1e9` over the whole run (training plus the sanity-check and interval
  validations, which generate 100 tokens). Under bf16-true Fabric builds every weight, adapter and AdamW state in
  bf16 (no autocast); `model(input_ids, lm_head_chunk_size=128)` returns bf16 logits in 128-token chunks and
  `chunked_cross_entropy` runs on them (--loss-dtype bf16). `bnb.nf4` is Fabric's BitsandbytesPrecision("nf4",
  bf16): every torch.nn.Linear becomes an NF4 linear without double quantization, the output head included, the
  embedding and norms stay bf16 (--no-kbit-prepare), and the optimizer becomes bitsandbytes' PagedAdamW;
  pyproject.toml at 092a759 pins bitsandbytes==0.41.0 (MatMul4Bit keeps each 4-bit linear's input). The GPU is not
  named: the same author's config-hub table of the next day (#1113) ran these configs on an A10G (assumed here).
  That table prints 10.54 GB for the committed tiny-llama/lora.yaml (AlpacaGPT4 then, 1 epoch); the thread's run is
  a local variant (Alpaca2k, 4 epochs) and printed 14.49 GB.
- #501 (2023-09-06, Andrei-Aksionov, "LoRA with quantization: `micro_batch_size` effect on memory footprint"):
  Pythia-70m through finetune/lora.py at e6ff37c (the issue's day) on a T4 with "precision `16-mixed` and default
  parameters apart from `micro_batch_size`": LoRA r=8 alpha 16 dropout 0.05 on query and value, Alpaca prepared
  without truncation (prepare_alpaca's max_seq_length is the block size) and every batch padded to its longest, the
  longest sample forced into the first batch (`get_batch(..., longest_seq_ix if iter_num == 0 else None)`): 1,034
  tokens under GPT-NeoX's tokenizer (StableLM Alpha's, counted in LitGPT's resource tables at f684138). 16-mixed is
  fp16 autocast over fp32 weights and adapters (a T4 has no bf16), torch AdamW; "quantized" builds the model inside
  `quantization(mode)` (bitsandbytes Linear4bit for every linear, the head included) with PagedAdamW, the mode not
  named (bnb.nf4 assumed; the modes differ by < 0.01 GB at 70M parameters). Only the table's first row (micro-batch
  1) is in the stored thread: "Cuda allocated" 1.37 and 0.80, read as lora.py's `Memory used` (10^9 bytes); its
  nvidia-smi columns (1.63, 0.96) are not used (their unit is not said).
- #1280 (2024-04-12, "VRAM of LoRA fine-tuning"): LLaMA-2-13B LoRA with litgpt's script "even a single device
  A100-80G will report OOM under micro_bs=2". The defaults at d6e91ee (the issue's day): precision None ->
  get_default_supported_precision(training=True) = bf16-mixed on an A100 (fp32 weights under autocast: the "about
  50G" after loading the thread reports is 13.0e9 x 4 bytes), LoRA r=8 on query and value, torch AdamW, Alpaca with
  max_seq_length None (batches padded to their longest; the longest sample, 1,304 Llama 2 tokens, lands in some
  batch of the first epoch), no activation checkpointing on one device: a verdict row (ran: False).

The misses read in the code of the day (issue 28, helper F; nothing fitted, the argv unchanged). Each figure below is
a fake-tensor trace of LitGPT's own model at the thread's commit (litgpt.lora.GPT at 092a759, lit_gpt.lora.GPT at
e6ff37c) under torch's MemTracker with accelwiz's CUDA corrections (trace_dropout, trace_autocast), two training
steps of the loop as lora.py writes it (1 and 2 of TinyLlama's 22 layers, scaled linearly; Pythia's 6); bnb 0.41's
MatMul4Bit emulated as it is written (dequantize to fp16, `.to(A.dtype)`, `ctx.tensors = (A, B)`).

- Fabric casts the model's output to the default dtype: `_FabricModule.forward` ends in `precision.convert_output`
  (lightning/fabric/wrappers.py, every Lightning 2.x; HalfPrecision, MixedPrecision and BitsandbytesPrecision all cast
  to torch.get_default_dtype(), fp32 outside the forward context). LitGPT's chunked logits reach chunked_cross_entropy
  as fp32, their bf16 originals freed: fp32 logits (8 x 512 x 32,000: 500 MiB, held by the loop's `logits` until the
  next forward returns) and an fp32 log-softmax per chunk. The argv's --loss-dtype bf16 misreads that (the CLI's
  --loss-dtype fp32 is transformers' upcast, which keeps the 16-bit logits too): TinyLlama LoRA, LitGPT's code 9.19 GiB
  with bf16 logits -> 9.80 GiB with Fabric's fp32 ones (+0.61 GiB).
- #1112 LoRA: LitGPT's code peaks at 9.80 GiB (the estimate 9.62 GiB: -1.8%); the thread printed 13.49 GiB. The same
  author's config-hub table of the next day (PR #1113 at cf78b77: tiny-llama/lora.yaml with these settings field for
  field, Alpaca2k, 4 epochs, eval every 100 steps, on an A10G) printed 10.54 GB = 9.82 GiB, and no line between 092a759
  and cf78b77 changes memory (finetune/lora.py, lora.py, model.py, utils.py, data/ diffed). The 3.68 GiB the thread adds
  is not in LitGPT's code; its run's environment (torch, driver, GPU) is not printed.
- #1112 QLoRA: LitGPT's code peaks at 11.88 GiB (the estimate 9.23 GiB): 9.93 GiB within one step (Fabric's fp32 logits
  included) and 1.95 GiB of the previous step's 4-bit inputs. bitsandbytes 0.41.0 keeps MatMul4Bit's input as a ctx
  attribute, not a saved tensor, so backward does not free it: it lives as long as the graph, and LitGPT's fit holds the
  graph (`logits`) until the next forward returns. At the end of that forward the previous step's inputs (qkv, proj, fc
  and mlp-proj inputs: 92 MiB a layer, 76 in the first, 16 MiB of head input: 2.0 GiB) sit beside the new step's. The
  head is NF4 too (Fabric swaps every nn.Linear): -90 MiB of weight, +16 MiB kept input, a 125 + 125 MiB dequantized
  transient per chunk. The config-hub table's qlora.yaml (same settings) printed 13.32 GB = 12.41 GiB (LitGPT's code
  -4.2%); the thread printed 16.90 GiB, 5.0 GiB beyond LitGPT's code, like the LoRA run's 3.68.
- #501 LoRA (-13.7%): LitGPT's code at e6ff37c peaks at 1,278 MiB (1.34 GB; printed 1.37). Under 16-mixed every
  128-token head chunk casts the frozen fp32 head (50,304 x 512) to fp16 anew (autocast caches only weights that require
  grad) and keeps it for backward: 9 chunks x 49 MiB = 442 MiB where a one-call head keeps 49; the logits are fp32
  (Fabric, as above).
- #501 QLoRA (+35.9%): LitGPT's code peaks at 952 MiB (0.93 GiB) against the printed 0.75 GiB and the estimate's 1.01
  GiB. Its terms beside the estimate's: the head NF4 (the estimate's fp32 head and its fp16 copy: -147 MiB), the
  dequantized head per chunk (fp16 49 MiB, then fp32 98 MiB under bnb's `.to(A.dtype)` with an fp32 input, and
  autocast's fp16 49 MiB: a 196 MiB transient), the chunked loss (its backward temporaries 51 MiB against the estimate's
  397 MiB for one-call logits), the previous step's 4-bit inputs (as #1112, about 80 MiB at 6 layers). The 0.19 GiB
  between LitGPT's code and the printed 'Cuda allocated' is not identified (its counter is not named).
"""

from __future__ import annotations

_SOURCE = "litgpt-issues-memory"
_REPO = "https://github.com/Lightning-AI/litgpt"
_C1112 = "092a759d89e4f73e7da5f2a99f01e00e8d2410da"  # wip branch, 2024-03-13 (Update Llama 2 7b configs, #1101)
_C501 = "e6ff37c03c39e6dcff6c41362eb16e5408b16186"  # main, 2023-09-06
_C1280 = "d6e91ee802f7c6f651b55ff984ee73d4ceac99ef"  # main, 2024-04-12
_TINYLLAMA = "benchmarks/published/models/tinyllama-1.1b/config.json"
_PYTHIA = "benchmarks/published/models/pythia-70m/config.json"

_Q_1112 = ("```\nEpoch 5 | iter 965 step 965 | loss train: 1.182, val: 1.057 | iter time: 743.31 ms (step)\n"
           "Training time: 583.36s\nMemory used: 14.49 GB\nSaving LoRA weights to "
           "'out/finetune/lora-tiny-llama-1.1b/final/lit_model.pth.lora'\n```\n\n```\nEpoch 5 | iter 965 step 965 | "
           "loss train: 1.201, val: 1.078 | iter time: 812.38 ms (step)\nTraining time: 622.99s\nMemory used: "
           "18.15 GB\nSaving LoRA weights to 'out/finetune/qlora-tiny-llama-1.1b/final/lit_model.pth.lora'\n```")
_Q_501 = ("All ran with `Pythia-70m`, precision `16-mixed` and default parameters apart from `micro_batch_size`.\n\n"
          "| Micro BatchSize | Cuda allocated | Cuda_allocated $_{quantized}$ | nvidia-smi | nvidia-smi "
          "$_{quantized}$ | Card |\n|-----------------|----------------|-------------------------------|------------|"
          "---------------------------|------|\n| 1               | 1.37           | 0.80                          | "
          "1.63       | 0.96                      | T4   |")
_Q_1280 = ("Hello, I followed litgpt's script to fine-tune LoRA on LLaMA-2-13B. After the model was loaded into the "
           "video memory, litgpt's video memory occupied was as high as about 50G, while PEFT's was only about 20G. "
           "This is a 2.5X gap in video memory. Normal training has not been carried out yet. Under normal training, "
           "even a single device A100-80G will report OOM under micro_bs=2.")

# LitGPT's own GPT and Fabric loop, counted since the source moved to design (estimate/litgpt_model.py): the argvs
# say the version of the code of the day (pyproject.toml/setup.py: 0.1.0 at 092a759 and e6ff37c, 0.3.0.dev0 at
# d6e91ee, whose last release is 0.2.0); the fused qkv LoRA, bf16 adapters, Fabric's fp32 logits and the previous
# step's 4-bit inputs left the unexpressed lists with it
_STACK_0_1 = "--stack litgpt==0.1.0 "
_NEOX_BLOCK = ("LitGPT's own GPT-NeoX block (parallel residual, GptNeoxMLP): the CLI counts transformers' layer; "
               "litgpt_model.py writes the Llama family's block terms only")
_NO_DQ = "NF4 without double quantization (fp32 absmax per 64 weights, 0.37 bit/param more than the CLI's NF4-DQ)"
_HEAD_4BIT = "the output head quantized too (every torch.nn.Linear is swapped; the CLI quantizes block linears)"
_VALIDATION = ("the validations inside the run (a sanity check before training and every 100 steps, each "
               "generating 100 tokens with a KV cache) count in a whole-run max_memory_allocated")
_LENGTHS_2K = ("Alpaca2k's real lengths: batches are padded to their longest sample, cut at 512 tokens; the argv "
               "says every batch reaches 512")
# Read in the code of the day (module docstring, issue 28 helper F): the terms not counted, with their bytes
_NOT_IN_CODE = ("{gib} GiB printed beyond LitGPT's own code at 092a759 ({code} GiB traced); the same settings "
                "printed {table} in the author's config-hub table of the next day (PR #1113, cf78b77, A10G)")
_HEAD_4BIT_501 = ("the head NF4 as well (the estimate keeps it fp32 with an fp16 copy: -147 MiB), dequantized per "
                  "chunk to fp16 then fp32 under an fp32 input (a 196 MiB transient); LitGPT's code traced 952 MiB "
                  "against the printed 763 MiB")


def _tinyllama(kind: str, printed: str, flags: str, how: str, extra: list[str]) -> dict:
    return {
        "key": f"litgpt1112-tinyllama-1.1b-{kind}-bf16true-mb8", "source": _SOURCE,
        "url": f"{_REPO}/issues/1112", "code_url": f"{_REPO}/blob/{_C1112}/litgpt/finetune/lora.py",
        "quote": _Q_1112, "printed": printed, "measured_bytes": int(round(float(printed.split()[0]) * 1e9)),
        "metric": "allocated",
        "argv": f"estimate --model {_TINYLLAMA} --system 1xA10G --strategy single --micro-batch 8 "
                "--gradient-accumulation 1 --seq-len 512 --fixed-lengths --no-gradient-checkpointing "
                f"--attention sdpa {flags}{_STACK_0_1}--lora-rank 32 --lora-target q_proj --lora-target v_proj "
                "--lora-dropout 0.05 --precision bf16 --loss-dtype bf16 --format json",
        "assumptions": (
            "litgpt#1112 (2024-03-13): `litgpt finetune lora` at 092a759 on one GPU (not named; an A10G assumed, "
            "as the author's config-hub table of the next day ran these configs), TinyLlama-1.1B-intermediate-"
            "step-1431k-3T (1,100,048,384 parameters, the stand-in's count), the printed settings: precision "
            f"bf16-true, {how}, LoRA r=32 alpha 16 dropout 0.05 on query and value, micro-batch 8 (global batch 8), "
            "max_seq_length 512 on Alpaca2k, no activation checkpointing; Fabric's fp32 logits (convert_output) "
            "and chunked cross-entropy, no autocast; the figure: lora.py's last `Memory used`, "
            "max_memory_allocated() / 1e9 over the run"),
        "unexpressed": [_VALIDATION, _LENGTHS_2K, *extra]}


def _pythia(kind: str, printed: str, flags: str, how: str, extra: list[str]) -> dict:
    return {
        "key": f"litgpt501-pythia-70m-{kind}-16mixed-mb1-t4", "source": _SOURCE,
        "url": f"{_REPO}/issues/501", "code_url": f"{_REPO}/blob/{_C501}/finetune/lora.py",
        "quote": _Q_501, "printed": printed, "measured_bytes": int(round(float(printed) * 1e9)),
        "metric": "allocated",
        "argv": f"estimate --model {_PYTHIA} --system 1xT4 --strategy single --micro-batch 1 --seq-len 1034 "
                "--fixed-lengths --no-gradient-checkpointing --attention sdpa --precision mixed "
                f"{flags}{_STACK_0_1}--lora-rank 8 --lora-target query_key_value --lora-dropout 0.05 --format json",
        "assumptions": (
            "litgpt#501 (2023-09-06): lit-gpt finetune/lora.py at e6ff37c on one T4, EleutherAI/pythia-70m "
            "(70,426,624 parameters, the stand-in's count), precision 16-mixed (fp16 autocast over fp32 weights and "
            f"adapters), {how}, LoRA r=8 alpha 16 dropout 0.05 on query and value, micro-batch 1 with the longest "
            "Alpaca sample (1,034 GPT-NeoX tokens) forced into the first batch, no activation checkpointing, the "
            "loss upcast to fp32 under autocast; the figure: the table's 'Cuda allocated' first row, read as "
            "lora.py's `Memory used` (max_memory_allocated() / 1e9)"),
        "unexpressed": [_NEOX_BLOCK, _VALIDATION, "fp16 autocast with a GradScaler (the CLI's mixed precision "
                        "is 16-bit compute of either kind: the same bytes)", *extra]}


ROWS = [
    _tinyllama("lora-r32", "14.49 GB", "--lora --optimizer adamw ", "torch AdamW (bf16 states)",
               [_NOT_IN_CODE.format(gib="3.68", code="9.80", table="10.54 GB (9.82 GiB)")]),
    _tinyllama("qlora-nf4-r32", "18.15 GB",
               "--qlora --no-kbit-prepare --optimizer paged-adamw --stack bitsandbytes==0.41.0 ",
               "quantize bnb.nf4 (Fabric's BitsandbytesPrecision: NF4 without double quantization, the head "
               "included, embedding and norms bf16), bitsandbytes PagedAdamW, bitsandbytes 0.41.0 (pyproject.toml)",
               [_NO_DQ, _HEAD_4BIT,
                _NOT_IN_CODE.format(gib="5.0", code="11.88", table="13.32 GB (12.41 GiB)")]),
    _pythia("lora-r8", "1.37", "--lora --base-dtype fp32 --optimizer adamw ", "torch AdamW",
            ["LitGPT's code traced 1,278 MiB"]),
    _pythia("qlora-nf4-r8", "0.80", "--qlora --optimizer paged-adamw --stack bitsandbytes==0.41.1 ",
            "quantized (the mode not named: bnb.nf4 assumed) with bitsandbytes PagedAdamW, bitsandbytes 0.41.1 "
            "(requirements.txt's comment), the embedding and norms fp32 under autocast",
            [_NO_DQ, _HEAD_4BIT, "which bitsandbytes mode ran (not named: nf4 assumed)", _HEAD_4BIT_501]),
    {"key": "litgpt1280-llama-2-13b-lora-r8-bf16mixed-mb2-1xa100-80gb-oom", "source": _SOURCE,
     "url": f"{_REPO}/issues/1280", "code_url": f"{_REPO}/blob/{_C1280}/litgpt/finetune/lora.py",
     "quote": _Q_1280, "printed": "report OOM under micro_bs=2", "measured_bytes": None, "metric": "allocated",
     "ran": False,
     "argv": "estimate --model llama-2-13b --system 1xA100-80GB --strategy single --micro-batch 2 --seq-len 1304 "
             "--fixed-lengths --no-gradient-checkpointing --attention sdpa --precision mixed --base-dtype fp32 "
             "--lora --lora-rank 8 --lora-target q_proj --lora-target v_proj --lora-dropout 0.05 --optimizer adamw "
             "--stack litgpt==0.2.0 --format json",
     "assumptions": (
         "litgpt#1280 (2024-04-12): `litgpt finetune lora` at d6e91ee with its defaults but micro-batch 2 on one "
         "A100 80GB: Llama-2-13B in bf16-mixed (the default on a bf16 GPU: fp32 weights, the thread's ~50G after "
         "loading), LoRA r=8 alpha 16 dropout 0.05 on query and value, torch AdamW, Alpaca with no max_seq_length "
         "(a batch holding the longest sample, 1,304 Llama 2 tokens, padded to it), no activation checkpointing "
         "(FSDP's checkpointing policy only applies on more than one device), the loss upcast to fp32 under "
         "autocast: out of memory (the thread)"),
     "unexpressed": ["the thread names the script, not its flags: litgpt's defaults assumed (the "
                     "Alpaca data module, bf16-mixed)"]},
]
