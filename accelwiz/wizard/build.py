"""Answers -> the two config dicts, each field with one owner.

With DeepSpeed the JSON owns precision, micro-batch, accumulation and clipping, and the YAML only points at it
(accelerate raises if `mixed_precision`, `gradient_accumulation_steps`, `gradient_clipping`, `zero_stage` or
an offload key sits next to `deepspeed_config_file`); the YAML keeps `zero3_init_flag`, which it allows.

When the HF Trainer (or TRL) owns the batch (`owner: trainer`), the JSON says "auto" for every value the Trainer
fills from its TrainingArguments (transformers' HfTrainerDeepSpeedConfig), and `trainer_arguments` gives the
exact flags that agree with the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelwiz.defaults import DEFAULT_CONFIG
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answers import Answers, Launcher, OffloadDevice, Owner, Precision, StrategyChoice


@dataclass(frozen=True)
class ConfigPair:
    accelerate: dict[str, Any]
    deepspeed: dict[str, Any] | None


DISTRIBUTED_TYPE = {
    StrategyChoice.single: "NO",
    StrategyChoice.ddp: "MULTI_GPU",
    StrategyChoice.fsdp_full: "FSDP",
    StrategyChoice.fsdp_grad_op: "FSDP",
    StrategyChoice.fsdp_hybrid: "FSDP",
    StrategyChoice.zero1: "DEEPSPEED",
    StrategyChoice.zero2: "DEEPSPEED",
    StrategyChoice.zero3: "DEEPSPEED",
}
AUTO = "auto"
# The DeepSpeed JSON is named after its YAML: `zero3.yaml` -> `zero3.ds.json`, so two plans can share a folder.
DEEPSPEED_SUFFIX = ".ds.json"
DEFAULT_DEEPSPEED_FILE = DEFAULT_CONFIG.with_name(DEFAULT_CONFIG.stem + DEEPSPEED_SUFFIX)


def _distributed_type(answers: Answers) -> str:
    """The strategy's type; without GPUs, several processes are MULTI_GPU with use_cpu: accelerate's launcher then
    starts them through torchrun with ACCELERATE_USE_CPU (utils/launch.py, prepare_multi_gpu_env): DDP on gloo."""
    if answers.gpus == 0 and answers.world_size > 1 and answers.strategy in (StrategyChoice.single,
                                                                              StrategyChoice.ddp):
        return "MULTI_GPU"
    return DISTRIBUTED_TYPE[answers.strategy]


def build(
    answers: Answers,
    system: MachineProfile,
    *,
    deepspeed_file: Path | str = DEFAULT_DEEPSPEED_FILE,
    hidden_size: int | None = None,
) -> ConfigPair:
    """The Accelerate YAML dict and, for DeepSpeed strategies, the DeepSpeed JSON dict it references."""
    machines = answers.num_machines
    config: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": _distributed_type(answers),
        "num_machines": machines,
        "num_processes": answers.world_size,
        "machine_rank": answers.machine_rank,
        "use_cpu": answers.gpus == 0,
    }
    if not answers.uses_deepspeed:
        config["mixed_precision"] = answers.precision.value
    if answers.gpus and answers.strategy in (StrategyChoice.single, StrategyChoice.ddp):
        config["gpu_ids"] = "all"  # as accelerate's wizard: DeepSpeed and FSDP take the visible devices
    if machines > 1:
        config.update(_multi_node(answers))
    if answers.precision is Precision.fp8:
        config["fp8_config"] = {"backend": fp8_backend(system)}
    if answers.torch_compile and answers.owner is Owner.accelerate:  # the Trainer compiles on --torch_compile
        config["dynamo_config"] = {"dynamo_backend": "INDUCTOR"}
    if answers.strategy in (StrategyChoice.fsdp_full, StrategyChoice.fsdp_grad_op):
        config["fsdp_config"] = _fsdp(answers)
    if answers.strategy is StrategyChoice.fsdp_hybrid:
        config["fsdp_config"] = _fsdp_hybrid(answers)
    deepspeed = None
    if answers.uses_deepspeed:
        config["deepspeed_config"] = _deepspeed_section(answers, deepspeed_file)
        deepspeed = deepspeed_json(answers, hidden_size=hidden_size)
    return ConfigPair(accelerate=config, deepspeed=deepspeed)


def fp8_backend(system: MachineProfile) -> str:
    from accelwiz.wizard.precision_question import fp8_backend as target_backend

    return target_backend(system)


def _multi_node(answers: Answers) -> dict[str, Any]:
    # rdzv_backend and same_network are not written: `accelerate launch` ignores both when they come from the
    # file (its CLI defaults win), so the rendezvous backend goes on the launch command instead.
    section: dict[str, Any] = {"main_process_port": answers.main_process_port}
    if answers.main_process_ip:
        section["main_process_ip"] = answers.main_process_ip
    return section


def _fsdp(answers: Answers) -> dict[str, Any]:
    """FSDP2: full shard reshards the parameters after forward (gathered again in backward); shard-grad-op keeps
    them gathered until backward (accelerate maps reshard_after_forward false to SHARD_GRAD_OP)."""
    return {
        "fsdp_version": 2,
        "fsdp_reshard_after_forward": answers.strategy is StrategyChoice.fsdp_full,
        "fsdp_offload_params": answers.offload_params,
        "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
        "fsdp_state_dict_type": "SHARDED_STATE_DICT",
        "fsdp_cpu_ram_efficient_loading": True,
        "fsdp_activation_checkpointing": _fsdp_checkpointing(answers),
    }


def _fsdp_checkpointing(answers: Answers) -> bool:
    """FSDP's own activation checkpointing, unless the HF Trainer (or TRL, which turns it on by default) owns
    checkpointing: transformers refuses both at once (AW710), and the Trainer's flag is the one `check` and the
    resolution read."""
    return bool(answers.gradient_checkpointing) and answers.owner is Owner.accelerate


def _fsdp_hybrid(answers: Answers) -> dict[str, Any]:
    """HYBRID_SHARD: full sharding inside each machine, replication across machines. FSDP1, because accelerate's
    FSDP2 reads no sharding strategy (hybrid there needs a ParallelismConfig); FSDP1 needs sync_module_states with
    cpu_ram_efficient_loading and reads the strategy from fsdp_sharding_strategy (not reshard_after_forward)."""
    return {
        "fsdp_version": 1,
        "fsdp_sharding_strategy": "HYBRID_SHARD",
        "fsdp_offload_params": False,
        "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
        "fsdp_backward_prefetch": "BACKWARD_PRE",
        "fsdp_state_dict_type": "SHARDED_STATE_DICT",
        "fsdp_use_orig_params": True,
        "fsdp_cpu_ram_efficient_loading": True,
        "fsdp_sync_module_states": True,
        "fsdp_activation_checkpointing": _fsdp_checkpointing(answers),
    }


def _deepspeed_section(answers: Answers, deepspeed_file: Path | str) -> dict[str, Any]:
    section: dict[str, Any] = {
        "deepspeed_config_file": str(deepspeed_file),
        "zero3_init_flag": bool(answers.zero3_init) and answers.strategy is StrategyChoice.zero3,
    }
    if answers.num_machines > 1:
        # `standard` = torchrun on every node (started by srun or by hand); pdsh, the default, needs ssh.
        section["deepspeed_multinode_launcher"] = "standard"
    return section


def deepspeed_json(answers: Answers, *, hidden_size: int | None = None) -> dict[str, Any]:
    """The DeepSpeed JSON: concrete values when accelerate owns the batch (nothing depends on who resolves
    "auto"); "auto" where the HF Trainer fills them from its arguments."""
    if answers.owner is Owner.trainer:
        return _trainer_json(answers)
    stage = answers.strategy.zero_stage
    zero: dict[str, Any] = {"stage": stage, "overlap_comm": True, "contiguous_gradients": True}
    zero.update(_offload(answers))
    if hidden_size:
        # The values accelerate would fill for "auto" from model.config.hidden_size; written out because a
        # model without a `config` attribute makes accelerate raise on "auto" here.
        zero["reduce_bucket_size"] = hidden_size * hidden_size
        if stage == 3:
            zero["stage3_prefetch_bucket_size"] = int(0.9 * hidden_size * hidden_size)
            zero["stage3_param_persistence_threshold"] = 10 * hidden_size
    if stage == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    return {
        "train_micro_batch_size_per_gpu": answers.micro_batch,
        "gradient_accumulation_steps": answers.gradient_accumulation,
        "gradient_clipping": float(answers.gradient_clipping),
        "bf16": {"enabled": answers.precision is Precision.bf16},
        "fp16": _fp16(answers.precision is Precision.fp16),
        "zero_optimization": zero,
        "wall_clock_breakdown": False,
    }


def _offload(answers: Answers) -> dict[str, Any]:
    """offload_optimizer / offload_param to the CPU, or to an NVMe directory (ZeRO-Infinity, ZeRO-3 only)."""
    nvme = answers.offload_device is OffloadDevice.nvme
    section: dict[str, Any] = {}
    for wanted, key in ((answers.offload_optimizer, "offload_optimizer"), (answers.offload_params, "offload_param")):
        if wanted:
            section[key] = ({"device": "nvme", "nvme_path": answers.nvme_path, "pin_memory": True} if nvme
                            else {"device": "cpu", "pin_memory": True})
    return section


def _trainer_json(answers: Answers) -> dict[str, Any]:
    """transformers' HfTrainerDeepSpeedConfig fills every "auto" here from TrainingArguments and the model."""
    stage = answers.strategy.zero_stage
    zero: dict[str, Any] = {"stage": stage, "overlap_comm": True, "contiguous_gradients": True,
                            "reduce_bucket_size": AUTO}
    zero.update(_offload(answers))
    if stage == 3:
        zero.update({"stage3_prefetch_bucket_size": AUTO, "stage3_param_persistence_threshold": AUTO,
                     "stage3_gather_16bit_weights_on_model_save": True})
    config: dict[str, Any] = {
        "train_batch_size": AUTO,
        "train_micro_batch_size_per_gpu": AUTO,
        "gradient_accumulation_steps": AUTO,
        "gradient_clipping": AUTO,
        "bf16": {"enabled": AUTO},
        "fp16": {"enabled": AUTO, "loss_scale": 0, "initial_scale_power": 16, "loss_scale_window": 1000,
                 "hysteresis": 2, "min_loss_scale": 1},
    }
    if answers.offload_optimizer:
        config["optimizer"] = TRAINER_OFFLOAD_OPTIMIZER
    config.update({"zero_optimization": zero, "wall_clock_breakdown": False})
    return config


