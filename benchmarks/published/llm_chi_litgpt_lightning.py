"""Frozen: teaching-on-testbeds/llm-chi (source `llm-chi-litgpt-lightning-2025`), a course lab on Chameleon's A100
and V100 nodes whose index.md keeps, in HTML comments ("Note to self"), the memory lines its author's runs printed,
beside the scripts that printed them (torch/*.py). Read at 200edaf (2025-10-21, the last commit before the 2026
rewrite to BLIP): the A100 notes were committed with 79ea613 (2025-02-14), the V100 notes with 5bb926b (2025-02-19).

The scripts (torch/, read at 200edaf): a LightningModule around litgpt's `LLM` (litgpt 0.5.7, `lightning<2.5.0.post0`,
in the lab's pytorch/pytorch:2.5.1-cuda12.4 container). `trainer_setup` builds litgpt's GPT and loads the
checkpoint; `L.Trainer(precision="bf16-true", max_epochs=1, limit_val_batches=0)` casts it to bf16 (weights,
gradients and torch.optim.AdamW's states in bf16, no autocast; AdamW's default foreach step); each step runs
`self.llm(input_ids, target_ids)`: the full logits, then litgpt's chunked_cross_entropy on
`logits[..., :-1, :]` reshaped (a copy) and split into 128-row chunks, in bf16 (--loss-dtype bf16). Data: Alpaca2k
with max_seq_length 512, each batch padded to its longest sample (--varying-lengths up to 512). No activation
checkpointing. litgpt's attention is torch SDPA (is_causal); on a V100 (sm70) bf16 has neither the flash nor the
memory-efficient kernel, so SDPA runs its math path there.

* a100_llama7b_1device.py: OpenLLaMA 7B, batch 4, one A100 80GB; the note has the committed script's run
  ("Without gradient accumulation") and one "with gradient accumulation 4" (accumulate_grad_batches=4 assumed, the
  setting the V100 scripts spell).
* a100_llama7b_4ddp.py: the same on 4 A100s with `DDPStrategy()`. At 79ea613 (the note's commit) the file carried
  `FSDPStrategy(sharding_strategy='FULL_SHARD')` by mistake, fixed by 3a9e7f3 ("Fix error in DDP script", three
  days later); the note's figures (78 GB reserved, 70 GB allocated) are not the FSDP note's (56, 32), so the run
  is read as DDP, the fixed script.
* a100_llama7b_4fsdp.py, a100_llama7b_4fsdp_8batch.py: `FSDPStrategy(sharding_strategy='FULL_SHARD')`, batch 4 and 8.
  No auto_wrap_policy: Lightning wraps the whole model in one FSDP unit (all of it gathered for forward and backward).
* v100_llama1b_1device.py, v100_llama1b_4ddp.py, v100_llama1b_4fsdp.py: TinyLlama 1.1B (the 3T-token checkpoint),
  batch 8, accumulate_grad_batches 4, on one or four V100 32GB.
* v100_llama3b_4fsdp.py: OpenLLaMA 3B (v1: the shapes of models/open-llama-3b-v2, the same 32,000 vocabulary),
  batch 1, FSDP FULL_SHARD on four V100s.

What the number is: the line `Allocated: {memory_allocated() / 1024**3:.2f} GB, Reserved: {memory_reserved() /
1024**3:.2f} GB` printed inside training_step, after its forward and loss, at the last step of the epoch (the
notes show it above "Epoch 0: 100%"). "Allocated" is the current allocation mid-step, not a peak: not a row.
"Reserved" is the caching allocator's pool then; nothing in this loop empties the cache, so it is the run's
reserved high-water mark (up to that last step's forward): metric reserved, GiB. A multi-GPU note lists three lines
(ranks not labelled, one of the four missing): the largest is the row.
"""

from __future__ import annotations

_SOURCE = "llm-chi-litgpt-lightning-2025"
_COMMIT = "200edaf26fd31536b81d71b3b1c674cc6b936e0b"  # main, 2025-10-21: the notes and the fixed scripts
_REPO = f"https://github.com/teaching-on-testbeds/llm-chi/blob/{_COMMIT}"
_MODELS = {"7b": "benchmarks/published/models/open-llama-7b/config.json",
           "3b": "benchmarks/published/models/open-llama-3b-v2/config.json",
           "1b": "benchmarks/published/models/tinyllama-1.1b/config.json"}
