"""Frozen, verdict rows: out-of-memory runs reported in hiyouga/LLaMA-Factory's issue tracker (source
`llamafactory-issues-memory-reports`). Each thread posts its full command or YAML and an out-of-memory error on
named GPUs; none prints a peak, so each row is a measured out of memory (the estimate must not say "fits").

LLaMA-Factory's defaults, read at the commit of each thread's day (hiyouga/LLaMA-Factory; its DeepSpeed JSON files
are not in the stored history, so the ZeRO configs' bucket sizes are listed as unexpressed): gradient checkpointing
on unless `disable_gradient_checkpointing` (model_args.py; patcher.py enables it with use_reentrant True); the model
loaded in the compute dtype of `--fp16`/`--bf16` (a 16-bit module: full fine-tuning under DeepSpeed trains it with
DeepSpeed's 16-bit optimizer and fp32 master partitions, --precision mixed); LoRA's trainable parameters cast to
fp32 (adapter.py `cast_trainable_params_to_fp32`) over the 16-bit base under the Trainer's autocast (--lora
--precision mixed); the SFT collator pads each batch to its own longest sample, cut at `cutoff_len`
(--varying-lengths); `llamafactory-cli train` with more than one visible GPU re-launches itself under torchrun
(cli.py: `get_device_count() > 1`), plain DDP when no `deepspeed` is given.
"""

from __future__ import annotations

_REPO = "https://github.com/hiyouga/LLaMA-Factory/blob/{commit}/{path}"
_JUN_2024 = "937f49ec3d7e67c52d8288f40dedb8c0e2566ea7"
_AUG_2024 = "3595d26846e0b3b467ae4addd52b7f3172ce4dba"
_APR_2024 = "0dcc9e0bcae7bd6a032e73042e8ff8c0754dd943"
_NOV_2023 = "37a0d62a82a6ddfc8e89949b6412ccd7fa23cb69"
_MAR_2024 = "fbd0584391f2549a2097a3f119b0eaae006dd424"
_FEB_2025 = "d55f42020624af1872ceddeaf20e08c43fa257fd"
_QWEN_14B = "benchmarks/published/models/qwen-14b/config.json"
_QWEN15_7B = "benchmarks/published/models/qwen-7b/config.json"
_QWEN15_32B = "benchmarks/published/models/qwen1.5-32b/config.json"
_LONGEST = "the longest sample of the user's own dataset (not public; the argv says the {cap}-token cutoff_len)"
_SOURCE = "llamafactory-issues-memory-reports"
_EVAL = "evaluation every {steps} steps at per_device_eval_batch_size 1: not a training step"

