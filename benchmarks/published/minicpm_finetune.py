"""Design (frozen until the ZeRO-3 prefetch finding of issue 28, sources.py says why): MiniCPM's finetune README
"Testing Hardware Standard" (MiniCPM-2B, February 2024), its default scripts.

The figures were written with the scripts they describe (a250c20, 2024-02-01: "In the default configuration file in
this repository, we have documented the memory usage"); the English README quoted here (9228c25, the same day)
follows two commits that changed only the labels' masking and the SFT script's GPU ids. Read at a250c20:
`finetune/finetune.py` (HF Trainer, `optim="adamw_torch"`, `model_max_length` 512) run by `deepspeed` with
`configs/ds_config_zero3_offload.json`: ZeRO-3 with `offload_param` and `offload_optimizer` on the CPU (pinned),
fp16/bf16 "auto", no optimizer section: the Trainer builds torch AdamW and accelerate replaces it with
DeepSpeedCPUAdam before `deepspeed.initialize` (since accelerate#1208, March 2023; 0.26.1, current on 2024-02-01:
accelerator.py 1592-1598, because `offload_optimizer` is set and `zero_force_ds_cpu_optimizer` defaults to true;
DeepSpeed 0.13.1 itself refuses a torch optimizer there, engine.py 1232-1234), so the offloaded fp32 partitions are
stepped on the host and nothing of the step is on the GPU.
Every sample is right-padded with EOS to `model_max_length` (512 tokens every step), batch 1; no gradient
checkpointing (never enabled). The TrainingArguments exist before from_pretrained, so the model is built under
zero.Init in the dtype the DeepSpeed config says (`load_model_and_tokenizer` asks for fp32, zero.Init's
`_set_dtype` gives bf16 or fp16) and DeepSpeed trains the 16-bit module with fp32 masters on the host.

* SFT (sft_finetune.sh): full fine-tuning, `--bf16`, 4 GPUs (`--include localhost:1,2,4,5`), accumulation 8.
* LoRA (lora_finetune.sh): one GPU (`--include localhost:0`), `--fp16`, PEFT LoRA r=8 alpha 32 dropout 0.1 on
  q_proj and v_proj (peft>=0.7.1: adapters in the base's dtype; DeepSpeed casts the module to fp16 anyway).

What the number is: "each GPU consumes `30245MiB`", "consuming `10619MiB`": MiB, nvidia-smi's unit, read as
nvidia-smi per GPU. The GPU is not named: assumed A100-80GB. MiniCPM's model (model_type minicpm,
trust_remote_code) is not in transformers: the argv names a Llama config.json of MiniCPM-2B's shapes (40 layers,
hidden 2304, 36 heads, no grouped KV, SwiGLU 5760, vocabulary 122753, tied embeddings: 2,724,880,896 parameters,
the published "2.4B non-embedding, 2.7B in total"). The July 2024 line "qlora + cpu + offload: 1 GPU, 5500MiB"
(96af309) is not used: no QLoRA command is in the repository (the scripts of that commit pass no --qlora).
"""

from __future__ import annotations

_URL = "https://github.com/OpenBMB/MiniCPM/blob/9228c25f3689b056d3d23bbab53458e5334fba73/finetune/README_en.md"
_MODEL = "benchmarks/published/models/minicpm-2b/config.json"
_SETTINGS = (
    "MiniCPM finetune at a250c20, {script}: HF Trainer under DeepSpeed ZeRO-3 with parameters and optimizer "
    "offloaded to the CPU (ds_config_zero3_offload.json; DeepSpeedCPUAdam on the host), batch 1, every sample "
    "padded to 512 tokens, no gradient checkpointing, SDPA attention (MiniCPM's code supports it; transformers' "
    "default), {how}; 'consumes N MiB' read as nvidia-smi per GPU, A100-80GB assumed"
)
_CODE = ("MiniCPM's own modeling code (model_type minicpm, trust_remote_code): the argv names a Llama config.json of "
         "its shapes; its embedding scale (x12), depth-scaled residuals and scaled LM-head input add elementwise "
         "temporaries, and its loss upcasts the whole logits to fp32 and makes a contiguous shifted copy "
         "(transformers 4.36-era Llama code, not today's loss_function)")
_BUCKETS = ("DeepSpeed's 'auto' bucket and prefetch sizes, filled from hidden size 2304 by the Trainer "
            "(reduce_bucket_size 5.3M, stage3_prefetch_bucket_size 4.8M, param_persistence_threshold 23K elements), "
            "max live parameters and reuse distance at DeepSpeed's defaults (1e9)")
# The checkpoint the authors ran may not be the published one: their LoRA run printed one more vocabulary matrix.
_UNTIED = ("finetune.py's comment at that commit prints 'all params: 3,010,652,928' for the LoRA model (2,949,120 "
           "adapter parameters on an untied output layer, 0.28 B more than the published, tied 2.7B): the argv names "
           "the published model")

ROWS = [
    {"key": "minicpm-2b-full-zero3-offload-4gpu", "source": "minicpm-finetune", "url": _URL,
     "quote": "+ SFT full parameters fine-tuning: Evenly distributed across 4 GPUs, each GPU consumes `30245MiB` "
              "of memory.", "printed": "30245MiB",
     "measured_bytes": 30245 * 2**20, "metric": "nvidia-smi",
     "argv": f"estimate --model {_MODEL} --system 4xA100-80GB --strategy zero3 --offload-param cpu "
             "--offload-optimizer cpu --precision bf16 --micro-batch 1 --gradient-accumulation 8 --seq-len 512 "
             "--no-gradient-checkpointing --attention sdpa --format json",
     "assumptions": _SETTINGS.format(script="sft_finetune.sh", how="full fine-tuning, --bf16 (a bf16 module, fp32 "
                                     "masters on the host), 4 GPUs, accumulation 8"),
     "unexpressed": [_CODE, _BUCKETS, _UNTIED,
                     "evaluation every 500 steps at eval batch 4 (512 tokens each, no backward)"]},
    {"key": "minicpm-2b-lora-r8-qv-zero3-offload-1gpu", "source": "minicpm-finetune", "url": _URL,
     "quote": "+ LORA fine-tuning: One GPU, consuming `10619MiB`  of memory.", "printed": "10619MiB",
     "measured_bytes": 10619 * 2**20, "metric": "nvidia-smi",
     "argv": f"estimate --model {_MODEL} --system 1xA100-80GB --strategy zero3 --offload-param cpu "
             "--offload-optimizer cpu --precision bf16 --lora --lora-rank 8 --lora-target q_proj --lora-target v_proj "
             "--lora-dropout 0.1 --micro-batch 1 --seq-len 512 --no-gradient-checkpointing --attention sdpa "
             "--format json",
     "assumptions": _SETTINGS.format(script="lora_finetune.sh", how="LoRA r=8 alpha 32 dropout 0.1 on q_proj and "
                                     "v_proj, --fp16 (an fp16 module, adapters included), one GPU"),
     "unexpressed": [_CODE, _BUCKETS, "fp16 with DeepSpeed's dynamic loss scaler (the argv says bf16: the same "
                     "bytes, no autocast)",
                     _UNTIED, "evaluation every 500 steps at eval batch 1 (512 tokens, no backward)"]},
]
