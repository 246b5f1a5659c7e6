"""Frozen: Sebastian Raschka's LoRA/QLoRA experiments on Llama 2 7B (October-November 2023), as two articles print them.

The articles: "Finetuning LLMs with LoRA and QLoRA: Insights from Hundreds of Experiments" (Lightning AI, October
2023: the technical write-up, its "Memory used" lines) and "Practical Tips for Finetuning LLMs Using LoRA" (Ahead of
AI, 2023-11-19: the same experiments' takeaways, with the AdamW/SGD figures at r=256). Neither lives in a
repository, so each row also names the code it ran, pinned: the write-up links lit-gpt's finetune/lora.py at
bf60124 as the place its settings come from, and prints the hyperparameters it used
from it, with `micro_batch_size = 1` (the file's default was 4).

Read at bf60124 (finetune/lora.py, scripts/prepare_alpaca.py): Llama 2 7B, `--precision bf16-true` (weights, LoRA
adapters, gradients and optimizer states in bf16, no autocast), one A100 (its memory not named; the lit-gpt
tutorials of those weeks ran on A100 40GB), LoRA r=8 alpha 16 dropout 0.05 on the query and value of the fused qkv
projection, no activation checkpointing on one device, Alpaca (cleaned) prepared without truncation (max_seq_length
None -> the block size, 4,096), the first iteration forcing the longest sample into the batch (`get_batch(...,
longest_seq_ix if iter_num == 0 else None)`): with micro-batch 1 that step holds one 1,304-token sequence (the
length LitGPT's resource tables print for Llama 2's tokenizer on this data). The loss is the script's own:
`model(input_ids, lm_head_chunk_size=128)` returns the bf16 logits in 128-token chunks and `chunked_cross_entropy`
runs F.cross_entropy on each bf16 chunk (--loss-dtype bf16; the chunking itself is unexpressed). `--quantize
bnb.nf4` / `bnb.fp4` wraps Fabric's BitsandbytesPrecision around bf16-true (every torch.nn.Linear in 4 bits, the
rest bf16: --no-kbit-prepare). The write-up keeps QLoRA for all its later experiments (it says so after the QLoRA
section) and enables LoRA on every linear (query, key, value, projection, MLP and head: 20,277,248 trainable
parameters at r=8, exactly r x (in + out) over q/k/v/o, gate/up/down and lm_head), and vary the rank.

What the number is: finetune/lora.py's last line, `Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB`
(allocated, 10^9 bytes, over the whole run). Left out: the LIMA runs (no memory printed), the r=32..2048 runs (no
memory printed), and the Ahead of AI article's "16.62 GB instead of 14.18 GB" for all layers at r=8, which the
technical write-up prints as 16.42 GB for the same run: the row keeps the write-up's figure (the two differ by 1.2 %).
"""

from __future__ import annotations

_INSIGHTS = "https://lightning.ai/pages/community/lora-insights/"
_TIPS = "https://magazine.sebastianraschka.com/p/practical-tips-for-finetuning-llms"
_CODE = ("https://github.com/Lightning-AI/litgpt/blob/bf60124fa72a56436c7d4fecc093c7fc48e84433/"
         "finetune/lora.py")
_SETTINGS = (
    "Raschka's LoRA experiments (lit-gpt bf60124 finetune/lora.py, micro_batch_size 1): Llama 2 7B, bf16-true, "
    "{how}, no activation checkpointing, Alpaca with its longest sample (1,304 tokens) forced into the first batch, "
    "torch SDPA, the script's chunked cross-entropy on Fabric's fp32 logits; 'Memory used' is "
    "torch.cuda.max_memory_allocated() in 10^9 bytes on one A100 (40GB assumed: not named)"
)
# LitGPT's own GPT (fused qkv LoRA, bf16 adapters) and Fabric loop: said by --stack litgpt==0.1.0 (lit-gpt's setup.py
# at bf60124), estimate/litgpt_model.py
_LITGPT = "--stack litgpt==0.1.0 "
_QUANT = ("Lightning 2.1's BitsandbytesPrecision converts every torch.nn.Linear, the output layer included (the CLI "
          "quantizes the block linears only)")
# bitsandbytes is unpinned at bf60124: October 2023's release was 0.41.1 (0.41.2 came on 2023-11-07), whose
# MatMul4Bit keeps every 4-bit linear's input for backward (ctx.tensors = (A, B), dropped in 0.43.2): the argv says it
_OLD_BNB = "--stack bitsandbytes==0.41.1 "
_OLD_BNB_SAID = "; bitsandbytes unpinned at bf60124: 0.41.1, October 2023's release (--stack)"
_PAGED = ("finetune/lora.py at bf60124 builds bitsandbytes' PagedAdamW under --quantize (32-bit states in CUDA managed "
          "memory, outside torch's allocated count); the articles' AdamW-versus-SGD comparison is the author's own "
          "edit, not published, and the 3.4 GB gap the write-up reports at r=256 (17.86 against "
          "14.46 GB) says AdamW's states were counted: torch.optim.AdamW assumed")