ROWS = [
    {"key": "llamafactory4133-qwen1.5-7b-full-zero2-8xa100-40gb-oom", "source": _SOURCE,
     "url": "https://github.com/hiyouga/LlamaFactory/issues/4133",
     "code_url": _REPO.format(commit=_JUN_2024, path="src/llamafactory/hparams/model_args.py"),
     "quote": "qwen1.5_7B使用Zero-2方式在8张A100(40G)和64张910A(32G)上SFT，报OOM", "printed": "8张A100(40G)",
     "measured_bytes": None, "metric": "reserved", "ran": False,
     "argv": f"estimate --model {_QWEN15_7B} --system 8xA100-40GB --strategy zero2 --precision mixed --optimizer "
             "adamw --micro-batch 1 --seq-len 512 --varying-lengths --gradient-checkpointing --format json",
     "assumptions": (
         "LLaMA-Factory#4133 (2024-06-07, LLaMA Factory 0.7.1.dev0): torchrun --nproc_per_node 8 src/train.py with "
         "the posted YAML: Qwen1.5-7B full SFT, deepspeed examples/deepspeed/ds_z2_config.json (ZeRO-2), fp16: true "
         "(an fp16 module, DeepSpeed's fp16 optimizer with fp32 master partitions), cutoff_len 512, batch 1 x "
         "accumulation 1, gradient checkpointing (LLaMA-Factory's default), flash_attn 'auto' (SDPA), on 8 x A100 "
         "40GB: CUDA out of memory (the thread's title; the 64 x 910A NPU run is not a GPU). The argv names the "
         "qwen-7b stand-in: Qwen1.5-7B has Qwen-7B's shapes (32 layers, 4096, 11008, vocabulary 151936, untied; "
         "7,721,324,544 parameters)"),
     "unexpressed": ["LLaMA-Factory's ds_z2_config.json buckets (allgather and reduce 5e8, contiguous gradients, "
                     "round-robin gradients; the file is not in the stored history)",
                     "fp16 rather than bf16 (the same bytes; a dynamic loss scaler)",
                     _LONGEST.format(cap=512), _EVAL.format(steps=2),
                     "the thread is labelled solved; how is not in the stored excerpt"]},
    {"key": "llamafactory5187-qwen2-72b-lora-ddp-4xa100-80gb-oom", "source": _SOURCE,
     "url": "https://github.com/hiyouga/LlamaFactory/issues/5187",
     "code_url": _REPO.format(commit=_AUG_2024, path="src/llamafactory/cli.py"),
     "quote": "A100（80G）*4 lora微调Qwen2-72B-Instruct模型，显存溢出", "printed": "A100（80G）*4",
     "measured_bytes": None, "metric": "reserved", "ran": False,
     "argv": "estimate --model qwen2.5-72b --system 4xA100-80GB --strategy ddp --lora --precision mixed --lora-rank 8 "
             "--micro-batch 1 --gradient-accumulation 2 --seq-len 1024 --varying-lengths --gradient-checkpointing "
             "--format json",
     "assumptions": (
         "LLaMA-Factory#5187 (2024-08-15, llamafactory 0.8.4.dev0, transformers 4.43.4, peft 0.12.0, torch 2.4.0, "
         "A100-SXM4-80GB printed): CUDA_VISIBLE_DEVICES=0,1,2,3 llamafactory-cli train with no deepspeed: torchrun "
         "over 4 GPUs (cli.py), DDP, each GPU holding the whole fp16 Qwen2-72B-Instruct; LoRA on every linear "
         "(lora_target 'all', rank 8, LLaMA-Factory's defaults), fp32 adapters under fp16 autocast, cutoff_len 1024, "
         "batch 1 x accumulation 2, gradient checkpointing (default): out of memory (显存溢出). The argv names "
         "qwen2.5-72b: Qwen2-72B has its shapes (80 layers, 8192, 29568, 64/8 heads, vocabulary 152064)"),
     "unexpressed": ["fp16 rather than bf16 (the same bytes)", _LONGEST.format(cap=1024), _EVAL.format(steps=20)]},
    {"key": "llamafactory3259-qwen1.5-32b-full-zero3-offload-8xa100-oom", "source": _SOURCE,
     "url": "https://github.com/hiyouga/LlamaFactory/issues/3259",
     "code_url": _REPO.format(commit=_APR_2024, path="src/llmtuner/model/patcher.py"),
     "quote": "use   ds_z3_offload_config.json   +  bs 1  + 8 x  A100", "printed": "8 x  A100",
     "measured_bytes": None, "metric": "reserved", "ran": False,
     "argv": f"estimate --model {_QWEN15_32B} --system 8xA100-80GB --strategy zero3 --offload-param cpu "
             "--offload-optimizer cpu --precision mixed --optimizer adamw --micro-batch 1 --seq-len 32768 "
             "--varying-lengths --gradient-checkpointing --attention flash --format json",
     "assumptions": (
         "LLaMA-Factory#3259 (2024-04-13, src/train_bash.py of llmtuner 0.6.x): deepspeed --num_gpus 8 with "
         "examples/deepseed/ds_z3_offload_config.json (ZeRO-3, parameters and optimizer offloaded to the CPU), "
         "Qwen1.5-32B-Chat full SFT, --bf16 (a bf16 module, fp32 masters on the host), --flash_attn "
         "(FlashAttention-2), "
         "cutoff_len 32768, batch 1 x accumulation 1, gradient checkpointing (default, patcher.py): out of memory "
         "(the title). The A100s' memory is not stated: the argv says 80 GB, the larger (an out of memory there is one "
         "on 40 GB too). Qwen1.5-32B stand-in: 64 layers, 5120, 27392, 40/8 heads, vocabulary 152064, untied "
         "(32,512,218,112 parameters)"),
     "unexpressed": ["the A100s' memory (40 or 80 GB; 80 assumed)", _LONGEST.format(cap=32768),
                     "ds_z3_offload_config.json's sizes (the file is not in the stored history; DeepSpeed's defaults "
                     "assumed)", "evaluation every 1000 steps on val_size 0.0005 at batch 1 x 32768: not a training "
                     "step"]},
]

