"""Frozen: torchao's low-bit optimizer README, its Llama2-7B fine-tuning table (torchao/prototype/low_bit_optim).

Source `torchao-low-bit-optim-llama2`, the README as of PR #812 (1e7f132, Sept 6 2024): "Fine-tune Llama2-7B on
Alpaca dataset. PyTorch 2.4, full BF16, 1 epoch, A100, fixed random seed. Benchmark is done with torchtune
52d1b838", one row per AdamW implementation, "Peak memory allocated (GB)". Scored: PyTorch's fused AdamW and
bitsandbytes' 8-bit AdamW. torchao's own 8-bit and 4-bit AdamW (block-wise quantized states held as tensor
subclasses, a compiled step per parameter) are kept as not expressible: the CLI's adamw8bit is bitsandbytes'. The
page's ViT-H table (timm, not a transformers causal LM) is not used.

The run, from torchtune at 52d1b838 (the README names the commit, not the command): Llama-2-7B (torchtune's
llama2_7b, 6,738,415,616 parameters) in `dtype: bf16` ("full BF16": bf16 weights, gradients and optimizer states,
no fp32 master copy, no autocast: --precision bf16) on one GPU; both of torchtune's Llama-2-7B full fine-tuning
configs at that commit (7B_full and 7B_full_low_memory) set `batch_size: 2`, `enable_activation_checkpointing: True`,
`CEWithChunkedOutputLoss` (the logits upcast to fp32 chunk by chunk, 8 chunks) and torchtune's alpaca_dataset
with `max_seq_len: null`, unpacked, each batch padded to its longest sample (padded_collate_sft: --varying-lengths).
Attention is torchtune's own, through F.scaled_dot_product_attention (--attention sdpa). The A100 is the 80 GB
one (51.6 GiB does not fit a 40 GB card).

What the number is: torchtune's `training.get_memory_stats` ("peak_memory_alloc"), i.e.
`torch.cuda.max_memory_allocated() / 1024**3`: GiB, printed "GB" in the README (metric "allocated").
"""

from __future__ import annotations

_URL = ("https://github.com/pytorch/ao/blob/1e7f132e387a0e301176d5afa1830329c126b747/"
        "torchao/prototype/low_bit_optim/README.md")
_CODE = ("https://github.com/pytorch/torchtune/blob/52d1b838c1c35b5e75fddf8776be400adc36dff5/"
         "recipes/configs/llama2/7B_full_low_memory.yaml")
_HEADER = ("Fine-tune [Llama2-7B](https://huggingface.co/meta-llama/Llama-2-7b) on "
           "[Alpaca](https://huggingface.co/datasets/tatsu-lab/alpaca) dataset. PyTorch 2.4, full BF16, 1 epoch, A100, "
           "fixed random seed. Benchmark is done with [torchtune 52d1b838](https://github.com/pytorch/torchtune/tree/"
           "52d1b838c1c35b5e75fddf8776be400adc36dff5). See [#812](https://github.com/pytorch/ao/pull/812) for more "
           "details.\n\nAdamW impl       | Peak memory allocated (GB) | toks/s | `truthfulqa_mc2` acc\n"
           "-----------------|----------------------------|--------|----------------------\n")
_SETTINGS = (
    "torchao low-bit optimizer README (1e7f132): Llama-2-7B full fine-tuning in pure bf16 with torchtune 52d1b838 "
    "on one A100 80GB, {optim}; batch 2 and activation checkpointing (both Llama-2-7B full configs at that commit), "
    "torchtune's Alpaca unpacked, padded per batch. Assumed: the longest Alpaca sample under Llama-2's tokenizer is "
    "about 1,024 tokens (--seq-len 1024; not measured here, the dataset and tokenizer were not at hand) and the "
    "recipe is full_finetune_single_device (the README gives the commit, not the command)"
)
_UNEXPRESSED = [
    "torchtune's CEWithChunkedOutputLoss: the logits upcast to fp32 in 8 chunks, not at once",
    "the command is not printed: torch.compile (the PR thread reports compile times) and optimizer_in_bwd "
    "(7B_full_low_memory's default, which frees each gradient in backward) are unknown",
]


def _row(key: str, line: str, printed: str, optim: str, flags: str, unexpressed: list[str]) -> dict:
    return {"key": key, "source": "torchao-low-bit-optim-llama2", "url": _URL, "code_url": _CODE,
            "quote": _HEADER + line, "printed": printed, "measured_bytes": int(round(float(printed) * 2**30)),
            "metric": "allocated",
            "argv": f"estimate --model llama-2-7b --system 1xA100-80GB --strategy single --precision bf16 {flags}"
                    "--micro-batch 2 --seq-len 1024 --varying-lengths --gradient-checkpointing --attention sdpa "
                    "--format json",
            "assumptions": _SETTINGS.format(optim=optim), "unexpressed": [*_UNEXPRESSED, *unexpressed]}


ROWS = [
    _row("torchao-llama2-7b-full-bf16-adamw-fused", "PyTorch (fused)  | 51.6                       | 3200   | 42.61",
         "51.6", "torch.optim.AdamW(fused=True)", "--optimizer adamw --optimizer-kernel fused ", []),
    _row("torchao-llama2-7b-full-bf16-adamw8bit-bnb", "bnb 8-bit        | 39.3                       | 3000   | 42.75",
         "39.3", "bitsandbytes' AdamW8bit", "--optimizer adamw8bit ", []),
]

_AO_STATES = ("torchao's {which} AdamW (torchao.prototype.low_bit_optim): block-wise quantized states as tensor "
              "subclasses with a compiled per-parameter step; the CLI's 8-bit optimizer is bitsandbytes'")
for _key, _line, _printed, _which in (
        ("torchao-llama2-7b-full-bf16-adamw8bit-ao", "ao 8-bit         | 39.1                       | 2900   | 41.50",
         "39.1", "8-bit"),
        ("torchao-llama2-7b-full-bf16-adamw4bit-ao", "ao 4-bit         | 33.2                       | 2900   | 42.27",
         "33.2", "4-bit")):
    ROWS.append({"key": _key, "source": "torchao-low-bit-optim-llama2", "url": _URL, "code_url": _CODE,
                 "quote": _HEADER + _line, "printed": _printed, "measured_bytes": int(round(float(_printed) * 2**30)),
                 "metric": "allocated", "argv": None, "not_expressible": _AO_STATES.format(which=_which),
                 "assumptions": _SETTINGS.format(optim=f"torchao's {_which} AdamW")})
