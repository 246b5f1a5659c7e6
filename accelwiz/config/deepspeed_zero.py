"""`zero_optimization` of a DeepSpeed JSON (DeepSpeed 0.19.8's `DeepSpeedZeroConfig`) and its offload and ZenFlow
blocks; `stage3_*` keys alias shorter names (`STAGE3_ALIASES`). The whole JSON is `DeepSpeedConfig` in deepspeed.py.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from accelwiz.config.base import LaxInt, NonNegativeLaxInt, StrictModel
from accelwiz.config.deepspeed_sections import DS_ISSUE_8489, DeepSpeedBlock, Fraction, OffloadDevice

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
        "mics_shard_size": f"MiCS sharding was {DS_ISSUE_8489}; remove the key",
        "mics_hierarchical_params_gather": f"MiCS sharding was {DS_ISSUE_8489}; remove the key",
        "zeropp_loco_param": f"LoCo-ZeRO++ was {DS_ISSUE_8489}; remove the key to keep plain ZeRO++",
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
