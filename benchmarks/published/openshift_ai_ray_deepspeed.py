"""Frozen, verdict rows: Red Hat OpenShift AI's "Fine-Tune Llama Models with Ray and DeepSpeed on OpenShift AI"
(opendatahub-io/distributed-workloads, examples/ray-finetune-llm-deepspeed), whose README lists the configurations
the example "has been validated on": the cluster, the Ray job's flags, nothing measured. Each row is a run stated
to train on the named GPUs (the estimate must not say "does not fit").

The example adapts Anyscale's Ray template (ray-project/ray doc/source/templates/04_finetuning_llms_with_deepspeed)
and was validated in three commits, each read with the code and requirements of that commit:

* 67f8f3e (2024-06-18): Llama-2-7b/13b-chat-hf LoRA on 6 x g5.8xlarge (one A10G each), Llama-2-70b-chat-hf LoRA on
  a DGX A100 (8 x A100 40GB); requirements.txt pins transformers 4.41.2, accelerate 0.31.0, deepspeed 0.14.3,
  peft 0.11.1, torch 2.3.1, flash-attn 2.5.9.post1.
* 59d183e (2024-08-14): Meta-Llama-3.1-8B LoRA on 5 x g5.8xlarge; transformers 4.44.0, deepspeed 0.14.4,
  flash-attn 2.6.3, torch 2.3.1. Its config file `zero_3_offload_optim+param.json` then offloaded the optimizer
  only: the parameter offload was added on 2024-08-26 (1d092ef, "Add missing model parameters offloading to CPU").
* 6a359d5 (2024-09-09): Meta-Llama-3.1-8B LoRA on 4 x MI300X with `--ctx-len=1024`, the file now offloading
  parameters and optimizer; transformers 4.44.0 (the ROCm Ray image quay.io/rhoai/ray:2.35.0-py311-rocm61-torch24-
  fa26: torch 2.4, flash-attn 2.6).

The code (ray_finetune_llm_deepspeed.py at each commit): `Accelerator(deepspeed_plugin=DeepSpeedPlugin(
hf_ds_config=<the JSON>), mixed_precision="bf16")` is built before the model, so accelerate's DeepSpeed config is
live when `AutoModelForCausalLM.from_pretrained(..., torch_dtype=torch.bfloat16,
attn_implementation="flash_attention_2")` runs (zero.Init: ZeRO-3 partitions while loading); the JSONs say
"bf16": "auto" (accelerate's bf16) or true: DeepSpeed's bf16 engine, bf16 parameters with fp32 master partitions
(--precision mixed). `resize_token_embeddings(len(tokenizer))` (Llama 2: four special tokens, 32,004 rows; Llama
3.1: the chat template, no token added); LoRA from lora_configs/lora.json: r=8, alpha 16, dropout 0.05 on q/k/v/o,
gate/up/down_proj AND embed_tokens and lm_head (PEFT's LoRA Embedding and Linear; the script checks the trainable
count against (in + out) x r per target); `model.gradient_checkpointing_enable()` (no --no-grad-ckpt in the
validated jobs); `torch.optim.AdamW` (no optimizer in the JSONs), which accelerate replaces by DeepSpeedCPUAdam
where the optimizer is offloaded (`map_pytorch_optim_to_deepspeed`); every batch tokenized with
`padding="max_length", max_length=ctx_len, truncation=True` (--ctx-len 512 by default): fixed lengths; one
process per GPU (Ray Train's TorchTrainer, `resources_per_worker={"GPU": 1}`); gradient accumulation 1. The
70B JSON offloads the optimizer only; the 7B and 13B JSONs parameters and optimizer (pinned).
"""

from __future__ import annotations

_URL = ("https://github.com/opendatahub-io/distributed-workloads/blob/{commit}/examples/ray-finetune-llm-deepspeed/"
        "README.md")
