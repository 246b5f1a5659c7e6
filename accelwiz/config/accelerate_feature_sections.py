"""The feature sections of an Accelerate config beside the sharding ones: `fp8_config`, `dynamo_config`,
`megatron_lm_config`, `mpirun_config` and `parallelism_config` (accelerate_sections.py has `deepspeed_config`,
`fsdp_config` and the field helpers).

accelerate reads these sections with no checks at all, so every section here is strict where accelerate is silent.
Where the launcher adds a prefix to nested keys (`fp8_` in `fp8_config`, `dynamo_` in `dynamo_config`), both
spellings are accepted; where it does not (`parallelism_config`, `megatron_lm_config`), accelerate silently ignores
the unprefixed key, and it is reported as misplaced here.
"""

# No `from __future__ import annotations` here: pydantic would compile every annotation string back into a type
# when it builds the models (issue 33).

from typing import Annotated, ClassVar, Literal

from pydantic import BeforeValidator, Field

from accelwiz.config.accelerate_sections import NonNegativeInt, PositiveInt, key, spelled
from accelwiz.config.base import StrictModel

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