_NAMES = {"7b": "OpenLLaMA 7B", "3b": "OpenLLaMA 3B (v1)", "1b": "TinyLlama 1.1B"}

_COMMON = ("--precision bf16 --loss-dtype bf16 --optimizer adamw --optimizer-kernel foreach --seq-len 512 "
           "--varying-lengths --no-gradient-checkpointing --attention sdpa --stack torch==2.5.1")
_STRATEGY = {"single": "--strategy single",
             "ddp": "--strategy ddp",
             "fsdp": "--strategy fsdp_full --fsdp-version 1 --no-fsdp-upcast --fsdp-wrap none"}
_HOW = {"single": "on one GPU", "ddp": "with Lightning's DDPStrategy() on 4 GPUs",
        "fsdp": "with Lightning's FSDPStrategy(sharding_strategy='FULL_SHARD') on 4 GPUs (FSDP1, shards in bf16)"}
_UNEXPRESSED = [
    "litgpt's own GPT (the Llama architecture; the argv names a transformers config of the same shapes) and its "
    "chunked cross-entropy over 128-row chunks of the bf16 logits, after a reshape that copies the shifted logits",
    "the printed Reserved is memory_reserved() at the last step's forward, not max_memory_reserved(): whatever the "
    "last backward and optimizer step add is not in it",
]
_EXTRA = {
    "ddp": ["Lightning's DDPStrategy defaults: gradient_as_bucket_view off, so DDP's buckets hold a second copy of "
            "the bf16 gradients",
            "three lines for four ranks, not labelled: the largest taken"],
    # no auto_wrap_policy: one FSDP unit around the whole model, said with --fsdp-wrap none since fdd7aa4 (it was
    # unexpressed while this source was frozen)
    "fsdp": ["three lines for four ranks, not labelled: the largest taken"],
}


def _row(key: str, model: str, gpu: str, gpus: int, strategy: str, batch: int, accumulation: int, quote: str,
         printed: str, script: str, note: str) -> dict:
    system = f"{gpus}x{gpu}"
    extra = _EXTRA.get(strategy, [])
    # V100 (sm70) in bf16: SDPA takes its math path, which the estimate now reads from the GPU (attention_backend.py,
    # 3209c96); it was unexpressed while this source was frozen
    return {
        "key": f"llmchi-{key}", "source": _SOURCE, "url": f"{_REPO}/index.md", "code_url": f"{_REPO}/torch/{script}",
        "quote": quote, "printed": printed, "measured_bytes": int(round(float(printed.split()[0]) * 2**30)),
        "metric": "reserved",
        "argv": (f"estimate --model {_MODELS[model]} --system {system} {_STRATEGY[strategy]} --micro-batch {batch} "
                 f"--gradient-accumulation {accumulation} {_COMMON} --format json"),
        "assumptions": (f"teaching-on-testbeds/llm-chi torch/{script} at 200edaf ({note}): {_NAMES[model]} fully "
                        f"fine-tuned through litgpt 0.5.7's LLM in a Lightning Trainer, bf16-true (bf16 weights, "
                        f"gradients and AdamW states), {_HOW[strategy]} ({system}), batch {batch} of Alpaca2k padded "
                        f"to the batch's longest sample up to 512 tokens, accumulation {accumulation}, no "
                        "checkpointing, torch 2.5.1; Reserved printed at the last step, read as the run's peak"),
        "unexpressed": [*_UNEXPRESSED, *extra],
    }


