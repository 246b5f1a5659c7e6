"""Frozen: GPU memory from QwenLM/Qwen's issue tracker (source `qwen-issues-memory-2023`); the README's profiling table
is another source (qwen-readme-profiling).

- #366 (2023-09-28, rockagen): "官方lora微调脚本A100的卡内存占用大约45G左右" (the official LoRA fine-tuning script
  takes about 45G on an A100 card), before the README's profiling (2023-10-07) and before 10-07's change that dropped
  the trainable embeddings for chat models.

Read at dd18992 (main on 2023-09-28; finetune.py as at 73f4040, 2023-09-12), finetune/finetune_lora_single_gpu.sh:
`python finetune.py --model_name_or_path Qwen/Qwen-7B --bf16 True --per_device_train_batch_size 2
--gradient_accumulation_steps 8 ... --model_max_length 2048 --lazy_preprocess True --gradient_checkpointing
--use_lora` (one GPU, no DeepSpeed). finetune.py: `AutoModelForCausalLM.from_pretrained(..., trust_remote_code=True)`
with no dtype (Qwen's code casts its weights to bf16 where the GPU supports it: config bf16/fp16/fp32 unset, autoset),
LoraConfig r=64, alpha 16, dropout 0.05 on c_attn, c_proj, w1, w2 (every block linear) with
`modules_to_save=["wte", "lm_head"]` (a trainable copy of the embedding and of the output layer, each 151,936 x 4,096),
enable_input_require_grads, optim adamw_torch, every sample right-padded to model_max_length (2,048 tokens).
requirements.txt pins transformers 4.32.0. flash-attention: Qwen's code uses it when installed (use_flash_attn
"auto"), which the README of the day recommends: --attention flash.
"""

from __future__ import annotations

_SOURCE = "qwen-issues-memory-2023"
_COMMIT = "dd1899267a0fe49289b8f45244066c09281f5b65"  # main on 2023-09-28
_MODEL = "benchmarks/published/models/qwen-7b/config.json"
_Q366 = ("rockagen · comment · 2023-09-28\n官方lora微调脚本A100的卡内存占用大约45G左右，24G卡可以用"
         "[LLaMA-Efficient-Tuning](https://github.com/hiyouga/LLaMA-Efficient-Tuning)这个脚本，4090能lora的")

ROWS = [
    {"key": "qwen366-7b-lora-r64-emb-1xa100-b2-2048", "source": _SOURCE,
     "url": "https://github.com/QwenLM/Qwen/issues/366",
     "code_url": f"https://github.com/QwenLM/Qwen/blob/{_COMMIT}/finetune/finetune_lora_single_gpu.sh",
     "quote": _Q366, "printed": "45G", "measured_bytes": 45 * 2**30, "metric": "nvidia-smi",
     "argv": (f"estimate --model {_MODEL} --system 1xA100-80GB --strategy single --precision bf16 --lora "
              "--lora-rank 64 --lora-dropout 0.05 --lora-modules-to-save embed_tokens --lora-modules-to-save lm_head "
              "--optimizer adamw --micro-batch 2 --gradient-accumulation 8 --seq-len 2048 --fixed-lengths "
              "--gradient-checkpointing --attention flash --stack transformers==4.32.0 --format json"),
     "assumptions": (
         "QwenLM/Qwen#366 (2023-09-28): finetune/finetune_lora_single_gpu.sh at dd18992 as shipped (Qwen-7B, one GPU, "
         "no DeepSpeed): bf16 weights (Qwen's code casts them), Trainer bf16 autocast, LoRA r=64 alpha 16 dropout "
         "0.05 on c_attn/c_proj/w1/w2 plus PEFT's trainable copies of wte and lm_head (modules_to_save), torch "
         "AdamW (adamw_torch), batch 2 x accumulation 8, every sample padded to 2,048 tokens, gradient "
         "checkpointing, flash-attention; '大约45G左右' (about 45G) on an A100 read as nvidia-smi GiB, so an 80 GB "
         "A100"),
     "unexpressed": [
         "Qwen's own modeling code (model_type qwen, trust_remote_code): the argv names a Qwen2 config.json of its "
         "shapes (qwen-readme-profiling's stand-in); Qwen's fused c_attn gets one adapter where the stand-in's "
         "q/k/v get three (LoRA parameters 16,384 r vs 24,576 r per layer: under 0.1 GB at r=64)",
         "the figure is approximate ('大约...左右') and its tool unnamed; whether flash-attention was installed and "
         "which Qwen-7B (base or chat, the same shapes) the commenter ran are not stated: the script's Qwen/Qwen-7B "
         "and the README's flash-attention assumed",
         "torch is not stated (requirements: torch>=1.12): the CLI estimates the installed torch",
     ]},
]
