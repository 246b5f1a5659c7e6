"""The Accelerate config file (`accelerate launch --config_file`). SKELETON: completed by the schema work."""

from __future__ import annotations

from typing import Any, Literal

from accelwiz.config.base import StrictModel

DistributedType = Literal["NO", "MULTI_CPU", "MULTI_GPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA",
                          "MULTI_XPU", "MULTI_HPU", "MULTI_NEURON", "DEEPSPEED", "FSDP", "XLA", "MEGATRON_LM"]


class AccelerateConfig(StrictModel):
    compute_environment: Literal["LOCAL_MACHINE", "AMAZON_SAGEMAKER"] = "LOCAL_MACHINE"
    distributed_type: DistributedType
    mixed_precision: Literal["no", "fp16", "bf16", "fp8"] | None = None
    num_processes: int | None = None
    deepspeed_config: dict[str, Any] | None = None
    fsdp_config: dict[str, Any] | None = None


class SageMakerConfig(StrictModel):
    compute_environment: Literal["AMAZON_SAGEMAKER"]
    distributed_type: str
