"""Frozen: GPU memory measured by users in huggingface/trl's issue tracker (source `trl-issues-memory-reports`).

One thread so far, huggingface/trl#1376 (2024-02-27, "sft training example with peft doesn't reduce expected
runtime GPU memory compared to full finetuning"): TRL's own `examples/scripts/sft.py` run with the command in its
docstring, with and without `--use_peft`, three ways: plain `python` (the Trainer wraps the model in
nn.DataParallel over the visible GPUs), `accelerate launch` with `examples/accelerate_configs/deepspeed_zero3.yaml`
and with `multi_gpu.yaml`. The issue prints peft 0.8.2 and trl 0.7.12.dev0 (both from source; trl's main on that
day was b32656f, where sft.py last changed at 9bc478e, 2024-02-15).

The code, read at b32656f: `facebook/opt-350m` (331,196,416 parameters; the issue prints 337,487,872 with 6,291,456
trainable, LoRA r=64 on PEFT's OPT default q_proj and v_proj: 24 x 2 x 64 x 2,048) loaded with `torch_dtype` None
(fp32), `SFTTrainer(packing=True, max_seq_length=512)` (ScriptArguments' default): every sequence is a packed
512-token block; the docstring's command: per_device_train_batch_size 64, gradient_accumulation_steps 16,
`--gradient_checkpointing` (use_reentrant False, set by the script), no `--bf16` flag, the Trainer's default optim
(adamw_torch); ModelConfig's LoRA defaults: alpha 16 (the command's), dropout 0.05. Both accelerate configs say
`mixed_precision: 'bf16'` and `num_processes: 8`: under `multi_gpu.yaml` that is DDP with bf16 autocast over fp32
weights (--precision mixed); under `deepspeed_zero3.yaml` DeepSpeed's bf16 engine (zero.Init makes the parameters
bf16, fp32 master partitions, no autocast), where transformers 4.38's OPTForCausalLM computes its CrossEntropyLoss
on the bf16 logits without `.float()` (--loss-dtype bf16).

What the number is: "20.5G", "34G" etc. per GPU as the user read them (the plain-`python` case reads "16G~66G",
GPU by GPU: a per-device monitor, nvidia-smi-like); taken as GiB of nvidia-smi per GPU. The GPU model is not named;
the plain-`python` case used 66G of one GPU, so the cards have 80 GB: the argv says 8 x A100 80GB.
"""

from __future__ import annotations

_URL = "https://github.com/huggingface/trl/issues/1376"
_CODE_URL = "https://github.com/huggingface/trl/blob/b32656f7266c02500ea346eda75a0db7a9a1bb75/examples/scripts/sft.py"
_MODEL = "benchmarks/published/models/opt-350m/config.json"
_Q_ZERO3 = ("2. launch the example using accelerate with ds-zero3 config "
            "`trl/examples/accelerate_configs/deepspeed_zero3.yaml` and peft enabled only reduces relatively small "
            "memory (**20.5G for peft=false and 19.7G for peft=true**).")
_Q_DDP = ("3. launch the example using accelerate with multi_gpu config `trl/examples/accelerate_configs/"
          "multi_gpu.yaml` observes unexpectedly larger memory with peft enabled (**34G for peft=false and 40G for "
          "peft=true**).")
_Q_DP = ("1. directly running sft example using the command provided in the script observes imbalanced memory usage "
         "(**16G\\~66G for peft=false and 16G\\~41G for peft=true**).")