# With the optimizer offloaded, the optimizer must be DeepSpeed's: without an `optimizer` block transformers'
# deepspeed_optim_sched builds the Trainer's torch AdamW and sets zero_allow_untested_optimizer, so the step runs
# a plain torch optimizer on CPU tensors. With the block it passes a DummyOptim and DeepSpeed builds
# DeepSpeedCPUAdam (type AdamW -> adamw_mode). Every param is "auto": trainer_config_process fills them from
# --learning_rate, --adam_beta1/2, --adam_epsilon and --weight_decay. No `scheduler` block: without one the
# Trainer's own scheduler (--lr_scheduler_type, --warmup_steps) wraps the DeepSpeed optimizer.
TRAINER_OFFLOAD_OPTIMIZER: dict[str, Any] = {
    "type": "AdamW",
    "params": {"lr": AUTO, "betas": AUTO, "eps": AUTO, "weight_decay": AUTO},
}


# transformers 5.24 renamed TrainingArguments.gradient_checkpointing to activation_checkpointing; the old name
# still works and warns (FutureWarning) that it goes in v6 (training_args.py __post_init__).
ACTIVATION_CHECKPOINTING_SINCE = "5.24"


def checkpointing_flag(system: MachineProfile | None = None) -> str:
    """TrainingArguments' checkpointing flag as the transformers that will run spells it: the target profile's
    version when it records one, else this environment's (package metadata, no import), else today's name."""
    from accelwiz.probe.packages import distribution_version
    from accelwiz.probe.versions import version_at_least

    known = system is not None and system.package_known("transformers")
    version = (system.packages["transformers"] if known else None) or distribution_version("transformers")
    old = version is not None and version_at_least(version, ACTIVATION_CHECKPOINTING_SINCE) is False
    return "--gradient_checkpointing" if old else "--activation_checkpointing"


