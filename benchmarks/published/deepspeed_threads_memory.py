"""Frozen: GPU memory measured in microsoft/DeepSpeed's PR and issue threads (source `deepspeed-threads-memory`).

Three threads in deepspeedai/DeepSpeed (formerly microsoft/DeepSpeed), each read in the code it ran:

- PR #7999 (May 2026, "zero3: SDMA allgather via mori"): the example it added, examples/sdma_allgather/, reports
  "peak mem (rank 0) ... 96.45 GB" for Qwen3-32B under ZeRO-3 on 8 x MI300X (README at e7402be, the PR branch's
  last commit on it). train_qwen3_zero3.py at that commit: `AutoModelForCausalLM.from_config` of Qwen/Qwen3-32B's
  config (random weights) under `deepspeed.zero.Init`, `use_cache = False`, batch 1 x 1,024 tokens of wikitext-103
  concatenated and cut into full chunks (no padding), `engine(input_ids, labels, attention_mask)`, backward, step;
  ds_config_zero3.json: ZeRO-3, bf16 (DeepSpeed's bf16 engine: fp32 master partitions, no autocast), DeepSpeed's
  "AdamW" (FusedAdam), no offload, no activation checkpointing, gradient clipping 1.0, buckets 5e7,
  stage3_max_live_parameters 1e9, sub_group_size 1e12. The figure: `torch.cuda.max_memory_allocated() / 1e9` on
  rank 0 after `reset_peak_memory_stats()` before the first step, over 100 steps ("GB": 10^9 bytes).
- issue #4158 (2023-08-16): DeepSpeed-Chat's step-1 SFT launched by `training_scripts/opt/single_gpu/run_1.3b.sh`,
  but the launcher's own log line in the issue shows what main.py received: `[runner.py:540:main] cmd = ... main.py
  --model_name_or_path facebook/opt-1.3b --data_path /ai/ld/remote/DeepSpeedExamples-master/applications/
  DeepSpeed-Chat/training/step1_supervised_finetuning/data/Dahoas/rm-static`: none of the script's
  `--gradient_accumulation_steps 8 --lora_dim 128 --zero_stage $ZERO_STAGE`, so main.py's defaults ran (read in
  DeepSpeedExamples at a143850, the day before): lora_dim 0 (full fine-tuning), gradient_accumulation_steps 1,
  zero_stage 0, per_device_train_batch_size 16, max_seq_len 512 with every sample padded to it (data_utils.py
  `padding="max_length"`), fp16 on (ds_utils.py), FusedAdam through DeepSpeed's FP16 optimizer (fp32 master
  copy), no gradient checkpointing, dropout on. The title's `MemAllocated=17.94GB` after a step says the same:
  1,315,758,080 parameters x (2 fp16 + 4 fp32 master + 8 Adam) bytes = 17.15 GiB, plus the loop's `outputs`
  holding the fp16 logits (16 x 512 x 50,272 x 2 B = 0.77 GiB): 17.92 GiB (LoRA's states would be ~5). The title quotes
  DeepSpeed's ThroughputTimer line: `MaxMemAllocated` is `round(max_memory_allocated() / 1024**3, 2)` (GiB; timer.py
  at DeepSpeed 341cefd).
- issue #4953 (2024-01-13): the alignment-handbook's Zephyr-7B-beta full DPO (recipes/zephyr-7b-beta/dpo/
  config_full.yaml at c74ed11) launched with its deepspeed_zero3.yaml on ONE A100-80GB (num_processes 1, zero3_init
  true), per_device_train_batch_size and gradient accumulation set to 1: out of memory. The recipe: model
  alignment-handbook/zephyr-7b-sft-full (Mistral-7B shapes), torch_dtype null (fp32 load, cast to bf16 by the
  engine), bf16, beta 0.01, max_length 1024 with max_prompt_length 512, gradient checkpointing (use_reentrant
  False), adamw_torch (wrapped by ZeRO-3); trl 0.7.7 prepares the reference model as a second ZeRO-3 engine;
  setup.py pins transformers 4.36.2, deepspeed 0.12.2, torch 2.1.2. The issue's "it works without deepspeed" is not
  kept: the fp32 policy, reference model and gradients alone pass 80 GB, so that run had other settings.
"""

from __future__ import annotations

