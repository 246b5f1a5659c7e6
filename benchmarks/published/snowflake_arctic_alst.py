"""Frozen: Snowflake's Arctic Long Sequence Training (ALST) recipes (snowflakedb/ArcticTraining,
projects/sequence-parallelism), the baselines: Llama-3.1-8B-Instruct fully fine-tuned under DeepSpeed ZeRO-3 at
one long packed sequence per GPU, without Ulysses sequence parallelism, Liger, tiled MLP or activation offload. The
recipe YAMLs carry their authors' measured footprint in comments beside each `max_length` tried ("NV 71.91 GB",
"close to oom", "ok 137.36 GB"); each row is one such comment, read with the code of its commit:

* 9d33fd2 (2025-06-03, PR #45 squash-merged: ALST's first release on main): run-sp1-llama-8b-baseline.yml (one H100,
  parameters and optimizer offloaded), run-sp32-llama-8b-baseline.yml (4 nodes x 8 H100, optimizer offloaded,
  `sequence_parallel_size: 1`: plain ZeRO-3 data parallelism), run-sp8-llama-8b-no-ulysses-no-liger-no-extras.yml
  (8 H100, optimizer offloaded).
* 839dcf5 (2025-05-21, a commit of PR #45, refs/pull/45/head): the same two baseline files with two more comments
  (one H100 without parameter offload at 26,000; 32 H100 at 32,000 and 40,000) that the squash dropped.
* b8013b9 (2025-07-18, a commit of PR #245, merged as 5885b9f): run-h200-sp1-llama-8b-baseline.yml (one H200,
  parameters and optimizer offloaded, flash_attention_3) with 50,000, 60,000, 65,000 and 70,000 tried; 5885b9f
  keeps 65,000.

The code (arctic_training/ at each commit): `HfDeepSpeedConfig` is built before the model (zero.Init: ZeRO-3
partitions while loading); AutoModelForCausalLM.from_pretrained(torch_dtype=bfloat16, attn_implementation from the
YAML); `model.gradient_checkpointing_enable()` unless disable_activation_checkpoint (default False; transformers
4.51's default: reentrant); the DeepSpeed config gets `bfloat16: enabled` from the model dtype (DeepSpeed's bf16
engine: fp32 master partitions, here on the CPU with the optimizer) and gradient_clipping 1.0; the YAML's
`zero_optimization` names only the stage and the offloads (DeepSpeed's default bucket sizes); optimizer
`cpu_adam` (DeepSpeedCPUAdam); micro_batch_size 1, gradient accumulation 1. With sequence_parallel_size 1,
SFTTrainer.loss is `self.model(**batch).loss`: transformers' own loss on the full logits (4.51: ForCausalLMLoss
upcasts them to fp32). The SFT data factory packs ultrachat_200k conversations greedily up to max_length
(always_max_length False: a pack closes before the sample that would pass it) and pads each batch to a multiple of
256 (pad_to div_length), position_ids marking the packed samples (flash attention's varlen path, no mask): every
sequence close to max_length (--fixed-lengths at max_length).

What the number is: the trainer's per-step log (metrics.py) appends debug.get_mem_metrics() on rank 0: "MA ... |
Max_MA ... | NV x GB", NV = pynvml's used memory of the device / 2**30: the whole GPU's footprint (nvidia-smi) in
GiB, rank 0's, after a step (exit_iteration 3 to 10). The README's environment: H100 80GB nodes (8 GPUs, 1.9 TB
host memory), torch 2.8.0.dev20250507, flash_attn 2.7.4, transformers 4.51.3, and `export
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` before every launch.
"""

from __future__ import annotations

_REPO = "https://github.com/snowflakedb/ArcticTraining/blob/{commit}/projects/sequence-parallelism/{path}"
_MAIN = "9d33fd28feb7a7ed2fcf0bfe61d58849787e9c0f"
_PR45 = "839dcf59071b3d041c4acb64ed7a629325afb68d"
_PR245 = "b8013b9634a576f0bb4d6e192ae6aeef6a2b4bc0"
_H200_MAIN = "5885b9f82af51960082a993d9fe45442a32dc982"
_SOURCE = "snowflake-arctic-alst-2025"

