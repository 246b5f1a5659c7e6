"""The Accelerate config file (`accelerate launch --config_file`), as accelerate 1.15 reads it.

Top-level keys are the fields of accelerate's `ClusterConfig` / `SageMakerConfig` dataclasses
(`commands/config/config_args.py`). accelerate rejects unknown top-level keys but reads the nested sections
with no checks at all, so every section here is strict where accelerate is silent. Defaults are the values
the launcher ends up using when a key is absent. Where the launcher adds a prefix to nested keys (`fsdp_` in
`fsdp_config`, `fp8_` in `fp8_config`, `dynamo_` in `dynamo_config`; the merge loop in `launch.py`), both
spellings are accepted; where it does not (`parallelism_config`, `megatron_lm_config`), accelerate silently
ignores the unprefixed key, and it is reported as misplaced here.

The nested section models live in `accelerate_sections.py` (deepspeed_config, fsdp_config) and
`accelerate_feature_sections.py` (fp8, dynamo, megatron_lm, mpirun, parallelism); the values a run uses are read
in `accelwiz/effective.py`.
"""

# No `from __future__ import annotations` here: pydantic would compile every annotation string back into a type
# when it builds the models (188 strings, about 2.5 ms of each `check`; issue 33).

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from accelwiz.config.accelerate_feature_sections import (
    DynamoSection,
    Fp8Section,
    MegatronLMSection,
    MpirunSection,
    ParallelismSection,
)
from accelwiz.config.accelerate_sections import DeepSpeedSection, FsdpSection, PositiveInt, key
from accelwiz.config.base import StrictModel

# More processes (or machines) than any cluster has: the largest training runs use about 10**5 GPUs. A count above
# it is a typo, or a number no launcher can start; the bound keeps it a finding instead of an overflow later.
MAX_PROCESSES = 2**20

DistributedType = Literal[
    "NO",
    "MULTI_CPU",
    "MULTI_GPU",
    "MULTI_NPU",
    "MULTI_MLU",
    "MULTI_SDAA",
    "MULTI_MUSA",
    "MULTI_XPU",
    "MULTI_HPU",
    "MULTI_NEURON",
    "DEEPSPEED",
    "FSDP",
    "XLA",
    "MEGATRON_LM",
]
SageMakerDistributedType = Literal["NO", "DATA_PARALLEL", "MODEL_PARALLEL"]
MixedPrecision = Literal["no", "fp16", "bf16", "fp8"]


_TOP_LEVEL_MISPLACED = {
    **{
        k: "belongs under deepspeed_config"
        for k in (
            "zero_stage",
            "offload_optimizer_device",
            "offload_param_device",
            "zero3_init_flag",
            "zero3_save_16bit_model",
            "deepspeed_config_file",
            "gradient_clipping",
        )
    },
    **{
        k: "belongs under fsdp_config"
        for k in (
            "fsdp_version",
            "fsdp_sharding_strategy",
            "fsdp_offload_params",
            "fsdp_auto_wrap_policy",
            "fsdp_state_dict_type",
            "fsdp_transformer_layer_cls_to_wrap",
            "fsdp_reshard_after_forward",
        )
    },
    "gradient_accumulation_steps": "not an Accelerate config key: pass it to Accelerator(), or put it under "
    "deepspeed_config with DeepSpeed",
    "dynamo_mode": "belongs under dynamo_config",
    "mpirun_hostfile": "belongs under mpirun_config",
}