_LLAMA2 = "67f8f3ef9bc52b39347f1b570444133e39938013"
_LLAMA31_A10 = "59d183ea0db54a3e08a29e58cb39abb6d6d611a7"
_LLAMA31_MI300X = "6a359d5734f58b6e8203e5a68e7e65f98e5cc3fc"
_TARGETS = "".join(f"--lora-target {m} " for m in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                    "down_proj", "embed_tokens", "lm_head"))
_SETTINGS = (
    "OpenShift AI distributed-workloads ray-finetune-llm-deepspeed at {commit} (README 'Validation'): {model} "
    "loaded in bf16 with flash_attention_2 under DeepSpeed ZeRO-3 ({offload}, {config}), accelerate's bf16 "
    "(DeepSpeed's bf16 engine: fp32 master partitions), LoRA r=8 alpha 16 dropout 0.05 on the seven block linears, "
    "embed_tokens and lm_head, gradient checkpointing, torch AdamW replaced by DeepSpeedCPUAdam (optimizer "
    "offloaded), batch {batch} per GPU x accumulation 1, every batch padded to max_length {seq}, transformers "
    "{transformers}; {gpus}; stated to have been validated there (no peak printed)"
)
_EVAL = ("evaluation after each epoch at --eval-batch-size-per-device {eval_batch} x {seq} tokens under no_grad "
         "(the logits of a larger batch, no backward): not a training step")
_HOST = ("the pods' host memory ({host}; the CLI takes the {preset} preset's host numbers), which bounds what "
         "DeepSpeed offloads, not the GPU")


def _row(key: str, commit: str, quote: str, printed: str, model: str, system: str, gpus: str, offload: str,
         flags: str, config: str, batch: int, seq: int, eval_batch: int, transformers: str, host: str, preset: str,
         extra=()) -> dict:
    return {"key": key, "source": "openshift-ai-ray-deepspeed", "url": _URL.format(commit=commit), "quote": quote,
            "printed": printed, "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": f"estimate --model {model} --system {system} --strategy zero3 {flags}--lora --lora-rank 8 "
                    f"{_TARGETS}--lora-dropout 0.05 --precision mixed --optimizer adamw --micro-batch {batch} "
                    f"--seq-len {seq} --fixed-lengths --gradient-checkpointing --attention flash "
                    f"--stack transformers=={transformers} --format json",
            "assumptions": _SETTINGS.format(commit=commit[:7], model=model, offload=offload, config=config,
                                            batch=batch, seq=seq, transformers=transformers, gpus=gpus),
            "unexpressed": [_EVAL.format(eval_batch=eval_batch, seq=seq), _HOST.format(host=host, preset=preset),
                            *extra]}


_Q_A10 = ("* OpenShift cluster:\n  * ROSA-hosted 4.14.20\n  * 6 `g5.8xlarge` (A10 Nvidia GPU) worker nodes\n"
          "...\n        \"--model-name=meta-llama/{model} \"\n        \"--ds-config=./deepspeed_configs/{config} \"\n"
          "        \"--lora \"\n        \"--num-devices=6 \"\n        \"--batch-size-per-device=16 \"\n"
          "        \"--eval-batch-size-per-device=32 \"")
_Q_70B = ("* OpenShift cluster:\n  * DGX A100 Server (8x A100 / 40GB HBM)\n...\n"
          "        \"--model-name=meta-llama/Llama-2-70b-chat-hf \"\n"
          "        \"--ds-config=./deepspeed_configs/zero_3_llama_2_70b.json \"\n        \"--lora \"\n"
          "        \"--num-devices=8 \"\n        \"--batch-size-per-device=8 \"\n"
          "        \"--eval-batch-size-per-device=8 \"")
_Q_31_A10 = ("* OpenShift cluster:\n  * ROSA-hosted 4.14.20\n  * 5 `g5.8xlarge` (A10 Nvidia GPU) worker nodes\n...\n"
             "        \"--model-name=meta-llama/Meta-Llama-3.1-8B \"\n"
             "        \"--ds-config=./deepspeed_configs/zero_3_offload_optim+param.json \"\n"
             "        f\"--storage-path=s3://{s3_bucket}/ray_finetune_llm_deepspeed/ \"\n        \"--lora \"\n"
             "        \"--num-devices=5 \"\n        \"--batch-size-per-device=6 \"\n"
             "        \"--eval-batch-size-per-device=8 \"")
_Q_31_MI300X = ("* OpenShift cluster:\n  * OCP 4.14.35, 4 AMD MI300X GPUs / single node\n...\n"
                "        \"--model-name=meta-llama/Meta-Llama-3.1-8B \"\n"
                "        \"--ds-config=./deepspeed_configs/zero_3_offload_optim_param.json \"\n"
                "        f\"--storage-path=s3://{s3_bucket}/ray_finetune_llm_deepspeed/ \"\n        \"--lora \"\n"
                "        \"--num-devices=4 \"\n        \"--batch-size-per-device=64 \"\n"
                "        \"--eval-batch-size-per-device=64 \"\n        \"--ctx-len=1024\"")
