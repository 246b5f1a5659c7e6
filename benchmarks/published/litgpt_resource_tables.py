"""Frozen: LitGPT's tutorials/resource-tables.md as first written (PR #663, 2023-10-27), Llama 2 LoRA rows.

The page: lit-gpt commit 8641822, NVIDIA A100-SXM4-40GB, PyTorch 2.1.0+cu121, Lightning 2.1.0.rc0, every run
`--precision bf16-true`, Alpaca at its full length ("Llama 2: 1304 tokens" in the longest example), a minibatch of
128 with `finetune/lora.py`. Read from finetune/lora.py at 8641822: LoRA r=8 alpha 16 dropout 0.05 on the query and
value of the fused qkv projection only, adapters in bf16 (bf16-true: weights, adapters and AdamW states in bf16),
torch AdamW (bitsandbytes' PagedAdamW under `--quantize`: its states in CUDA managed memory, outside the torch
allocator's count), no activation checkpointing on one device; on several devices Fabric's FSDPStrategy (FSDP1,
full shard, each Block wrapped and activation-checkpointed). The first iteration forces the longest sample into the
batch (`get_batch(..., longest_seq_ix)`) and pads the batch to it: the peak step holds 1304-token sequences.

What the number is: "Max GPU RAM", the script's `Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB`
(allocated, 10^9 bytes, per GPU). Left out: phi-1.5, StableLM Alpha and Falcon (no preset or config here; Falcon
40B's cells are all OOM), the Adapter tables (no such --method), the "N/A" cells (quantization refused on
several GPUs) and inference.
"""

from __future__ import annotations

_URL = ("https://github.com/Lightning-AI/litgpt/blob/0cc02afa1dca7434418cf612690da13d38d294fd/"
        "tutorials/resource-tables.md")
_SETTINGS = (
    "LitGPT resource tables (lit-gpt 8641822, finetune/lora.py): {model}, micro-batch {mb}, bf16-true, LoRA r=8 "
    "alpha 16 dropout 0.05 on query and value, Alpaca with the longest sample (1304 tokens) forced into the first "
    "batch, torch SDPA, {how}; 'Max GPU RAM' is torch.cuda.max_memory_allocated() in 10^9 bytes per GPU on "
    "A100-SXM4-40GB"
)
_CODE = "LitGPT's own GPT module and LoRA (the argv estimates transformers' Llama with PEFT)"
# The one-GPU rows say LitGPT's own GPT and Fabric loop (--stack litgpt==0.1.0, lit-gpt's setup.py at 8641822:
# estimate/litgpt_model.py): their unexpressed model and adapters are counted. The FSDP rows keep their argv: their
# figures carry about one whole bf16 model no mechanism explains (_FSDP); with LitGPT's bf16 adapters FSDP1's flat
# gradient halves and they fall to -33..-58% (13B on 2 GPUs, measured out of memory, 'fits'): the unexplained
# term, not LitGPT's module, decides them
_STACK = "--stack litgpt==0.1.0 "
_ADAPTERS = ("LitGPT's LoRA keeps its adapters in bf16 under bf16-true; the argv's bf16 LoRA counts PEFT's default "
             "fp32 adapters, each adapted linear keeping an fp32 copy of its input")
# the page's bitsandbytes, 0.41.1, keeps every 4-bit linear's input for backward (MatMul4Bit ctx.tensors = (A, B),
# dropped in 0.43.2): the argv says it (--stack)
_OLD_BNB = "--stack bitsandbytes==0.41.1 "
# Read at 8641822 (finetune/lora.py, lit_gpt/utils.py), not measured: FSDPStrategy(auto_wrap_policy={Block},
# activation_checkpointing_policy={Block}, state_dict_type="full", limit_all_gathers=True, cpu_offload=False), the
# model built under `fabric.init_module(empty_init=(devices > 1))` (torch 2.1: on the meta device, materialised one
# Block at a time as FSDP wraps it), then `load_checkpoint` -> `fabric.load_raw(checkpoint_path, model)`: Lightning's
# `_load_raw_module_state` loads the full lit_model.pth (lazy, on the CPU) under FULL_STATE_DICT, "gathering all
# weights first and then writing back to each shard" as its docstring says, where torch 2.1's pre-load hook
# unshards one unit at a time. Both FSDP configurations sit about one whole bf16 model above a sharded run
# (7B on 2 GPUs 20.66 GB, 13.5 GB of weights + 7.2; 13B on 4 GPUs 33.13 GB, 26.0 + 7.1; the 7B on one GPU without
# checkpointing 21.30): something holds the unsharded model once per GPU; which step does is not identified.
_FSDP = ("per GPU about one whole bf16 model more than a sharded run (7B on 2 GPUs 20.66 GB = 13.5 GB of weights + "
         "7.2; 13B on 4: 33.13 = 26.0 + 7.1): Fabric's FSDP setup and full-state-dict load_raw hold the unsharded "
         "model at some point (not identified; torch 2.1's load hooks unshard one unit at a time as read)")
