"""`accelwiz estimate`: training memory per GPU and per node, a verdict, and a recommendation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from accelwiz.cli.common import FormatOption, MethodOption, OutputFormat, SystemOption, exit_on_error, get_console
from accelwiz.cli.estimate_options import (
    AttentionOption, BaseDtypeOption, BetaOption, Bf16MasterOption, Bf16StatesOption, CompareOption, ConfigOption,
    ExpandableSegmentsOption,
    FsdpUpcastOption, FsdpVersionOption, FsdpWrapOption, GenerationOption, GpuMemoryOption, GpusOption,
    GradientAccumulationOption,
    GradientCheckpointingOption, KbitPrepareOption, KindOption, LayersOption, ListModelsOption, LoraDropoutOption,
    LoraModulesToSaveOption, LoraOption, LoraRankOption, LoraTargetOption, LossDtypeOption, LossKernelOption,
    MaxCompletionLengthOption, MaxPromptLengthOption, MicroBatchOption, ModelOption, NodesOption,
    NumGenerationsOption, OffloadOptimizerOption, OffloadParamOption, OptimizerKernelOption, OptimizerOption,
    ParamsOption, PlotOption, PrecisionOption, PrecomputeRefLogProbsOption, QloraOption, SeqLenOption, StackOption,
    StepsPerGenerationOption, StrategyOption, TraceOption, VaryingLengthsOption, VllmGpuMemoryUtilizationOption,
    VllmMaxModelLengthOption, VllmServerGpusOption, VllmTensorParallelSizeOption, Zero3InitOption,
    ZeroReduceBucketOption,
)
from accelwiz.cli.estimate_render import print_models, show
from accelwiz.errors import EXIT_FINDINGS

if TYPE_CHECKING:
    from accelwiz.estimate.request import EstimateRequest

EPILOG = """\
Examples:

  $ accelwiz estimate --model llama-8b --gpus 8 --gpu-memory 80GiB \\
      --micro-batch 4 --seq-len 4096 --gradient-checkpointing
  $ accelwiz estimate --model llama-3.1-70b --system 8xH100-80GB \\
      --strategy zero3 --offload-optimizer cpu
  $ accelwiz estimate --model path/to/config.json --lora --lora-rank 16 \\
      --compare
  $ accelwiz estimate --params 7e9 --qlora --gpu-memory 24GiB
  $ accelwiz estimate --model llama-3.2-1b --seq-len 2048 \\
      --trace                        # beside a trace of the real model
  $ accelwiz estimate --model Qwen/Qwen3-8B --seq-len 4096 --trace --layers 4
  $ accelwiz estimate --list-models
  $ accelwiz estimate --model qwen2.5-7b --kind dpo --micro-batch 2 \\
      --max-prompt-length 512 --max-completion-length 512 --system 8xH100-80GB
  $ accelwiz estimate --model llama-8b --kind grpo --num-generations 8 \\
      --generation vllm-colocate --vllm-gpu-memory-utilization 0.3 \\
      --gpu-memory 80GiB --gpus 8

