"""Frozen, a verdict row: the Hugging Face blog "Fine-tuning Llama 2 70B using PyTorch FSDP" (September 2023).

The page: Llama-2-70b-chat fully fine-tuned on 2 nodes x 8 A100 80GB ("Fine-tuning completed in ~13.5 hours"),
launched with `accelerate launch --config_file configs/fsdp_config.yaml --num_processes 16 --num_machines 2
train.py ... --max_seq_len 2048 --bf16 True --packing True --per_device_train_batch_size 1
--gradient_accumulation_steps 1 --use_gradient_checkpointing True --use_flash_attn True`. No peak is printed: the
run is a measured "ran" (the estimate must not say "does not fit").

Read in pacman100/DHS-LLM-Workshop at 95acb4b (2023-09-10, the last commit under chat_assistant/training before
2023-09-14, the post's week): configs/fsdp_config.yaml is FSDP with `fsdp_sharding_strategy: 1` (FULL_SHARD),
TRANSFORMER_BASED_WRAP, no offload, `fsdp_use_orig_params: true`, `mixed_precision: 'bf16'` (FSDP MixedPrecision
over fp32 sharded parameters: utils.create_and_prepare_model loads the model without a torch_dtype, so in fp32), the
Trainer with
`gradient_checkpointing=True`, packing through a constant-length dataset (every sequence 2,048 tokens), FastChat's
flash-attn 2 monkey patch on LlamaAttention, and the script's default `optim` "paged_adamw_32bit" (bitsandbytes'
paged AdamW: 32-bit states in CUDA managed memory, which the driver can page to the host under pressure).
"""

from __future__ import annotations

_URL = ("https://github.com/huggingface/blog/blob/062647cf135331f92028ace3a8ada12f0b76cec9/"
        "ram-efficient-pytorch-fsdp.md")
_CODE = ("https://github.com/pacman100/DHS-LLM-Workshop/blob/95acb4b034136fd99cdeeb7d8eb5ef8ad28afa1f/"
         "chat_assistant/training/")
# configs/fsdp_config.yaml at 95acb4b with the blog's launch overrides (16 processes on 2 machines).
_CONFIG = """compute_environment: LOCAL_MACHINE
distributed_type: FSDP
downcast_bf16: 'no'
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch_policy: BACKWARD_PRE
  fsdp_forward_prefetch: true
  fsdp_offload_params: false
  fsdp_sharding_strategy: 1
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_sync_module_states: true
  fsdp_use_orig_params: true
machine_rank: 0
main_training_function: main
mixed_precision: 'bf16'
num_machines: 2
num_processes: 16
rdzv_backend: static
same_network: true
use_cpu: false
"""

ROWS = [
    {"key": "hf-blog-llama-2-70b-fsdp-full-16gpu-ran", "source": "hf-blog-llama2-70b-fsdp", "url": _URL,
     "quote": "Fine-tuning completed in ~13.5 hours and below is the training loss plot.",
     "printed": "Fine-tuning completed", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model llama-2-70b --system 2x8xA100-80GB --strategy fsdp_full --fsdp-version 1 "
             "--micro-batch 1 --seq-len 2048 --precision mixed --gradient-checkpointing --attention flash "
             "--optimizer paged-adamw --format json",
     "config": _CONFIG,
     "assumptions": (
         "HF blog 'Fine-tuning Llama 2 70B using PyTorch FSDP' (Sept 2023), DHS-LLM-Workshop chat_assistant/training "
         f"at 95acb4b ({_CODE}): Llama-2-70b-chat full fine-tuning, fp32 parameters under FSDP1 FULL_SHARD with bf16 "
         "MixedPrecision over 2 x 8 A100 80GB, micro-batch 1, packed 2,048-token sequences, gradient checkpointing, "
         "flash-attn 2, the Trainer's paged_adamw_32bit; measured to run (no peak printed)"),
     # --optimizer paged-adamw was listed unexpressed (the CLI had no word for it) when the row was scored
     # 'does not fit' at 96.5 GiB; the word now exists (estimate/paged_states.py) and the argv says it
     "unexpressed": [
         "transformers and accelerate from their main branches of September 2023 (the CLI estimates the installed "
         "ones); FastChat's flash-attn monkey patch instead of transformers' own flash_attention_2",
     ]},
]
