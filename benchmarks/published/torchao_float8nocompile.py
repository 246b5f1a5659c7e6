"""Frozen: torchao's float8nocompile prototype page (torchao/prototype/float8nocompile/README.md, PR #1693,
2025-02-11), "Performance Comparison of Different Configurations on 8 H100s": Llama 3 8B trained with torchtitan
("experimental integration into torchtitan", torchtitan PR #778) at three activation-checkpointing settings, each
with a bf16 eager baseline and two float8 variants.

What the number is: "Peak memory (GB)", torchtitan's logged `memory: {max_reserved_gib:5.2f}GiB` (train.py,
`device_memory_monitor.get_peak_stats()`: torch.cuda.memory_stats()["reserved_bytes.all.peak"] / 2**30, per GPU,
peaks reset after the model is built): reserved, GiB, one GPU's.

The settings, read in torchtitan at 3996b63 (2025-02-10, main the day before the page): train_configs/
llama3_8b.toml (Llama 3 8B: 32 layers, 4096 wide, 8 KV heads, vocab 128,256; `batch_size = 1`; c4 packed into
fixed-length sequences; AdamW at `--optimizer.fused` False, so `foreach=True`), the page's "seq len 4096", FSDP2
over the 8 GPUs (`fully_shard` on each TransformerBlock, `reshard_after_forward` on all but the last block, the
root unsharded after forward), MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): fp32 sharded parameters
and AdamW states, bf16 compute; the loss `cross_entropy(pred.flatten(0, 1).float(), ...)` (an fp32 copy of the
logits); attention by F.scaled_dot_product_attention (is_causal). "No AC": `--activation_checkpoint.mode none`;
"Full AC": `mode full` (every TransformerBlock recomputed); "Selective per layer AC (AC every 2nd layer)": `mode
selective` with `selective_ac_option 2`, which the CLI cannot say (not expressible). The float8 rows (torchao's
float8 linears, eager or under torch.compile) are not rows here: the CLI has no float8 training.
"""

from __future__ import annotations

_URL = ("https://github.com/pytorch/ao/blob/d99785c0fdaa1dbfdbaf57923326edf2b8a7f1f8/torchao/prototype/"
        "float8nocompile/README.md")
_SOURCE = "torchao-float8nocompile-2025"
_HEADER = ("| Configuration                                    | Tokens/sec | Peak memory (GB) | Tokens/sec Δ | "
           "Peak memory Δ |\n"
           "|-------------------------------------------------|------------|------------------|--------------|"
           "---------------|\n")
_SETTINGS = (
    "torchao float8nocompile README (d99785c), its bf16 eager baseline: torchtitan (3996b63) llama3_8b.toml, "
    "Llama 3 8B, FSDP2 over 8 H100s (bf16 params, fp32 reduce, fp32 sharded master weights and foreach-AdamW "
    "states), local batch 1 x 4,096 packed c4 tokens, the loss on an fp32 copy of the logits, SDPA, {ac}; "
    "'Peak memory (GB)' read as torchtitan's max reserved in GiB per GPU"
)
_ARGV = ("estimate --model llama-3.1-8b --system 8xH100-80GB --strategy fsdp_full --fsdp-version 2 "
         "--no-fsdp-upcast --precision mixed --micro-batch 1 --seq-len 4096 --fixed-lengths --attention sdpa {ac}"
         "--format json")
_UNEXPRESSED = [
    "torchtitan's own Llama 3 module (the argv estimates transformers' Llama 3.1 8B: the same shapes)",
    "which H100 (80 or 96 GB) and the torch nightly of February 2025: the page says '8 H100s' only",
    "torchtitan's FSDP2 leaves the last block and the root unsharded after forward (reshard_after_forward False)",
]


def _row(key: str, title: str, ac: str, flag: str | None, line: str, gib: str) -> dict:
    row = {"key": key, "source": _SOURCE, "url": _URL, "quote": f"## {title} - 8 H100s\n\n{_HEADER}{line}",
           "printed": gib, "measured_bytes": int(round(float(gib) * 2**30)), "metric": "reserved",
           "assumptions": _SETTINGS.format(ac=ac)}
    if flag is None:
        row.update(argv=None, not_expressible=(
            "selective activation checkpointing of every second TransformerBlock (torchtitan's selective_ac_option "
            "2): the CLI checkpoints every block or none"))
    else:
        row.update(argv=_ARGV.format(ac=flag), unexpressed=list(_UNEXPRESSED))
    return row


ROWS = [
    _row("torchao-f8nc-llama3-8b-bf16-eager-no-ac", "No AC (seq len 4096)", "no activation checkpointing",
         "--no-gradient-checkpointing ",
         "| bfloat16, eager                                 | 5339.0     | 53.12            | 0%           | "
         "0.00%         |", "53.12"),
    _row("torchao-f8nc-llama3-8b-bf16-eager-ac-every-2nd", "Selective per layer AC (AC every 2nd layer, seq len "
         "4096)", "every second block checkpointed", None,
         "| bfloat16, eager                                 | 4882.4     | 40.6             | 0%           | "
         "0.00%         |", "40.6"),
    _row("torchao-f8nc-llama3-8b-bf16-eager-full-ac", "Full AC (seq len 4096)", "every block checkpointed",
         "--gradient-checkpointing ",
         "| bfloat16, eager                                 | 4502.0     | 28.07            | 0%           | "
         "0.00%         |", "28.07"),
]