_QUANT = ("Lightning 2.1's BitsandbytesPrecision converts every torch.nn.Linear, the output layer included (the "
          "CLI quantizes the block linears only); the rest stays bf16 (--no-kbit-prepare says so)")


def _row(size: str, quant: str, mb: int, gpus: int, gb: float | None, quote: str) -> dict:
    model = f"llama-2-{size.lower()}"
    # BitsandbytesPrecision converts the linears and leaves the rest bf16 (bf16-true): no kbit preparation
    flags = {"none": "--lora", "nf4": f"--qlora --no-kbit-prepare {_OLD_BNB}",
             "nf4-dq": f"--qlora --no-kbit-prepare {_OLD_BNB}"}[quant].strip()
    if gpus == 1:
        where = (f"--system 4xA100-40GB --gpus 1 --strategy single --micro-batch {mb} --no-gradient-checkpointing "
                 f"{_STACK.strip()}")
        how = "one GPU, no activation checkpointing" + (
            f", base in bitsandbytes {quant.upper()} (PagedAdamW)" if quant != "none" else ", torch AdamW")
    else:
        where = (f"--system 4xA100-40GB --gpus {gpus} --strategy fsdp_full --fsdp-version 1 --micro-batch {mb} "
                 "--gradient-checkpointing")
        how = f"{gpus} GPUs under Fabric's FSDP1 (full shard, every Block wrapped and checkpointed), torch AdamW"
    unexpressed = [_CODE, _ADAPTERS, _FSDP] if gpus > 1 else []
    if quant != "none":
        unexpressed += [_QUANT]
        if quant == "nf4":
            unexpressed.append("NF4 without double quantization (the CLI's QLoRA double-quantizes: about 0.4 "
                               "bits/param less)")
    row = {"key": f"litgpt-rt-{model}-lora-{quant}-mb{mb}-{gpus}gpu", "source": "litgpt-resource-tables",
           "url": _URL, "quote": quote, "printed": f"{gb:.2f} GB" if gb else "OOM",
           "measured_bytes": int(round(gb * 1e9)) if gb else None, "metric": "allocated",
           "argv": f"estimate --model {model} {where} --precision bf16 {flags} --lora-rank 8 --lora-target q_proj "
                   "--lora-target v_proj --lora-dropout 0.05 --seq-len 1304 --attention sdpa --format json",
           "assumptions": _SETTINGS.format(model=f"Llama 2 {size}", mb=mb, how=how), "unexpressed": unexpressed}
    if gb is None:
        row["ran"] = False
    return row


def _cells(size: str, quant: str, mb: int, gpu: str, ram: str) -> str:
    """The page's table line, as printed (its column widths)."""
    params = "4,194,304" if size == "7B" else "6,553,600"
    label = {"none": "None", "nf4": "bnb.nf4", "nf4-dq": "bnb.nf4-dq"}[quant]
    return (f"| {size[:-1] + ' B':<5} | Llama 2       | {label:<12} | {mb:<15} | {params:<20} |"
            + (f" {gpu:<8} |" if gpu else "") + f" {ram:<11} |")


_SINGLE = [("7B", "none", 1, 21.30), ("7B", "nf4", 1, 14.14), ("7B", "nf4-dq", 1, 13.84), ("7B", "none", 2, 29.07),
           ("7B", "none", 4, None), ("13B", "none", 1, 38.12), ("13B", "nf4", 1, 23.14), ("13B", "nf4-dq", 1, 22.55),
           ("13B", "none", 2, None), ("13B", "none", 4, None)]
_MULTI = [("7B", 1, 2, 22.18), ("7B", 2, 2, 22.47), ("7B", 4, 2, 23.39), ("13B", 1, 2, None), ("13B", 1, 4, 35.57)]

ROWS = [
    *(_row(size, quant, mb, 1, gb, _cells(size, quant, mb, "", f"{gb:.2f} GB" if gb else "OOM"))
      for size, quant, mb, gb in _SINGLE),
    *(_row(size, "none", mb, gpus, gb, _cells(size, "none", mb, f"{gpus} x A100", f"{gb:.2f} GB" if gb else "OOM"))
      for size, mb, gpus, gb in _MULTI),
]