_SETTINGS = (
    "Snowflake ArcticTraining ALST baseline, {path} at {commit}: meta-llama/Llama-3.1-8B-Instruct (the "
    "llama-3.1-8b preset's shapes) loaded in bf16 under zero.Init, DeepSpeed ZeRO-3 with {offload}, DeepSpeed's bf16 "
    "engine (fp32 master partitions with the optimizer on the CPU), DeepSpeedCPUAdam, gradient checkpointing, "
    "{attention}, batch 1 x accumulation 1 of ultrachat_200k conversations packed up to max_length {seq:,} tokens, "
    "transformers' own loss (4.51.3), sequence_parallel_size 1 (no Ulysses), no Liger, no tiled MLP, no activation "
    "offload; {gpus}. {what}"
)
_UNEXPRESSED = [
    "packing: each sequence stops before the ultrachat sample that would pass max_length and is padded to a "
    "multiple of 256, so a few hundred to a few thousand tokens under max_length; the argv says max_length",
    "torch 2.8.0.dev20250507 (nightly) and DeepSpeed from the ALST branch (0.17.x); the CLI's stack names "
    "transformers only",
    "reentrant activation checkpointing (transformers 4.51's default for gradient_checkpointing_enable())",
]
_NV = ("rank 0's `NV` (pynvml used memory / 2**30, the whole device) in the trainer's step log, as the YAML's "
       "comment prints it")


def _argv(system: str, offload: str, seq: int, attention: str = "flash") -> str:
    return (f"estimate --model llama-3.1-8b --system {system} --strategy zero3 {offload}--precision mixed "
            f"--optimizer adamw --micro-batch 1 --seq-len {seq} --fixed-lengths --gradient-checkpointing "
            f"--attention {attention} --expandable-segments --stack transformers==4.51.3 --format json")


_BOTH = "--offload-param cpu --offload-optimizer cpu "
_OPTIM = "--offload-optimizer cpu "
_BOTH_WORDS = "parameters and optimizer offloaded to the CPU"
_OPTIM_WORDS = "the optimizer offloaded to the CPU (parameters on the GPU)"
_FA2 = "flash_attention_2 (flash_attn 2.7.4)"
_FA3 = "flash_attention_3 (the H200 recipes' 'needs fa3': the Hopper kernel)"
_ONE_H100 = "one H100 80GB of an 8-GPU node (1.9 TB host memory)"
_ONE_H200 = "one H200 (141 GB) of an 8-GPU node"
_32_H100 = "4 nodes x 8 H100 80GB (ZeRO-3 over 32 ranks)"
_8_H100 = "one node of 8 H100 80GB (ZeRO-3 over 8 ranks)"


def _row(key: str, commit: str, path: str, quote: str, printed: str, system: str, offload: str, words: str,
         seq: int, attention: str, gpus: str, what: str, ran: bool = True, measured: bool = True,
         extra=()) -> dict:
    return {"key": key, "source": _SOURCE, "url": _REPO.format(commit=commit, path=path), "quote": quote,
            "printed": printed, "measured_bytes": int(round(float(printed.split()[0]) * 2**30)) if measured else None,
            "metric": "nvidia-smi", "ran": ran,
            "argv": _argv(system, offload, seq),
            "assumptions": _SETTINGS.format(path=path, commit=commit[:7], offload=words, attention=attention,
                                            seq=seq, gpus=gpus, what=what),
            "unexpressed": [*_UNEXPRESSED, *extra]}


_SP1 = "run-sp1-llama-8b-baseline.yml"
_SP32 = "run-sp32-llama-8b-baseline.yml"
_SP8 = "run-sp8-llama-8b-no-ulysses-no-liger-no-extras.yml"
_H200 = "run-h200-sp1-llama-8b-baseline.yml"