# LLaMA-Factory#3035's Accelerate YAML as posted (duogou.yaml; its commented-out line kept).
_DUOGOU_YAML = """compute_environment: LOCAL_MACHINE
debug: false
  #distributed_type: MULTI_GPU
deepspeed_config:
  zero3_init_flag: false
  zero_stage: 3
distributed_type: DEEPSPEED
downcast_bf16: 'no'
gpu_ids: all
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 2
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
"""

ROWS += [
    {"key": "llamafactory1409-qwen-14b-lora-zero2-8x3090-oom", "source": _SOURCE,
     "url": "https://github.com/hiyouga/LlamaFactory/issues/1409",
     "code_url": _REPO.format(commit=_NOV_2023, path="src/llmtuner/tuner/core/loader.py"),
     "quote": "8卡3090微调Qwen-14B-chat显存溢出OOM", "printed": "8卡3090", "measured_bytes": None,
     "metric": "reserved", "ran": False,
     "argv": f"estimate --model {_QWEN_14B} --system 8xRTX3090 --strategy zero2 --lora --precision mixed "
             "--lora-rank 8 --lora-target q_proj --lora-target k_proj --lora-target v_proj --lora-dropout 0.1 "
             "--micro-batch 1 --gradient-accumulation 12 --seq-len 1024 --varying-lengths --gradient-checkpointing "
             "--format json",
     "assumptions": (
         "LLaMA-Factory#1409 (2023-11-06, llmtuner at 37a0d62): deepspeed -i localhost:0,...,7 src/train_bash.py "
         "--deepspeed ds_config_zero2.json (posted: ZeRO-2, fp16 auto), Qwen-14B-Chat LoRA on c_attn, rank 8 and "
         "dropout 0.1 (the defaults of the day), --fp16 (an fp16 base, fp32 adapters under autocast), cutoff_len "
         "1024, batch 1 x accumulation 12, gradient checkpointing (prepare_model_for_training's default) on 8 x RTX "
         "3090 24 GB: out of memory (the title). ZeRO-2 shards no frozen weight: each GPU holds the whole 16-bit "
         "base. The argv names the qwen-14b stand-in (Qwen-14B's shapes: 40 layers, 5120, 13696, vocabulary "
         "152064; the qwen2 family's code, not Qwen-1's remote code)"),
     "unexpressed": ["LoRA on Qwen-1's fused c_attn (5120 -> 15360): the stand-in's q/k/v_proj",
                     "Qwen-1's remote code (its own attention, flash-attn if installed; its loss on the 16-bit "
                     "logits)", _LONGEST.format(cap=1024)]},
    {"key": "llamafactory3035-qwen1.5-14b-lora-zero3-noinit-2x4090-oom", "source": _SOURCE,
     "url": "https://github.com/hiyouga/LlamaFactory/issues/3035",
     "code_url": _REPO.format(commit=_MAR_2024, path="src/llmtuner/model/patcher.py"),
     "quote": "单机双卡4090 跑qwen1.5-14B-chat 开启了zero3 一直 torch.cuda.OutOfMemoryError",
     "printed": "torch.cuda.OutOfMemoryError", "measured_bytes": None, "metric": "reserved", "ran": False,
     "config": _DUOGOU_YAML,
     "argv": f"estimate --model {_QWEN_14B} --system 2xRTX4090 --lora --lora-rank 8 --lora-target q_proj "
             "--lora-target v_proj --micro-batch 1 --gradient-accumulation 6 --seq-len 1024 --varying-lengths "
             "--gradient-checkpointing --attention eager --stack accelerate==0.28.0 --format json",
     "assumptions": (
         "LLaMA-Factory#3035 (2024-03-29, llmtuner at fbd0584): accelerate launch --config_file duogou.yaml (posted: "
         "DeepSpeed ZeRO-3 with zero3_init_flag false, mixed_precision bf16, 2 processes) src/train_bash.py, "
         "Qwen1.5-14B-Chat LoRA on q_proj and v_proj (rank 8, dropout 0: the defaults), the model loaded in bf16 "
         "(LLaMA-Factory infers the compute dtype from the checkpoint), no --flash_attn (patcher.py then sets eager "
         "attention), cutoff_len 1024, batch 1 x accumulation 6, gradient checkpointing (default), on two RTX 4090 "
         "24 GB: out of memory. Without zero.Init DeepSpeed's engine moves the whole module to the GPU before "
         "partitioning it (engine.py _configure_distributed_model: `if not (self.dont_change_device or "
         "is_zero_init_model): self.module.to(self.device)`): 28 GB of bf16 weights on a 24 GB card. The argv "
         "names the qwen-14b stand-in (Qwen1.5-14B has its shapes: 14,167,290,880 parameters); accelerate of the "
         "day: fbd0584's setup.py asks accelerate>=0.27.2 and 0.28.0 (2024-03-12) was the newest release on "
         "2024-03-29 (--stack accelerate==0.28.0, sayable since 7f4a862: every release before 1.0.0 honours "
         "zero3_init_flag false, e9e5a73)"),
     "unexpressed": [_LONGEST.format(cap=1024), _EVAL.format(steps=100)]},
    {"key": "llamafactory7055-qwen2.5-14b-lora-zero3-offload-liger-2xa100-80gb", "source": _SOURCE,
     "url": "https://github.com/hiyouga/LlamaFactory/issues/7055",
     "code_url": _REPO.format(commit=_FEB_2025, path="src/llamafactory/model/model_utils/liger_kernel.py"),
     "quote": "GPU memory情况：\n```\n1084564 root   1  Compute 100%  72782MiB", "printed": "72782MiB",
     "measured_bytes": 72782 * 2**20, "metric": "nvidia-smi", "ran": True, "argv": None,
     "not_expressible": ("--loss-kernel liger under ZeRO-3 with Qwen2.5-14B's untied lm_head is refused by "
                         "accelwiz (fused_loss.py, Liger-Kernel#1048: ZeRO-3 never gathers the head's weight), "
                         "yet this run trained under it (the thread's own figure; #7110 by the same user: 40 and "
                         "75 GB on the two GPUs half-way through)"),
     "assumptions": (
         "LLaMA-Factory#7055 (2025-02-24, llamafactory 0.9.1.dev0, liger_kernel 0.5.3, transformers 4.44.0, "
         "deepspeed 0.14.4, torch 2.4.0): Qwen2.5-14B-Instruct LoRA rank 16 alpha 32 dropout 0.05 on every linear, "
         "ds_z3_offload_config.json (ZeRO-3, parameters and optimizer on the CPU), enable_liger_kernel, "
         "FlashAttention-2, cutoff_len 12800, batch 4 x accumulation 2, bf16, on 2 x A100 80GB; the figure: one "
         "process's line of a GPU monitor (nvidia-smi's MiB), the larger GPU of two that the title calls uneven")},
]
