"""The blocks of a DeepSpeed JSON beside ZeRO (precision, optimizer and scheduler, checkpointing, monitors, compile,
tensor parallelism, ...), as DeepSpeed 0.19.8 reads them, and what every block shares: `DeepSpeedBlock` (a block
DeepSpeed validates with pydantic, which drops `"auto"`) and the field types. The whole JSON is `DeepSpeedConfig`
in deepspeed.py; `zero_optimization` is in deepspeed_zero.py.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, model_validator

from accelwiz.config.base import AUTO, Auto, LaxInt, NonNegativeLaxInt, PositiveLaxInt, StrictModel

Number = Annotated[float, Field(strict=False)]  # an int is a fine float; a string is not (strict model)
Fraction = Annotated[float, Field(strict=False, ge=0.0, le=1.0)]
DataType = Literal["fp16", "bf16", "fp32"]
OffloadDevice = Literal["none", "cpu", "nvme"]

DS_ISSUE_8489 = "removed in DeepSpeed 0.19.8 (deepspeedai/DeepSpeed#8489)"


def _allow_auto_in_schema(schema: dict[str, Any]) -> None:
    # Editors validating against the exported JSON Schema must accept the HF "auto" that the model drops.
    for name, prop in schema.get("properties", {}).items():
        if "$ref" not in str(prop) and "auto" not in str(prop):
            schema["properties"][name] = {"anyOf": [prop, {"const": AUTO}], "title": prop.get("title", name)}


class DeepSpeedBlock(StrictModel):
    """A block DeepSpeed validates with pydantic. Like DeepSpeed (`DeepSpeedConfigModel.__init__`), it ignores
    `"auto"` values, so a field's type describes only real values; AW225/AW226 judge every `"auto"`."""

    model_config = ConfigDict(json_schema_extra=_allow_auto_in_schema)

    @model_validator(mode="before")
    @classmethod
    def _ignore_auto(cls, data: Any) -> Any:
        if isinstance(data, dict) and AUTO in data.values():
            return {k: v for k, v in data.items() if v != AUTO}
        return data


class FP16(DeepSpeedBlock):
    """`fp16` (DeepSpeed's `DeepSpeedFP16Config`, pydantic with extra="forbid" since v0.17.1)."""

    enabled: bool = False
    auto_cast: bool = False
    loss_scale: Number = 0
    initial_scale_power: LaxInt = 16
    loss_scale_window: LaxInt = 1000
    hysteresis: LaxInt = 2
    consecutive_hysteresis: bool = False
    min_loss_scale: LaxInt = 1
    fp16_master_weights_and_grads: bool = False

    REMOVED_KEYS: ClassVar[dict[str, str]] = {
        "opt_level": "an Apex AMP key; DeepSpeed >= 0.17.1 refuses it inside `fp16`: remove it",
        "fp16_scale_tolerance": "not a DeepSpeed `fp16` key (DeepSpeed >= 0.17.1 refuses it): remove it",
    }


class BF16(DeepSpeedBlock):
    """`bf16` (and the legacy top-level `bfloat16`)."""

    enabled: bool = False
    immediate_grad_update: bool = False
    check_grad_overflow: bool = True
    bf16_master_weights_and_grads: bool = False
    bf16_optimizer_states: bool = False


class TorchAutocast(StrictModel):
    enabled: bool = False
    dtype: Literal["fp16", "half", "float16", "bf16", "bfloat16", "fp32", "float", "float32", "int8",
                   "torch.float16", "torch.bfloat16", "torch.float32", "torch.int8"] | None = None
    lower_precision_safe_modules: list[str] | None = None


class TypedBlock(StrictModel):
    """`optimizer` / `scheduler`: a type name and free-form constructor parameters (checked by rules)."""

    type: str
    params: dict[str, Any] = {}
    legacy_fusion: bool = False


class ActivationCheckpointing(StrictModel):
    partition_activations: bool | Auto = False
    number_checkpoints: LaxInt | Auto | None = None
    contiguous_memory_optimization: bool | Auto = False
    cpu_checkpointing: bool | Auto = False
    synchronize_checkpoint_boundary: bool | Auto = False
    profile: bool | Auto = False