_SOURCE = "deepspeed-threads-memory"
_DS = "https://github.com/deepspeedai/DeepSpeed"
_SDMA_COMMIT = "e7402be99bb4554f2583619edaeec5802408c7de"  # examples/sdma_allgather/README: the GPT cell filled in
_DSE_COMMIT = "a1438506c6eedb729dff455ea237eeecc2f2876c"  # DeepSpeedExamples main on 2023-08-15
_HANDBOOK_COMMIT = "c74ed111710d57f563cfbf1806cfb8f07dd3dc67"  # alignment-handbook main on 2024-01-11
_QWEN3_32B = "benchmarks/published/models/qwen3-32b/config.json"
_OPT_13B = "benchmarks/published/models/opt-1.3b/config.json"

_Q_SDMA = ("| peak mem (rank 0) | 12.12 GB, unchanged off ↔ on | 96.45 GB, unchanged off ↔ on |")
_Q_4158 = ("[BUG]why I run the 1.3b opt model,the memory use 60gb,the batchsize is only 128. when i read the "
           "report:MemAllocated=17.94GB, MaxMemAllocated=54.06GB.who can tell me what is the MaxMemAllocated mean?i")
_Q_4953 = ("I am trying to run this [example](https://github.com/huggingface/alignment-handbook/blob/main/recipes/"
           "zephyr-7b-beta/README.md): which trains a 7B model with a single A100-80GB GPU (https://github.com/"
           "huggingface/alignment-handbook/blob/main/scripts/run_dpo.py), but it is giving me OOM error even with "
           "gradient accmulation step = 1, train_batch = 1.")