_SETTINGS = (
    "trl#1376 (2024-02-27): TRL's examples/scripts/sft.py at b32656f with its docstring's command, {how}; "
    "facebook/opt-350m loaded in fp32, SFTTrainer packing=True at max_seq_length 512 (fixed 512-token blocks), "
    "batch 64 per device x accumulation 16, gradient checkpointing (use_reentrant False), adamw_torch, peft 0.8.2, "
    "trl 0.7.12.dev0; the figure per GPU as the user read it, taken as GiB of nvidia-smi; the GPUs not named: 8 x "
    "80 GB assumed (the plain-python case used 66G of one)"
)
_LORA = "LoRA r=64 alpha 16 dropout 0.05 on q_proj and v_proj (6,291,456 trainable, printed)"
_LORA_FLAGS = "--lora --lora-rank 64 --lora-target q_proj --lora-target v_proj --lora-dropout 0.05 "
_TRANSFORMERS = ("transformers' version is cut from the issue's list (Feb 2024: 4.38 assumed); the OPT stand-in is "
                 "facebook/opt-350m's own config.json, sized term by term as today's modeling_opt.py runs it: no "
                 "transformers of Feb 2024 had SDPA for OPT (added by huggingface/transformers#33298, Sept 2024), so the "
                 "run's attention was eager (the rows' peak is the loss tail at backward's start: --attention eager "
                 "gives the same four figures)")
_GPU = "the GPU model (not named; 80 GB assumed) and so its CUDA context"


def _row(key: str, quote: str, printed: str, how: str, flags: str, unexpressed: list[str]) -> dict:
    return {"key": key, "source": "trl-issues-memory-reports", "url": _URL, "code_url": _CODE_URL,
            "quote": quote, "printed": printed, "measured_bytes": int(round(float(printed[:-1]) * 2**30)),
            "metric": "nvidia-smi",
            "argv": f"estimate --model {_MODEL} --system 8xA100-80GB {flags}--optimizer adamw --micro-batch 64 "
                    "--gradient-accumulation 16 --seq-len 512 --fixed-lengths --gradient-checkpointing --format json",
            "assumptions": _SETTINGS.format(how=how), "unexpressed": [*unexpressed, _TRANSFORMERS, _GPU]}


_ZERO3 = "--strategy zero3 --precision mixed --loss-dtype bf16 "
_DDP = "--strategy ddp --precision mixed "
ROWS = [
    _row("trl1376-opt350m-full-zero3-8gpu", _Q_ZERO3, "20.5G",
         "accelerate launch with deepspeed_zero3.yaml (8 processes, ZeRO-3, bf16 engine, zero3_init), full "
         "fine-tuning", _ZERO3, []),
    _row("trl1376-opt350m-lora-zero3-8gpu", _Q_ZERO3, "19.7G",
         f"accelerate launch with deepspeed_zero3.yaml (8 processes, ZeRO-3, bf16 engine), {_LORA}",
         _ZERO3 + _LORA_FLAGS,
         ["DeepSpeed's bf16 engine casts the LoRA adapters to bf16 too (fp32 master partitions for them)"]),
    _row("trl1376-opt350m-full-ddp-8gpu", _Q_DDP, "34G",
         "accelerate launch with multi_gpu.yaml (8 processes, DDP, bf16 autocast over fp32 weights), full "
         "fine-tuning", _DDP, []),
    _row("trl1376-opt350m-lora-ddp-8gpu", _Q_DDP, "40G",
         f"accelerate launch with multi_gpu.yaml (8 processes, DDP, bf16 autocast over the fp32 base TRL loads "
         f"with torch_dtype None: --base-dtype fp32), {_LORA}", _DDP + "--base-dtype fp32 " + _LORA_FLAGS, []),
]

_DATA_PARALLEL = ("plain `python` with every GPU visible: the Trainer wraps the model in nn.DataParallel (one "
                  "process, replicas and the batch scattered from GPU 0, outputs gathered there: 16G on most GPUs, "
                  "66G/41G on the first); the CLI plans one process per GPU")
for _key, _printed in (("trl1376-opt350m-full-dataparallel", "66G"), ("trl1376-opt350m-lora-dataparallel", "41G")):
    ROWS.append({"key": _key, "source": "trl-issues-memory-reports", "url": _URL, "code_url": _CODE_URL,
                 "quote": _Q_DP, "printed": _printed, "measured_bytes": int(round(float(_printed[:-1]) * 2**30)),
                 "metric": "nvidia-smi", "ran": True, "argv": None, "not_expressible": _DATA_PARALLEL,
                 "assumptions": _SETTINGS.format(how="plain python (nn.DataParallel), the largest GPU's figure")})