_Q_SP1_MAIN = ("    offload_optimizer:\n      device: cpu\n    offload_param:\n      device: cpu\n...\n"
               "#  max_length: 32_000 # w/ param offload: NV 71.91 GB\n"
               "  max_length: 36_000 # w/ param offload close to oom")
_Q_SP1_PR45 = ("#  max_length: 8_000 # w/o param offload\n#  max_length: 26_000 # w/o param offload NV 71.27 GB\n"
               "#  max_length: 32_000 # w/ param offload: NV 71.91 GB\n"
               "  max_length: 36_000 # w/ param offload close to oom")
_Q_SP32_MAIN = ("sequence_parallel_size: 1\n\ndeepspeed:\n  zero_optimization:\n    stage: 3\n    offload_optimizer:\n"
                "      device: cpu\n...\n  max_length: 36_000 # ok")
_Q_SP32_PR45 = ("#  max_length: 32_000 # NV 71.62 GB w/o liger\n  max_length: 36_000 # ok\n"
                "#  max_length: 40_000 # almost oom\n#  max_length: 160_000 # ok w/ liger")
_Q_SP8 = ("sequence_parallel_size: 1\n\ndeepspeed:\n  zero_optimization:\n    stage: 3\n    offload_optimizer:\n"
          "      device: cpu\n...\n  max_length: 32_000")
_Q_H200 = ("  max_length: 8_000 #\n  #max_length: 50_000 # ok NV 124.47 GB\n  #max_length: 55_000 #\n"
           "  #max_length: 60_000 # ok 126.79 GB\n  #max_length: 65_000 # ok 137.36 GB\n"
           "  #max_length: 70_000 # cache flushes")
_Q_H200_MAIN = "  max_length: 65_000 # ok 137.36 GB"
_ONE_GPU_H100 = "8xH100-80GB --gpus 1"
_ONE_GPU_H200 = "8xH200 --gpus 1"

ROWS = [
    _row("alst-llama-3.1-8b-zero3-offload-1xh100-32k", _MAIN, _SP1, _Q_SP1_MAIN, "71.91 GB", _ONE_GPU_H100, _BOTH,
         _BOTH_WORDS, 32_000, _FA2, _ONE_H100, f"The figure: {_NV}"),
    _row("alst-llama-3.1-8b-zero3-offload-1xh100-36k-ran", _MAIN, _SP1, _Q_SP1_MAIN, "close to oom", _ONE_GPU_H100,
         _BOTH, _BOTH_WORDS, 36_000, _FA2, _ONE_H100, "The recipe's setting, 'close to oom': it ran (no figure)",
         measured=False),
    _row("alst-llama-3.1-8b-zero3-offload-optim-1xh100-26k", _PR45, _SP1, _Q_SP1_PR45, "71.27 GB", _ONE_GPU_H100,
         _OPTIM, _OPTIM_WORDS, 26_000, _FA2, _ONE_H100,
         f"The figure: {_NV}; 'w/o param offload': the file's offload_param block removed for this run"),
    _row("alst-llama-3.1-8b-zero3-offload-optim-32xh100-32k", _PR45, _SP32, _Q_SP32_PR45, "71.62 GB",
         "4x8xH100-80GB", _OPTIM, _OPTIM_WORDS, 32_000, _FA2, _32_H100, f"The figure: {_NV} ('w/o liger')"),
    _row("alst-llama-3.1-8b-zero3-offload-optim-32xh100-36k-ran", _MAIN, _SP32, _Q_SP32_MAIN, "36_000 # ok",
         "4x8xH100-80GB", _OPTIM, _OPTIM_WORDS, 36_000, _FA2, _32_H100, "The recipe's setting, 'ok': it ran",
         measured=False),
    _row("alst-llama-3.1-8b-zero3-offload-optim-32xh100-40k-ran", _PR45, _SP32, _Q_SP32_PR45, "almost oom",
         "4x8xH100-80GB", _OPTIM, _OPTIM_WORDS, 40_000, _FA2, _32_H100,
         "The comment 'almost oom' read as: it ran, near the GPU's memory (no figure)", measured=False),
    _row("alst-llama-3.1-8b-zero3-offload-optim-8xh100-32k-ran", _MAIN, _SP8, _Q_SP8, "max_length: 32_000",
         "8xH100-80GB", _OPTIM, _OPTIM_WORDS, 32_000, _FA2, _8_H100,
         "The recipe's setting, one of the README's examples made on this hardware (no figure): read as it ran",
         measured=False),
    _row("alst-llama-3.1-8b-zero3-offload-1xh200-50k", _PR245, _H200, _Q_H200, "124.47 GB", _ONE_GPU_H200, _BOTH,
         _BOTH_WORDS, 50_000, _FA3, _ONE_H200, f"The figure: {_NV}"),
    _row("alst-llama-3.1-8b-zero3-offload-1xh200-60k", _PR245, _H200, _Q_H200, "126.79 GB", _ONE_GPU_H200, _BOTH,
         _BOTH_WORDS, 60_000, _FA3, _ONE_H200, f"The figure: {_NV} (the comment omits 'NV'; the same log field)"),
    _row("alst-llama-3.1-8b-zero3-offload-1xh200-65k", _H200_MAIN, _H200, _Q_H200_MAIN, "137.36 GB", _ONE_GPU_H200,
         _BOTH, _BOTH_WORDS, 65_000, _FA3, _ONE_H200,
         f"The figure: {_NV} (the comment omits 'NV'; the same log field); the setting 5885b9f ships"),
    _row("alst-llama-3.1-8b-zero3-offload-1xh200-70k-ran", _PR245, _H200, _Q_H200, "cache flushes", _ONE_GPU_H200,
         _BOTH, _BOTH_WORDS, 70_000, _FA3, _ONE_H200,
         "'cache flushes' read as: it ran, the caching allocator emptying its cache to retry (at the GPU's memory, "
         "no out-of-memory error)", measured=False),
]

