"""The few TRL settings that decide post-training memory (names as in DPOConfig/GRPOConfig): what
posttraining.py and grpo_generation.py estimate from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["sft", "dpo", "grpo"]
Generation = Literal["hf", "vllm-colocate", "vllm-server"]
KINDS: tuple[str, ...] = ("sft", "dpo", "grpo")


@dataclass(frozen=True)
class PostTraining:
    """The few TRL settings that decide memory (names as in DPOConfig/GRPOConfig)."""

    kind: Kind = "sft"
    max_prompt_length: int = 512
    max_completion_length: int = 512  # GRPOConfig's default
    num_generations: int = 8  # GRPOConfig's default
    steps_per_generation: int = 1  # GRPOConfig: the accumulation when unset
    beta: float | None = None  # None: the trainer's default (DPO 0.1, GRPO 0.0)
    precompute_ref_log_probs: bool = False  # DPOConfig
    generation: Generation = "hf"
    vllm_gpu_memory_utilization: float = 0.3  # GRPOConfig's default (colocate)
    vllm_tensor_parallel_size: int = 1
    vllm_server_gpus: int = 1  # GPUs a `trl vllm-serve` takes (its tensor × data parallel size)
    vllm_max_model_length: int | None = None  # None: the model's max_position_embeddings
    ds3_gather_for_generation: bool = True

    @property
    def sequence(self) -> int:
        return self.max_prompt_length + self.max_completion_length

    @property
    def effective_beta(self) -> float:
        return self.beta if self.beta is not None else (0.1 if self.kind == "dpo" else 0.0)
