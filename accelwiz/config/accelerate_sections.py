"""The nested sections of an Accelerate config (`deepspeed_config`, `fsdp_config`, `fp8_config`,
`dynamo_config`, `megatron_lm_config`, `mpirun_config`, `parallelism_config`) and the field helpers the
config models share.

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
DynamoBackend = Literal[
    "NO",
    "EAGER",
    "AOT_EAGER",
    "INDUCTOR",
    "AOT_TS_NVFUSER",
    "NVPRIMS_NVFUSER",
    "CUDAGRAPHS",
    "OFI",
    "FX2TRT",
    "ONNXRT",
    "TENSORRT",
    "AOT_TORCHXLA_TRACE_ONCE",
    "TORCHXLA_TRACE_ONCE",
    "TVM",
    "HPU_BACKEND",
    "NEURON",
]
# The launcher upper-cases the backend (`DynamoBackend(args.dynamo_backend.upper())`), and its own
# `--dynamo_backend` flag takes only lower case: any spelling of a known backend works.
LaunchedDynamoBackend = Annotated[DynamoBackend, BeforeValidator(lambda v: v.upper() if isinstance(v, str) else v)]
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


class Fp8Section(StrictModel):
    """`fp8_config`: FP8 recipe settings, passed to the workers as ACCELERATE_FP8_* (`fp8_` is optional)."""

    backend: Literal["TE", "MSAMP", "AO"] | None = key(
        None,
        "FP8 library: TransformerEngine, MS-AMP or torchao.",
        validation_alias=spelled("backend", "fp8_backend"),
    )
    use_autocast_during_eval: bool = key(
        False,
        "Keep FP8 autocast during evaluation (TE).",
        validation_alias=spelled("use_autocast_during_eval", "fp8_use_autocast_during_eval"),
    )
    margin: NonNegativeInt = key(
        0, "Scaling-factor margin (TE).", validation_alias=spelled("margin", "fp8_margin")
    )
    interval: PositiveInt = key(
        1, "Scaling-factor update interval (TE).", validation_alias=spelled("interval", "fp8_interval")
    )
    fp8_format: Literal["HYBRID", "E4M3", "E5M2"] = key(
        "HYBRID", "FP8 number format (TE).", validation_alias=spelled("fp8_format", "format")
    )
    amax_history_len: PositiveInt = key(
        1024,
        "amax history length (TE).",
        validation_alias=spelled("amax_history_len", "fp8_amax_history_len"),
    )
    amax_compute_algo: Literal["max", "most_recent"] = key(
        "most_recent",
        "amax algorithm (TE).",
        validation_alias=spelled("amax_compute_algo", "fp8_amax_compute_algo"),
    )
    override_linear_precision: list[bool] | str = key(
        [False, False, False],
        "Run (fprop, dgrad, wgrad) in higher precision (TE); three booleans.",
        validation_alias=spelled("override_linear_precision", "fp8_override_linear_precision"),
    )
    opt_level: Literal["O1", "O2"] = key(
        "O2", "MS-AMP optimization level.", validation_alias=spelled("opt_level", "fp8_opt_level")
    )
    enable_fsdp_float8_all_gather: bool = key(
        True,
        "All-gather in FP8 under FSDP2 (torchao).",
        validation_alias=spelled("enable_fsdp_float8_all_gather", "fp8_enable_fsdp_float8_all_gather"),
    )
    pad_inner_dim: bool = key(
        True,
        "Pad inner dimensions to multiples of 16 (torchao).",
        validation_alias=spelled("pad_inner_dim", "fp8_pad_inner_dim"),
    )
    # What `accelerate config` writes; the recipes read amax_history_len / amax_compute_algo / opt_level.
    amax_history_length: PositiveInt | None = key(
        None,
        "Written by `accelerate config` but never read: use amax_history_len.",
        validation_alias=spelled("amax_history_length", "fp8_amax_history_length"),
    )
    amax_compute_algorithm: Literal["max", "most_recent"] | None = key(
        None,
        "Written by `accelerate config` but never read: use amax_compute_algo.",
        validation_alias=spelled("amax_compute_algorithm", "fp8_amax_compute_algorithm"),
    )
    optimization_level: Literal["O1", "O2"] | None = key(
        None,
        "Written by `accelerate config` but never read: use opt_level.",
        validation_alias=spelled("optimization_level", "fp8_optimization_level"),
    )


class DynamoSection(StrictModel):
    """`dynamo_config`: torch.compile settings (keys may be written without `dynamo_`)."""

    dynamo_backend: LaunchedDynamoBackend = key(
        "NO",
        "torch.compile backend; NO disables compilation.",
        validation_alias=spelled("dynamo_backend", "backend"),
    )
    dynamo_mode: Literal["default", "reduce-overhead", "max-autotune"] = key(
        "default", "torch.compile mode.", validation_alias=spelled("dynamo_mode", "mode")
    )
    dynamo_use_fullgraph: bool = key(
        False,
        "Compile the whole model as one graph.",
        validation_alias=spelled("dynamo_use_fullgraph", "use_fullgraph"),
    )
    dynamo_use_dynamic: bool = key(
        False, "Compile with dynamic shapes.", validation_alias=spelled("dynamo_use_dynamic", "use_dynamic")
    )
    dynamo_use_regional_compilation: bool = key(
        False,
        "Compile repeated blocks once.",
        validation_alias=spelled("dynamo_use_regional_compilation", "use_regional_compilation"),
    )


_MEGATRON_KEYS = (
    "tp_degree",
    "pp_degree",
    "num_micro_batches",
    "sequence_parallelism",
    "recompute_activations",
    "use_distributed_optimizer",
    "gradient_clipping",
    "use_custom_fsdp",
    "no_load_optim",
    "no_save_optim",
    "eod_mask_loss",
    "overlap_cpu_optimizer_d2h_h2d",
    "optimizer_cpu_offload",
    "use_precision_aware_optimizer",
    "decoder_last_pipeline_num_layers",
    "recompute_granularity",
    "recompute_method",
    "recompute_num_layers",
    "attention_backend",
    "expert_model_parallel_size",
    "context_parallel_size",
    "attention_dropout",
    "hidden_dropout",
    "attention_softmax_in_fp32",
    "expert_tensor_parallel_size",
    "calculate_per_token_loss",
    "use_rotary_position_embeddings",
)


class MegatronLMSection(StrictModel):
    """`megatron_lm_config`: Megatron-LM plugin settings; keys must keep the `megatron_lm_` prefix."""

    MISPLACED_KEYS: ClassVar[dict[str, str]] = {
        k: f"accelerate only reads megatron_lm_{k}: the launcher does not add the prefix"
        for k in _MEGATRON_KEYS
    }

    megatron_lm_tp_degree: PositiveInt = key(1, "Tensor-parallel degree.")
    megatron_lm_pp_degree: PositiveInt = key(1, "Pipeline-parallel degree.")
    megatron_lm_num_micro_batches: PositiveInt | None = key(None, "Micro-batches per pipeline step.")
    megatron_lm_sequence_parallelism: bool | None = key(
        None, "Sequence parallelism (with tensor parallelism)."
    )
    megatron_lm_recompute_activations: bool | None = key(None, "Selective activation recomputation.")
    megatron_lm_use_distributed_optimizer: bool | None = key(
        None, "Shard optimizer states across data parallel."
    )
    megatron_lm_gradient_clipping: Annotated[float, Field(ge=0)] = key(1.0, "Gradient clipping norm.")
    megatron_lm_use_custom_fsdp: bool | None = key(None, "Megatron's own FSDP.")
    megatron_lm_no_load_optim: bool | None = key(None, "Do not load optimizer state from checkpoints.")
    megatron_lm_no_save_optim: bool | None = key(None, "Do not save optimizer state in checkpoints.")
    megatron_lm_eod_mask_loss: bool | None = key(None, "Mask the loss at end-of-document tokens.")
    megatron_lm_overlap_cpu_optimizer_d2h_h2d: bool | None = key(None, "Overlap CPU-optimizer transfers.")
    megatron_lm_optimizer_cpu_offload: bool | None = key(None, "Offload the optimizer to CPU.")
    megatron_lm_use_precision_aware_optimizer: bool | None = key(None, "Precision-aware optimizer.")
    megatron_lm_decoder_last_pipeline_num_layers: PositiveInt | None = key(None, "Layers in the last stage.")
    megatron_lm_recompute_granularity: Literal["full", "selective"] | None = key(
        None, "Recompute granularity."
    )
    megatron_lm_recompute_method: Literal["uniform", "block"] | None = key(None, "Recompute method.")
    megatron_lm_recompute_num_layers: PositiveInt | None = key(None, "Layers per recompute unit.")
    megatron_lm_attention_backend: str | None = key(None, "Attention implementation.")
    megatron_lm_expert_model_parallel_size: PositiveInt | None = key(None, "Expert-parallel degree.")
    megatron_lm_context_parallel_size: PositiveInt | None = key(None, "Context-parallel degree.")
    megatron_lm_attention_dropout: Annotated[float, Field(ge=0, le=1)] | None = key(
        None, "Attention dropout."
    )
    megatron_lm_hidden_dropout: Annotated[float, Field(ge=0, le=1)] | None = key(None, "Hidden dropout.")
    megatron_lm_attention_softmax_in_fp32: bool | None = key(None, "Attention softmax in fp32.")
    megatron_lm_expert_tensor_parallel_size: PositiveInt | None = key(None, "Expert tensor-parallel degree.")
    megatron_lm_calculate_per_token_loss: bool | None = key(None, "Per-token loss averaging.")
    megatron_lm_use_rotary_position_embeddings: bool | None = key(None, "Rotary position embeddings.")


class MpirunSection(StrictModel):
    """`mpirun_config`: how MULTI_CPU runs are started through mpirun (the key keeps its `mpirun_` prefix)."""

    MISPLACED_KEYS: ClassVar[dict[str, str]] = {
        "hostfile": "accelerate only reads mpirun_hostfile: the launcher does not add the prefix"
    }

    mpirun_hostfile: str | None = key(None, "MPI hostfile; without it MULTI_CPU starts a single process.")


_PARALLELISM_KEYS = (
    "dp_replicate_size",
    "dp_shard_size",
    "tp_size",
    "cp_size",
    "cp_backend",
    "cp_comm_strategy",
    "sp_size",
    "sp_backend",
    "sp_seq_length",
    "sp_seq_length_is_variable",
    "sp_attn_implementation",
)


class ParallelismSection(StrictModel):
    """`parallelism_config`: N-D parallelism sizes; keys must keep the `parallelism_config_` prefix."""

    MISPLACED_KEYS: ClassVar[dict[str, str]] = {
        k: f"accelerate only reads parallelism_config_{k}: the launcher does not add the prefix"
        for k in _PARALLELISM_KEYS
    }

    parallelism_config_dp_replicate_size: PositiveInt = key(1, "Replicated data-parallel degree (DDP/HSDP).")
    parallelism_config_dp_shard_size: PositiveInt = key(1, "Sharded data-parallel degree (FSDP).")
    parallelism_config_tp_size: PositiveInt = key(1, "Tensor-parallel degree.")
    parallelism_config_cp_size: PositiveInt = key(1, "Context-parallel degree (FSDP2).")
    parallelism_config_cp_backend: Literal["torch"] = key("torch", "Context-parallel implementation.")
    parallelism_config_cp_comm_strategy: Literal["allgather", "alltoall"] = key(
        "allgather", "How context-parallel ranks exchange keys/values."
    )
    parallelism_config_sp_size: PositiveInt = key(1, "Sequence-parallel (Ulysses) degree (DeepSpeed).")
    parallelism_config_sp_backend: Literal["deepspeed"] = key(
        "deepspeed", "Sequence-parallel implementation."
    )
    parallelism_config_sp_seq_length: PositiveInt | None = key(None, "Fixed sequence length for SP.")
    parallelism_config_sp_seq_length_is_variable: bool = key(True, "Whether sequence lengths vary per batch.")
    parallelism_config_sp_attn_implementation: str = key(
        "sdpa",
        "Attention used with SP: flash_attention_2, flash_attention_3, sdpa or a flash-attn hub kernel.",
    )
