"""Frozen: torchtune PR threads that print their own runs' GPU memory (source `torchtune-memory-prs`).

Not torchtune's README nor its tutorials (other sources): the pull-request threads where its developers measured
Llama-2-7B full fine-tuning on one GPU while making it fit.

- pytorch/torchtune#389 (2024-02-19, kartikayk, "[RFC] Single Device Full Fine-tune for Llama7B in < 16GB", closed):
  the baseline is the full_finetune recipe of that day (recipes/full_finetune.py at 6a1edd7: the model built and
  loaded in fp32, `utils.get_autocast(bf16)` around forward and loss, FSDP FULL_SHARD over one rank, a for-loop over
  Alpaca batches, `optimizer.step()` then `zero_grad(set_to_none=True)`), batch 1, no activation checkpointing (the
  RFC's stated baseline). "either OOMs with AdamW, or takes > 55GB with SGD": two verdict rows. Then "true" bf16
  (weights, gradients and AdamW states all bf16, the checkpoint converted to bf16) with torch AdamW's foreach turned
  off: "peak memory is ~54GB WITH AdamW", read off a memory snapshot (allocated; torchtune's memory logs of the day
  print bytes / 1e9 as "GB": "Memory Allocated: 13.51 GB" for the 6.74e9 bf16 parameters).
- pytorch/torchtune#527 (2024-03-19, rohan-varma, "Full finetune < 16GB", merged): PagedAdamW with the optimizer
  step run inside backward (per-parameter hooks: each gradient freed as soon as it is applied), full bf16: "GPU peak
  memory allocation: 13.993540096GB": the CLI has no word for an optimizer stepped in backward (kept as not
  expressible).

The GPU is not named in either thread; both authors worked on Meta's A100 80GB hosts (#391, the same week, limits
memory artificially "to simulate goal scenarios" below it): 1 x A100 80GB assumed. Alpaca's samples are short
(torchtune's alpaca_dataset of Feb 2024 truncates at 512 tokens); a batch of one is unpadded, and every figure here
is the optimizer step's peak, after the activations are freed: --seq-len 512 stands for the longest sample.
"""

from __future__ import annotations

_SOURCE = "torchtune-memory-prs"
_URL_389 = "https://github.com/pytorch/torchtune/pull/389"
_URL_527 = "https://github.com/pytorch/torchtune/pull/527"
_CODE_URL = "https://github.com/pytorch/torchtune/blob/6a1edd78c9a89c41ff0594eee62f2960ec882f85/recipes/full_finetune.py"
_BASELINE_QUOTE = ("On a single device, our current Llama7B full fine-tune recipe either OOMs with the ```AdamW``` "
                   "optimizer, or takes > 55GB with ```SGD```.")
_BF16_QUOTE = ("Disabling this and things look more in line with our expectation. Namely, peak memory is ~54GB WITH "
               "AdamW.")
_SETTINGS = (
    "torchtune#389 (2024-02-19): Llama-2-7B full fine-tuning on one GPU (1 x A100 80GB assumed: not named), batch "
    "1, Alpaca samples (truncated at 512 tokens), no activation checkpointing, {how}"
)
_GPU = "the GPU model (not named in the thread; an A100 80GB assumed) and so its CUDA context"
_FSDP1 = ("the baseline recipe wraps the model in FSDP FULL_SHARD over one rank (flat parameters, nothing sharded): "
          "planned as a single GPU")
_ARGV = ("estimate --model llama-2-7b --system 1xA100-80GB --strategy single {flags}--micro-batch 1 --seq-len 512 "
         "--format json")

ROWS = [
    {"key": "torchtune389-llama2-7b-full-fp32-autocast-adamw-1gpu-oom", "source": _SOURCE, "url": _URL_389,
     "code_url": _CODE_URL, "quote": _BASELINE_QUOTE, "printed": "OOMs", "measured_bytes": None,
     "metric": "allocated", "ran": False,
     "argv": _ARGV.format(flags="--precision mixed --optimizer adamw "),
     "assumptions": _SETTINGS.format(how="the recipe of the day (fp32 weights, bf16 autocast, fp32 gradients and "
                                         "torch AdamW states): out of memory"),
     "unexpressed": [_FSDP1, _GPU]},
    {"key": "torchtune389-llama2-7b-full-fp32-autocast-sgd-1gpu-ran", "source": _SOURCE, "url": _URL_389,
     "code_url": _CODE_URL, "quote": _BASELINE_QUOTE, "printed": "takes > 55GB", "measured_bytes": None,
     "metric": "allocated", "ran": True,
     "argv": _ARGV.format(flags="--precision mixed --optimizer sgd "),
     "assumptions": _SETTINGS.format(how="the recipe of the day with torch SGD (no momentum: no state): ran, above "
                                         "55 GB"),
     "unexpressed": [_FSDP1, _GPU]},
    {"key": "torchtune389-llama2-7b-full-bf16-adamw-forloop-1gpu", "source": _SOURCE, "url": _URL_389,
     "code_url": _CODE_URL, "quote": _BF16_QUOTE, "printed": "54GB", "measured_bytes": 54 * 10**9,
     "metric": "allocated",
     "argv": _ARGV.format(flags="--precision bf16 --optimizer adamw --optimizer-kernel fused "),
     "assumptions": _SETTINGS.format(how="pure bf16 (weights, gradients, AdamW states) with torch AdamW "
                                         "foreach=False, peak '~54GB' read off a memory snapshot"),
     "unexpressed": ["torch AdamW's for-loop (foreach=False): one parameter's temporaries at a time (the largest, "
                     "the 32,000 x 4,096 embedding, 0.26 GB), said as --optimizer-kernel fused (none)",
                     "the figure is approximate ('~54GB')", _GPU]},
    {"key": "torchtune527-llama2-7b-full-bf16-pagedadamw-optim-in-bwd-1gpu", "source": _SOURCE, "url": _URL_527,
     "code_url": ("https://github.com/pytorch/torchtune/blob/ff164df488464369dd385d3dadcb7e08a6210f06/recipes/params/"
                  "memory_efficient_finetune.py"),
     "quote": ("> GPU peak memory allocation: 13.993540096GB, GPU peak memory reserved: 15.974006784GB, GPU peak "
               "memory active: 13.993540096GB"),
     "printed": "13.993540096GB", "measured_bytes": 13993540096, "metric": "allocated", "argv": None,
     "not_expressible": ("the optimizer stepped inside backward (optim_in_bwd: a hook per parameter applies PagedAdamW "
                         "and frees the gradient at once): the CLI has no word for gradients that never coexist"),
     "assumptions": ("torchtune#527 (2024-03-19): full bf16 Llama-2-7B, PagedAdamW, optimizer in backward, batch 1; "
                     "the code pinned is a stored version of the memory-efficient recipe's parameters (optim_in_bwd "
                     "True by default), not the merge commit")},
]
