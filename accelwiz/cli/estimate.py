"""`accelwiz estimate`: training memory per GPU and per node, a verdict, and a recommendation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from accelwiz.cli.common import FormatOption, OutputFormat, SystemOption, exit_on_error, get_console
from accelwiz.errors import EXIT_FINDINGS

if TYPE_CHECKING:
    from accelwiz.console import Console
    from accelwiz.estimate.report import Report
    from accelwiz.estimate.trace_compare import TraceComparison

EPILOG = """\
Examples:

  $ accelwiz estimate --model llama-8b --gpus 8 --gpu-memory 80GiB --micro-batch 4 --seq-len 4096 \\
      --gradient-checkpointing
  $ accelwiz estimate --model llama-3.1-70b --system 8xH100-80GB --strategy zero3 --offload-optimizer cpu
  $ accelwiz estimate --model path/to/config.json --lora --lora-rank 16 --compare
  $ accelwiz estimate --params 7e9 --qlora --gpu-memory 24GiB
  $ accelwiz estimate --model llama-3.2-1b --seq-len 2048 --trace      # beside a trace of the real model
  $ accelwiz estimate --model Qwen/Qwen3-8B --seq-len 4096 --trace --layers 4
  $ accelwiz estimate --list-models
  $ accelwiz estimate --model qwen2.5-7b --kind dpo --micro-batch 2 --max-prompt-length 512 \\
      --max-completion-length 512 --system 8xH100-80GB
  $ accelwiz estimate --model llama-8b --kind grpo --num-generations 8 --generation vllm-colocate \\
      --vllm-gpu-memory-utilization 0.3 --gpu-memory 80GiB --gpus 8

