"""Frozen, verdict rows only: the Hugging Face blog "Accelerate Large Model Training using DeepSpeed" (June 2022),
Tables 1 to 3 on 2 x 24 GB NVIDIA Titan RTX (60 GB RAM).

The page: `accelerate launch` with `mixed_precision: fp16` and num_processes 2 in every config. "Batch Size Max" is
the largest per-device batch that ran without OOM (a run measured to fit); "DDP will result in OOM error even with
batch size 1" (Table 3) is a run measured not to fit. No peak is printed, so nothing is scored.

Table 3 (GPT-XL, expressible): run_clm_no_trainer.py `--config_name gpt2-xl` (GPT-2 XL's shapes, randomly
initialised: the same bytes), wikitext-2 at `--block_size 128`, per-device batch 16; DeepSpeed ZeRO-3 with the
optimizer and the parameters offloaded to pinned CPU memory (zero3_offload_config_accelerate.json: fp16 with
dynamic loss scaling, DeepSpeed's AdamW, i.e. its CPU Adam under offload, overlap_comm, reduce_bucket_size and
stage3 prefetch "auto", stage3_max_live_parameters 1e9, zero3_init_flag true). DDP: the same script under plain
DDP in fp16 mixed precision, torch AdamW. Tables 1 and 2 (DeBERTa-v2-XL sequence classification, BlenderBot-400M
sequence-to-sequence) are kept as not expressible: the CLI estimates causal language models.
"""

from __future__ import annotations

_URL = ("https://github.com/huggingface/blog/blob/29b1b07dc3947a6f5e8bd4baf104afa73ccf9d26/"
        "accelerate-deepspeed.md")
_SETTINGS = (
    "HF blog 'Accelerate Large Model Training using DeepSpeed', Table {table}: {what} on 2 x Titan RTX 24 GB, "
    "accelerate mixed_precision fp16, num_processes 2{more}"
)
_GPT_XL = (", run_clm_no_trainer.py --config_name gpt2-xl on wikitext-2 at --block_size 128, no gradient "
           "checkpointing, eager attention (transformers of mid 2022)")


def _row(key: str, table: int, quote: str, printed: str, what: str, *, ran: bool, argv: str | None = None,
         why: str | None = None, unexpressed=(), more: str = "") -> dict:
    row = {"key": key, "source": "hf-blog-accelerate-deepspeed", "url": _URL, "quote": quote, "printed": printed,
           "measured_bytes": None, "metric": "reserved", "ran": ran, "argv": argv,
           "assumptions": _SETTINGS.format(table=table, what=what, more=more), "unexpressed": list(unexpressed)}
    if not argv:
        row["not_expressible"] = why
    return row


_ENCODER = ("microsoft/deberta-v2-xlarge-mnli (900M) for sequence classification (MRPC, max_length 128): an "
            "encoder with a classification head; the CLI estimates causal language models")
_SEQ2SEQ = ("facebook/blenderbot-400M-distill, an encoder-decoder (source 128, target 64 tokens, padded): the CLI "
            "estimates causal language models")
ROWS = [
    _row("hf-ds-deberta-v2-xl-ddp-bs8", 1, "| DDP (Distributed Data Parallel) | 8 | 103.57 | 2.04 | 0.931 | 0.904 |",
         "8", "DeBERTa-v2-XL under DDP, batch 8", ran=True, why=_ENCODER),
    _row("hf-ds-deberta-v2-xl-zero2-bs40", 1,
         "| DeepSpeed ZeRO Stage 2 | **40** | **28.98** | **1.79** | **0.936** | **0.912** |", "**40**",
         "DeBERTa-v2-XL under ZeRO-2, batch 40", ran=True, why=_ENCODER),
    _row("hf-ds-blenderbot-400m-ddp-bs100", 2, "| DDP (Distributed Data Parallel) | 100 | 50 | 27.36 | 48.41 | ",
         "100", "BlenderBot-400M under DDP, batch 100", ran=True, why=_SEQ2SEQ),
    _row("hf-ds-blenderbot-400m-zero2-bs200", 2, "| DeepSpeed ZeRO Stage 2 | **200** | **100** | **19.06** | "
         "**39.27** | ", "**200**", "BlenderBot-400M under ZeRO-2, batch 200", ran=True, why=_SEQ2SEQ),
    _row("hf-ds-gpt2-xl-ddp-mixed-bs1-oom", 3, "| DDP (Distributed Data Parallel) | - | - | OOM Error", "OOM Error",
         "GPT-2 XL under DDP, batch 1", ran=False, more=_GPT_XL,
         argv="estimate --model gpt2-xl --gpus 2 --gpu-memory 24GB --strategy ddp --precision mixed "
              "--micro-batch 1 --seq-len 128 --no-gradient-checkpointing --attention eager --format json",
         unexpressed=["the DDP run's batch: 'OOM error even with batch size 1' (the argv says 1)"]),
    _row("hf-ds-gpt2-xl-zero3-offload-bs16", 3, "| DeepSpeed ZeRO Stage 3 | **16** | 6608.35 | |", "**16**",
         "GPT-2 XL under ZeRO-3 with optimizer and parameter offload to CPU, batch 16", ran=True, more=_GPT_XL,
         argv="estimate --model gpt2-xl --gpus 2 --gpu-memory 24GB --strategy zero3 --offload-optimizer cpu "
              "--offload-param cpu --precision mixed --micro-batch 16 --seq-len 128 --no-gradient-checkpointing "
              "--attention eager --format json",
         unexpressed=["DeepSpeed's 'auto' bucket and prefetch sizes, filled from GPT-2 XL's hidden size 1600 by "
                      "accelerate (reduce_bucket_size 2.56M, stage3_prefetch_bucket_size 2.3M elements)"]),
]
