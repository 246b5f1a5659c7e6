"""Frozen: Lambda's distributed-training-guide, "Training a 405B model" (LambdaLabsML/distributed-training-guide
10-training-llama-405b/README.md at d636f78, 2024-09-30), "Run statistics": full training of Llama 3.1 405B's
weights "in plain pytorch" on 64 H100s (8 nodes), "Peak Memory Allocated: 52.9GB", "Peak Memory Reserved: 77.9GB",
and, among its notes, that `PYTORCH_NO_CUDA_MEMORY_CACHING=1` "made enough memory available that `--batch-size 2`
or higher sequence lengths were possible": batch 2 did not fit with the caching allocator.

The code (train_llm.py and launch.sh at d636f78): `torch.distributed.run --nproc-per-node gpu` on every host (8 x
8 H100 80GB), meta-llama/Meta-Llama-3.1-405B built in bf16 (`torch_dtype=torch.bfloat16`, rank 0 from the
checkpoint on the CPU, the others on the meta device) with `attn_implementation="flash_attention_2"`, wrapped in
torch's FullyShardedDataParallel (FSDP1) directly, no accelerate: FULL_SHARD, `transformer_auto_wrap_policy` over
{LlamaDecoderLayer, Embedding}, `CPUOffload(offload_params=True)` (--cpu-offload on), no MixedPrecision policy
(bf16 parameters, gradients and reduce; the optimizer steps the CPU shards), `sync_module_states=True`; activation
checkpointing on the decoder layers (torch's checkpoint_wrapper, non-reentrant); `torch.optim.AdamW(fused=True)`;
Skylion007/openwebtext tokenized and concatenated into blocks of `--seq-length 4096` (group_texts: every batch
4,096 tokens), `--batch-size 1`, no accumulation; the loss is LlamaForCausalLM's own (transformers 4.44.2, the
guide's requirements.txt; torch 2.4.0 there, while the guide's later README says the figures came from torch
2.5.1).

What the numbers are: `torch.cuda.memory_stats(device)["allocated_bytes.all.peak"]` and
`["reserved_bytes.all.peak"]` times 1e-9 (GB), reset after each log (--log-freq 1: one step's peak), logged to W&B
by rank 0: one GPU's figures.
"""

from __future__ import annotations

_COMMIT = "d636f78212c49ea0033cfb78945001b64bc287f6"
_URL = f"https://github.com/LambdaLabsML/distributed-training-guide/blob/{_COMMIT}/10-training-llama-405b/README.md"
_QUOTE = ("Running this with 64 H100 gpus (8 separate nodes) has the following stats:\n\n- ~30s per iteration "
          "(data/forward/backward/update). Breakdown is\n  - data: ~2ms\n  - forward: ~7s\n  - backward: ~19s\n"
          "  - update: ~4s\n- Peak Memory Allocated: 52.9GB\n- Peak Memory Reserved: 77.9GB")
_Q_BATCH2 = ("- `PYTORCH_NO_CUDA_MEMORY_CACHING=1` made enough memory available that `--batch-size 2` or higher "
             "sequence lengths were possible, but it was much much slower.")
_SETTINGS = (
    "Lambda distributed-training-guide 10-training-llama-405b at {commit}: Llama 3.1 405B in bf16, torch FSDP1 "
    "FULL_SHARD with CPUOffload(offload_params=True) on 8 nodes x 8 H100 80GB, no MixedPrecision policy, flash "
    "attention 2, activation checkpointing on every decoder layer, fused AdamW (on the CPU shards), batch {batch} x "
    "4,096 packed tokens, transformers 4.44.2; {what}"
)
_UNEXPRESSED = [
    "the Embedding wrapped as its own FSDP unit (transformer_layer_cls={LlamaDecoderLayer, Embedding}): the root "
    "unit holds the final norm and lm_head only",
    "torch 2.4.0 in the guide's requirements.txt; its later README says the figures came from torch 2.5.1",
]


def _row(key: str, quote: str, printed: str, metric: str, batch: int, what: str, ran: bool = True) -> dict:
    return {"key": key, "source": "lambda-training-guide-405b", "url": _URL, "quote": quote, "printed": printed,
            "measured_bytes": int(round(float(printed[:-2]) * 1e9)) if ran else None, "metric": metric, "ran": ran,
            "argv": "estimate --model llama-3.1-405b --system 8x8xH100-80GB --strategy fsdp_full --fsdp-version 1 "
                    "--offload-param cpu --no-fsdp-upcast --precision bf16 --optimizer adamw --optimizer-kernel fused "
                    f"--micro-batch {batch} --seq-len 4096 --fixed-lengths --gradient-checkpointing --attention flash "
                    "--stack transformers==4.44.2 --format json",
            "assumptions": _SETTINGS.format(commit=_COMMIT[:7], batch=batch, what=what),
            "unexpressed": list(_UNEXPRESSED)}


ROWS = [
    _row("lambda-llama-3.1-405b-fsdp1-offload-64xh100-allocated", _QUOTE, "52.9GB", "allocated", 1,
         "rank 0's torch.cuda max_memory_allocated over a step, in GB (1e9)"),
    _row("lambda-llama-3.1-405b-fsdp1-offload-64xh100-reserved", _QUOTE, "77.9GB", "reserved", 1,
         "rank 0's torch.cuda max_memory_reserved over a step, in GB (1e9)"),
    _row("lambda-llama-3.1-405b-fsdp1-offload-64xh100-batch2-oom", _Q_BATCH2, "`--batch-size 2`", "reserved", 2,
         "read as out of memory with the caching allocator: only PYTORCH_NO_CUDA_MEMORY_CACHING=1 (no cache, much "
         "slower) made batch 2 possible", ran=False),
]