Sizes read `80GiB` (2^30), `80GB` (10^9) or `81920MiB`. Without --strategy the recommended one is shown.
Exit codes: 0 fits or tight (or no target to judge against), 1 does not fit (GPU memory or host RAM), 2 bad usage.
"""

_MEM = "Memory target"
_TRAIN = "Training"
_TRACE = "Trace (imports torch and transformers)"
_POST = "Post-training (TRL DPO/GRPO)"


def estimate(
    model: Annotated[
        str | None,
        typer.Option(help="Preset or alias (`--list-models`), a local config.json, a hub id, or a count."),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", show_default=False,
                     help="The Accelerate YAML of a run: its plan, DeepSpeed JSON and strategy give the model, the "
                          "workload, the kind and the machine, as `run` resolves them; flags replace single values."),
    ] = None,
    params: Annotated[
        str | None, typer.Option(help="Parameter count instead of a model: 7e9, 7B, 125M.")
    ] = None,
    gpus: Annotated[
        int | None, typer.Option(min=1, help="GPUs per node (default: the system's, else 1).")
    ] = None,
    nodes: Annotated[int | None, typer.Option(min=1, help="Nodes (default: the system's, else 1).")] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            help="single|ddp|zero1|zero2|zero3|fsdp_full|fsdp_grad_op|"
            "fsdp_hybrid (default: the recommended one)."
        ),
    ] = None,
    fsdp_version: Annotated[int, typer.Option(min=1, max=2, help="FSDP version.")] = 2,
    offload_optimizer: Annotated[str, typer.Option(metavar="none|cpu|nvme")] = "none",
    offload_param: Annotated[str, typer.Option(metavar="none|cpu|nvme")] = "none",
    micro_batch: Annotated[int | None, typer.Option(min=1, rich_help_panel=_TRAIN, show_default=False,
                                                    help="Default 1.")] = None,
    seq_len: Annotated[int | None, typer.Option(
        min=1, rich_help_panel=_TRAIN, show_default=False,
        help="Tokens per sequence (default: 2048, or the model's positions when fewer).")] = None,
    lora: Annotated[
        bool, typer.Option(help="LoRA adapters on all block linears.", rich_help_panel=_TRAIN)
    ] = False,
    qlora: Annotated[bool, typer.Option(help="LoRA on a 4-bit NF4 base.", rich_help_panel=_TRAIN)] = False,
    lora_rank: Annotated[int | None, typer.Option(min=1, rich_help_panel=_TRAIN, show_default=False,
                                                  help="Default 16.")] = None,
    lora_target: Annotated[
        list[str] | None,
        typer.Option(help="Module names, repeatable (default all-linear).", rich_help_panel=_TRAIN),
    ] = None,
    precision: Annotated[
        str | None,
        typer.Option(metavar="fp32|mixed|bf16", rich_help_panel=_TRAIN, show_default=False,
                     help="mixed (the default) = 16-bit compute with fp32 master weights."),
    ] = None,
    optimizer: Annotated[str | None, typer.Option(metavar="adamw|adamw8bit|sgd|adafactor", rich_help_panel=_TRAIN,
                                                  show_default=False, help="Default adamw.")] = None,
    gradient_checkpointing: Annotated[bool | None, typer.Option(rich_help_panel=_TRAIN, show_default=False,
                                                                help="Default off.")] = None,
    attention: Annotated[
        str | None,
        typer.Option(metavar="eager|sdpa|flash", rich_help_panel=_TRAIN,
                     help="Default: sdpa where transformers has it for the model, else eager."),
    ] = None,
    system: SystemOption = None,
    gpu_memory: Annotated[
        str | None, typer.Option(help="Memory of one GPU: 80GiB, 80GB, 81920MiB.", rich_help_panel=_MEM)
    ] = None,
    compare: Annotated[bool, typer.Option(help="Show every strategy side by side.")] = False,
    trace: Annotated[
        bool,
        typer.Option(
            help="Also run one training step of the real transformers model under fake tensors on the CPU "
            "(nothing allocated) and show it beside the estimate, category by category.",
            rich_help_panel=_TRACE,
        ),
    ] = False,
    layers: Annotated[
        int | None,
        typer.Option(
            min=2,
            help="With --trace: trace 1 and N layers and scale linearly to the model's depth (faster).",
            rich_help_panel=_TRACE,
        ),
    ] = None,
    kind: Annotated[str | None, typer.Option(metavar="sft|dpo|grpo", rich_help_panel=_POST, show_default=False,
                                             help="What is trained: sft (the default: the plain step), dpo or grpo "
                                                  "(TRL's trainers; --micro-batch is per_device_train_batch_size, "
                                                  "--seq-len is replaced by prompt + completion).")] = None,
    max_prompt_length: Annotated[int | None, typer.Option(
        min=1, rich_help_panel=_POST, show_default=False, help="Default 512 (half the model's positions when "
                                                               "fewer).")] = None,
    max_completion_length: Annotated[int | None, typer.Option(
        min=1, rich_help_panel=_POST, show_default=False, help="Default 512, TRL's (see --max-prompt-length).")]
    = None,
    num_generations: Annotated[int | None, typer.Option(min=1, rich_help_panel=_POST, show_default=False,
                                                        help="GRPO: completions per prompt (default 8, TRL's).")]
    = None,
    steps_per_generation: Annotated[int | None, typer.Option(
        min=1, rich_help_panel=_POST, help="GRPO: micro-steps per generation (default: the accumulation, 1).")] = None,
    beta: Annotated[float | None, typer.Option(
        rich_help_panel=_POST, help="KL coefficient (default: DPO 0.1, GRPO 0.0 = no reference model).")] = None,
    precompute_ref_log_probs: Annotated[bool, typer.Option(rich_help_panel=_POST, help="DPO: no reference model "
                                                           "while training.")] = False,
    generation: Annotated[str | None, typer.Option(metavar="hf|vllm-colocate|vllm-server", rich_help_panel=_POST,
                                                   show_default=False, help="GRPO's generation backend (default hf)."
                                                   )] = None,
    vllm_gpu_memory_utilization: Annotated[float | None, typer.Option(
        min=0.01, max=1.0, rich_help_panel=_POST, show_default=False, help="Default 0.3, TRL's.")] = None,
    vllm_tensor_parallel_size: Annotated[int | None, typer.Option(min=1, rich_help_panel=_POST,
                                                                  show_default=False)] = None,
    vllm_max_model_length: Annotated[int | None, typer.Option(
        min=1, rich_help_panel=_POST, help="vLLM's max_model_len (default: the model's context length).")] = None,
    vllm_server_gpus: Annotated[int | None, typer.Option(min=1, rich_help_panel=_POST, show_default=False,
                                                         help="GPUs `trl vllm-serve` takes from the node (server "
                                                              "mode; default 1).")] = None,
    plot: Annotated[
        str | None,
        typer.Option(
            help="With --trace: write GPU memory over the traced step (allocated, reserved, the GPU's capacity) "
            "to this .svg or .html file.",
            rich_help_panel=_TRACE,
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.text,
    list_models: Annotated[
        bool, typer.Option("--list-models", help="List the model presets and exit.")
    ] = False,
) -> None:
    """Estimate training memory per GPU and per node (activations included), with a verdict."""
    console = get_console()
    with exit_on_error(console):
        if list_models:
            _print_models(console)
            raise typer.Exit(0)
        from accelwiz.resolution.options import flags_from_options

        flags = flags_from_options(
            micro_batch=micro_batch, seq_len=seq_len, regime="qlora" if qlora else "lora" if lora else None,
            lora_rank=lora_rank, lora_targets=tuple(lora_target) if lora_target else None, precision=precision,
            optimizer=optimizer, gradient_checkpointing=gradient_checkpointing, attention=attention)
        post_flags = {
            "kind": kind, "max_prompt_length": max_prompt_length, "max_completion_length": max_completion_length,
            "num_generations": num_generations, "steps_per_generation": steps_per_generation, "beta": beta,
            "precompute_ref_log_probs": precompute_ref_log_probs or None, "generation": generation,
            "vllm_gpu_memory_utilization": vllm_gpu_memory_utilization,
            "vllm_tensor_parallel_size": vllm_tensor_parallel_size, "vllm_server_gpus": vllm_server_gpus,
            "vllm_max_model_length": vllm_max_model_length}
        if lora and qlora:
            from accelwiz.errors import UsageError

            raise UsageError("--lora and --qlora exclude each other", hint="QLoRA is LoRA on a 4-bit base: pass one")
        _check_trace_options(trace, layers, plot)
        from accelwiz.estimate.target import select_target

        if config is not None:
            planned = _planned(config, model, params, {**flags, **post_flags})
            workload, post, profile = planned.workload, planned.post, planned.system
        else:
            workload, profile = _workload(model, params, lora_target, flags), None
            post = _post_settings(workload, post_flags)
        choice = select_target(system, gpu_memory, gpus, nodes, profile=profile)
        for line in choice.debug:
            console.debug(line)
        for line in choice.warnings:
            console.warn(line)
        chosen = _chosen_strategy(strategy, offload_optimizer, offload_param, fsdp_version, choice.gpus_per_node,
                                  choice.nodes)
        if chosen is None and config is not None and planned.strategy is not None:
            chosen = planned.strategy
            choice = replace(choice, gpus_per_node=chosen.gpus_per_node, nodes=chosen.nodes)
        if post is not None:
            from accelwiz.errors import UsageError

            if trace or compare:
                raise UsageError(f"--trace and --compare show the SFT step; --kind {kind} has phases of its own",
                                 hint="drop --trace/--compare, or pass --kind sft")
            fits = _post_training(console, workload, post, choice.target, chosen, choice.gpus_per_node,
                                  choice.nodes, output_format)
        else:
            from accelwiz.estimate.report import build_report

            report = build_report(workload, choice.target, chosen, choice.gpus_per_node, choice.nodes,
                                  compare=compare)
            _show(console, report, _trace(console, report, layers) if trace else None, plot, output_format)
            fits = report.fits
    # as `check`: exit 1 when it does not fit, so `accelwiz estimate ... && accelerate launch` works
    raise typer.Exit(EXIT_FINDINGS if fits is False else 0)


def _workload(model: str | None, params: str | None, lora_target: list[str] | None, flags: dict[str, Any]) -> Any:
    """The estimator's Workload for the flags (accelwiz.resolution), with the attention transformers would pick
    for the model where none was given."""
    from accelwiz.errors import UsageError
    from accelwiz.estimate.models import resolve_model
    from accelwiz.resolution.workload import beyond_positions, resolve_workload

    if (model is None) == (params is None):
        raise UsageError("pass exactly one of --model and --params (or --config)",
                         hint="e.g. --model llama-8b, --params 7e9 or --config accelerate.yaml")
    spec = resolve_model(model or params or "")
    if lora_target and model is not None:  # an unknown name beside valid ones is refused, by name
        from accelwiz.estimate.workload import check_lora_targets

        check_lora_targets(spec, lora_target)
    resolved = resolve_workload(flags=flags, max_positions=spec.max_position_embeddings)
    problem = beyond_positions(resolved.seq_len.value, spec.max_position_embeddings, spec.name)
    if problem is not None:
        raise UsageError(problem, hint=f"pass --seq-len {spec.max_position_embeddings} or less")
    return _with_attention(resolved.for_estimator(spec, micro_batch_given=flags["micro_batch"] is not None),
                           flags["attention"])


def _with_attention(workload: Any, given: str | None) -> Any:
    """The attention given (refused where transformers refuses it), else the one transformers picks (Gemma-2:
    eager)."""
    from accelwiz.estimate.workload import check_attention, default_attention

    if given is not None:
        check_attention(workload.model, given)
        return workload
    if workload.attention != default_attention(workload.model):
        return replace(workload, attention=default_attention(workload.model))
    return workload


def _planned(config: Path, model: str | None, params: str | None, flags: dict[str, Any]) -> Any:
    """`--config`: the run the files and the plan describe (accelwiz.estimate.planned), the flags replacing
    single values; refused beyond the model's positions as `run` refuses it."""
    from accelwiz.errors import UsageError
    from accelwiz.estimate.planned import planned_run

    if params is not None:
        raise UsageError("--params sizes a model without files; --config names the run's own",
                         hint="drop --params (pass --model to replace the plan's model)")
    planned = planned_run(config, model=model, flags=flags)
    if flags.get("attention") is not None:  # else the plan's, as the run will use it
        from accelwiz.estimate.workload import check_attention

        check_attention(planned.workload.model, flags["attention"])
    return planned


