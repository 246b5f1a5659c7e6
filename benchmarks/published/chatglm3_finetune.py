"""Frozen: ChatGLM3's finetune_demo "Test hardware standards" (ChatGLM3-6B, January 2024), with its default configs.

The README says the numbers were recorded with "the default configuration files in this repository"; read at the
commit that wrote them (9484f82): `finetune_hf.py` (transformers' Seq2SeqTrainer) with configs/lora.yaml and
configs/sft.yaml: max_input_length 128 + max_output_length 256 (+1: at most 385 tokens a sample), batch 1,
`padding='longest'`, no `bf16`/`fp16` in the training arguments (no autocast), no gradient checkpointing (the
commit never enables it), torch AdamW (the Trainer's default; DeepSpeed's "AdamW" under ZeRO-3 for sft.yaml).
ChatGLM3's own model code builds every layer in `config.torch_dtype` (float16, `_config_to_kwargs`), and
`_prepare_model_for_training` casts each trainable parameter to fp32: LoRA trains fp32 adapters (r=8, alpha 32,
dropout 0.1, PEFT's default target for chatglm: the fused `query_key_value`) over a frozen fp16 base; the full
fine-tune trains every parameter in fp32 under DeepSpeed ZeRO-3 (ds_zero_3.json, bf16 "auto" -> off) on 4 GPUs.

What the number is: "each graphics card occupies `48346MiB`" / "occupying `14082MiB`": MiB, nvidia-smi's unit,
read as nvidia-smi per GPU. The GPU is not named at that commit (later text: tested on A100 and H100); assumed
A100-80GB. ChatGLM3's model (model_type chatglm, trust_remote_code) is not in transformers: the argv names a
Qwen2 config.json of its shapes (28 layers, hidden 4096, 32 heads with 2 KV groups, qkv bias, SwiGLU 13696,
vocabulary 65024, untied output layer: 6,243,584,000 parameters, ChatGLM3-6B's count).
"""

from __future__ import annotations

_URL = "https://github.com/THUDM/ChatGLM3/blob/9484f8204f1536e338a5557138a65e31d2a3984d/finetune_demo/README_en.md"
_MODEL = "benchmarks/published/models/chatglm3-6b/config.json"
_SETTINGS = (
    "ChatGLM3 finetune_demo at 9484f82, {config}: Seq2SeqTrainer, batch 1, samples cut at 128 + 256 + 1 = 385 "
    "tokens and padded to the batch's longest (assumed to reach 385), no autocast, no gradient checkpointing, "
    "ChatGLM3's own attention (torch SDPA); {how}; 'occupies N MiB' read as nvidia-smi per GPU, A100-80GB assumed"
)
_CODE = ("ChatGLM3's own modeling code (model_type chatglm, trust_remote_code): argv names a Qwen2 config.json of its "
         "shapes")

ROWS = [
    {"key": "chatglm3-6b-lora-r8-qkv", "source": "chatglm3-finetune-demo", "url": _URL,
     "quote": "+ LORA fine-tuning: 1 graphics card, occupying `14082MiB` memory.", "printed": "14082MiB",
     "measured_bytes": 14082 * 2**20, "metric": "nvidia-smi",
     "argv": f"estimate --model {_MODEL} --system 1xA100-80GB --strategy single --precision bf16 --lora "
             "--lora-rank 8 --lora-dropout 0.1 --lora-target q_proj --lora-target k_proj --lora-target v_proj "
             "--micro-batch 1 --seq-len 385 --no-gradient-checkpointing --attention sdpa --format json",
     "assumptions": _SETTINGS.format(config="configs/lora.yaml", how="LoRA r=8 alpha 32 dropout 0.1 on "
                                    "query_key_value, adapters cast to fp32 over the fp16 base"),
     "unexpressed": [_CODE, "fp16 base weights without autocast (the argv says pure 16-bit, bf16)",
                     "fp32 adapters and AdamW states (the argv's pure 16-bit keeps them in 16 bits: 2.0 M "
                     "parameters, under 30 MB)",
                     "LoRA on the fused query_key_value (4096 -> 4608): the stand-in's q/k/v_proj"]},
    {"key": "chatglm3-6b-full-zero3-4gpu-fp32", "source": "chatglm3-finetune-demo", "url": _URL,
     "quote": "+ SFT full fine-tuning: evenly distributed among 4 graphics cards, each graphics card occupies "
              "`48346MiB` of video", "printed": "48346MiB",
     "measured_bytes": 48346 * 2**20, "metric": "nvidia-smi",
     "argv": f"estimate --model {_MODEL} --system 4xA100-80GB --strategy zero3 --precision fp32 --micro-batch 1 "
             "--seq-len 385 --no-gradient-checkpointing --attention sdpa --format json",
     "assumptions": _SETTINGS.format(config="configs/sft.yaml with ds_zero_3.json", how="full fine-tuning, every "
                                    "parameter cast to fp32, DeepSpeed ZeRO-3 (allgather bucket 5e8, max live "
                                    "parameters 1e9, reduce bucket and prefetch 'auto') over 4 GPUs"),
     "unexpressed": [_CODE]},
    {"key": "chatglm3-6b-ptuning-v2", "source": "chatglm3-finetune-demo", "url": _URL,
     "quote": "+ P-TuningV2 fine-tuning: 1 graphics card, occupying `18426MiB` memory.", "printed": "18426MiB",
     "measured_bytes": 18426 * 2**20, "metric": "nvidia-smi", "argv": None,
     "not_expressible": "P-Tuning v2 (prefix tuning, 64 virtual tokens): no such --method",
     "assumptions": _SETTINGS.format(config="configs/ptuning_v2.yaml", how="P-Tuning v2")},
]
