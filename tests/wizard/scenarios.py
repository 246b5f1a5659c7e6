"""Scripted walks through the catalog, one per branch; each maps EXACTLY the questions it expects asked."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from accelwiz.probe.model import HostInfo, MachineProfile
from accelwiz.probe.profiles import load_system
from accelwiz.wizard.catalog import CATALOG
from accelwiz.wizard.flow import Walk, validate, walk
from accelwiz.wizard.generate import Generated, generate
from accelwiz.wizard.prompters import ScriptedPrompter

CPU = MachineProfile(source="file", name="cpu-box", host=HostInfo(memory_total_bytes=24 * 1024**3))
# GPUs whose profile lists vLLM as not installed: a vLLM generation is planned only if the user insists.
WITHOUT_VLLM = Path(__file__).with_name("a100s_without_vllm.json")
# GRPO's reward, checked by init without running it (a def with `completions` and `**kwargs`).
REWARD = f"{Path(__file__).with_name('reward_fixture.py')}:length_reward"


@cache
def system(name: str) -> MachineProfile:
    return CPU if name == "cpu" else load_system(name)


@dataclass(frozen=True)
class Scenario:
    name: str
    system: str
    script: dict[str, Any]


COMMON = {
    "owner": "accelerate",
    "micro_batch": 2,
    "use_global_batch": False,
    "gradient_accumulation": 4,
    "gradient_clipping": 1.0,
    "torch_compile": False,
}
# The same batch as COMMON on 8 GPUs, set by its target instead: 2 (micro-batch) x 4 x 8 (processes) = 64.
BY_GLOBAL_BATCH = {
    "owner": "accelerate",
    "micro_batch": 2,
    "use_global_batch": True,
    "target_global_batch": 64,
    "gradient_clipping": 1.0,
    "torch_compile": False,
}

SCENARIOS = (
    Scenario("cpu-no-model", "cpu", {"model": "", "num_machines": 1, "processes": 1, **COMMON, "gradient_clipping": 0}),
    Scenario(
        "cpu-model",
        "cpu",
        # two CPU processes: DDP on gloo (issue 16: init refused any count on a machine without GPUs)
        {"model": "gpt2", "kind": "sft", "regime": "full", "seq_len": 256, "gradient_checkpointing": False, "num_machines": 1,
         "processes": 2, **COMMON},
    ),
    Scenario(
        "h100-zero3-lora-offload",
        "8xH100-80GB",
        {
            "model": "llama-3.1-70b",
            "kind": "sft",
            "regime": "lora",
            "lora_rank": 16,
            "seq_len": 4096,
            "gradient_checkpointing": True,
            "num_machines": 1,
            "gpus": 8,
            "strategy": "zero3",
            "offload_optimizer": True,
            "offload_params": True,
            "offload_device": "cpu",
            "precision": "bf16",
            **COMMON,
            "zero3_init": True,
        },
    ),
    Scenario(
        "rtx4090-zero3-nvme-trainer",
        "1xRTX4090",
        {
            "model": "llama-3.1-8b",
            "kind": "sft",
            "regime": "full",
            "seq_len": 1024,
            "gradient_checkpointing": True,
            "num_machines": 1,
            "gpus": 1,
            "strategy": "zero3",
            "offload_optimizer": True,
            "offload_params": True,
            "offload_device": "nvme",
            "nvme_path": "/local_nvme",
            "precision": "bf16",
            **COMMON,
            "owner": "trainer",
            "zero3_init": True,
        },
    ),
    Scenario(
        "multinode-fsdp-hybrid-slurm",
        "2x8xA100-80GB",
        {
            "model": "llama-3.1-8b",
            "kind": "sft",
            "regime": "full",
            "seq_len": 2048,
            "gradient_checkpointing": True,
            "num_machines": 2,
            "gpus": 8,
            "strategy": "fsdp_hybrid",
            "precision": "bf16",
            **COMMON,
            "launcher": "slurm",
            "main_process_port": 29500,
            "rdzv_backend": "c10d",
        },
    ),
    Scenario(
        "h100-ddp-full",
        "8xH100-80GB",
        {
            "model": "llama-3.2-1b",
            "kind": "sft",
            "regime": "full",
            "seq_len": 2048,
            "gradient_checkpointing": True,
            "num_machines": 1,
            "gpus": 8,
            "strategy": "ddp",
            "precision": "bf16",
            **COMMON,
            "torch_compile": True,
        },
    ),
    Scenario(
        "h100-zero2-global-batch",
        "8xH100-80GB",
        {
            "model": "",
            "num_machines": 1,
            "gpus": 8,
            "strategy": "zero2",
            "offload_optimizer": False,
            "precision": "bf16",
            **BY_GLOBAL_BATCH,
        },
    ),
    Scenario(
        "h100-fsdp-qlora",
        "8xH100-80GB",
        {
            "model": "qwen2.5-7b",
            "kind": "sft",
            "regime": "qlora",
            "lora_rank": 8,
            "seq_len": 1024,
            "gradient_checkpointing": False,
            "num_machines": 1,
            "gpus": 8,
            "strategy": "fsdp_full",
            "offload_params": False,
            "precision": "bf16",
            **COMMON,
        },
    ),
    Scenario(
        # ZeRO-2 does not fit, FSDP2 shard-grad-op does: AW503 recommends it, so init offers and writes it
        "l40s-fsdp-grad-op",
        "8xL40S",
        {
            "model": "llama-8b",
            "kind": "sft",
            "regime": "full",
            "seq_len": 2048,
            "gradient_checkpointing": True,
            "num_machines": 1,
            "gpus": 8,
            "strategy": "fsdp_grad_op",
            "precision": "bf16",
            **COMMON,
            # one micro-batch per step: with accumulation, accelerate's no_sync keeps FSDP's unsharded gradients
            # (16 GB more: 54 GiB, so ZeRO-3 is offered instead; estimate/accumulation.py)
            "gradient_accumulation": 1,
        },
    ),
    Scenario(
        "v100-single-fp16",
        "2xV100-16GB",
        {"model": "", "num_machines": 1, "gpus": 1, "strategy": "single", "precision": "fp16", **COMMON},
    ),
    Scenario(
        "t4-zero2-offload",
        "1xT4",
        {
            "model": "",
            "num_machines": 1,
            "gpus": 1,
            "strategy": "zero2",
            "offload_optimizer": True,
            "precision": "fp16",
            **COMMON,
            "gradient_clipping": 0.5,
        },
    ),
    Scenario(
        "multinode-zero2-per-node",
        "2x8xH100",
        {
            "model": "",
            "num_machines": 2,
            "gpus": 8,
            "strategy": "zero2",
            "offload_optimizer": False,
            "precision": "bf16",
            **COMMON,
            "launcher": "node-commands",
            "machine_rank": 1,
            "main_process_ip": "10.0.0.1",
            "main_process_port": 29500,
            "rdzv_backend": "c10d",
        },
    ),
    Scenario(
        # DPO with LoRA: the reference is the policy with its adapter disabled (no copy)
        "h100-dpo-lora-ddp",
        "8xH100-80GB",
        {
            "model": "llama-3.2-1b",
            "kind": "dpo",
            "max_prompt_length": 512,
            "max_completion_length": 512,
            "regime": "lora",
            "lora_rank": 16,
            "beta": 0.1,
            "gradient_checkpointing": True,
            "num_machines": 1,
            "gpus": 8,
            "strategy": "ddp",
            "precision": "bf16",
            **COMMON,
        },
    ),
    Scenario(
        # GRPO on 2 GPUs without vLLM: generation batch 2 x 2 x 4 = 16, 8 completions per prompt; vLLM insisted on
        "a100-grpo-vllm-insisted",
        str(WITHOUT_VLLM),
        {
            "model": "llama-3.2-1b",
            "kind": "grpo",
            "max_prompt_length": 256,
            "max_completion_length": 256,
            "generation": "vllm-colocate",
            "vllm_anyway": True,
            "regime": "full",
            "beta": 0.04,
            "gradient_checkpointing": True,
            "num_machines": 1,
            "gpus": 2,
            "strategy": "ddp",
            "precision": "bf16",
            **COMMON,
            "num_generations": 8,
            "reward": REWARD,
        },
    ),
    Scenario(
        # GRPO on the CPU: HF generate (no generation question), 1 x 1 x 2 = 2 completions per prompt, no reward yet
        "cpu-grpo",
        "cpu",
        {
            "model": "gpt2",
            "kind": "grpo",
            "max_prompt_length": 128,
            "max_completion_length": 64,
            "regime": "lora",
            "lora_rank": 8,
            "beta": 0.0,
            "gradient_checkpointing": True,
            "num_machines": 1,
            "processes": 1,
            **COMMON,
            "micro_batch": 1,
            "gradient_accumulation": 2,
            "num_generations": 2,
            "reward": "",
        },
    ),
    Scenario(
        "multinode-fsdp-slurm",
        "2x8xH100",
        {
            "model": "",
            "num_machines": 2,
            "gpus": 8,
            "strategy": "fsdp_full",
            "offload_params": True,
            "precision": "bf16",
            **COMMON,
            "launcher": "slurm",
            "main_process_port": 29400,
            "rdzv_backend": "static",
        },
    ),
)


@dataclass(frozen=True)
class Outcome:
    walk: Walk
    asked: list[str]
    generated: Generated


def run_scenario(scenario: Scenario, output: Path = Path("accelerate.yaml")) -> Outcome:
    machine = system(scenario.system)
    prompter = ScriptedPrompter(scenario.script)
    result = walk(CATALOG, machine, prompter)
    answers = validate(result.answers, machine)
    return Outcome(result, prompter.asked, generate(answers, machine, output=output, command="test"))
