"""Frozen: Liger-Kernel's "Liger-Kernel Example with HuggingFace Trainer" benchmark (examples/huggingface/README.md).

Source `liger-kernel-hf-example`: three charts of "Peak Allocated Memory (MB)" against the per-device batch (32, 48,
64), with and without Liger's kernels, each under the README's "Benchmark conditions: <model>, Alpaca Dataset, Max
seq len = 512, Data Type = bf16, Optimizer = AdamW, Gradient Checkpointing = True, Distributed Strategy = FSDP1 on
4 A100s": Llama-3-8B and Qwen2-7B (img/llama_mem_alloc.png, img/qwen_mem_alloc.png, both as of 03fd603, Aug 26
2024, PR #108 "Hardware Type: A100-80G-PCIe") and Gemma-7B (1129508, Aug 29 2024; the README's links are swapped:
its memory chart is img/gemma_7b_mem.png). Only the Qwen2 chart prints its bars' values; the Llama chart prints
"OOM" where the run without Liger failed at batch 64, and the Gemma chart prints nothing: those two give verdict
rows only (a bar drawn: the run ran; "OOM": it did not). Gemma's missing bars without Liger at 48 and 64 carry no
label and are not read as out of memory. The quotes transcribe the charts' printed labels.

The code (examples/huggingface at those commits): training.py loads the model with `torch_dtype=torch.bfloat16`,
`use_cache=False`; with `--use_liger True` it calls `apply_liger_kernel_to_llama()` / `apply_liger_kernel_to_qwen2()`
(or `AutoLigerKernelForCausalLM` for Gemma), whose defaults patch RoPE, RMSNorm, SwiGLU/GeGLU and the fused linear
cross-entropy (`fused_linear_cross_entropy=True`: no logits tensor, --loss-kernel liger). TRL's SFTTrainer with
`max_seq_length=512` (each Alpaca "text" truncated to 512 tokens, no packing) and DataCollatorForCompletionOnlyLM
(`pad_to_multiple_of=16`): each batch padded to its own longest, up to 512 (--varying-lengths). The launch
(run_llama.sh / run_qwen.sh / run_gemma.sh, torchrun with 4 processes): `--bf16`, the Trainer's default optimizer
(transformers 4.43.3, pinned in requirements.txt: "adamw_torch", torch AdamW), `--fsdp "full_shard auto_wrap"` with
config/fsdp_config.json (`activation_checkpointing: true`, `backward_prefetch: backward_pre`, `forward_prefetch:
true`). FSDP1 through accelerate: with mixed precision on, accelerate (>= 0.30; trl, accelerate and torch are
unpinned, August 2024) upcasts the bf16-loaded flat parameters to fp32 before training, so the run holds fp32
master weights, gradients and AdamW states, computing in bf16: --precision mixed.

What the number is (callback.py, EfficiencyCallback): `torch.cuda.memory.max_memory_allocated()` of the process's
GPU, reset at every step's start, the maximum over the steps after two warm-up steps, divided by 2**20 and printed
as "MB" (MiB): the allocated peak of one GPU (metric "allocated").
"""

from __future__ import annotations

_REPO = "https://github.com/linkedin/Liger-Kernel/blob/{commit}/examples/huggingface/README.md"
_QWEN_LLAMA = "03fd60320ee801bef988d5453473f3a76a7a5fa0"
_GEMMA = "1129508967af5e7926d21182d5a70739f6a04b63"
_CONDITIONS = ("Benchmark conditions: {name}, Alpaca Dataset, Max seq len = 512, Data Type = bf16, Optimizer = AdamW, "
               "Gradient Checkpointing = True, Distributed Strategy = FSDP1 on 4 A100s.")
_QWEN_CHART = ("img/qwen_mem_alloc.png, 'Peak Allocated Memory (MB)' by 'Batch Size': 32: w/o liger 51154.27, w liger "
               "39300.01; 48: w/o liger OOM, w liger 42085.62; 64: w/o liger OOM, w liger 42709.12")
_LLAMA_CHART = ("img/llama_mem_alloc.png, 'Peak Allocated Memory (MB)' by 'BS' (no values printed): bars for "
                "'w/o liger' at 32 and 48, 'OOM' printed for 'w/o liger' at 64; bars for 'w liger' at 32, 48 and 64")
_GEMMA_CHART = ("img/gemma_7b_mem.png, 'Peak Allocated Memory (MB)' by 'Batch Size' (no values printed): a bar for "
                "'Without Liger Kernel' at 32; bars for 'Liger Kernel' at 32, 48 and 64")