class Aio(StrictModel):
    block_size: NonNegativeLaxInt = 1_048_576
    queue_depth: NonNegativeLaxInt = 8
    intra_op_parallelism: NonNegativeLaxInt = 1
    single_submit: bool = False
    overlap_events: bool = True
    use_gds: bool = False


class Checkpoint(StrictModel):
    tag_validation: Literal["Warn", "Ignore", "Fail", "WARN", "IGNORE", "FAIL", "warn", "ignore",
                            "fail"] = "Warn"
    load_universal: bool = False
    use_node_local_storage: bool = False
    parallel_write: dict[str, Any] | None = None
    writer: dict[str, Any] | None = None


class DataTypes(StrictModel):
    grad_accum_dtype: DataType | None = None
    param_dtype: DataType | None = None
    buffer_dtype: DataType | None = None
    keep_in_fp32_modules: list[str] | Literal["auto"] = "auto"


class FlopsProfiler(StrictModel):
    enabled: bool = False
    recompute_fwd_factor: Number = 0.0
    profile_step: LaxInt = 1
    module_depth: LaxInt = -1
    top_modules: LaxInt = 1
    detailed: bool = True
    output_file: str | None = None


class MonitorOutput(StrictModel):
    """`tensorboard` / `csv_monitor`."""

    enabled: bool = False
    output_path: str = ""
    job_name: str = "DeepSpeedJobName"


class Wandb(StrictModel):
    enabled: bool = False
    group: str | None = None
    team: str | None = None
    project: str = "deepspeed"


class Comet(StrictModel):
    enabled: bool = False
    samples_log_interval: LaxInt = 100
    project: str | None = None
    workspace: str | None = None
    api_key: str | None = None
    experiment_name: str | None = None
    experiment_key: str | None = None
    online: bool | None = None
    mode: str | None = None


class CommsLogger(StrictModel):
    enabled: bool = False
    prof_all: bool = True
    prof_ops: list[str] = []
    verbose: bool = False
    debug: bool = False


class TensorParallel(StrictModel):
    autotp_size: NonNegativeLaxInt | Auto = 0
    tp_overlap_comm: bool = False
    vocab_parallel_lm_head: bool | None = None
    vocab_parallel_ce_backend: Literal["torch", "liger"] = "torch"
    tensor_parallel: dict[str, Any] | None = Field(None, alias="tp")
    partition_config: dict[str, Any] | None = None
    preset_model: str | None = None
    keep_module_on_host: bool = False
    replace_with_kernel_inject: bool = Field(False, alias="kernel_inject")
    dtype: str | None = None


class Compile(StrictModel):
    """`compile` (DeepCompile). torch.compile's `backend`/`disable` do not belong here (extra="forbid")."""

    deepcompile: bool = False
    autoep_non_moe: bool = False
    free_activation: bool = False
    free_activation_threshold: LaxInt = 10_485_760
    offload_activation: bool = False
    offload_activation_pin_memory: bool = True
    offload_opt_states: bool = False
    double_buffer: bool = True
    symmetric_memory: bool = False
    debug_log: bool = False
    offload_parameters: bool = False
    sync_before_reduce: bool = False
    sync_after_reduce: bool = False
    sync_before_allgather: bool = False
    sync_after_allgather: bool = False
    keep_int_input_tensors: bool = True
    keep_all_input_tensors: bool = False
    passes: list[Literal["z1", "z3", "autosp", "autotp"]] | None = None

    REMOVED_KEYS: ClassVar[dict[str, str]] = {
        "backend": "DeepSpeed's `compile` block has no `backend`; pass it to `engine.compile(backend=...)`",
        "disable": "DeepSpeed's `compile` block has no `disable`; leave the block out instead",
    }


class HybridEngine(StrictModel):
    enabled: bool = False
    max_out_tokens: PositiveLaxInt = 512
    inference_tp_size: LaxInt = 1
    release_inference_cache: bool = False
    pin_parameters: bool = True
    tp_gather_partition_size: LaxInt = 8
    enable_cuda_graph: bool = False