def _check_trace_options(trace: bool, layers: int | None, plot: str | None) -> None:
    """--layers and --plot go with --trace; a plot's file name is refused before a trace of a minute."""
    from accelwiz.errors import UsageError

    if layers is not None and not trace:
        raise UsageError("--layers is for --trace", hint="add --trace, or drop --layers")
    if plot is not None:
        from accelwiz.estimate.plot import plot_format

        if not trace:
            raise UsageError("--plot draws the traced step", hint="add --trace, or drop --plot")
        plot_format(plot)


def _chosen_strategy(strategy: str | None, offload_optimizer: str, offload_param: str, fsdp_version: int,
                     gpus_per_node: int, nodes: int) -> Any:
    """The strategy --strategy (or an offload flag) names; None: the report recommends one."""
    if strategy is None and offload_optimizer == "none" and offload_param == "none":
        return None
    from accelwiz.estimate.strategy import strategy_from_options

    return strategy_from_options(strategy or ("zero3" if offload_param != "none" else "zero2"),
                                 gpus_per_node=gpus_per_node, nodes=nodes, offload_optimizer=offload_optimizer,
                                 offload_param=offload_param, fsdp_version=fsdp_version)


def _show(console: Console, report: Report, traced: TraceComparison | None, plot: str | None,
          output_format: OutputFormat) -> None:
    """The SFT report (and --compare's table, the trace beside it, the plot) as text or JSON."""
    from accelwiz.estimate.render import render_compare, render_json, render_text

    if plot is not None and traced is not None:
        _plot(console, report, traced, plot)
    if output_format is OutputFormat.json:
        console.data(render_json(report, trace=None if traced is None else traced.as_dict()))
        return
    console.data(render_text(report))
    if report.rows is not None:
        console.data("")
        console.data(render_compare(report.rows))
    if traced is not None:
        from accelwiz.estimate.trace_compare import render_comparison

        console.data("")
        console.data(render_comparison(traced))


