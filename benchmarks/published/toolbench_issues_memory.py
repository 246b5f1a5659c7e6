"""Frozen: GPU memory per card from OpenBMB/ToolBench's issue tracker (source `toolbench-issues-memory-2023`), the
maintainers' own figures for training ToolLLaMA-7B (LLaMA-7B at 8,192 tokens) with the repository's commands.

- #52 (2023-08-09, a maintainer, pooruss): "per_device_train_batch_size设为1会占大概20G/卡，设为4会占大概37G/卡"
  (batch 1 takes about 20G per card, batch 4 about 37G), answering how much the LoRA version needs.
- #84 (2023-08-22, the same maintainer): "LoRA训练：batch size per device=2，gradient_accumulation_steps=2，
  num_train_epochs=5，gpus=4，显存占用27+g/gpu" and "全参训练：batch size per device=2，gradient_accumulation_steps=2，
  num_train_epochs=2，gpus=4，显存占用60+g/gpu" (full training, 60+ GB per GPU).
- #127 (2023-09-07, the same maintainer): "全参数训练和lora都是使用4块" (full and LoRA training both used 4 GPUs).

Read at 745ea4c (main on 2023-08-22; toolbench/train/*, ds_configs/ and requirements.txt unchanged since db505c5 of
2023-08-08, the state #52 answered from). The README's commands:

* LoRA: `deepspeed --master_port=20001 toolbench/train/train_long_seq_lora.py --model_name_or_path
  huggyllama/llama-7b ... --bf16 True --per_device_train_batch_size 4 --gradient_accumulation_steps 2
  --model_max_length 8192 --gradient_checkpointing True --lazy_preprocess True --deepspeed ds_configs/stage2.json`.
  train_long_seq_lora.py: `AutoModelForCausalLM.from_pretrained(path, device_map={"": LOCAL_RANK})` with no dtype
  (fp32, straight onto the GPU), PEFT 0.3.0 `LoraConfig` from LoraArguments' defaults: r=8, alpha 16, dropout 0.05 on
  q_proj and v_proj; enable_input_require_grads. ds_configs/stage2.json: ZeRO-2, `offload_optimizer` cpu (pinned),
  `"bfloat16": {"enabled": "auto"}` (DeepSpeed's old key for bf16; "auto" left unfilled by the Trainer, which fills
  `bf16.enabled` only, and truthy: the engine runs bf16, as the command's --bf16 asks), an AdamW optimizer section
  (DeepSpeed's, on the host: DeepSpeedCPUAdam). DeepSpeed 0.9.2's engine casts the whole module to bf16
  (`module.bfloat16()`: base and adapters), the ZeRO optimizer keeps the adapters' fp32 masters and Adam states on
  the host. transformers 4.28.1's Trainer does not autocast under DeepSpeed (trainer.py line 624: `if (args.fp16 or
  args.bf16) and not (args.deepspeed or ...)`), and 4.28.1's LlamaForCausalLM takes CrossEntropyLoss on
  `self.lm_head(hidden_states)` without `.float()` (modeling_llama.py 700-712): a bf16 loss (--loss-dtype bf16).
* Full: `torchrun --nproc_per_node=2 toolbench/train/train_long_seq.py ... --bf16 True --per_device_train_batch_size
  2 --gradient_accumulation_steps 8 --fsdp "full_shard auto_wrap" --fsdp_transformer_layer_cls_to_wrap
  'LlamaDecoderLayer' --tf32 True --model_max_length 8192 --gradient_checkpointing True`; #84 ran it on 4 GPUs with
  accumulation 2. train.py loads the fp32 model onto each GPU (`device_map`), the Trainer of 4.28.1 wraps it in its
  own FSDP1 full_shard with a bf16 MixedPrecision and autocasts (not DeepSpeed): fp32 shards, AdamW (`optim` default
  adamw_torch in train.py's TrainingArguments), the loss under autocast in fp32.
* Both: train_long_seq*.py patch LlamaAttention.forward with `F.scaled_dot_product_attention(q, k, v,
  is_causal=True)` (toolbench/train/llama_flash_attn_monkey_patch.py: no mask: torch 2.0's flash kernel in bf16,
  --attention sdpa) and the rotary embedding with a 4x condensed one (llama_condense_monkey_patch.py, positions
  8,192). train.py tokenizes every conversation with `padding="max_length"` to model_max_length: every sequence is
  8,192 tokens (--fixed-lengths). requirements.txt: transformers==4.28.1, peft==0.3.0, deepspeed==0.9.2,
  accelerate==0.20.3, torch>=1.12 (2.0 for SDPA: torch 2.0.1 assumed).

What the number is: "20G/卡", "27+g/gpu", "60+g/gpu" per card, the tool not named: read as nvidia-smi's used memory
in GiB (its MiB / 1024); "27+"/"60+" as 27 and 60 (at least that much). The GPU is not named in the threads; the
README's "2 x A100 (80GB)" for the same training: A100 80GB assumed (a 40GB card could not show 60+).
The argv names models/llama-7b-condense-8k/config.json: LLaMA-7B's shapes (Llama 2 7B's: 6,738,415,616 parameters)
with max_position_embeddings 8,192, the positions ToolBench's condensed rotary gives it (2,048 x ratio 4), since
accelwiz refuses a --seq-len beyond the model's positions (the llama-2-7b preset has 4,096).
"""

from __future__ import annotations

_SOURCE = "toolbench-issues-memory-2023"
_REPO = "https://github.com/OpenBMB/ToolBench"
_COMMIT = "745ea4c3d670e83ef75697896016fce8ef9c6ea0"  # main on 2023-08-22; the training code as of db505c5 (08-08)

