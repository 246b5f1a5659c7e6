"""Design (frozen until issue 28's seventeenth round): GPU memory from 01-ai/Yi's issue tracker (source
`yi-issues-memory-2023`); Yi's finetune README is another source (yi-finetune-readme).

- #249 (2023-12-12): Yi-34B through the repository's finetune/sft/main.py on 8 x L40 (44.32 GiB per the traceback):
  `deepspeed main.py --per_device_train_batch_size 1 --max_seq_len 1024 --gradient_accumulation_steps 1
  --gradient_checkpointing --zero_stage 2 --deepspeed --offload --lora_dim 128 --lora_module_name "layers."`: CUDA out
  of memory. A maintainer (jiangchengSilent, 2023-12-25): "你使用的这个脚本，在CUDA_VISIBLE_DEVICES=0,1,2,3的情况下，在
  A卡实测显存需要接近80G" (this script, on four GPUs, measured on A cards at close to 80G).

Read at e97d1e6 (main on 2023-12-25), finetune/sft/main.py and finetune/utils (a DeepSpeed-Chat fork):
create_hf_model loads `from_pretrained(..., use_flash_attention_2=True)` with no dtype (fp32 on the CPU; no
HfDeepSpeedConfig below ZeRO-3) and resizes the embedding to the tokenizer; convert_linear_layer_to_lora adds a
rank-128 LinearLayer_LoRA (fp32 parameters, no dropout) to every linear under "layers.", and without
--only_optimize_lora the base weights stay trainable: full fine-tuning with adapters beside it. get_train_ds_config:
ZeRO-2 with offload_optimizer cpu (--offload), `"fp16": {"enabled": True}` (DeepSpeed's fp16 engine halves the
module, fp32 master partitions on the host), DeepSpeedCPUAdam; every sample padded to max_seq_len
(`padding="max_length"`).

Scored after this commit's predecessor (75eb2a1): the 4-GPU row +61.4 % (129.1 GiB against 80), the L40 verdict agrees.
Read-only diagnosis: the compared peak is the loading phase's 128.1 GiB, the fp16 model (64.1 GiB) plus ZeRO-2's flat
16-bit copy of it made on the GPU (loading.py zero_flatten_bytes, after DeepSpeed 0.19.8 stage_1_and_2.py
`flatten_on_accelerator = available_memory >= flat_buffer_bytes`). The same estimate's verdict says the GPU cannot
hold that copy (verdict.py cpu_flatten: 68.5 GiB), and DeepSpeed of 2023 never made it there: 0.12.6
stage_1_and_2.py:318-319 moves every bit16 group to the CPU (`move_to_cpu(self.bit16_groups[i])`) before
flatten_dense_tensors_aligned, always. Without the 64.1 GiB the step's peak is 68.5 GiB (-14.4 %), the unexpressed
adapters (about 0.98e9 parameters: 1.8 GiB of fp16 weights and as much gradient) on top.

Moved to design after the fix (b583185, estimate/zero_flatten.py): one owner decides where ZeRO-1/2 flattens, by
release (before 0.18.7 always the CPU; from 0.18.7 the GPU only where `available_memory() >= flat_buffer_bytes`)
and for the capacity the verdict judges; the loading phase, its note and the verdict read that one decision. With
DeepSpeed unstated the installed 0.19.8's rule applies: 14.1 GiB free of the A100's 79.2 beside the 64.05 GiB
model, so the CPU, as 0.12.6 would: the 4-GPU row +61.4 -> -14.4 % (129.1 -> 68.5 GiB), the L40 row still does not
fit (128.1 -> 67.5 GiB). argv unchanged.
"""

from __future__ import annotations

_SOURCE = "yi-issues-memory-2023"
_REPO = "https://github.com/01-ai/Yi"
_COMMIT = "e97d1e667e1de88793884becf33d0c2513bc3870"  # main on 2023-12-25
_MODEL = "benchmarks/published/models/yi-34b/config.json"
_Q_80G = "你好，你使用的这个脚本，在CUDA_VISIBLE_DEVICES=0,1,2,3的情况下，在A卡实测显存需要接近80G"
_Q_L40 = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 98 MiB. (GPU 0; 44.32GiB total capacity; "
          "9.29 GiB already allocated; 41.00 MiB free; 9.29 GiB reserved in total by PyTorch)")
_ARGV = ("estimate --model {model} --system {system} --strategy zero2 --offload-optimizer cpu --precision mixed "
         "--optimizer adamw --micro-batch 1 --seq-len 1024 --fixed-lengths --gradient-checkpointing --attention flash "
         "--stack transformers==4.36.2 --format json")
_SETTINGS = (
    "01-ai/Yi#249: finetune/sft/main.py at e97d1e6 with the thread's command (Yi-34B, batch 1, every sample padded to "
    "1,024 tokens, gradient checkpointing, flash-attention 2, ZeRO-2 with the optimizer offloaded, DeepSpeed's fp16 "
    "engine, DeepSpeedCPUAdam on the host, the base weights trainable beside rank-128 adapters) on {hw}; {verdict}"
)
_UNEXPRESSED = [
    "the rank-128 adapters on every linear under 'layers.' train beside the whole model (no --only_optimize_lora): "
    "about 0.98e9 more parameters (16.4M per layer x 60, 2 B each on the GPU after the fp16 cast, and their "
    "gradients), said as full fine-tuning of the base",
    "transformers is not pinned (use_flash_attention_2 needs 4.34 or later): 4.36.2 (December 2023) assumed; "
    "DeepSpeed and torch unstated",
]

ROWS = [
    {"key": "yi249-34b-full-lora128-zero2-offload-4xa100-80gb-b1-1024", "source": _SOURCE,
     "url": f"{_REPO}/issues/249", "code_url": f"{_REPO}/blob/{_COMMIT}/finetune/sft/main.py", "quote": _Q_80G,
     "printed": "80G", "measured_bytes": 80 * 2**30, "metric": "nvidia-smi",
     "argv": _ARGV.format(model=_MODEL, system="4xA100-80GB"),
     "assumptions": _SETTINGS.format(hw="4 x A100 80GB ('A卡', four GPUs, near 80G: an 80 GB A100 assumed)",
                                     verdict="'接近80G' (close to 80G) per card read as 80 nvidia-smi GiB, an upper "
                                             "bound"),
     "unexpressed": [*_UNEXPRESSED, "'接近80G' is approximate and near the card's capacity: the figure is read as 80 "
                                    "GiB, slightly above what ran"]},
    {"key": "yi249-34b-full-lora128-zero2-offload-8xl40-b1-1024-oom", "source": _SOURCE,
     "url": f"{_REPO}/issues/249", "code_url": f"{_REPO}/blob/{_COMMIT}/finetune/sft/main.py", "quote": _Q_L40,
     "printed": "CUDA out of memory", "measured_bytes": None, "metric": "reserved", "ran": False,
     "argv": _ARGV.format(model=_MODEL, system="8xL40"),
     "assumptions": _SETTINGS.format(hw="8 x L40 (44.32 GiB)", verdict="CUDA out of memory"),
     "unexpressed": list(_UNEXPRESSED)},
]
