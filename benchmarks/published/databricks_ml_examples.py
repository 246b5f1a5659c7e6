"""Frozen, verdict rows: Databricks' LLM fine-tuning notebooks (databricks/databricks-ml-examples, llm-models/,
Aug-Nov 2023), each headed "Environment for this notebook: ... Instance: <cloud instance>". No peak is printed:
each row is a run stated to train on the named instance (the estimate must not say "does not fit").

Two recipes, read in the notebooks and scripts at 4b1b32f (the repository's state of March 2024; the files last
changed Aug-Nov 2023):

* QLoRA (06_fine_tune_qlora.py): `from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_4bit, nf4,
  compute dtype float16), device_map="cuda:0")` (no double quantization), LoraConfig(r=64, alpha 16, dropout 0.1)
  on the seven block linears (q/k/v/o_proj, gate/up/down_proj; Mistral's notebook collects every Linear4bit less
  lm_head: the same seven), TrainingArguments(fp16=True: autocast and a GradScaler, optim "paged_adamw_32bit",
  group_by_length), TRL's SFTTrainer (0.4.7; Mistral: 0.7.1) with dataset_text_field "text" on dolly-15k prompts
  and max_seq_length 512, no packing: each batch padded to its own longest (--varying-lengths). Both TRL versions
  call `prepare_model_for_int8_training(model)` on a 4-bit model (sft_trainer.py, v0.4.7 line 141, v0.7.1 line
  148): PEFT's default use_gradient_checkpointing=True turns checkpointing on and every parameter that is not 4-bit
  becomes fp32 (the notebook's own loop then casts the norms to fp32 again). transformers 4.31 (Llama) and 4.34
  (Mistral) have no SDPA for these models: eager attention.
* Full fine-tuning (05_fine_tune_deepspeed*.py and scripts/fine_tune_deepspeed.py): the `deepspeed` launcher on
  the HF Trainer with config/a10_config.json (ZeRO-3, bf16, parameters and optimizer offloaded to the CPU, pinned;
  DeepSpeed's AdamW, i.e. CPU Adam), the model loaded with torch_dtype=bfloat16 (a bf16 module, fp32 masters on the
  host), gradient checkpointing, mosaicml/dolly_hhrlhf tokenized with padding and truncation at max_seq_len 256 and
  only rows of exactly 256 tokens kept (`if length == max_seq_len`): every batch is 256 tokens (fixed lengths).
  transformers 4.31 / DeepSpeed 0.9.5 (Llama), 4.34 / 0.10.3 (Mistral); eager attention.
"""

from __future__ import annotations

_COMMIT = "4b1b32f2d30dc6ff2a134ca8d4807b8d4ca26774"
_URL = f"https://github.com/databricks/databricks-ml-examples/blob/{_COMMIT}/llm-models/{{}}"
_TARGETS = "".join(f"--lora-target {m} " for m in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                    "down_proj"))
_QLORA_SETTINGS = (
    "Databricks {notebook} at {commit}: {model} in NF4 (no double quantization, float16 compute) on {gpu}, LoRA r=64 "
    "alpha 16 dropout 0.1 on the seven block linears, TRL {trl} SFTTrainer (prepare_model_for_int8_training: "
    "checkpointing on, non-4-bit parameters fp32), fp16=True (autocast), paged_adamw_32bit, batch {batch} x "
    "accumulation {accum}, dolly-15k prompts cut at 512 tokens and padded to each batch's longest, transformers "
    "{transformers} (eager attention), bitsandbytes {bnb}; stated to run on that instance (no peak printed)"
)
_QLORA_UNEXPRESSED = [
    "NF4 without double quantization (the CLI's QLoRA double-quantizes: about 0.4 bits per parameter less)",
    "the padded length of the longest batch (dolly-15k prompts above 512 tokens are cut there; the argv says the cap)",
]
_FULL_SETTINGS = (
    "Databricks {notebook} at {commit}: {model} fully fine-tuned under DeepSpeed {ds} ZeRO-3 with parameters and "
    "optimizer offloaded to the CPU (config/a10_config.json), bf16 module with fp32 masters on the host, gradient "
    "checkpointing, per-device batch {batch}, every sample exactly 256 tokens, transformers {transformers} (eager "
    "attention), on {gpus}; stated to run on that instance (no peak printed)"
)
_FULL_UNEXPRESSED = [
    "a10_config.json's ZeRO-3 sizes: sub_group_size 5e7, stage3_prefetch_bucket_size 5e8, "
    "stage3_param_persistence_threshold 1e6, max live parameters and reuse distance 1e9 (the CLI takes DeepSpeed's "
    "defaults)",
    "evaluation every 10 steps (eval_steps defaults to logging_steps) at per_device_eval_batch_size {eval_batch} x "
    "256 tokens, no backward: not a training step",
]


