"""Frozen, verdict rows only: the Hugging Face blog "Accelerate Large Model Training using PyTorch Fully Sharded
Data Parallel" (April 2022), Tables 1 and 2 (GPT-2 Large and XL on 2 x 24 GB NVIDIA Titan RTX).

The page: run_clm_no_trainer.py (transformers' causal-LM example) through `accelerate launch`, wikitext-2,
`mixed_precision: 'no'` in its FSDP config (fp32 weights, gradients and torch AdamW states; "DDP + FP16" rows in
fp16 mixed precision), FSDP1 with size-based auto wrapping (min_num_params 2K or 1M), `offload_params` (FSDP1's
CPUOffload: parameters, gradients and the optimizer step on the CPU). "Batch Size Max ($BS)" is the largest
per-device batch that ran ("start with larger batch size and go on decreasing till it fits on GPU"): a run
measured to fit. The GPT-2 XL DDP rows print CUDA's out-of-memory error at batch 1: runs measured not to fit. No
peak is printed, so nothing is scored.

Sequence length: the printed commands end with `--block_size 12`, after lines without their continuation
backslash. Read as 128: the same author's DeepSpeed post (accelerate-deepspeed.md) runs the same
run_clm_no_trainer.py on the same 2 x Titan RTX with `--block_size 128`; at 12 tokens a batch of 7 adds about
0.5 GB of activations to GPT-2 Large's 12.4 GB of fp32 states, so the DDP maximum could not have been 7 on a 24 GB
card. The attention is GPT-2's eager one (transformers of April 2022). The Titan RTX has 24 GB ("23.65 GiB total
capacity" in the page's own error).
"""

from __future__ import annotations

_URL = "https://github.com/huggingface/blog/blob/00e67ae4b7a8c1bc4db743be1a2931422c6d2be2/pytorch-fsdp.md"
_SETTINGS = (
    "HF blog 'Accelerate Large Model Training using PyTorch FSDP', Table {table}: {model}, {method}, per-device "
    "batch {bs} on {gpus} x Titan RTX 24 GB, run_clm_no_trainer.py on wikitext-2, torch AdamW, no gradient "
    "checkpointing; block size read as 128 (printed '--block_size 12', see the module docstring)"
)
_WRAP = ("FSDP1's size-based auto wrapping (min_num_params {n}): the CLI wraps each transformer block; the "
         "page's policy also wraps the embeddings and, at 2K, smaller modules")
_OOM = ("OOM Error RuntimeError: CUDA out of memory. Tried to allocate 40.00 MiB (GPU 0; 23.65 GiB total capacity; "
        "22.27 GiB already allocated; 20.31 MiB free; 22.76 GiB reserved in total by PyTorch)")


