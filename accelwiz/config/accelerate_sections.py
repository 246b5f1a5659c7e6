"""The sharding sections of an Accelerate config (`deepspeed_config`, `fsdp_config`) and the field helpers the
config models share; the other sections (`fp8_config`, `dynamo_config`, `megatron_lm_config`, `mpirun_config`,
`parallelism_config`) are in accelerate_feature_sections.py.

accelerate reads these sections with no checks at all, so every section here is strict where accelerate is
silent. Where the launcher adds a prefix to nested keys (`fsdp_` in `fsdp_config`, `fp8_` in `fp8_config`,
`dynamo_` in `dynamo_config`; the merge loop in `launch.py`), both spellings are accepted; where it does not
(`parallelism_config`, `megatron_lm_config`), accelerate silently ignores the unprefixed key, and it is
reported as misplaced here.
"""

# No `from __future__ import annotations` here: pydantic would compile every annotation string back into a type
# when it builds the models (188 strings, about 2.5 ms of each `check`; issue 33).

from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import AliasChoices, BeforeValidator, Field

from accelwiz.config.base import Auto, StrictModel

ShardingStrategy = Literal["FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"]
SHARDING_STRATEGIES: tuple[str, ...] = get_args(ShardingStrategy)
# The DeepSpeed launcher lower-cases the YAML's offload devices before DeepSpeed sees them
# (`str(args.offload_optimizer_device).lower()` in accelerate/utils/launch.py prepare_deepspeed_cmd_env), and
# `accelerate config` once wrote `NONE`: any spelling of a known device works here (not in a DeepSpeed JSON).
OffloadDevice = Annotated[Literal["none", "cpu", "nvme"],
                          BeforeValidator(lambda v: v.lower() if isinstance(v, str) else v)]

PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]


def key(default: Any, description: str, **constraints: Any) -> Any:
    """A config key with its default and its user-facing description."""
    return Field(default, description=description, **constraints)


def spelled(name: str, other: str) -> AliasChoices:
    """The two spellings the launcher accepts for one nested key (it adds the section prefix when missing)."""
    return AliasChoices(name, other)


_DEEPSPEED_JSON_HINT = (
    "a DeepSpeed JSON key: accelerate ignores it here; put it in the JSON named by deepspeed_config_file"
)


class DeepSpeedSection(StrictModel):
    """`deepspeed_config`: the DeepSpeed plugin settings accelerate turns into a DeepSpeed config."""

    _JSON_KEYS: ClassVar[tuple[str, ...]] = (
        "train_micro_batch_size_per_gpu",
        "train_batch_size",
        "bf16",
        "fp16",
        "zero_optimization",
        "optimizer",
        "scheduler",
        "zero_force_ds_cpu_optimizer",
        "seq_parallel_communication_data_type",
        "steps_per_print",
        "wall_clock_breakdown",
        "zero_allow_untested_optimizer",
        "gradient_predivide_factor",
        "communication_data_type",
        "stage3_gather_16bit_weights_on_model_save",
        "stage3_max_live_parameters",
        "stage3_max_reuse_distance",
        "stage3_prefetch_bucket_size",
        "stage3_param_persistence_threshold",
        "overlap_comm",
        "contiguous_gradients",
        "reduce_bucket_size",
        "allgather_bucket_size",
        "sub_group_size",
        "offload_optimizer",
        "offload_param",
        "activation_checkpointing",
        "stage",
    )
    MISPLACED_KEYS: ClassVar[dict[str, str]] = {k: _DEEPSPEED_JSON_HINT for k in _JSON_KEYS} | {
        "mixed_precision": "a top-level key of the Accelerate config, not of deepspeed_config",
    }

    deepspeed_config_file: str | None = key(
        None,
        "Path to a DeepSpeed JSON config. When set, it owns ZeRO, offload, batch, clipping and precision "
        "settings; the inline keys and the top-level mixed_precision must then be left out.",
    )
    zero_stage: Literal[0, 1, 2, 3] = key(2, "ZeRO optimization stage (0 disables ZeRO).")
    offload_optimizer_device: OffloadDevice = key(
        "none", "Where ZeRO keeps optimizer states (ZeRO stage 2 or 3)."
    )
    offload_param_device: OffloadDevice = key("none", "Where ZeRO-3 keeps parameters (stage 3 only).")
    offload_optimizer_nvme_path: str | None = key(
        None, "NVMe directory for optimizer offload. accelerate 1.15 never passes it to the workers."
    )
    offload_param_nvme_path: str | None = key(
        None, "NVMe directory for parameter offload. accelerate 1.15 never passes it to the workers."
    )
    gradient_accumulation_steps: PositiveInt | Auto = key(
        "auto", "Gradient accumulation steps; overrides Accelerator(gradient_accumulation_steps=...)."
    )
    gradient_clipping: Annotated[float, Field(ge=0)] | Auto = key(
        "auto", "Gradient clipping norm; 'auto' becomes 1.0 at prepare()."
    )
    zero3_init_flag: bool | None = key(
        None, "Construct the model partitioned (deepspeed.zero.Init) for ZeRO-3; ignored below stage 3."
    )
    zero3_save_16bit_model: bool = key(False, "Gather the full 16-bit model on save (ZeRO-3).")
    deepspeed_hostfile: str | None = key(None, "Hostfile for DeepSpeed's multi-node launchers.")
    deepspeed_exclusion_filter: str | None = key(None, "Hosts/GPUs to exclude (DeepSpeed launcher syntax).")
    deepspeed_inclusion_filter: str | None = key(None, "Hosts/GPUs to include (DeepSpeed launcher syntax).")
    deepspeed_multinode_launcher: Literal[
        "pdsh", "standard", "openmpi", "mvapich", "mpich", "nossh", "slurm"
    ] = key("pdsh", "Launcher for multi-node DeepSpeed runs.")
    deepspeed_moe_layer_cls_names: str | None = key(
        None, "Comma-separated MoE layer class names to mark as leaf modules for ZeRO-3 (DeepSpeed >= 0.14)."
    )