Sizes read `80GiB` (2^30), `80GB` (10^9) or `81920MiB`. Without --strategy
the recommended one is shown. Exit codes: 0 fits or tight (or no target to
judge against), 1 does not fit (GPU memory or host RAM), 2 bad usage.
"""

def estimate(
    model: ModelOption = None, config: ConfigOption = None, params: ParamsOption = None,
    gpus: GpusOption = None, nodes: NodesOption = None,
    strategy: StrategyOption = None,
    fsdp_version: FsdpVersionOption = 2, fsdp_upcast: FsdpUpcastOption = True,
    offload_optimizer: OffloadOptimizerOption = "none", offload_param: OffloadParamOption = "none",
    zero3_init: Zero3InitOption = None, fsdp_wrap: FsdpWrapOption = None,
    bf16_master_weights_and_grads: Bf16MasterOption = None, bf16_optimizer_states: Bf16StatesOption = None,
    zero_reduce_bucket_size: ZeroReduceBucketOption = None,
    micro_batch: MicroBatchOption = None, seq_len: SeqLenOption = None,
    gradient_accumulation: GradientAccumulationOption = None,
    method: MethodOption = None, lora: LoraOption = False, qlora: QloraOption = False,
    lora_rank: LoraRankOption = None,
    lora_target: LoraTargetOption = None, lora_dropout: LoraDropoutOption = None,
    lora_modules_to_save: LoraModulesToSaveOption = None,
    precision: PrecisionOption = None, base_dtype: BaseDtypeOption = None,
    optimizer: OptimizerOption = None, optimizer_kernel: OptimizerKernelOption = None,
    gradient_checkpointing: GradientCheckpointingOption = None, attention: AttentionOption = None,
    varying_lengths: VaryingLengthsOption = None, expandable_segments: ExpandableSegmentsOption = None,
    loss_dtype: LossDtypeOption = None, loss_kernel: LossKernelOption = None,
    kbit_prepare: KbitPrepareOption = None, stack: StackOption = None,
    system: SystemOption = None, gpu_memory: GpuMemoryOption = None,
    compare: CompareOption = False,
    trace: TraceOption = False, layers: LayersOption = None,
    kind: KindOption = None,
    max_prompt_length: MaxPromptLengthOption = None, max_completion_length: MaxCompletionLengthOption = None,
    num_generations: NumGenerationsOption = None, steps_per_generation: StepsPerGenerationOption = None,
    beta: BetaOption = None, precompute_ref_log_probs: PrecomputeRefLogProbsOption = False,
    generation: GenerationOption = None,
    vllm_gpu_memory_utilization: VllmGpuMemoryUtilizationOption = None,
    vllm_tensor_parallel_size: VllmTensorParallelSizeOption = None,
    vllm_max_model_length: VllmMaxModelLengthOption = None, vllm_server_gpus: VllmServerGpusOption = None,
    plot: PlotOption = None,
    output_format: FormatOption = OutputFormat.text,
    list_models: ListModelsOption = False,
) -> None:
    """Estimate training memory per GPU and per node (activations included), with a verdict."""
    options = dict(locals())  # every option as typer parsed it, by name: what the request is made of
    console = get_console()
    with exit_on_error(console):
        if list_models:
            print_models(console)
            raise typer.Exit(0)
        from accelwiz.estimate.request import estimate_for

        _warn_refused_alloc_conf(console, given=expandable_segments)
        estimated = estimate_for(_request(options), say=console.info)
        show(console, estimated, plot, output_format, compare)
    # as `check`: exit 1 when it does not fit, so `accelwiz estimate ... && accelwiz run` works
    raise typer.Exit(EXIT_FINDINGS if estimated.fits is False else 0)


def _warn_refused_alloc_conf(console: Any, given: bool | None) -> None:
    """A PYTORCH_CUDA_ALLOC_CONF torch refuses, where no flag replaces it: said in one line, the default used."""
    from accelwiz.resolution.alloc_conf import refused_setting

    refused = refused_setting() if given is None else None
    if refused is not None:
        console.warn(refused)


# the options that are workload fields, by the resolution's names (accelwiz.resolution.workload)
_WORKLOAD_FLAGS = ("micro_batch", "gradient_accumulation", "seq_len", "method", "lora", "qlora", "lora_rank",
                   "lora_dropout", "precision", "base_dtype", "optimizer", "optimizer_kernel", "gradient_checkpointing",
                   "attention", "varying_lengths", "expandable_segments", "loss_dtype", "loss_kernel", "kbit_prepare",
                   "stack")
# the options that are TRL's post-training settings, by the resolution's names (accelwiz.resolution.posttraining)
_POST_FLAGS = ("kind", "max_prompt_length", "max_completion_length", "num_generations", "steps_per_generation",
               "beta", "precompute_ref_log_probs", "generation", "vllm_gpu_memory_utilization",
               "vllm_tensor_parallel_size", "vllm_server_gpus", "vllm_max_model_length")


def _request(options: dict[str, Any]) -> EstimateRequest:
    """The request the options make: the workload flags checked where every command checks them
    (common.checked_flags: each given replaces one value of the workload), the post-training ones as given, the
    rest by the request's own field names."""
    from dataclasses import fields

    from accelwiz.cli.common import checked_flags
    from accelwiz.estimate.request import EstimateRequest

    workload = {name: options[name] for name in _WORKLOAD_FLAGS}
    flags = checked_flags(lora_targets=tuple(options["lora_target"] or ()) or None,
                          lora_modules_to_save=tuple(options["lora_modules_to_save"] or ()) or None, **workload)
    post = {name: options[name] for name in _POST_FLAGS}
    post["precompute_ref_log_probs"] = post["precompute_ref_log_probs"] or None  # False: not given
    own = {f.name: options[f.name] for f in fields(EstimateRequest) if f.name in options}
    return EstimateRequest(workload_flags=flags, post_flags=post, **own)