def _qlora(key: str, notebook: str, quote: str, printed: str, model: str, system: str, gpu: str, batch: int,
           accum: int, trl: str, transformers: str, bnb: str) -> dict:
    return {"key": key, "source": "databricks-ml-examples", "url": _URL.format(notebook), "quote": quote,
            "printed": printed, "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": f"estimate --model {model} --system {system} --strategy single --qlora --precision mixed "
                    f"--lora-rank 64 {_TARGETS}--lora-dropout 0.1 --optimizer paged-adamw --gradient-checkpointing "
                    f"--micro-batch {batch} --gradient-accumulation {accum} --seq-len 512 --varying-lengths "
                    "--attention eager "
                    # the notebooks' pinned stack: bitsandbytes before 0.43.2 keeps every 4-bit linear's input
                    # (before 0.41 its own fp16 cast of the fp32 input), transformers before 4.49 copies the logits
                    f"--stack bitsandbytes=={bnb} --stack transformers=={transformers} --format json",
            "assumptions": _QLORA_SETTINGS.format(notebook=notebook, commit=_COMMIT[:7], model=model, gpu=gpu,
                                                  trl=trl, batch=batch, accum=accum, transformers=transformers,
                                                  bnb=bnb),
            "unexpressed": [u.format(bnb=bnb) for u in _QLORA_UNEXPRESSED]}


def _full(key: str, notebook: str, quote: str, printed: str, model: str, system: str, gpus: str, batch: int,
          eval_batch: int, ds: str, transformers: str, extra=()) -> dict:
    return {"key": key, "source": "databricks-ml-examples", "url": _URL.format(notebook), "quote": quote,
            "printed": printed, "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": f"estimate --model {model} --system {system} --strategy zero3 --offload-param cpu "
                    f"--offload-optimizer cpu --precision bf16 --optimizer adamw --micro-batch {batch} --seq-len 256 "
                    f"--fixed-lengths --gradient-checkpointing --attention eager --stack transformers=={transformers} "
                    "--format json",
            "assumptions": _FULL_SETTINGS.format(notebook=notebook, commit=_COMMIT[:7], model=model, ds=ds,
                                                 batch=batch, transformers=transformers, gpus=gpus),
            "unexpressed": [*(u.format(eval_batch=eval_batch) for u in _FULL_UNEXPRESSED), *extra]}


_LLAMA7_QUOTE = "- Instance: `g5.8xlarge` on AWS, `Standard_NV36ads_A10_v5` on Azure"
_LLAMA13_QUOTE = "- Instance: `a2-highgpu-1g` on GCP, `Standard_NC24ads_A100_v4` on Azure, `g5.12xlarge` on AWS"
_LLAMA70_QUOTE = "- Instance: `Standard_NC24ads_A100_v4` on Azure"
_MISTRAL_QUOTE = "- Instance: `g5.xlarge` on AWS, `Standard_NV36ads_A10_v5` on Azure"
_DS7_QUOTE = ("- Instance: `Standard_NC96ads_A100_v4` on Azure with 4 A100-80GB GPUs, `p4d.24xlarge` on AWS with 8 "
              "A100-40GB GPUs")