ROWS = [
    {"key": "ds-pr7999-qwen3-32b-full-zero3-8xmi300x", "source": _SOURCE,
     "url": f"{_DS}/blob/{_SDMA_COMMIT}/examples/sdma_allgather/README.md",
     "code_url": f"{_DS}/blob/{_SDMA_COMMIT}/examples/sdma_allgather/train_qwen3_zero3.py",
     "quote": _Q_SDMA, "printed": "96.45 GB", "measured_bytes": int(96.45e9), "printed_unit": 1e9,
     "metric": "allocated",
     "argv": f"estimate --model {_QWEN3_32B} --system 8xMI300X --strategy zero3 --precision mixed --optimizer adamw "
             "--micro-batch 1 --seq-len 1024 --fixed-lengths --attention sdpa --format json",
     "assumptions": (
         "DeepSpeed PR #7999's example (README and trainer at e7402be, May 2026): Qwen3-32B (random weights, "
         "from_config under zero.Init: 32,762,123,264 parameters, the stand-in's count) trained under ZeRO-3 on 8 x "
         "MI300X (192 GB), DeepSpeed's bf16 engine with fp32 master partitions and FusedAdam, batch 1 x 1,024 "
         "full tokens, no activation checkpointing, use_cache False; the 'Qwen3-32B' column's peak: "
         "torch.cuda.max_memory_allocated() / 1e9 on rank 0 after 100 steps. The trainer sets "
         "`cfg.attn_implementation = \"eager\"`, a plain attribute transformers' PretrainedConfig does not read (it "
         "keeps the choice in `_attn_implementation`, set from the `attn_implementation` keyword), so "
         "from_config built the default SDPA attention (--attention sdpa); the loss: transformers' ForCausalLMLoss "
         "on fp32-upcast logits (the default --loss-dtype)"),
     "unexpressed": [
         "ds_config_zero3.json's sub_group_size 1e12 (one sub-group: the fp32 gradient copy of the step spans the "
         "whole 4.1e9-element partition; the estimate takes DeepSpeed's default 1e9) and its 5e7 buckets",
         "the transformers and torch (ROCm) versions of the run are not printed (May 2026); the installed "
         "transformers is assumed",
         "the AMD MI300X's runtime (HIP context, RCCL) is not part of an allocated figure"]},
    {"key": "ds4158-opt-1.3b-dschat-step1-lora128-fp16-zero0", "source": _SOURCE,
     "url": f"{_DS}/issues/4158",
     "code_url": ("https://github.com/deepspeedai/DeepSpeedExamples/blob/"
                  f"{_DSE_COMMIT}/applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py"),
     "quote": _Q_4158, "printed": "54.06GB", "measured_bytes": int(54.06 * 2**30), "printed_unit": 2**30,
     "metric": "allocated",
     "argv": f"estimate --model {_OPT_13B} --system 1xA100-80GB --strategy zero1 "
             "--precision mixed --loss-dtype fp16 --optimizer adamw --micro-batch 16 --gradient-accumulation 1 "
             "--seq-len 512 --fixed-lengths --attention eager --stack transformers==4.31.0 --format json",
     "assumptions": (
         "DeepSpeed#4158 (2023-08-16): DeepSpeed-Chat step 1 at DeepSpeedExamples a143850, main.py with its "
         "defaults (the issue's launcher line `cmd = ... main.py --model_name_or_path facebook/opt-1.3b --data_path "
         ".../Dahoas/rm-static`: run_1.3b.sh's --gradient_accumulation_steps 8 --lora_dim 128 never reached it; "
         "MemAllocated=17.94GB after a step is full fine-tuning's fp16 weights, fp32 master and Adam states, 17.15 "
         "GiB, plus the loop's fp16 logits): facebook/opt-1.3b (1,315,758,080 parameters, the stand-in's count; the "
         "embedding resized to 50,272, its own size) fully fine-tuned, DeepSpeed fp16 engine with FusedAdam and an "
         "fp32 master copy, ZeRO stage 0, batch 16 x 512 tokens (every sample padded to max_seq_len), accumulation "
         "1, no gradient checkpointing, OPT's dropout 0.1 on. transformers >= 4.31.0 (requirements.txt; 4.31.0 was "
         "current): OPT's eager attention (its masked scores clamped by torch.max), its CrossEntropyLoss on the "
         "fp16 logits (no upcast: --loss-dtype fp16, no autocast under DeepSpeed). The figure: DeepSpeed's "
         "ThroughputTimer `MaxMemAllocated`, max_memory_allocated() in GiB at a logged step (after the initial "
         "perplexity evaluation at batch 16, no_grad). The GPU is not named ('the memory use 60gb' of nvidia-smi): "
         "one 80 GB card assumed; ZeRO stage 0 said as --strategy zero1 on one GPU (one partition: the same fp32 "
         "master and Adam bytes)"),
     "unexpressed": [
         "the title's 'batchsize is only 128' is the script's 16 x 8, which the launcher line shows did not run",
         "ZeRO stage 0 (DeepSpeed's FP16_Optimizer, no flat ZeRO buffers), said as ZeRO-1 on one GPU"]},
    {"key": "ds4953-zephyr-7b-dpo-full-zero3-1xa100-80gb-oom", "source": _SOURCE,
     "url": f"{_DS}/issues/4953",
     "code_url": ("https://github.com/huggingface/alignment-handbook/blob/"
                  f"{_HANDBOOK_COMMIT}/recipes/zephyr-7b-beta/dpo/config_full.yaml"),
     "quote": _Q_4953, "printed": "it is giving me OOM error", "measured_bytes": None, "metric": "allocated",
     "ran": False,
     "argv": "estimate --model mistral-7b --system 1xA100-80GB --strategy zero3 --kind dpo --precision mixed "
             "--optimizer adamw --micro-batch 1 --gradient-accumulation 1 --max-prompt-length 512 "
             "--max-completion-length 512 --beta 0.01 --gradient-checkpointing --stack transformers==4.36.2 "
             "--format json",
     "assumptions": (
         "DeepSpeed#4953 (2024-01-13): alignment-handbook scripts/run_dpo.py with recipes/zephyr-7b-beta/dpo/"
         "config_full.yaml and recipes/accelerate_configs/deepspeed_zero3.yaml (both at c74ed11) on one A100-80GB "
         "(the posted YAML: num_processes 1, ZeRO-3, zero3_init_flag true, mixed_precision bf16), batch 1, "
         "accumulation 1: alignment-handbook/zephyr-7b-sft-full (Mistral-7B-v0.1's shapes: the mistral-7b "
         "preset) full DPO, beta 0.01, prompt up to 512 and prompt + completion up to 1,024 tokens (chosen and "
         "rejected concatenated: 2 sequences), gradient checkpointing (non-reentrant), adamw_torch under "
         "DeepSpeed's bf16 ZeRO-3 engine (fp32 master partitions), the reference model a second ZeRO-3 engine "
         "(trl 0.7.7); transformers 4.36.2 (setup.py): SDPA attention, Mistral's logits upcast to fp32: out of "
         "memory (the issue)"),
     "unexpressed": ["UltraFeedback's real lengths: the argv says the caps (512 prompt, 512 completion)",
                     "evaluation every 100 steps at per_device_eval_batch_size 8 (not a training step)"]},
]