_NO_DQ = "NF4 without double quantization (the CLI's QLoRA double-quantizes: about 0.4 bits/param less)"
_FP4 = ("FP4 instead of NF4, without double quantization (same 4 bits per weight and block constants; the CLI's "
        "QLoRA double-quantizes: about 0.4 bits/param less)")
_SGD = ("SGD with momentum 0.9 (the write-up's best SGD settings: lr 0.1, momentum 0.9) and a cosine schedule: one "
        "momentum buffer per trainable parameter, as the CLI's sgd counts")
_QV = "--lora-target q_proj --lora-target v_proj "
_ALL = "".join(f"--lora-target {m} " for m in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                "down_proj", "lm_head"))


def _row(key: str, url: str, quote: str, gb: float, *, quant: str | None, rank: int, targets: str,
         optimizer: str = "adamw", how: str, extra: tuple = ()) -> dict:
    method = f"--qlora --no-kbit-prepare {_OLD_BNB}" if quant else "--lora "
    unexpressed = []
    if quant:
        unexpressed += [_QUANT, _FP4 if quant == "fp4" else _NO_DQ]
        if optimizer == "adamw":
            unexpressed.append(_PAGED)
    if optimizer == "sgd":
        unexpressed.append(_SGD)
    return {"key": key, "source": "raschka-lora-insights-2023", "url": url, "code_url": _CODE, "quote": quote,
            "printed": f"{gb:.2f} GB", "measured_bytes": int(round(gb * 1e9)), "metric": "allocated",
            "argv": "estimate --model llama-2-7b --system 1xA100-40GB --strategy single --micro-batch 1 "
                    "--seq-len 1304 --no-gradient-checkpointing --precision bf16 --loss-dtype bf16 --attention sdpa "
                    f"{method}--lora-rank {rank} {targets}--lora-dropout 0.05 --optimizer {optimizer} "
                    f"{_LITGPT}--format json",
            "assumptions": _SETTINGS.format(how=how) + (_OLD_BNB_SAID if quant else ""),
            "unexpressed": [*unexpressed, *extra]}


_NF4 = "base in bitsandbytes NF4 through --quantize bnb.nf4"
ROWS = [
    _row("raschka-llama-2-7b-lora-r8-qv", _INSIGHTS, "Memory used: 21.33 GB", 21.33, quant=None, rank=8,
         targets=_QV, how="LoRA r=8 alpha 16 on query and value (the defaults), torch AdamW"),
    _row("raschka-llama-2-7b-qlora-nf4-r8-qv", _INSIGHTS, "Memory used: 14.18 GB", 14.18, quant="nf4", rank=8,
         targets=_QV, how=f"QLoRA: {_NF4}, LoRA r=8 alpha 16 on query and value, AdamW"),
    _row("raschka-llama-2-7b-qlora-fp4-r8-qv", _INSIGHTS, "Memory used: 14.19 GB", 14.19, quant="fp4", rank=8,
         targets=_QV, how="QLoRA: base in bitsandbytes FP4 through --quantize bnb.fp4, LoRA r=8 alpha 16 on query "
                          "and value, AdamW"),
    _row("raschka-llama-2-7b-qlora-nf4-r8-qv-sgd", _TIPS,
         "Training the same model with SGD instead required 14.15 GB of GPU memory.", 14.15, quant="nf4", rank=8,
         targets=_QV, optimizer="sgd", how=f"QLoRA: {_NF4}, LoRA r=8 alpha 16 on query and value, SGD"),
    _row("raschka-llama-2-7b-qlora-nf4-r8-all", _INSIGHTS, "Memory used: 16.42 GB", 16.42, quant="nf4", rank=8,
         targets=_ALL, how=f"QLoRA: {_NF4}, LoRA r=8 alpha 16 on every linear (q, k, v, projection, MLP, head: "
                           "20,277,248 trainable), AdamW",
         extra=("the Ahead of AI article prints 16.62 GB for this run ('16.62 GB instead of 14.18 GB'); the "
                "technical write-up's 16.42 GB is scored",)),
    _row("raschka-llama-2-7b-qlora-nf4-r16-all", _INSIGHTS, "Memory used: 16.47 GB", 16.47, quant="nf4", rank=16,
         targets=_ALL, how=f"QLoRA: {_NF4}, LoRA r=16 alpha 32 on every linear (40,554,496 trainable), AdamW"),
    _row("raschka-llama-2-7b-qlora-nf4-r256-all", _TIPS, "17.86 GB with AdamW", 17.86, quant="nf4", rank=256,
         targets=_ALL, how=f"QLoRA: {_NF4}, LoRA r=256 alpha 512 on every linear (648,871,936 trainable), AdamW"),
    _row("raschka-llama-2-7b-qlora-nf4-r256-all-sgd", _TIPS, "14.46 GB with SGD", 14.46, quant="nf4", rank=256,
         targets=_ALL, optimizer="sgd",
         how=f"QLoRA: {_NF4}, LoRA r=256 alpha 512 on every linear (648,871,936 trainable), SGD"),
]