_SETTINGS = (
    "Liger-Kernel examples/huggingface ({commit}): {model}, full fine-tuning with TRL's SFTTrainer, per-device batch "
    "{bs}, Alpaca truncated to 512 tokens and padded per batch (DataCollatorForCompletionOnlyLM, multiple of 16), "
    "FSDP1 full_shard auto_wrap through the Trainer on 4 x A100 80GB, --bf16 with accelerate's fp32 upcast of the "
    "flat parameters, torch AdamW, FSDP activation checkpointing, {liger}; transformers 4.43.3 (SDPA attention). "
    "Assumed: at least one batch reaches the 512-token cap (Alpaca's longest samples pass 512 tokens)"
)
_UNEXPRESSED = [
    "FSDP1's backward_pre prefetch and forward_prefetch: one more unit's parameters gathered in flight",
    "the Trainer's adamw_torch under FSDP1: foreach AdamW over each rank's flat-parameter shards",
]
_LIGER_UNEXPRESSED = ("Liger's RoPE, RMSNorm and SwiGLU/GeGLU kernels (what they save or keep for backward is not "
                      "modelled; only the fused linear cross-entropy is)")


def _row(model: str, name: str, argv_model: str, bs: int, liger: bool, commit: str, chart: str, *,
         printed: str, mib: float | None = None, ran: bool = True) -> dict:
    kernel = "--loss-kernel liger " if liger else ""
    row = {"key": f"liger-hf-{model}-fsdp1-4xa100-bs{bs}-{'liger' if liger else 'no-liger'}",
           "source": "liger-kernel-hf-example", "url": _REPO.format(commit=commit),
           "quote": f"{_CONDITIONS.format(name=name)} {chart}", "printed": printed,
           "measured_bytes": int(round(mib * 2**20)) if mib is not None else None,
           "metric": "allocated", "ran": ran,
           "argv": f"estimate --model {argv_model} --system 4xA100-80GB --strategy fsdp_full --fsdp-version 1 "
                   f"--precision mixed --micro-batch {bs} --seq-len 512 --varying-lengths --gradient-checkpointing "
                   f"--attention sdpa {kernel}--stack transformers==4.43.3 --format json",
           "assumptions": _SETTINGS.format(commit=commit[:7], model=name, bs=bs,
                                           liger="Liger's kernels applied (--use_liger True)" if liger
                                           else "without Liger (--use_liger False)"),
           "unexpressed": [*_UNEXPRESSED, *([_LIGER_UNEXPRESSED] if liger else [])]}
    return row


_GEMMA_7B = "benchmarks/published/models/gemma-7b/config.json"

ROWS = [
    # Qwen2-7B: the one chart with printed values (MiB per GPU), and two printed OOMs.
    _row("qwen2-7b", "Qwen2-7B", "qwen2-7b", 32, False, _QWEN_LLAMA, _QWEN_CHART, printed="51154.27", mib=51154.27),
    _row("qwen2-7b", "Qwen2-7B", "qwen2-7b", 32, True, _QWEN_LLAMA, _QWEN_CHART, printed="39300.01", mib=39300.01),
    _row("qwen2-7b", "Qwen2-7B", "qwen2-7b", 48, True, _QWEN_LLAMA, _QWEN_CHART, printed="42085.62", mib=42085.62),
    _row("qwen2-7b", "Qwen2-7B", "qwen2-7b", 64, True, _QWEN_LLAMA, _QWEN_CHART, printed="42709.12", mib=42709.12),
    _row("qwen2-7b", "Qwen2-7B", "qwen2-7b", 48, False, _QWEN_LLAMA, _QWEN_CHART, printed="OOM", ran=False),
    _row("qwen2-7b", "Qwen2-7B", "qwen2-7b", 64, False, _QWEN_LLAMA, _QWEN_CHART, printed="OOM", ran=False),
    # Llama-3-8B (meta-llama/Meta-Llama-3-8B: the alias's shapes and 8,030,261,248 parameters): verdicts only.
    *(_row("llama-3-8b", "LLaMA 3-8B", "llama-3-8b", bs, False, _QWEN_LLAMA, _LLAMA_CHART, printed=str(bs))
      for bs in (32, 48)),
    _row("llama-3-8b", "LLaMA 3-8B", "llama-3-8b", 64, False, _QWEN_LLAMA, _LLAMA_CHART, printed="OOM", ran=False),
    *(_row("llama-3-8b", "LLaMA 3-8B", "llama-3-8b", bs, True, _QWEN_LLAMA, _LLAMA_CHART, printed=str(bs))
      for bs in (32, 48, 64)),
    # Gemma-7B (google/gemma-7b-it, run_gemma.sh; the stand-in config.json has its shapes): verdicts only.
    _row("gemma-7b", "Gemma-7B", _GEMMA_7B, 32, False, _GEMMA, _GEMMA_CHART, printed="32"),
    *(_row("gemma-7b", "Gemma-7B", _GEMMA_7B, bs, True, _GEMMA, _GEMMA_CHART, printed=str(bs)) for bs in (32, 48, 64)),
]