_A100_NOTE = "the note of 79ea613, 2025-02-14"
_V100_NOTE = "the note of 5bb926b, 2025-02-19"
ROWS = [
    _row("open-llama-7b-full-bf16true-b4-1xa100-80gb", "7b", "A100-80GB", 1, "single", 4, 1,
         "Without gradient accumulation:\n\nAllocated: 61.97 GB, Reserved: 71.35 GB", "71.35 GB",
         "a100_llama7b_1device.py", _A100_NOTE),
    _row("open-llama-7b-full-bf16true-b4-ga4-1xa100-80gb", "7b", "A100-80GB", 1, "single", 4, 4,
         "a100_llama7b_1device.py\n\nwith gradient accumulation 4:\n\nAllocated: 61.99 GB, Reserved: 73.30 GB",
         "73.30 GB", "a100_llama7b_1device.py", _A100_NOTE + "; accumulate_grad_batches=4 added to the script"),
    _row("open-llama-7b-full-bf16true-b4-ddp-4xa100-80gb", "7b", "A100-80GB", 4, "ddp", 4, 1,
         "a100_llama7b_4ddp.py\n\nAllocated: 70.44 GB, Reserved: 78.06 GB\nAllocated: 69.62 GB, Reserved: 78.12 GB\n"
         "Allocated: 73.98 GB, Reserved: 78.30 GB", "78.30 GB", "a100_llama7b_4ddp.py",
         _A100_NOTE + "; the script as fixed by 3a9e7f3"),
    _row("open-llama-7b-full-bf16true-b4-fsdp1-root-unit-4xa100-80gb", "7b", "A100-80GB", 4, "fsdp", 4, 1,
         "a100_llama7b_4fsdp.py (FULL_SHARD)\n\nAllocated: 31.96 GB, Reserved: 56.00 GB\nAllocated: 32.79 GB, "
         "Reserved: 55.98 GB\nAllocated: 36.33 GB, Reserved: 55.76 GB", "56.00 GB", "a100_llama7b_4fsdp.py",
         _A100_NOTE),
    _row("open-llama-7b-full-bf16true-b8-fsdp1-root-unit-4xa100-80gb", "7b", "A100-80GB", 4, "fsdp", 8, 1,
         "batch size 8:\n\nAllocated: 62.95 GB, Reserved: 67.67 GB\nAllocated: 59.51 GB, Reserved: 62.71 GB\n"
         "Allocated: 62.95 GB, Reserved: 64.74 GB", "67.67 GB", "a100_llama7b_4fsdp_8batch.py", _A100_NOTE),
    _row("tinyllama-1.1b-full-bf16true-b8-ga4-1xv100-32gb", "1b", "V100-32GB", 1, "single", 8, 4,
         "v100_llama1b_1device.py\n\nAllocated: 23.92 GB, Reserved: 25.16 GB", "25.16 GB",
         "v100_llama1b_1device.py", _V100_NOTE),
    _row("tinyllama-1.1b-full-bf16true-b8-ga4-ddp-4xv100-32gb", "1b", "V100-32GB", 4, "ddp", 8, 4,
         "v100_llama1b_4ddp.py\n\nAllocated: 23.75 GB, Reserved: 31.22 GB\nAllocated: 23.10 GB, Reserved: 27.19 GB\n"
         "Allocated: 25.27 GB, Reserved: 28.74 GB", "31.22 GB", "v100_llama1b_4ddp.py", _V100_NOTE),
    _row("tinyllama-1.1b-full-bf16true-b8-ga4-fsdp1-root-unit-4xv100-32gb", "1b", "V100-32GB", 4, "fsdp", 8, 4,
         "v100_llama1b_4fsdp.py (FULL_SHARD)\n\nAllocated: 19.13 GB, Reserved: 26.12 GB\nAllocated: 20.65 GB, "
         "Reserved: 25.27 GB\nAllocated: 21.35 GB, Reserved: 24.99 GB", "26.12 GB", "v100_llama1b_4fsdp.py",
         _V100_NOTE),
    _row("open-llama-3b-full-bf16true-b1-fsdp1-root-unit-4xv100-32gb", "3b", "V100-32GB", 4, "fsdp", 1, 1,
         "Note to self:\n\nAllocated: 13.12 GB, Reserved: 28.35 GB\nAllocated: 13.26 GB, Reserved: 27.56 GB\n"
         "Allocated: 13.27 GB, Reserved: 27.54 GB", "28.35 GB", "v100_llama3b_4fsdp.py",
         _V100_NOTE + ", under 'Experiment: OpenLLaMA 3B model on 4x V100 32GB with FSDP'"),
]
