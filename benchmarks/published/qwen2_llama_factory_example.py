"""Frozen: QwenLM/Qwen2.5's examples/llama-factory/finetune-zh.md (ba975fc, 2024-09-04, the commit that wrote it with
its three YAML files): Qwen2-7B-Instruct fine-tuned with LLaMA-Factory (the page prints `llamafactory-cli version`
0.8.4.dev0: read at 41a9c41, its last commit before the page's), "各个方法实测的显存占用" (the memory each method was
measured to take) with the YAML files beside it. Not QwenLM/Qwen's README profiling (qwen-readme-profiling), not
the Yuan pages' LLaMA-Factory of December 2023 (yuan2-llama-factory-doc-2024).

Read in the YAML files and LLaMA-Factory 0.8.4.dev0:

* qwen2-7b-lora-sft.yaml: `finetuning_type: lora`, `lora_target: all` (every linear but the head), r=16, alpha 16,
  dropout 0.05; qwen2-7b-qlora-sft.yaml: the same with `quantization_bit: 4` through bitsandbytes (NF4 with double
  quantization, LLaMA-Factory's defaults, bf16 compute and storage); both `cutoff_len: 1024`, batch 1 x accumulation
  16, `bf16: true`, no `deepspeed`: one process (`llamafactory-cli train` without FORCE_TORCHRUN).
* The model loads in bf16 (the compute dtype); gradient checkpointing is on by default (`disable_gradient_checkpointing`
  false, reentrant); trainable parameters are cast to fp32 and the Trainer autocasts to bf16 (mixed precision);
  neither the layernorms nor the lm_head output are upcast (`upcast_layernorm`, `upcast_lmhead_output` false), and no
  PEFT k-bit preparation runs for QLoRA (--no-kbit-prepare); the loss is transformers' Qwen2 loss.
* Data: the page's own `qwen_train_data` (not published), no packing (LLaMA-Factory's SFT default), batch 1: every
  step is one sample at its own length, cut at 1,024 tokens (--varying-lengths, the longest assumed to reach it).
* `flash_attn: auto` with `pip install -e ".[torch,metrics]"` (no flash-attn): transformers' SDPA. Stack of the
  day within LLaMA-Factory's pins: transformers 4.44.2 (<=4.45.0), bitsandbytes 0.43.3, torch 2.4.0; the Trainer's
  default optimizer `adamw_torch` (torch's foreach AdamW).

What the number is: "GB", how read not said: read as nvidia-smi's, GiB (nvidia-smi's MiB / 1024), as the ms-swift
pages' figures are read. The GPU is not named: the argv says an A100 80GB (only the verdict and the CUDA context
depend on it). The full fine-tuning figure (42.18GB) ran under `deepspeed: PATH-TO-DS-CONFIG` on a number of GPUs
the page does not give (FORCE_TORCHRUN=1): its ZeRO stage and GPU count decide it, so it is kept as not expressible.
"""

from __future__ import annotations

_COMMIT = "ba975fcee0ffba72820c77997b8e63d7a5bc18a4"
_URL = f"https://github.com/QwenLM/Qwen2.5/blob/{_COMMIT}/examples/llama-factory/finetune-zh.md"
_SOURCE = "qwen2-llama-factory-example-2024"
_SETTINGS = (
    "QwenLM/Qwen2.5 examples/llama-factory at ba975fc: Qwen2-7B-Instruct {how} through LLaMA-Factory 0.8.4.dev0 "
    "(41a9c41) on one GPU, bf16 weights, fp32 adapters, bf16 autocast, batch 1 x accumulation 16, samples cut at "
    "cutoff_len 1,024 and run at their own length (no packing), reentrant gradient checkpointing, SDPA, torch AdamW "
    "(adamw_torch); transformers 4.44.2, torch 2.4.0{stack}; the GPU unnamed (the argv says an A100 80GB)"
)
_UNEXPRESSED = [
    "'GB' read as GiB (nvidia-smi's MiB / 1024); read as 10^9 bytes the figure would be 6.9% smaller; how it was read "
    "and at which step the page does not say",
    "the longest sample of the page's own qwen_train_data (not published) assumed to reach cutoff_len 1,024",
    "evaluation every 500 steps on val_size 0.1 at batch 1 (no backward): not a training step",
]
_ARGV = ("estimate --model qwen2-7b --system 1xA100-80GB --strategy single {method} --precision mixed --lora-rank 16 "
         "--lora-dropout 0.05 --micro-batch 1 --gradient-accumulation 16 --seq-len 1024 --varying-lengths "
         "--gradient-checkpointing --attention sdpa --stack transformers==4.44.2 --stack torch==2.4.0{stack} "
         "--format json")
_BNB = " --stack bitsandbytes==0.43.3"

ROWS = [
    {"key": "qwen2-lf-example-7b-lora-all-r16", "source": _SOURCE, "url": _URL, "quote": "- LoRA训练：20.17GB",
     "printed": "20.17GB", "measured_bytes": int(round(20.17 * 2**30)), "metric": "nvidia-smi",
     "argv": _ARGV.format(method="--lora", stack=""),
     "assumptions": _SETTINGS.format(how="LoRA r=16 alpha 16 dropout 0.05 on every linear (lora_target all)",
                                     stack=""),
     "unexpressed": list(_UNEXPRESSED)},
    {"key": "qwen2-lf-example-7b-qlora-all-r16", "source": _SOURCE, "url": _URL, "quote": "- QLoRA训练: 10.97GB",
     "printed": "10.97GB", "measured_bytes": int(round(10.97 * 2**30)), "metric": "nvidia-smi",
     "argv": _ARGV.format(method="--qlora --no-kbit-prepare", stack=_BNB),
     "assumptions": _SETTINGS.format(how="QLoRA (bitsandbytes NF4, double quantization, bf16 compute and storage; no "
                                         "k-bit preparation) r=16 alpha 16 dropout 0.05 on every linear",
                                     stack=", bitsandbytes 0.43.3"),
     "unexpressed": list(_UNEXPRESSED)},
    {"key": "qwen2-lf-example-7b-full", "source": _SOURCE, "url": _URL, "quote": "- 全量参数训练：42.18GB",
     "printed": "42.18GB", "measured_bytes": int(round(42.18 * 2**30)), "metric": "nvidia-smi", "argv": None,
     "not_expressible": "full fine-tuning under 'deepspeed: PATH-TO-DS-CONFIG' on an unstated number of GPUs "
                        "(FORCE_TORCHRUN=1): the ZeRO stage and the GPU count that decide the figure are not given",
     "assumptions": _SETTINGS.format(how="fully fine-tuned (qwen2-7b-full-sft.yaml, lr 1e-5)", stack="")},
]