_Q52 = ("请问您的per_device_train_batch_size是多少呢，per_device_train_batch_size设为1会占大概20G/卡，设为4会占大概37G/卡")
_Q84_FULL = ("全参训练：batch size per device=2，gradient_accumulation_steps=2，num_train_epochs=2，gpus=4，"
             "显存占用60+g/gpu，训练时长约15小时；")
_Q84_LORA = ("LoRA训练：batch size per device=2，gradient_accumulation_steps=2，num_train_epochs=5，gpus=4，"
             "显存占用27+g/gpu，训练时长约30小时；")

_MODEL = "benchmarks/published/models/llama-7b-condense-8k/config.json"
_LORA = ("estimate --model {model} --system 4xA100-80GB --strategy zero2 --offload-optimizer cpu --precision bf16 "
         "--loss-dtype bf16 --lora --lora-rank 8 --lora-target q_proj --lora-target v_proj --lora-dropout 0.05 "
         "--micro-batch {mb} --gradient-accumulation 2 --seq-len 8192 --fixed-lengths --gradient-checkpointing "
         "--attention sdpa --optimizer adamw --stack transformers==4.28.1 --stack torch==2.0.1 --format json")
_FULL = ("estimate --model {model} --system 4xA100-80GB --strategy fsdp_full --fsdp-version 1 --precision mixed "
         "--micro-batch 2 --gradient-accumulation 2 --seq-len 8192 --fixed-lengths --gradient-checkpointing "
         "--attention sdpa --optimizer adamw --stack transformers==4.28.1 --stack torch==2.0.1 --format json")

_LORA_SETTINGS = (
    "ToolBench#{issue} ({date}), train_long_seq_lora.py at {commit} (the README's LoRA command, 4 GPUs per #127): "
    "LLaMA-7B loaded in fp32 then cast to bf16 by DeepSpeed 0.9.2's engine (base and adapters), LoRA r=8 alpha 16 "
    "dropout 0.05 on q_proj and v_proj (PEFT 0.3.0), ZeRO-2 with the optimizer (DeepSpeed's AdamW, fp32 masters and "
    "states) offloaded to the host, no autocast, the loss on bf16 logits (transformers 4.28.1), per-device batch "
    "{mb} x accumulation 2, every sequence padded to 8,192 tokens, gradient checkpointing, SDPA (is_causal) by "
    "ToolBench's patch, 4 x A100 80GB assumed; '{printed}' per card read as nvidia-smi GiB"
)
_FULL_SETTINGS = (
    "ToolBench#84 (2023-08-22), train_long_seq.py at {commit} (the README's full command with 4 GPUs and "
    "accumulation 2, as #84 says): LLaMA-7B in fp32 under the HF Trainer's FSDP1 full_shard (auto_wrap on "
    "LlamaDecoderLayer) with bf16 MixedPrecision and autocast, torch AdamW, per-device batch 2 x accumulation 2, "
    "every sequence padded to 8,192 tokens, gradient checkpointing, SDPA (is_causal) by ToolBench's patch, "
    "transformers 4.28.1, 4 x A100 80GB assumed; '60+g/gpu' read as nvidia-smi GiB, at least 60"
)
_UNEXPRESSED = [
    "the GPU is not named in the threads: A100 80GB assumed (the README trains the same model on '2 x A100 (80GB)')",
    "torch is not pinned (requirements: torch>=1.12; the SDPA patch needs 2.0): 2.0.1 assumed",
    "LLaMA-7B (huggyllama/llama-7b: 2,048 positions, rotary) run at 8,192 by ToolBench's 4x condensed rotary: the "
    "argv names a config.json of LLaMA-7B's shapes with 8,192 positions (models/llama-7b-condense-8k)",
    "ToolBench's condensed rotary embedding keeps per-layer cos/sin caches of 8,192 positions (32 x 2 x 8,192 x 128 "
    "elements, about 128 MiB in bf16): not counted",
    "the fp32 model is loaded straight onto each GPU (`device_map={'': LOCAL_RANK}`) before it is cast or sharded: "
    "what the allocator keeps cached of that load is not modelled",
]


def _lora(key: str, issue: int, date: str, quote: str, printed: str, mb: int) -> dict:
    return {"key": f"toolbench{issue}-llama-7b-lora-qv-zero2-offload-b{mb}-8192-4xa100", "source": _SOURCE,
            "url": f"{_REPO}/issues/{issue}", "code_url": f"{_REPO}/blob/{_COMMIT}/toolbench/train/"
            "train_long_seq_lora.py", "quote": quote, "printed": printed,
            "measured_bytes": int(printed.rstrip("G+g")) * 2**30, "metric": "nvidia-smi",
            "argv": _LORA.format(model=_MODEL, mb=mb),
            "assumptions": _LORA_SETTINGS.format(issue=issue, date=date, commit=_COMMIT[:7], mb=mb, printed=printed),
            "unexpressed": list(_UNEXPRESSED) + ([key] if key else [])}


ROWS = [
    _lora("", 52, "2023-08-09", _Q52, "20G", 1),
    _lora("", 52, "2023-08-09", _Q52, "37G", 4),
    _lora("'27+g/gpu': at least 27", 84, "2023-08-22", _Q84_LORA, "27+g", 2),
    {"key": "toolbench84-llama-7b-full-fsdp1-b2-8192-4xa100", "source": _SOURCE, "url": f"{_REPO}/issues/84",
     "code_url": f"{_REPO}/blob/{_COMMIT}/toolbench/train/train_long_seq.py", "quote": _Q84_FULL, "printed": "60+g",
     "measured_bytes": 60 * 2**30, "metric": "nvidia-smi", "argv": _FULL.format(model=_MODEL),
     "assumptions": _FULL_SETTINGS.format(commit=_COMMIT[:7]), "unexpressed": list(_UNEXPRESSED)},
]
