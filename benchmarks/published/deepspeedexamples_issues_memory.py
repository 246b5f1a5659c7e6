"""Frozen: DeepSpeed-Chat step 1 on one GPU, as users of deepspeedai/DeepSpeedExamples reported it (source
`deepspeedexamples-issues-memory`): verdict rows only.

The repository's own issue threads (not DeepSpeed's threads, another source), each read in the code of its day:
applications/DeepSpeed-Chat/training/step1_supervised_finetuning/training_scripts/single_gpu/run_1.3b.sh runs
`deepspeed --num_gpus 1 main.py --model_name_or_path facebook/opt-1.3b --gradient_accumulation_steps 8 --lora_dim 128
--zero_stage $ZERO_STAGE --deepspeed` (ZERO_STAGE 0 unless given), and main.py's defaults fill the rest:
per_device_train_batch_size 16, max_seq_len 512 with every sample padded to it (data_utils.py
`padding="max_length"`), no gradient checkpointing, no offload, DeepSpeed fp16 (ds_utils.py: the engine casts the
module to fp16, FusedAdam with an fp32 master copy of what trains), OPT's dropout 0.1 on. `--lora_dim 128` converts
every nn.Linear under "decoder.layers." (q, k, v, out_proj, fc1, fc2 of the 24 layers) to LinearLayer_LoRA, which
sets `self.weight.requires_grad = False` (utils/module/lora.py; LoRA dropout 0, no fusion in training); without
`--only_optimize_lora` the rest stays trainable: the tied token embedding (50,272 x 2,048) and the position
embedding, the layer norms and the linears' biases. requirements.txt installs transformers from git (4.28/4.29
dev in April-May 2023): OPT's eager attention and its CrossEntropyLoss on the fp16 logits (no autocast under
DeepSpeed: --loss-dtype fp16). ZeRO stage 0 on one GPU is said as --strategy zero1 (one partition: the same fp32
master and Adam bytes), as deepspeed_threads_memory.py says it.

- #551 (2023-05-26, "CUDA OOM when running DeepSpeed-Chat step 1 with opt-1.3b and one A100-40G"): the script
  unchanged (quoted in the thread), deepspeed 0.9.2, torch 1.12.1: out of memory. Code read at 95adffb (that day).
- #387 (2023-04-21, "Default configuration running with V100-32G causes OOM"): the default single-GPU script on one
  V100-32G: out of memory; then `--per_device_train_batch_size 8 --per_device_eval_batch_size 8
  --gradient_accumulation_steps 2 --lora_dim 128 --zero_stage $ZERO_STAGE --only_optimize_lora` with zero_stage 2
  "I can run Step1 successfully with a single V100-32G" (only the LoRA matrices train). Code read at 3a77097.
"""

from __future__ import annotations

_SOURCE = "deepspeedexamples-issues-memory"
_REPO = "https://github.com/deepspeedai/DeepSpeedExamples"
_STEP1 = "applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py"
_C551 = "95adffb17720b66d2888793851e4652ae28202ba"  # master, 2023-05-26
_C387 = "3a77097a7b6ce67b78ea7c05129b90915cfebbb0"  # master, 2023-04-21
_OPT_13B = "benchmarks/published/models/opt-1.3b/config.json"

_Q_551 = ("Hi I am trying out the step 1 of deepspeed-chat with the default example. I have one A100-40G, with "
          "torch1.12.1-cuda11.3-cudnn8 and deepspeed==0.9.2 in my local environment. I ran into a CUDA OOM error.")
_Q_387_OOM = ("When using the official default configuration with a single V100-32G, I found this will cause OOM with "
              "the whole pipline.")
_Q_387_RAN = ("`deepspeed --num_gpus 1 main.py \\\n   --model_name_or_path facebook/opt-1.3b \\\n   "
              "--per_device_train_batch_size 8 --per_device_eval_batch_size 8 \\\n   --gradient_accumulation_steps 2 "
              "--lora_dim 128 --zero_stage $ZERO_STAGE \\\n   --only_optimize_lora --deepspeed --output_dir $OUTPUT &> "
              "$OUTPUT/training.log`\n\nAnd I set zero_stage to 2. With this above command I can run Step1 "
              "successfully with a single V100-32G.")

_LORA = ("--lora --lora-rank 128 --lora-target q_proj --lora-target k_proj --lora-target v_proj --lora-target "
         "out_proj --lora-target fc1 --lora-target fc2 ")
_EMBEDDINGS = "--lora-modules-to-save embed_tokens --lora-modules-to-save embed_positions "
_COMMON = ("--precision mixed --loss-dtype fp16 --optimizer adamw --seq-len 512 --fixed-lengths --attention eager "
           "--no-gradient-checkpointing ")