_DS13_QUOTE = "- Instance: `g5.48xlarge` on AWS with 8 A10 GPUs."
_DS_MISTRAL_QUOTE = ("- Instance: `Standard_NC96ads_A100_v4` on Azure with 4 A100-80GB GPUs, `g5.24xlarge` on AWS "
                     "with 4 A10-24GB GPUs")

ROWS = [
    _qlora("databricks-llama-2-7b-qlora-1xa10g-ran", "llamav2/llamav2-7b/06_fine_tune_qlora.py", _LLAMA7_QUOTE,
           "`g5.8xlarge` on AWS", "llama-2-7b", "1xA10G", "one A10G 24 GB (g5.8xlarge)", 4, 4, "0.4.7", "4.31.0",
           "0.40.1"),
    _qlora("databricks-llama-2-13b-qlora-1xa10g-ran", "llamav2/llamav2-13b/06_fine_tune_qlora.py", _LLAMA13_QUOTE,
           "`g5.12xlarge` on AWS", "llama-2-13b", "1xA10G",
           "one A10G 24 GB (g5.12xlarge has four; device_map='cuda:0' uses the first)", 4, 4, "0.4.7", "4.31.0",
           "0.40.1"),
    _qlora("databricks-llama-2-70b-qlora-1xa100-80gb-ran", "llamav2/llamav2-70b/06_fine_tune_qlora.py",
           _LLAMA70_QUOTE, "`Standard_NC24ads_A100_v4` on Azure", "llama-2-70b", "1xA100-PCIE-80GB",
           "one A100 80GB PCIe (Standard_NC24ads_A100_v4)", 8, 8, "0.4.7", "4.31.0", "0.40.1"),
    _qlora("databricks-mistral-7b-qlora-1xa10g-ran", "mistral/mistral-7b/06_fine_tune_qlora.py", _MISTRAL_QUOTE,
           "`g5.xlarge` on AWS", "mistral-7b", "1xA10G", "one A10G 24 GB (g5.xlarge; quantized models load on the "
           "current device when no device_map is given)", 4, 4, "0.7.1", "4.34.0", "0.41.1"),
    _full("databricks-llama-2-7b-zero3-offload-8xa100-40gb-ran", "llamav2/llamav2-7b/05_fine_tune_deepspeed.py",
          _DS7_QUOTE, "8 A100-40GB GPUs", "llama-2-7b", "8xA100-40GB", "8 x A100 40GB (p4d.24xlarge, the "
          "launcher's default: every GPU)", 24, 24, "0.9.5", "4.31.0"),
    _full("databricks-llama-2-7b-zero3-offload-4xa100-80gb-ran", "llamav2/llamav2-7b/05_fine_tune_deepspeed.py",
          _DS7_QUOTE, "4 A100-80GB GPUs", "llama-2-7b", "4xA100-PCIE-80GB", "4 x A100 80GB PCIe "
          "(Standard_NC96ads_A100_v4)", 24, 24, "0.9.5", "4.31.0"),
    _full("databricks-llama-2-13b-zero3-offload-8xa10g-ran", "llamav2/llamav2-13b/05_fine_tune_deepspeed.py",
          _DS13_QUOTE, "8 A10 GPUs", "llama-2-13b", "8xA10G", "8 x A10G 24 GB (g5.48xlarge, --num_gpus=8)", 16, 48,
          "0.9.5", "4.31.0", ["learning rate and schedule flags of the notebook (5e-6, cosine, 100 warm-up steps, "
                             "100 steps): no memory effect"]),
    _full("databricks-mistral-7b-zero3-offload-1xa10g-ran", "mistral/mistral-7b/05_fine_tune_deepspeed.py",
          _DS_MISTRAL_QUOTE, "4 A10-24GB GPUs", "mistral-7b", "1xA10G", "one A10G 24 GB (g5.24xlarge has four; "
          "the notebook launches `deepspeed --num_gpus=1`)", 24, 24, "0.10.3", "4.34.0"),
]