def _post_settings(workload: Any, flags: dict[str, Any]) -> Any:
    """The TRL settings the --kind flags give (accelwiz.resolution.posttraining: TRL's defaults beneath them), or
    None for SFT; a prompt + completion beyond the model's positions is refused as --seq-len is."""
    from accelwiz.errors import UsageError
    from accelwiz.resolution.posttraining import beyond_positions, resolve_posttraining

    spec = workload.model
    post = resolve_posttraining(flags=flags, max_positions=spec.max_position_embeddings)
    if not post.is_posttraining:
        return None
    problem = beyond_positions(post, spec.max_position_embeddings, spec.name)
    if problem is not None:
        raise UsageError(problem, hint=f"keep --max-prompt-length + --max-completion-length within "
                                       f"{spec.max_position_embeddings}")
    return post.settings()


def _post_training(console: Console, workload: Any, post: Any, target: Any, chosen: Any, gpus_per_node: int,
                   nodes: int, output_format: OutputFormat) -> bool | None:
    """--kind dpo|grpo: the TRL estimate (estimate/posttraining.py) beside the base report; returns the fit."""
    from accelwiz.estimate.posttraining_report import (
        build_post_report,
        grpo_batch_problem,
        post_json,
        render_post_text,
        training_gpus,
        with_training_gpus,
    )
    from accelwiz.estimate.render import render_json, render_text

    gpus = training_gpus(post, gpus_per_node, nodes)
    if gpus != gpus_per_node:
        console.info(f"note: vLLM server mode: {gpus} of {gpus_per_node} GPU(s) train")
    problem = grpo_batch_problem(post, workload.micro_batch, gpus * nodes)
    if problem:
        console.warn(problem)
    estimate, report = build_post_report(workload, post, target, with_training_gpus(chosen, gpus), gpus, nodes)
    if output_format is OutputFormat.json:
        console.data(post_json(render_json(report), estimate))
    else:
        console.data(render_text(report))
        console.data("")
        console.data(render_post_text(estimate))
    return report.fits


