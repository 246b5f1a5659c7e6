"""When a question applies: each condition named once, as a function of the answers so far and the machine.

`answers` holds parsed values (enum members for select questions); a key is absent when its question was not
asked. Every predicate is walked both ways by tests/wizard/test_branches.py, which enumerates this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelwiz.probe.model import MachineProfile
from accelwiz.wizard.answers import Generation, Launcher, OffloadDevice, Regime, StrategyChoice, TrainingKind


def always(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return True


def has_gpu(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return system.gpu_count > 0


def no_gpu(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return system.gpu_count == 0


def has_model(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return bool(answers.get("model"))


def trains_sft(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """A named model trained on text: its sequence length is asked (DPO and GRPO ask prompt and completion)."""
    return has_model(answers, system) and answers.get("kind", TrainingKind.sft) is TrainingKind.sft


def post_trains(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """DPO or GRPO through TRL (the kind question is asked only with a model named)."""
    return answers.get("kind") in (TrainingKind.dpo, TrainingKind.grpo)


def trains_grpo(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return answers.get("kind") is TrainingKind.grpo


def generates_on_gpus(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """GRPO on GPUs: only there is vLLM a choice (on the CPU completions come from HF generate)."""
    return trains_grpo(answers, system) and system.gpu_count > 0


def plans_vllm_without_it(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """A vLLM generation chosen for a machine known not to have vLLM: planned only if the user insists."""
    from accelwiz.wizard.post_settings import vllm_missing

    generation = answers.get("generation")
    return generates_on_gpus(answers, system) and generation not in (None, Generation.hf) and vllm_missing(system)


def uses_adapter(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return answers.get("regime") in (Regime.lora, Regime.qlora)


def uses_deepspeed(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    strategy = answers.get("strategy")
    return isinstance(strategy, StrategyChoice) and strategy.zero_stage is not None


def is_zero3(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return answers.get("strategy") is StrategyChoice.zero3


def can_offload_params(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """Parameters can only leave the GPU when they are sharded: ZeRO-3 or FSDP (ZeRO-2 ignores it)."""
    return answers.get("strategy") in (StrategyChoice.zero3, StrategyChoice.fsdp_full)


def offloads_with_zero3(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """ZeRO-3 offloading something: only then can the offload go to an NVMe drive (ZeRO-Infinity)."""
    return is_zero3(answers, system) and bool(answers.get("offload_optimizer") or answers.get("offload_params"))


def offloads_to_nvme(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return offloads_with_zero3(answers, system) and answers.get("offload_device") is OffloadDevice.nvme


def is_multi_node(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return int(answers.get("num_machines") or 1) > 1


def launches_by_node_commands(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """The node commands (`run --print-node-commands`) need this machine's rank and the main address; under SLURM
    they come from srun."""
    return is_multi_node(answers, system) and answers.get("launcher") is Launcher.node_commands


def wants_global_batch(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    """The batch is set by its global size; the accumulation steps are then derived from it."""
    return answers.get("use_global_batch") is True


def picks_accumulation(answers: Mapping[str, Any], system: MachineProfile) -> bool:
    return not wants_global_batch(answers, system)