class AccelerateConfig(StrictModel):
    """An Accelerate config for the local machine or a cluster (accelerate's `ClusterConfig`)."""

    RENAMED_VALUES: ClassVar[dict[str, dict[str, str]]] = {
        "distributed_type": {"TPU": "TPU was renamed XLA in accelerate 0.28: write `distributed_type: XLA`"},
    }
    LEGACY_KEYS: ClassVar[dict[str, str]] = {
        "fp16": "write `mixed_precision: fp16` instead",
        "dynamo_backend": "write it as `dynamo_config: {dynamo_backend: ...}`",
    }
    REMOVED_KEYS: ClassVar[dict[str, str]] = {
        "ipex_config": "IPEX support was removed in accelerate 1.13: delete the section",
        "tp_config": "replaced by parallelism_config (parallelism_config_tp_size)",
    }
    MISPLACED_KEYS: ClassVar[dict[str, str]] = _TOP_LEVEL_MISPLACED

    compute_environment: Literal["LOCAL_MACHINE", "AMAZON_SAGEMAKER"] = key(
        "LOCAL_MACHINE", "Where the run happens: this machine/cluster or Amazon SageMaker."
    )
    distributed_type: DistributedType = Field(description="The kind of distributed training (required).")
    mixed_precision: MixedPrecision | None = key(None, "Mixed precision; unset means 'no'.")
    use_cpu: bool = key(False, "Run on CPU even when accelerators are present.")
    debug: bool = key(False, "Check collective operations for mismatches (slower).")
    num_processes: Annotated[int, Field(ge=-1, le=MAX_PROCESSES)] = key(
        -1, "Total processes across all machines; -1 means it must be given on the command line."
    )
    machine_rank: Annotated[int, Field(ge=0, le=MAX_PROCESSES)] = key(0, "Rank of this machine, 0 .. num_machines-1.")
    num_machines: Annotated[int, Field(ge=1, le=MAX_PROCESSES)] = key(1, "Number of machines.")
    gpu_ids: str | None = key(None, "Devices to use on this machine: 'all' or a comma list such as '0,1'.")
    main_process_ip: str | None = key(None, "Address of the rank-0 machine (multi-node).")
    main_process_port: Annotated[int, Field(ge=0, le=65535)] | None = key(
        None, "Port on the rank-0 machine; unset means 29500, 0 picks a free port."
    )
    rdzv_backend: Literal["static", "c10d", "etcd", "etcd-v2"] | None = key(
        "static",
        "torchrun rendezvous backend. accelerate launch ignores the file's value: use --rdzv_backend.",
    )
    same_network: bool | None = key(False, "Whether all machines share a network (multi-node).")
    main_training_function: str = key("main", "Function the TPU launcher calls in the script.")
    enable_cpu_affinity: bool = key(
        False,
        "Bind processes to NUMA nodes; accelerate launch ignores this (pass --enable_cpu_affinity).",
    )
    downcast_bf16: bool | Literal["yes", "no"] = key(
        False, "TPU: store float32 as bfloat16 (written as 'yes'/'no')."
    )
    fp8_config: Fp8Section | None = key(None, "FP8 recipe settings (mixed_precision: fp8).")
    deepspeed_config: DeepSpeedSection | None = key(None, "DeepSpeed settings (distributed_type: DEEPSPEED).")
    fsdp_config: FsdpSection | None = key(None, "FSDP settings (distributed_type: FSDP).")
    parallelism_config: ParallelismSection | None = key(
        None, "N-D parallelism sizes (FSDP2, DeepSpeed SP, DDP)."
    )
    megatron_lm_config: MegatronLMSection | None = key(
        None, "Megatron-LM settings (distributed_type: MEGATRON_LM)."
    )
    mpirun_config: MpirunSection | None = key(None, "mpirun settings (distributed_type: MULTI_CPU).")
    dynamo_config: DynamoSection | None = key(None, "torch.compile settings.")
    tpu_name: str | None = key(None, "TPU pod name.")
    tpu_zone: str | None = key(None, "TPU pod zone.")
    tpu_use_cluster: bool = key(False, "Launch on a TPU pod.")
    tpu_use_sudo: bool | Literal["yes", "no"] = key(
        False, "Run TPU pod commands with sudo (ignored from the file)."
    )
    command_file: str | None = key(None, "File of commands to run on each TPU pod worker.")
    commands: list[str] | str | None = key(None, "Commands to run on each TPU pod worker.")
    tpu_vm: list[str] | None = key(None, "TPU VM names for pod launches.")
    tpu_env: list[str] | None = key(None, "Environment for TPU pod workers (never read by accelerate).")


class SageMakerConfig(StrictModel):
    """An Accelerate config for Amazon SageMaker (accelerate's `SageMakerConfig`)."""

    LEGACY_KEYS: ClassVar[dict[str, str]] = AccelerateConfig.LEGACY_KEYS

    compute_environment: Literal["AMAZON_SAGEMAKER"] = Field(description="Amazon SageMaker.")
    distributed_type: SageMakerDistributedType = Field(
        description="SageMaker's distribution mode (required)."
    )
    mixed_precision: MixedPrecision | None = key(None, "Mixed precision; unset means 'no'.")
    use_cpu: bool = key(False, "Run on CPU.")
    debug: bool = key(False, "Check collective operations for mismatches.")
    ec2_instance_type: str = Field(description="EC2 instance type, e.g. ml.p3.16xlarge (required).")
    iam_role_name: str = Field(description="IAM role SageMaker runs as (required).")
    image_uri: str | None = key(None, "Custom training container image.")
    profile: str | None = key(None, "AWS profile.")
    region: str = key("us-east-1", "AWS region.")
    num_machines: PositiveInt = key(1, "Number of instances.")
    gpu_ids: str = key("all", "Devices to use per instance.")
    base_job_name: str = key("accelerate-sagemaker-1", "Prefix of the SageMaker job name.")
    pytorch_version: str = key("1.10.2", "PyTorch version of the SageMaker container.")
    transformers_version: str = key("4.17.0", "transformers version of the SageMaker container.")
    py_version: str = key("py38", "Python version of the SageMaker container.")
    sagemaker_inputs_file: str | None = key(None, "TSV of channel names and S3 inputs.")
    sagemaker_metrics_file: str | None = key(None, "TSV of metric names and regexes.")
    additional_args: dict[str, Any] | None = key(None, "Extra keyword arguments for the SageMaker estimator.")
    dynamo_config: DynamoSection | None = key(None, "torch.compile settings.")
    enable_cpu_affinity: bool = key(False, "Bind processes to NUMA nodes.")
