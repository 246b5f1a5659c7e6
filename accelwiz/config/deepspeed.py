"""The DeepSpeed JSON config (`--deepspeed_config`, `deepspeed_config_file`), as DeepSpeed 0.19.8 reads it.

DeepSpeed itself validates only some blocks (zero_optimization, fp16, bf16, monitors, compile, ...) and reads
the top level with `dict.get`, so a typo there is silently ignored. This model applies one strict schema
everywhere.

Two DeepSpeed reading habits shape the field types:
- integers go through pydantic's lax mode, so `5e8` means 500000000 (`LaxInt` accepts integral floats); a quoted
  number ("8") is still refused, because the HF Trainer compares it with the integer and reports a mismatch;
- `"auto"` is a Hugging Face convention that DeepSpeed silently drops inside its pydantic blocks. The schema
  allows it wherever HF may put it; whether anything will actually resolve it is decided by the AW2xx rules.

This module holds the top level (`DeepSpeedConfig`); `zero_optimization` is in deepspeed_zero.py, the other blocks
and the types they share in deepspeed_sections.py.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from accelwiz.config.base import Auto, LaxInt, PositiveLaxInt, StrictModel
from accelwiz.config.deepspeed_sections import (
    BF16,
    DS_ISSUE_8489,
    FP16,
    ActivationCheckpointing,
    Aio,
    Checkpoint,
    CommsLogger,
    Comet,
    Compile,
    DataType,
    DataTypes,
    FlopsProfiler,
    HybridEngine,
    MonitorOutput,
    Number,
    TensorParallel,
    TorchAutocast,
    TypedBlock,
    Wandb,
)
from accelwiz.config.deepspeed_zero import STAGE3_ALIASES, ZeroOptimization

# Accelerate YAML keys people put in the JSON: DeepSpeed ignores them, accelerate never sees them there.
_ACCELERATE_KEYS = ("mixed_precision", "distributed_type", "num_processes", "num_machines", "machine_rank",
                    "gpu_ids", "compute_environment", "deepspeed_config", "zero_stage", "zero3_init_flag",
                    "offload_optimizer_device", "offload_param_device", "zero3_save_16bit_model")
# Keys that belong inside `zero_optimization`; at the top level DeepSpeed silently ignores them.
_ZERO_KEYS = ("stage", "overlap_comm", "contiguous_gradients", "reduce_scatter", "reduce_bucket_size",
              "allgather_partitions", "allgather_bucket_size", "offload_param", "offload_optimizer",
              "sub_group_size", "round_robin_gradients", *STAGE3_ALIASES, "zero_hpz_partition_size",
              "zero_quantized_weights", "zero_quantized_gradients")


class DeepSpeedConfig(StrictModel):
    """The whole DeepSpeed JSON. Top-level keys of DeepSpeed 0.19.8 (`runtime/constants.py`)."""

    train_batch_size: PositiveLaxInt | Auto | None = None
    train_micro_batch_size_per_gpu: PositiveLaxInt | Auto | None = None
    gradient_accumulation_steps: PositiveLaxInt | Auto | None = None
    managed_gradient_accumulation: bool = True
    gradient_clipping: Annotated[float, Field(strict=False, ge=0.0)] | Auto = 1.0
    steps_per_print: LaxInt | None = None
    wall_clock_breakdown: bool = False
    memory_breakdown: bool = False
    dump_state: bool = False
    disable_python_gc: bool = False
    disable_allgather: bool = False
    prescale_gradients: bool = False
    gradient_predivide_factor: Number = 1.0
    gradient_allreduce_op: Literal["mean", "sum"] = "mean"
    communication_data_type: DataType | None = None
    seq_parallel_communication_data_type: DataType = "fp32"
    fp16: FP16 | None = None
    bf16: BF16 | None = None
    torch_autocast: TorchAutocast | None = None
    zero_optimization: ZeroOptimization | None = None
    zero_allow_untested_optimizer: bool = False
    zero_force_ds_cpu_optimizer: bool = True
    optimizer: TypedBlock | None = None
    scheduler: TypedBlock | None = None
    activation_checkpointing: ActivationCheckpointing | None = None
    aio: Aio | None = None
    checkpoint: Checkpoint | None = None
    data_types: DataTypes | None = None
    flops_profiler: FlopsProfiler | None = None
    comms_logger: CommsLogger | None = None
    tensorboard: MonitorOutput | None = None
    csv_monitor: MonitorOutput | None = None
    wandb: Wandb | None = None
    comet: Comet | None = None
    tensor_parallel: TensorParallel | None = None
    compile: Compile | None = None
    hybrid_engine: HybridEngine | None = None
    # Read with plain dict access by DeepSpeed (any key is copied), so only the shape is checked here.
    pipeline: dict[str, Any] | None = None
    autotuning: dict[str, Any] | None = None
    data_efficiency: dict[str, Any] | None = None
    timers: dict[str, Any] | None = None
    expert_parallel: dict[str, Any] | None = None
    weight_quantization: dict[str, Any] | None = None
    datastates: dict[str, Any] | None = None
    dataloader_drop_last: bool = False
    log_level: str | None = None
    vocabulary_size: LaxInt | None = None
    use_data_before_expert_parallelism: bool = False
    sequence_parallel_size: PositiveLaxInt | None = None

    LEGACY_KEYS: ClassVar[dict[str, str]] = {
        "bfloat16": "rename the block to `bf16` (DeepSpeed reads `bfloat16` only when `bf16` is absent)",
    }
    REMOVED_KEYS: ClassVar[dict[str, str]] = {
        "nebula": f"Nebula checkpointing was {DS_ISSUE_8489}; remove the block",
        "compression_training": f"the compression library was {DS_ISSUE_8489}; remove the block",
        "amp": "Apex AMP was " + DS_ISSUE_8489 + "; use `fp16`, `bf16` or `torch_autocast`",
        "quantize_training": f"MoQ was {DS_ISSUE_8489}; remove the block",
        "sparse_gradients": f"sparse embedding gradient compression was {DS_ISSUE_8489}; remove the key",
        "eigenvalue": f"eigenvalue MoQ was {DS_ISSUE_8489}; remove the block",
        "sparse_attention": f"Sparse Attention was {DS_ISSUE_8489}; remove the block",
        "elasticity": "elastic training was " + DS_ISSUE_8489 + "; set the batch keys directly",
        "graph_harvesting": f"graph harvesting was {DS_ISSUE_8489}; remove the key",
        "curriculum_learning": "use `data_efficiency.data_sampling.curriculum_learning` (the top-level "
                               "block was " + DS_ISSUE_8489 + ")",
        "progressive_layer_drop": f"Progressive Layer Drop was {DS_ISSUE_8489}; remove the block",
    }
    MISPLACED_KEYS: ClassVar[dict[str, str]] = {
        **{key: f"move `{key}` into `zero_optimization`" for key in _ZERO_KEYS},
        **{key: f"`{key}` is an Accelerate setting: put it in the Accelerate YAML"
           for key in _ACCELERATE_KEYS},
        "monitor_config": "DeepSpeed reads `tensorboard`, `wandb`, `csv_monitor` and `comet` at the top "
                          "level",
        "comms_config": "DeepSpeed reads the communication logger from the top-level `comms_logger` block",
        "max_grad_norm": "DeepSpeed reads clipping from the top-level `gradient_clipping`",
        "zenflow": "move `zenflow` into `zero_optimization`",
    }

    @model_validator(mode="before")
    @classmethod
    def _deprecated_zero_flag(cls, data: Any) -> Any:
        # DeepSpeed 0.19.8 still reads `"zero_optimization": true/false` (runtime/zero/config.py get_zero_config
        # -> read_zero_config_deprecated): stage 1 with the top-level `allgather_size` as the all-gather bucket,
        # or stage 0. The form is read as that block here; AW235/AW236 say what it means for the launch.
        if isinstance(data, dict) and isinstance(data.get("zero_optimization"), bool):
            flag = data["zero_optimization"]
            zero: dict[str, Any] = {"stage": 1 if flag else 0}
            rest = dict(data)
            if flag and "allgather_size" in rest:
                zero["allgather_bucket_size"] = rest.pop("allgather_size")
            return {**rest, "zero_optimization": zero}
        return data

    @model_validator(mode="before")
    @classmethod
    def _ignore_comments(cls, data: Any) -> Any:
        # JSON has no comments; configs use keys like "_comment" instead (LLaMA-Factory), which DeepSpeed
        # ignores. A leading underscore cannot be a misspelt DeepSpeed key, so these are not reported.
        if isinstance(data, dict) and any(isinstance(k, str) and k.startswith("_") for k in data):
            return {k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("_"))}
        return data