_SETTINGS = (
    "DeepSpeedExamples#{issue} ({date}): DeepSpeed-Chat step 1 main.py at {commit} on one {gpu}: facebook/opt-1.3b "
    "(1,315,758,080 parameters, the stand-in's count) under DeepSpeed's fp16 engine (module cast to fp16, FusedAdam "
    "with an fp32 master copy of the trained parameters), ZeRO stage {stage}, LoRA r=128 (scaling 1, no dropout) on "
    "every linear of the 24 decoder layers with their weights frozen, {trains}, micro-batch {mb} x 512 tokens (every "
    "sample padded to max_seq_len), accumulation {ga}, no gradient checkpointing, OPT's eager attention and its loss "
    "on the fp16 logits; transformers from git ({stack}, the released version of that month assumed)"
)
_UNEXPRESSED_ALL = [
    "the linears' biases and the layer norms also train (without --only_optimize_lora): about 0.5M parameters",
    "DeepSpeed-Chat trains the embeddings themselves; the CLI's modules_to_save counts a trainable copy beside a "
    "frozen original (0.21 GB of fp16 weights more)",
    "OPT's dropout 0.1 in attention and MLP (its masks)",
]
_ZERO0 = "ZeRO stage 0 (DeepSpeed's FP16_Optimizer, no flat ZeRO buffers), said as ZeRO-1 on one GPU"

ROWS = [
    {"key": "dse551-opt-1.3b-dschat-step1-lora128-b16-zero0-1xa100-40gb-oom", "source": _SOURCE,
     "url": f"{_REPO}/issues/551", "code_url": f"{_REPO}/blob/{_C551}/{_STEP1}",
     "quote": _Q_551, "printed": "CUDA OOM error", "measured_bytes": None, "metric": "allocated", "ran": False,
     "argv": f"estimate --model {_OPT_13B} --system 1xA100-40GB --strategy zero1 --micro-batch 16 "
             f"--gradient-accumulation 8 {_COMMON}{_LORA}{_EMBEDDINGS}--stack transformers==4.29.2 --format json",
     "assumptions": _SETTINGS.format(
         issue=551, date="2023-05-26", commit="95adffb", gpu="A100 40GB", stage="0", mb=16, ga=8,
         trains="the tied token embedding and the position embedding trained too (no --only_optimize_lora)",
         stack="4.29.2") + ": out of memory (the thread)",
     "unexpressed": [*_UNEXPRESSED_ALL, _ZERO0]},
    {"key": "dse387-opt-1.3b-dschat-step1-lora128-b16-zero0-1xv100-32gb-oom", "source": _SOURCE,
     "url": f"{_REPO}/issues/387", "code_url": f"{_REPO}/blob/{_C387}/{_STEP1}",
     "quote": _Q_387_OOM, "printed": "cause OOM", "measured_bytes": None, "metric": "allocated", "ran": False,
     "argv": f"estimate --model {_OPT_13B} --system 1xV100-32GB --strategy zero1 --micro-batch 16 "
             f"--gradient-accumulation 8 {_COMMON}{_LORA}{_EMBEDDINGS}--stack transformers==4.28.1 --format json",
     "assumptions": _SETTINGS.format(
         issue=387, date="2023-04-21", commit="3a77097", gpu="V100 32GB", stage="0", mb=16, ga=8,
         trains="the tied token embedding and the position embedding trained too (no --only_optimize_lora)",
         stack="4.28.1") + ": out of memory (the thread: 'the official default configuration')",
     "unexpressed": [*_UNEXPRESSED_ALL, _ZERO0]},
    {"key": "dse387-opt-1.3b-dschat-step1-lora128-only-lora-b8-zero2-1xv100-32gb-ran", "source": _SOURCE,
     "url": f"{_REPO}/issues/387", "code_url": f"{_REPO}/blob/{_C387}/{_STEP1}",
     "quote": _Q_387_RAN, "printed": "run Step1 successfully", "measured_bytes": None, "metric": "allocated",
     "ran": True,
     "argv": f"estimate --model {_OPT_13B} --system 1xV100-32GB --strategy zero2 --micro-batch 8 "
             f"--gradient-accumulation 2 {_COMMON}{_LORA}--stack transformers==4.28.1 --format json",
     "assumptions": _SETTINGS.format(
         issue=387, date="2023-04-21", commit="3a77097", gpu="V100 32GB", stage="2", mb=8, ga=2,
         trains="only the LoRA matrices trained (--only_optimize_lora)", stack="4.28.1")
     + ": ran (the thread)",
     "unexpressed": ["OPT's dropout 0.1 in attention and MLP (its masks)"]},
]