_FSDP_RENAMED = {
    "fsdp_backward_prefetch_policy": (
        "renamed to fsdp_backward_prefetch: accelerate no longer reads this name"
    ),
    "fsdp_transformer_layer_cls": "the key is fsdp_transformer_layer_cls_to_wrap",
}


class FsdpSection(StrictModel):
    """`fsdp_config`: FSDP plugin settings. Keys may be written with or without the `fsdp_` prefix (the
    launcher adds it); FSDP1 and FSDP2 read different subsets (see the AW3xx rules)."""

    MISPLACED_KEYS: ClassVar[dict[str, str]] = _FSDP_RENAMED

    fsdp_version: Literal[1, 2] = key(
        1,
        "1 = FullyShardedDataParallel, 2 = fully_shard (torch >= 2.6).",
        validation_alias=spelled("fsdp_version", "version"),
    )
    fsdp_sharding_strategy: ShardingStrategy | Literal[1, 2, 3, 4, 5] = key(
        "FULL_SHARD",
        "FSDP1 sharding strategy, by name or number 1-5; takes precedence over "
        "fsdp_reshard_after_forward and is ignored by FSDP2.",
        validation_alias=spelled("fsdp_sharding_strategy", "sharding_strategy"),
    )
    fsdp_reshard_after_forward: bool | ShardingStrategy = key(
        True,
        "FSDP2: reshard parameters after forward (bool). FSDP1 (accelerate >= 1.6): a sharding strategy "
        "name, used only when fsdp_sharding_strategy is unset.",
        validation_alias=spelled("fsdp_reshard_after_forward", "reshard_after_forward"),
    )
    fsdp_offload_params: bool = key(
        False,
        "Offload parameters and gradients to CPU.",
        validation_alias=spelled("fsdp_offload_params", "offload_params"),
    )
    fsdp_auto_wrap_policy: Literal["TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP"] | None = key(
        None,
        "How modules are wrapped into FSDP units; unset means NO_WRAP.",
        validation_alias=spelled("fsdp_auto_wrap_policy", "auto_wrap_policy"),
    )
    fsdp_transformer_layer_cls_to_wrap: str | None = key(
        None,
        "Comma-separated layer class names to wrap (TRANSFORMER_BASED_WRAP); unset uses the model's "
        "_no_split_modules.",
        validation_alias=spelled("fsdp_transformer_layer_cls_to_wrap", "transformer_layer_cls_to_wrap"),
    )
    fsdp_min_num_params: NonNegativeInt = key(
        100_000_000,
        "Minimum parameters per FSDP unit (SIZE_BASED_WRAP).",
        validation_alias=spelled("fsdp_min_num_params", "min_num_params"),
    )
    fsdp_backward_prefetch: Literal["BACKWARD_PRE", "BACKWARD_POST", "NO_PREFETCH"] | None = key(
        None,
        "FSDP1 backward prefetch; FSDP2 ignores it.",
        validation_alias=spelled("fsdp_backward_prefetch", "backward_prefetch"),
    )
    fsdp_state_dict_type: Literal["FULL_STATE_DICT", "LOCAL_STATE_DICT", "SHARDED_STATE_DICT"] | None = key(
        None,
        "Checkpoint format; unset means FULL_STATE_DICT (FSDP1) or SHARDED_STATE_DICT (FSDP2).",
        validation_alias=spelled("fsdp_state_dict_type", "state_dict_type"),
    )
    fsdp_forward_prefetch: bool = key(
        False,
        "FSDP1 forward prefetch; FSDP2 ignores it.",
        validation_alias=spelled("fsdp_forward_prefetch", "forward_prefetch"),
    )
    fsdp_use_orig_params: bool = key(
        True,
        "FSDP1 use_orig_params; obsolete in FSDP2.",
        validation_alias=spelled("fsdp_use_orig_params", "use_orig_params"),
    )
    fsdp_cpu_ram_efficient_loading: bool = key(
        True,
        "Load the checkpoint on rank 0 only (needs fsdp_sync_module_states with FSDP1).",
        validation_alias=spelled("fsdp_cpu_ram_efficient_loading", "cpu_ram_efficient_loading"),
    )
    fsdp_sync_module_states: bool = key(
        True,
        "Broadcast rank 0's weights at wrap time; obsolete in FSDP2.",
        validation_alias=spelled("fsdp_sync_module_states", "sync_module_states"),
    )
    fsdp_activation_checkpointing: bool = key(
        False,
        "Activation checkpointing of the wrapped layers.",
        validation_alias=spelled("fsdp_activation_checkpointing", "activation_checkpointing"),
    )
    fsdp_activation_checkpointing_offload: bool = key(
        False,
        "Offload checkpointed activations to CPU (FSDP2, needs activation checkpointing).",
        validation_alias=spelled("fsdp_activation_checkpointing_offload", "activation_checkpointing_offload"),
    )
    fsdp_ignored_modules: str | None = key(
        None,
        "Regex of module names FSDP leaves unwrapped.",
        validation_alias=spelled("fsdp_ignored_modules", "ignored_modules"),
    )