_BOTH = "--offload-param cpu --offload-optimizer cpu "
_VOCAB = ("the four special tokens the Llama 2 jobs add (resize_token_embeddings: 32,004 rows, the preset has "
          "32,000; 4 x 4,096 x 2 bytes of embedding and head)")
_JSON_SIZES = ("the 7B/13B JSON's sizes: sub_group_size 1e9, reduce and prefetch buckets 5e8, "
               "stage3_param_persistence_threshold 1e6, max live parameters and reuse distance 1e9, "
               "round_robin_gradients (the CLI takes DeepSpeed's defaults)")

ROWS = [
    _row("openshift-llama-2-7b-lora-zero3-offload-6xa10g-ran", _LLAMA2,
         _Q_A10.format(model="Llama-2-7b-chat-hf", config="zero_3_llama_2_7b.json"),
         "6 `g5.8xlarge` (A10 Nvidia GPU) worker nodes", "llama-2-7b", "6x1xA10G",
         "6 x AWS g5.8xlarge, one A10G 24 GB each (Ray head plus 5 workers, one GPU each)",
         "parameters and optimizer offloaded to the CPU, pinned", _BOTH, "zero_3_llama_2_7b.json", 16, 512, 32,
         "4.41.2", "48 GiB per Ray pod", "1xA10G (AWS g5.2xlarge, 32 GiB)", [_VOCAB, _JSON_SIZES]),
    _row("openshift-llama-2-13b-lora-zero3-offload-6xa10g-ran", _LLAMA2,
         _Q_A10.format(model="Llama-2-13b-chat-hf", config="zero_3_llama_2_13b.json"),
         "6 `g5.8xlarge` (A10 Nvidia GPU) worker nodes", "llama-2-13b", "6x1xA10G",
         "6 x AWS g5.8xlarge, one A10G 24 GB each (Ray head plus 5 workers, one GPU each)",
         "parameters and optimizer offloaded to the CPU, pinned", _BOTH, "zero_3_llama_2_13b.json", 16, 512, 32,
         "4.41.2", "48 GiB per Ray pod", "1xA10G (AWS g5.2xlarge, 32 GiB)", [_VOCAB, _JSON_SIZES]),
    _row("openshift-llama-2-70b-lora-zero3-offload-optim-8xa100-40gb-ran", _LLAMA2, _Q_70B,
         "DGX A100 Server (8x A100 / 40GB HBM)", "llama-2-70b", "8xA100-40GB",
         "one DGX A100 (8 x A100 40GB, one Ray pod per GPU)", "optimizer offloaded to the CPU, not pinned",
         "--offload-optimizer cpu ", "zero_3_llama_2_70b.json", 8, 512, 8, "4.41.2", "128 GiB per Ray pod",
         "8xA100-40GB (host assumed)",
         [_VOCAB, "the 70B JSON's 'auto' bucket sizes (accelerate fills them from the hidden size: reduce "
          "8192^2, prefetch 0.9 x 8192^2, persistence 10 x 8192)"]),
    _row("openshift-llama-3.1-8b-lora-zero3-offload-optim-5xa10g-ran", _LLAMA31_A10, _Q_31_A10,
         "5 `g5.8xlarge` (A10 Nvidia GPU) worker nodes", "llama-3.1-8b", "5x1xA10G",
         "5 x AWS g5.8xlarge, one A10G 24 GB each (Ray head plus 4 workers)",
         "optimizer offloaded to the CPU, not pinned: the file named optim+param held no offload_param until "
         "1d092ef", "--offload-optimizer cpu ", "zero_3_offload_optim+param.json", 6, 512, 8, "4.44.0",
         "32-64 GiB per worker pod, 64 GiB for the head", "1xA10G (AWS g5.2xlarge, 32 GiB)"),
    _row("openshift-llama-3.1-8b-lora-zero3-offload-4xmi300x-ran", _LLAMA31_MI300X, _Q_31_MI300X,
         "4 AMD MI300X GPUs / single node", "llama-3.1-8b", "4xMI300X",
         "4 x AMD MI300X 192 GB on one node (ROCm 6.1, torch 2.4)", "parameters and optimizer offloaded to the "
         "CPU, not pinned", _BOTH, "zero_3_offload_optim_param.json", 64, 1024, 64, "4.44.0",
         "96 GiB per Ray pod", "4xMI300X (host assumed)",
         ["flash-attn 2.6 built for ROCm (the CLI's flash attention is the CUDA kernel's memory)"]),
]