# The recipes beside the baselines (same commits): Liger's fused linear cross-entropy (`model: type: liger`) under
# ZeRO-3, alone or with Ulysses, tiled MLP and activation-checkpoint offload. The CLI has no Ulysses, tiled MLP or
# checkpoint offload; Liger alone under ZeRO-3 is a refusal in the CLI (Liger-Kernel#1048) that these runs
# contradict unless ArcticTraining gathers the head itself (not read here).
_Q_LIGER = "  # max_length: 200_000 # ok 93.28 GB\n  max_length: 300_000 # ok 134.96 GB\n...\n  #max_length: 350_000 # oom"
ROWS.append({
    "key": "alst-llama-3.1-8b-zero3-offload-liger-1xh200-300k", "source": _SOURCE,
    "url": _REPO.format(commit=_PR245, path="run-h200-sp1-llama-8b-liger.yml"), "quote": _Q_LIGER,
    "printed": "134.96 GB", "measured_bytes": int(round(134.96 * 2**30)), "metric": "nvidia-smi", "ran": True,
    "argv": None,
    "not_expressible": "two refusals (checked for a usage error only): 300,000 tokens pass llama-3.1-8b's "
                       "131,072 positions ('sequence length 300000 is longer than the 131072 positions'; the "
                       "recipe runs past them, RoPE positions are not capped), and Liger's fused linear "
                       "cross-entropy (model type liger: AutoLigerKernelForCausalLM) under ZeRO-3: '--loss-kernel "
                       "liger under ZeRO-3 with llama-3.1-8b's untied lm_head: Liger reads the weight outside the "
                       "head's forward, so ZeRO-3 never gathers it (Liger-Kernel#1048)', while this recipe is "
                       "stated to run ('ok 134.96 GB')",
    "assumptions": "ALST H200 Liger recipe at b8013b9: Llama-3.1-8B-Instruct, ZeRO-3 with parameters and optimizer "
                   "offloaded, flash_attention_3, Liger, batch 1 x 300,000 packed tokens, one H200; NV in GiB"})
