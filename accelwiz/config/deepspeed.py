"""The DeepSpeed JSON config (`--deepspeed_config`, `deepspeed_config_file`), as DeepSpeed 0.19.8 reads it.

DeepSpeed itself validates only some blocks (zero_optimization, fp16, bf16, monitors, compile, ...) and reads
the top level with `dict.get`, so a typo there is silently ignored. This model applies one strict schema
everywhere.

Two DeepSpeed reading habits shape the field types:
- integers go through pydantic's lax mode, so `5e8` means 500000000 (`LaxInt` accepts integral floats); a
quoted
  number ("8") is still refused, because the HF Trainer compares it with the integer and reports a mismatch;
- `"auto"` is a Hugging Face convention that DeepSpeed silently drops inside its pydantic blocks. The schema
  allows it wherever HF may put it; whether anything will actually resolve it is decided by the AW2xx rules.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, model_validator

from accelwiz.config.base import AUTO, Auto, LaxInt, NonNegativeLaxInt, PositiveLaxInt, StrictModel

Number = Annotated[float, Field(strict=False)]  # an int is a fine float; a string is not (strict model)
Fraction = Annotated[float, Field(strict=False, ge=0.0, le=1.0)]
DataType = Literal["fp16", "bf16", "fp32"]
OffloadDevice = Literal["none", "cpu", "nvme"]
ZeroStage = Literal[0, 1, 2, 3]

# `stage3_*` name -> the field name DeepSpeed also accepts (pydantic alias; `populate_by_name`).
STAGE3_ALIASES: dict[str, str] = {
    "stage3_prefetch_bucket_size": "prefetch_bucket_size",
    "stage3_param_persistence_threshold": "param_persistence_threshold",
    "stage3_model_persistence_threshold": "model_persistence_threshold",
    "stage3_max_live_parameters": "max_live_parameters",
    "stage3_max_reuse_distance": "max_reuse_distance",
    "stage3_gather_16bit_weights_on_model_save": "gather_16bit_weights_on_model_save",
    "stage3_module_granularity_threshold": "module_granularity_threshold",
    "stage3_use_all_reduce_for_fetch_params": "use_all_reduce_for_fetch_params",
    "stage3_allgather_sequential": "allgather_sequential",
}

_DS_ISSUE_8489 = "removed in DeepSpeed 0.19.8 (deepspeedai/DeepSpeed#8489)"


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


class OffloadParam(DeepSpeedBlock):
    """`zero_optimization.offload_param` (valid only with ZeRO-3)."""

    device: OffloadDevice = "none"
    nvme_path: str | None = None
    buffer_count: NonNegativeLaxInt = 5
    buffer_size: NonNegativeLaxInt = 100_000_000
    max_in_cpu: NonNegativeLaxInt = 1_000_000_000
    pin_memory: bool = True


class OffloadOptimizer(DeepSpeedBlock):
    """`zero_optimization.offload_optimizer` (ZeRO 1-3; `ratio` < 1 only with ZeRO-3)."""

    device: OffloadDevice = "none"
    nvme_path: str | None = None
    buffer_count: NonNegativeLaxInt = 4
    pin_memory: bool = True
    pipeline_read: bool = False
    pipeline_write: bool = False
    fast_init: bool = False
    ratio: Fraction = 1.0
    super_offload: bool = False
    cpuadam_cores_perc: Fraction = 0.8


class ZenFlow(DeepSpeedBlock):
    topk_ratio: Annotated[float, Field(strict=False, gt=0.0, lt=1.0)] = 0.1
    select_strategy: str = "auto"
    select_interval: LaxInt | str = "auto"
    update_interval: LaxInt | str = "auto"
    overlap_step: bool = False
    offload: bool = False
    auto_ratio: Fraction = 0.99
    full_warm_up_rounds: LaxInt = 0
    pt_reserved_cores_perc: Fraction = 0.5
    steps_per_epoch: LaxInt | None = None


class LeafModule(StrictModel):
    classes: list[str] = []
    names: list[str] = []
    name_suffixes: list[str] = []


class ZeroOptimization(DeepSpeedBlock):
    """`zero_optimization` (DeepSpeed's `DeepSpeedZeroConfig`); `stage3_*` keys alias shorter names."""

    stage: ZeroStage = 0
    contiguous_gradients: bool = True
    reduce_scatter: bool = True
    # DeepSpeed 0.19.8 refuses 0 (gt=0, #8266); older releases accepted it and divided by it (#8260).
    # The schema keeps ge=0 so that rule AW218 can say that, instead of a bare "must be greater than 0".
    reduce_bucket_size: NonNegativeLaxInt = 500_000_000
    use_multi_rank_bucket_allreduce: bool = True
    allgather_partitions: bool = True
    allgather_bucket_size: NonNegativeLaxInt = 500_000_000
    overlap_comm: bool | None = None
    compute_grad_norm: bool = True
    load_from_fp32_weights: bool = True
    elastic_checkpoint: bool = False
    offload_param: OffloadParam | None = None
    offload_optimizer: OffloadOptimizer | None = None
    zenflow: ZenFlow | None = None
    sub_group_size: NonNegativeLaxInt = 1_000_000_000
    prefetch_bucket_size: NonNegativeLaxInt = Field(50_000_000, alias="stage3_prefetch_bucket_size")
    param_persistence_threshold: NonNegativeLaxInt = Field(
        100_000, alias="stage3_param_persistence_threshold")
    model_persistence_threshold: LaxInt | None = Field(None, alias="stage3_model_persistence_threshold")
    max_live_parameters: NonNegativeLaxInt = Field(1_000_000_000, alias="stage3_max_live_parameters")
    max_reuse_distance: NonNegativeLaxInt = Field(1_000_000_000, alias="stage3_max_reuse_distance")
    gather_16bit_weights_on_model_save: bool = Field(
        False, alias="stage3_gather_16bit_weights_on_model_save")
    module_granularity_threshold: LaxInt = Field(0, alias="stage3_module_granularity_threshold")
    use_all_reduce_for_fetch_params: bool = Field(False, alias="stage3_use_all_reduce_for_fetch_params")
    allgather_sequential: bool = Field(False, alias="stage3_allgather_sequential")
    ignore_unused_parameters: bool = True
    legacy_stage1: bool = False
    round_robin_gradients: bool = False
    parameter_alignment: bool = False
    zero_hpz_partition_size: NonNegativeLaxInt = 1
    zero_quantized_weights: bool = False
    zero_quantized_nontrainable_weights: bool = False
    zero_quantized_gradients: bool = False
    memory_efficient_linear: bool = True
    pipeline_loading_checkpoint: bool = False
    override_module_apply: bool = True
    log_trace_cache_warnings: bool = False
    enable_sanity_checks: bool = False
    save_muon_momentum_buffer_in_memory: bool = False
    leaf_module: LeafModule | None = None

    LEGACY_KEYS: ClassVar[dict[str, str]] = {
        "cpu_offload": 'use `"offload_optimizer": {"device": "cpu"}`',
        "cpu_offload_param": 'use `"offload_param": {"device": "cpu"}` (ZeRO-3 only)',
        "cpu_offload_use_pin_memory": "use `pin_memory` inside `offload_optimizer` / `offload_param`",
        "stage3_gather_fp16_weights_on_model_save":
            "rename it to `stage3_gather_16bit_weights_on_model_save`",
    }
    REMOVED_KEYS: ClassVar[dict[str, str]] = {
        "mics_shard_size": f"MiCS sharding was {_DS_ISSUE_8489}; remove the key",
        "mics_hierarchical_params_gather": f"MiCS sharding was {_DS_ISSUE_8489}; remove the key",
        "zeropp_loco_param": f"LoCo-ZeRO++ was {_DS_ISSUE_8489}; remove the key to keep plain ZeRO++",
    }
    MISPLACED_KEYS: ClassVar[dict[str, str]] = {
        key: f"move `{key}` to the top level of the DeepSpeed JSON" for key in (
            "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
            "gradient_clipping", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
            "communication_data_type")
    }

    @model_validator(mode="before")
    @classmethod
    def _drop_name_given_with_alias(cls, data: Any) -> Any:
        # Giving both `stage3_x` and `x` is refused by DeepSpeed; rule AW229 reports it with both names.
        # Dropping the short name here keeps the schema from calling it an "unknown key", which would mislead.
        if isinstance(data, dict) and any(a in data and n in data for a, n in STAGE3_ALIASES.items()):
            data = {k: v for k, v in data.items()
                    if not (k in STAGE3_ALIASES.values() and _alias_of(k) in data)}
        return data


def _alias_of(name: str) -> str:
    return next(alias for alias, short in STAGE3_ALIASES.items() if short == name)


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
        "nebula": f"Nebula checkpointing was {_DS_ISSUE_8489}; remove the block",
        "compression_training": f"the compression library was {_DS_ISSUE_8489}; remove the block",
        "amp": "Apex AMP was " + _DS_ISSUE_8489 + "; use `fp16`, `bf16` or `torch_autocast`",
        "quantize_training": f"MoQ was {_DS_ISSUE_8489}; remove the block",
        "sparse_gradients": f"sparse embedding gradient compression was {_DS_ISSUE_8489}; remove the key",
        "eigenvalue": f"eigenvalue MoQ was {_DS_ISSUE_8489}; remove the block",
        "sparse_attention": f"Sparse Attention was {_DS_ISSUE_8489}; remove the block",
        "elasticity": "elastic training was " + _DS_ISSUE_8489 + "; set the batch keys directly",
        "graph_harvesting": f"graph harvesting was {_DS_ISSUE_8489}; remove the key",
        "curriculum_learning": "use `data_efficiency.data_sampling.curriculum_learning` (the top-level "
                               "block was " + _DS_ISSUE_8489 + ")",
        "progressive_layer_drop": f"Progressive Layer Drop was {_DS_ISSUE_8489}; remove the block",
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