def trainer_arguments(answers: Answers, system: MachineProfile | None = None) -> list[str]:
    """The TrainingArguments flags that agree with the plan (the Trainer owns these values in trainer mode), in
    the spelling of the transformers that will run (`system`'s, else this environment's)."""
    flags = ["--per_device_train_batch_size", str(answers.micro_batch),
             "--gradient_accumulation_steps", str(answers.gradient_accumulation)]
    if answers.precision in (Precision.bf16, Precision.fp16):
        flags.append(f"--{answers.precision.value}")
    flags += ["--max_grad_norm", f"{answers.gradient_clipping:g}"]
    if answers.gradient_checkpointing:
        flags.append(checkpointing_flag(system))
    if answers.torch_compile:
        flags.append("--torch_compile")
    return flags


def _fp16(enabled: bool) -> dict[str, Any]:
    if not enabled:
        return {"enabled": False}
    # loss_scale 0 = dynamic loss scaling, DeepSpeed's documented default for fp16 training.
    return {
        "enabled": True,
        "loss_scale": 0,
        "initial_scale_power": 16,
        "loss_scale_window": 1000,
        "hysteresis": 2,
        "min_loss_scale": 1,
    }


def launch_commands(answers: Answers, config_path: Path | str, accelerate: dict[str, Any] | None = None,
                    system: MachineProfile | None = None) -> list[str]:
    """The commands that start this configuration, each pasteable as is (launch/copyable.launch_lines, the one
    form `convert` and `migrate` print too): multi-node launch lines are owned by `accelwiz run`, so we point there;
    on one machine the plain `accelerate launch` line with its CPU environment in front, as `accelwiz run`
    launches it."""
    from accelwiz.launch.copyable import launch_lines

    written = {**(accelerate or {}), "num_machines": answers.num_machines}
    launcher = "local" if answers.num_machines == 1 else answers.launcher.value
    return launch_lines(written, config_path, launcher=launcher, system=system)