def _trace(console: Console, report: Report, layers: int | None) -> TraceComparison:
    """--trace: check the time first (refuse or ask for --layers), trace, and pair it with the shown estimate."""
    from accelwiz.estimate.trace import (
        DEFAULT_TIME_LIMIT,
        TraceSettings,
        check_trace_input,
        estimated_seconds,
        trace_workload,
    )
    from accelwiz.estimate.trace_compare import compare

    workload, strategy = report.shown.workload, report.shown.strategy
    settings = TraceSettings.from_workload(workload, strategy)
    count = check_trace_input(workload.model, settings, layers, DEFAULT_TIME_LIMIT)
    traced_layers = count if count == workload.model.num_layers else 1 + count
    console.info(
        f"tracing {workload.model.name}: {count} of {workload.model.num_layers} layers under fake tensors "
        f"(about {estimated_seconds(traced_layers, workload.model.num_experts):.0f} s)"
    )
    return compare(report.shown, trace_workload(workload, strategy=strategy, layers=layers))


def _plot(console: Console, report: Report, traced: TraceComparison, path: str) -> None:
    """--plot: the trace's memory timeline beside the GPU's capacity, written whole."""
    from accelwiz.estimate.plot import render_svg, write_plot

    shown, trace = report.shown, traced.trace
    title = (f"{shown.workload.model.name}, micro-batch {shown.workload.micro_batch} x seq {shown.workload.seq_len}: "
             f"one traced step (one process, unsharded)")
    capacity = None if report.target is None else report.target.gpu_bytes
    write_plot(path, render_svg(trace.timeline, title, capacity, shown.runtime))
    console.info(f"wrote {path}")


def _print_models(console: Console) -> None:
    from accelwiz.estimate.models import list_models

    for spec in list_models():
        aliases = f"  (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        console.data(f"{spec.name:<16}{spec.num_parameters:>18,}  {spec.family:<8}{aliases}")
