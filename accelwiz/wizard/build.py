"""Answers -> the two config dicts, each field with one owner.

With DeepSpeed the JSON owns precision, micro-batch, accumulation and clipping, and the YAML only points at it
(accelerate raises if `mixed_precision`, `gradient_accumulation_steps`, `gradient_clipping`, `zero_stage` or
an offload key sits next to `deepspeed_config_file`); the YAML keeps `zero3_init_flag`, which it allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelwiz.defaults import DEFAULT_DEEPSPEED_CONFIG
from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answers import Answers, Launcher, Precision, Strategy


@dataclass(frozen=True)
class ConfigPair:
    accelerate: dict[str, Any]
    deepspeed: dict[str, Any] | None


DISTRIBUTED_TYPE = {
    Strategy.single: "NO",
    Strategy.ddp: "MULTI_GPU",
    Strategy.fsdp: "FSDP",
    Strategy.zero1: "DEEPSPEED",
    Strategy.zero2: "DEEPSPEED",
    Strategy.zero3: "DEEPSPEED",
}


def build(
    answers: Answers,
    system: MachineProfile,
    *,
    deepspeed_file: Path | str = DEFAULT_DEEPSPEED_CONFIG,
    hidden_size: int | None = None,
) -> ConfigPair:
    """The Accelerate YAML dict and, for DeepSpeed strategies, the DeepSpeed JSON dict it references."""
    machines = machines_in_file(answers)
    config: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": DISTRIBUTED_TYPE[answers.strategy],
        "num_machines": machines,
        "num_processes": max(answers.gpus, 1) * machines,
        "machine_rank": answers.machine_rank,
        "use_cpu": answers.gpus == 0,
    }
    if not answers.uses_deepspeed:
        config["mixed_precision"] = answers.precision.value
    if answers.gpus and answers.strategy in (Strategy.single, Strategy.ddp):
        config["gpu_ids"] = "all"  # as accelerate's wizard: DeepSpeed and FSDP take the visible devices
    if machines > 1:
        config.update(_multi_node(answers))
    if answers.precision is Precision.fp8:
        config["fp8_config"] = {"backend": fp8_backend(system)}
    if answers.torch_compile:
        config["dynamo_config"] = {"dynamo_backend": "INDUCTOR"}
    if answers.strategy is Strategy.fsdp:
        config["fsdp_config"] = _fsdp(answers)
    deepspeed = None
    if answers.uses_deepspeed:
        config["deepspeed_config"] = _deepspeed_section(answers, deepspeed_file)
        deepspeed = deepspeed_json(answers, hidden_size=hidden_size)
    return ConfigPair(accelerate=config, deepspeed=deepspeed)


# accelerate's fp8_config.backend for each installed package, in the order accelwiz prefers them.
FP8_BACKENDS = {"transformer_engine": "TE", "torchao": "AO", "msamp": "MSAMP"}


def fp8_backend(system: MachineProfile) -> str:
    """The first installed fp8 backend (the fp8 choice is only offered when there is one)."""
    return next((backend for package, backend in FP8_BACKENDS.items() if system.packages.get(package)), "TE")


def machines_in_file(answers: Answers) -> int:
    """Under SLURM the YAML describes one node and srun's command line adds the rest (machine count, this
    node's rank, the head node's address), which only exist once SLURM has allocated the nodes."""
    return 1 if answers.launcher is Launcher.slurm else answers.num_machines


def _multi_node(answers: Answers) -> dict[str, Any]:
    # rdzv_backend and same_network are not written: `accelerate launch` ignores both when they come from the
    # file (its CLI defaults win), so the rendezvous backend goes on the launch command instead.
    section: dict[str, Any] = {"main_process_port": answers.main_process_port}
    if answers.main_process_ip:
        section["main_process_ip"] = answers.main_process_ip
    return section


def _fsdp(answers: Answers) -> dict[str, Any]:
    return {
        "fsdp_version": 2,
        "fsdp_reshard_after_forward": True,
        "fsdp_offload_params": answers.offload_params,
        "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
        "fsdp_state_dict_type": "SHARDED_STATE_DICT",
        "fsdp_cpu_ram_efficient_loading": True,
        "fsdp_activation_checkpointing": bool(answers.gradient_checkpointing),
    }


def _deepspeed_section(answers: Answers, deepspeed_file: Path | str) -> dict[str, Any]:
    section: dict[str, Any] = {
        "deepspeed_config_file": str(deepspeed_file),
        "zero3_init_flag": bool(answers.zero3_init) and answers.strategy is Strategy.zero3,
    }
    if answers.num_machines > 1:
        # `standard` = torchrun on every node (started by srun or by hand); pdsh, the default, needs ssh.
        section["deepspeed_multinode_launcher"] = "standard"
    return section


def deepspeed_json(answers: Answers, *, hidden_size: int | None = None) -> dict[str, Any]:
    """The DeepSpeed JSON: concrete values only, so nothing depends on who resolves "auto"."""
    stage = answers.strategy.zero_stage
    zero: dict[str, Any] = {"stage": stage, "overlap_comm": True, "contiguous_gradients": True}
    if answers.offload_optimizer:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if answers.offload_params:
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
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


def launch_commands(answers: Answers, config_path: Path | str) -> list[str]:
    """The commands that start this configuration. Multi-node launch lines (machine rank, main address, the
    rendezvous backend accelerate ignores in the file) are owned by `accelwiz run`, so we point there."""
    run = f"accelwiz run --config {config_path}"
    if answers.num_machines == 1:
        return [f"{run}                 # the built-in trainer", f"{run} your_script.py   # your own script",
                f"accelerate launch --config_file {config_path} your_script.py"]
    if answers.launcher is Launcher.slurm:
        return [f"{run} --slurm job.sbatch your_script.py && sbatch job.sbatch"]
    return [f"{run} --print-node-commands your_script.py   # one accelerate launch line per machine"]