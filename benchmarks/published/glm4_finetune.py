"""Frozen: GLM-4's finetune_demo "Hardware check" table (GLM-4-9B-Chat on A100-SXM4-80GB, June 2024).

The table, the configs and the script were written in one commit (c0a6d1e, the repository's first) and the
figures never changed after it; read there: `finetune_demo/finetune.py` (transformers 4.40's Seq2SeqTrainer,
`basic_demo/requirements.txt` pins transformers==4.40.0; peft>=0.11.0) with configs/lora.yaml and configs/sft.yaml.
Both load the model with `torch_dtype=torch.bfloat16` and set no `bf16`/`fp16` in the training arguments (no
autocast), call `model.gradient_checkpointing_enable()` and `enable_input_require_grads()`, and collate with
`DataCollatorForSeq2Seq(padding='longest')` at batch 1: every step is one sample's own length, cut at
max_input_length + max_output_length + 1 tokens (lora.yaml 512 + 512 + 1 = 1025; sft.yaml 256 + 512 + 1 = 769).
The README trains on AdvertiseGen (`data/AdvertiseGen/`); its longest sample was not counted: the argv says the cap.

* LoRA (lora.yaml, no DeepSpeed, one GPU): `peft_config` r=8, alpha 32, dropout 0.1 and no target_modules, so
  PEFT's default for model_type chatglm, the fused `query_key_value`; PEFT >= 0.11 upcasts the adapters to fp32
  over the bf16 base (`autocast_adapter_dtype`), torch AdamW (the Trainer's default optim).
* SFT (sft.yaml, `deepspeed: configs/ds_zero_3.json`, 8 GPUs): the TrainingArguments are built before the model
  (FinetuningConfig.from_file), so from_pretrained runs under DeepSpeed's zero.Init; ds_zero_3.json's
  `bf16.enabled: "auto"` is filled with the Trainer's bf16 (False) and it has no fp16 section, so zero.Init makes
  every parameter fp32 (`_set_dtype`: neither bf16 nor fp16 -> torch.float) and the engine trains in fp32 with
  DeepSpeed's AdamW (FusedAdam) on ZeRO-3 partitions.

What the number is: "Video memory usage" in MiB, nvidia-smi's unit: read as nvidia-smi per GPU (the SFT cell says
"Each GPU"). The GPUs: "NVIDIA A100-SXM4-80GB * 8", CUDA 12.3, driver 535.104.05. The SFT cell is a verdict, not a
peak: 80,935 of the card's 81,920 MiB (nvidia-smi's total for an A100-SXM4-80GB; 985 MiB free) is the card full.
Short of memory, the caching allocator frees its cache and retries rather than failing, so under ZeRO-3's varying
gather and reduce sizes, varying sample lengths and evaluation's generation (a KV cache that grows a token at a
time) its cache can grow until the card is full, and a figure at the card's size cannot tell that apart from a need
of 79 GiB: it says the run fit in 80 GB, not what it needed. The authors wrote the same cell "80G (Each GPU, Need 8
GPUs)" four weeks later (b9d6d38, 2024-07-01) beside "22G" and "21G" for the other two. The row is scored as "ran"
(a run must not be told "does not fit"), never as a figure to match.

GLM-4's model (model_type chatglm, trust_remote_code) is not in transformers 4.40: the argv names a Qwen2
config.json of its shapes (40 layers, hidden 4096, 32 heads with 2 KV groups of 128, qkv bias, SwiGLU 13696,
vocabulary 151552, untied output layer: 9,399,951,360 parameters, glm-4-9b-chat's count).
"""

from __future__ import annotations

_URL = "https://github.com/THUDM/GLM-4/blob/c0a6d1e0fa744ebc47d5245aa479cb9e455f2976/finetune_demo/README_en.md"
_MODEL = "benchmarks/published/models/glm-4-9b/config.json"
_SETTINGS = (
    "GLM-4 finetune_demo at c0a6d1e, {config}: Seq2SeqTrainer (transformers 4.40), batch 1, bf16 weights as "
    "loaded and no autocast, gradient checkpointing, samples cut at {cap} tokens and padded to the batch's longest "
    "(AdvertiseGen; the argv says the cap), torch SDPA attention (GLM-4's SdpaAttention, assumed the default); "
    "{how}; 'Video memory usage' in MiB read as nvidia-smi per GPU on A100-SXM4-80GB (the README's)"
)
_CODE = ("GLM-4's own modeling code (model_type chatglm, trust_remote_code): the argv names a Qwen2 config.json of "
         "its shapes; its loss upcasts the whole logits to fp32 and makes a contiguous shifted copy "
         "(transformers 4.40-era code, not today's loss_function: the argv's --stack transformers==4.40, the "
         "pinned one, counts that copy)")