def _row(table: int, model: str, method: str, bs: int, gpus: int, quote: str, *, ran: bool = True) -> dict:
    strategy, precision, offload, wrap = {
        "DDP (Distributed Data Parallel)": ("ddp", "fp32", "", None), "DDP": ("ddp", "fp32", "", None),
        "DDP + FP16": ("ddp", "mixed", "", None),
        "FSDP with SHARD_GRAD_OP": ("fsdp_grad_op", "fp32", "", "2000"),
        "FSDP with min_num_params = 1M + FULL_SHARD": ("fsdp_full", "fp32", "", "1M"),
        "FSDP with min_num_params = 2K + FULL_SHARD": ("fsdp_full", "fp32", "", "2K"),
        "FSDP with min_num_params = 1M  + FULL_SHARD  + Offload to CPU": ("fsdp_full", "fp32", "cpu", "1M"),
        "FSDP with min_num_params = 2K + FULL_SHARD + Offload to CPU": ("fsdp_full", "fp32", "cpu", "2K"),
        "FSDP with min_num_params = 2K": ("fsdp_full", "fp32", "", "2K"),
        "FSDP with min_num_params = 2K + Offload to CPU": ("fsdp_full", "fp32", "cpu", "2K"),
    }[method]
    if gpus == 1 and strategy == "ddp":
        strategy = "single"  # one process: accelerate launch runs no DDP
    fsdp = " --fsdp-version 1" if strategy.startswith("fsdp") else ""
    off = f" --offload-optimizer {offload} --offload-param {offload}" if offload else ""
    slug = "-".join(filter(None, [strategy.replace("_", "-"), precision, f"wrap{wrap}" if wrap else "",
                                  "offload" if offload else ""]))
    unexpressed = ["eval batches of the same size between epochs (per_device_eval_batch_size $BS; no backward)"]
    if wrap:
        unexpressed.append(_WRAP.format(n=wrap))
    return {"key": f"hf-fsdp-{model}-{slug}-bs{bs}-{gpus}gpu", "source": "hf-blog-pytorch-fsdp", "url": _URL,
            "quote": quote, "printed": _OOM if not ran else quote.split("|")[2].strip(),
            "measured_bytes": None, "metric": "reserved", "ran": ran,
            "argv": f"estimate --model {model} --gpus {gpus} --gpu-memory 24GB --strategy {strategy}{fsdp} "
                    f"--precision {precision}{off} --micro-batch {bs} --seq-len 128 --no-gradient-checkpointing "
                    "--attention eager --format json",
            "assumptions": _SETTINGS.format(table=table, model=model, method=method, bs=bs, gpus=gpus),
            "unexpressed": unexpressed}


_T1 = [("DDP (Distributed Data Parallel)", 7, "| DDP (Distributed Data Parallel) | 7 | 15 |  |"),
       ("DDP + FP16", 7, "| DDP + FP16 | 7 | 8 |  |"),
       ("FSDP with SHARD_GRAD_OP", 11, "| FSDP with SHARD_GRAD_OP | 11 | 11 |  |"),
       ("FSDP with min_num_params = 1M + FULL_SHARD", 15,
        "| FSDP with min_num_params = 1M + FULL_SHARD | 15 | 12 |  |"),
       ("FSDP with min_num_params = 2K + FULL_SHARD", 15,
        "| FSDP with min_num_params = 2K + FULL_SHARD | 15 | 13 |  |"),
       ("FSDP with min_num_params = 1M  + FULL_SHARD  + Offload to CPU", 20,
        "| FSDP with min_num_params = 1M  + FULL_SHARD  + Offload to CPU  | 20 | 23 |  |"),
       ("FSDP with min_num_params = 2K + FULL_SHARD + Offload to CPU", 22,
        "| FSDP with min_num_params = 2K + FULL_SHARD + Offload to CPU | 22 | 24 |  |")]
_T2 = [("DDP", 1, 1, False, f"| DDP | 1 | 1 | NA | {_OOM}  |"),
       ("DDP", 1, 2, False, f"| DDP | 1 | 2 | NA | {_OOM} |"),
       ("DDP + FP16", 1, 1, False, f"| DDP + FP16 | 1 | 1 | NA | {_OOM}  |"),
       ("FSDP with min_num_params = 2K", 5, 2, True, "| FSDP with min_num_params = 2K | 5 | 2 | 0.6 |  |"),
       ("FSDP with min_num_params = 2K + Offload to CPU", 10, 1, True,
        "| FSDP with min_num_params = 2K + Offload to CPU | 10 | 1 | 3 |  |"),
       ("FSDP with min_num_params = 2K + Offload to CPU", 14, 2, True,
        "| FSDP with min_num_params = 2K + Offload to CPU | 14 | 2 | 1.16 |  |")]

ROWS = [
    *(_row(1, "gpt2-large", method, bs, 2, quote) for method, bs, quote in _T1),
    *(_row(2, "gpt2-xl", method, bs, gpus, quote, ran=ran) for method, bs, gpus, ran, quote in _T2),
]