_EVAL = ("evaluation every 500 steps with generation (predict_with_generate, max_new_tokens 512, eval batch {eval}, "
         "50 samples): not a training step")
_LONGEST = "the longest AdvertiseGen sample (not counted; the argv says the {cap}-token cap)"

ROWS = [
    {"key": "glm4-9b-lora-r8-qkv", "source": "glm4-finetune-demo", "url": _URL,
     "quote": "| lora (PEFT) | 21531MiB | 17M |", "printed": "21531MiB",
     "measured_bytes": 21531 * 2**20, "metric": "nvidia-smi",
     "argv": f"estimate --model {_MODEL} --system 1xA100-80GB --strategy single --precision bf16 --lora "
             "--lora-rank 8 --lora-dropout 0.1 --lora-target q_proj --lora-target k_proj --lora-target v_proj "
             "--micro-batch 1 --seq-len 1025 --varying-lengths --gradient-checkpointing --attention sdpa "
             "--stack transformers==4.40 --format json",
     "assumptions": _SETTINGS.format(config="configs/lora.yaml", cap=1025,
                                     how="LoRA r=8 alpha 32 dropout 0.1 on query_key_value (PEFT's default for "
                                         "chatglm), fp32 adapters over the bf16 base, torch AdamW, one GPU"),
     "unexpressed": [_CODE, "LoRA on the fused query_key_value (4096 -> 4608): the stand-in's q/k/v_proj (three "
                     "adapters and three dropout copies of the input instead of one)",
                     _LONGEST.format(cap=1025), _EVAL.format(eval=4)]},
    {"key": "glm4-9b-full-zero3-8gpu-fp32", "source": "glm4-finetune-demo", "url": _URL,
     "quote": "| SFT (Zero3 method) | 80935MiB<br/>(Each GPU, 8 GPUs are required) | 20G |", "printed": "80935MiB",
     # the card full (module docstring): it ran within 80 GB; no measure of what it needed
     "measured_bytes": None, "metric": "nvidia-smi", "ran": True,
     "argv": f"estimate --model {_MODEL} --system 8xA100-80GB --strategy zero3 --precision fp32 --micro-batch 1 "
             "--seq-len 769 --varying-lengths --gradient-checkpointing --attention sdpa --stack transformers==4.40 "
             "--format json",
     "assumptions": _SETTINGS.format(config="configs/sft.yaml with ds_zero_3.json", cap=769,
                                     how="full fine-tuning in fp32 (zero.Init with bf16 'auto' -> off), DeepSpeed "
                                         "ZeRO-3 with its AdamW over 8 GPUs (allgather bucket 5e8, max live "
                                         "parameters 1e9, sub_group_size 1e9, overlap_comm)"),
     "unexpressed": [_CODE, _LONGEST.format(cap=769), _EVAL.format(eval=16),
                     "DeepSpeed's 'auto' bucket and prefetch sizes, filled from hidden size 4096 by the Trainer "
                     "(reduce_bucket_size 16.8M, stage3_prefetch_bucket_size 15.1M, param_persistence_threshold "
                     "41K elements)"]},
    {"key": "glm4-9b-ptuning-v2", "source": "glm4-finetune-demo", "url": _URL,
     "quote": "| p-tuning v2 (PEFT) | 21381MiB | 121M |", "printed": "21381MiB",
     "measured_bytes": 21381 * 2**20, "metric": "nvidia-smi", "argv": None,
     "not_expressible": "P-Tuning v2 (PEFT prefix tuning, 512 virtual tokens): no such --method",
     "assumptions": _SETTINGS.format(config="configs/ptuning_v2.yaml", cap=257, how="P-Tuning v2")},
]
