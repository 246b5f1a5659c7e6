"""`accelwiz estimate` as a function: an `EstimateRequest` (what the flags or a run's files ask) in, an `Estimated`
(the report, the post-training phases, the trace) out. The command renders it; nothing here prints.

The workload and the post-training settings come from accelwiz.resolution, as for every other command: from the
flags alone (TRL's and accelwiz's defaults beneath them), or with `config` from the run the files and the plan
describe (estimate/planned.py), the flags replacing single values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.estimate.posttraining import PostTraining, PostTrainingEstimate
    from accelwiz.estimate.report import Report
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.trace_compare import TraceComparison
    from accelwiz.estimate.workload import Workload


@dataclass(frozen=True)
class EstimateRequest:
    """What to estimate. Flags are by the resolution's names (accelwiz.resolution.options.flags_from_options);
    None in any of them: not given."""

    model: str | None = None
    params: str | None = None
    config: Path | None = None
    workload_flags: dict[str, Any] = field(default_factory=dict)
    post_flags: dict[str, Any] = field(default_factory=dict)
    system: str | None = None
    gpu_memory: str | None = None
    gpus: int | None = None
    nodes: int | None = None
    strategy: str | None = None
    fsdp_version: int = 2
    fsdp_upcast: bool = True
    offload_optimizer: str = "none"
    offload_param: str = "none"
    zero3_init: bool | None = None  # --zero3-init/--no-zero3-init (zero_init.py `with_zero3_init`)
    fsdp_wrap: str | None = None  # --fsdp-wrap block|none (fsdp_wrap.py `with_fsdp_wrap`)
    # DeepSpeed's bf16 section from the command line (bf16_master.py `with_bf16_master`)
    bf16_master_weights_and_grads: bool | None = None
    bf16_optimizer_states: bool | None = None
    zero_reduce_bucket_size: str | None = None  # --zero-reduce-bucket-size N|auto (zero_buckets.py)
    compare: bool = False
    trace: bool = False
    layers: int | None = None
    plot: str | None = None


@dataclass(frozen=True)
class Estimated:
    """The estimate: the report (for DPO/GRPO, of the training step beside `post`), and what to tell the user."""

    report: Report
    post: PostTrainingEstimate | None = None
    traced: TraceComparison | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    debug: tuple[str, ...] = ()

    @property
    def fits(self) -> bool | None:
        return self.report.fits


def estimate_for(request: EstimateRequest, say: Callable[[str], None] = lambda _: None) -> Estimated:
    """The estimate `request` asks for; UsageError for what the flags cannot mean. `say` hears progress that
    should not wait for the result (a trace's expected time)."""
    from accelwiz.estimate.target import select_target

    _check_options(request)
    system = None  # the --system profile, read once: its packages are the stack, its GPUs the target
    if request.config is not None:
        planned = _planned(request)
        workload, post, profile, from_config = planned.workload, planned.post, planned.system, planned.strategy
    else:
        system = _system_profile(request.system)
        workload, profile, from_config = _workload(request, system), None, None
        post = _post_settings(workload, request.post_flags)
    choice = select_target(request.system, request.gpu_memory, request.gpus, request.nodes, profile=profile,
                           loaded=system)
    strategy = _chosen_strategy(request, choice.gpus_per_node, choice.nodes)
    if strategy is None and from_config is not None:
        strategy = from_config
        choice = replace(choice, gpus_per_node=strategy.gpus_per_node, nodes=strategy.nodes)
    strategy = _with_strategy_flags(strategy, request, workload)
    from accelwiz.estimate.refusals import refuse_unrunnable

    # what the stack refuses or replaces, refused with its reason (estimate/refusals.py)
    refuse_unrunnable(workload, strategy, trace=request.trace, post_training=post is not None)
    told = {"warnings": choice.warnings, "debug": choice.debug}
    if post is not None:
        return _posttraining(workload, post, choice, strategy, told)
    from accelwiz.estimate.report import build_report

    compares = request.compare or (request.plot is not None and not request.trace)  # --plot draws the comparison
    report = build_report(workload, choice.target, strategy, choice.gpus_per_node, choice.nodes,
                          compare=compares, fixed=_fixed(request))
    traced = _trace(report, request.layers, say) if request.trace else None
    return Estimated(report, traced=traced, **told)


def _with_strategy_flags(strategy: Strategy | None, request: EstimateRequest, workload: Workload) -> Strategy | None:
    """The flags that set one setting of the chosen strategy, each over the files' value, each refused where the
    strategy has no such setting."""
    from accelwiz.estimate.bf16_master import with_bf16_master
    from accelwiz.estimate.fsdp_wrap import with_fsdp_wrap
    from accelwiz.estimate.zero_buckets import with_reduce_bucket
    from accelwiz.estimate.zero_init import with_zero3_init

    strategy = with_zero3_init(strategy, request.zero3_init, quantized=workload.regime == "qlora")
    strategy = with_fsdp_wrap(strategy, request.fsdp_wrap)
    strategy = with_reduce_bucket(strategy, request.zero_reduce_bucket_size)
    return with_bf16_master(strategy, request.bf16_master_weights_and_grads, request.bf16_optimizer_states,
                            workload)


def _fixed(request: EstimateRequest) -> frozenset[str]:
    """What the recommendation may not change: checkpointing the flags set either way; with `--config`, the
    files' checkpointing and micro-batch (the run trains those)."""
    given = {name for name in ("gradient_checkpointing",) if request.workload_flags.get(name) is not None}
    if request.config is not None:
        given |= {"gradient_checkpointing", "micro_batch"}
    return frozenset(given)


def _check_options(request: EstimateRequest) -> None:
    """Options that exclude each other, refused before anything is estimated (a plot's name before a trace of a
    minute)."""
    flags = request.workload_flags
    if request.layers is not None and not request.trace:
        raise UsageError("--layers is for --trace", hint="add --trace, or drop --layers")
    if request.plot is not None:
        from accelwiz.estimate.plot import plot_format

        plot_format(request.plot)  # with --trace the step's timeline, else the strategy comparison
    kind = request.post_flags.get("kind")
    if kind not in (None, "sft") and (request.trace or request.compare or request.plot):
        raise UsageError(f"--trace, --compare and --plot show the SFT step; --kind {kind} has phases of its own",
                         hint="drop --trace/--compare/--plot, or pass --kind sft")
    if request.config is not None and not request.fsdp_upcast:
        raise UsageError("--no-fsdp-upcast says FSDP runs outside accelerate; --config names accelerate's files",
                         hint="drop --no-fsdp-upcast (accelerate upcasts a 16-bit model before wrapping it)")
    if request.config is not None and request.params is not None:
        raise UsageError("--params sizes a model without files; --config names the run's own",
                         hint="drop --params (pass --model to replace the plan's model)")
    if request.config is None and (request.model is None) == (request.params is None):
        raise UsageError("pass exactly one of --model and --params (or --config)",
                         hint="e.g. --model llama-8b, --params 7e9 or --config accelerate.yaml")
    if flags.get("lora_targets") and request.model is not None:  # an unknown name beside valid ones, by name
        from accelwiz.modelspec.lookup import resolve_model
        from accelwiz.estimate.workload import check_lora_targets

        check_lora_targets(resolve_model(request.model), list(flags["lora_targets"]))


def _system_profile(system: str | None) -> Any:
    """The --system profile (a preset, a saved probe, `local`), or None."""
    if system is None:
        return None
    from accelwiz.probe.profiles import load_system

    return load_system(system)


def _workload(request: EstimateRequest, system: Any = None) -> Workload:
    """The flags' Workload (accelwiz.resolution), refused beyond the model's positions, with the attention
    transformers picks where none was given."""
    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.estimate.resolved import to_workload
    from accelwiz.resolution.posttraining import posttraining_workload
    from accelwiz.resolution.stack import with_profile_stack
    from accelwiz.resolution.workload import beyond_positions, resolve_workload

    # the --system profile's packages are the stack where it lists them (a `probe --save` file: the machine that
    # will train), as `check --system` resolves it; a --stack given wins, what it does not name stays installed
    flags = with_profile_stack(request.workload_flags, system.packages if system is not None else None)
    spec = resolve_model(request.model or request.params or "")
    resolved = resolve_workload(flags=flags, max_positions=spec.max_position_embeddings)
    resolved = posttraining_workload(resolved, request.post_flags.get("kind"))  # DPO/GRPO: TRL's fused LM head
    problem = beyond_positions(resolved.seq_len.value, spec.max_position_embeddings, spec.name)
    if problem is not None:
        raise UsageError(problem, hint=f"pass --seq-len {spec.max_position_embeddings} or less")
    workload = to_workload(resolved, spec)
    return _with_attention(workload, flags.get("attention"))


def _with_attention(workload: Workload, given: str | None) -> Workload:
    """The attention given (refused where transformers refuses it), else the one transformers picks (Gemma-2:
    eager)."""
    from accelwiz.estimate.workload import check_attention, default_attention

    if given is not None:
        check_attention(workload.model, given)
        return workload
    if workload.attention != default_attention(workload.model):
        return replace(workload, attention=default_attention(workload.model))
    return workload


def _planned(request: EstimateRequest) -> Any:
    """`--config`: the run the files and the plan describe; the attention the plan says, checked when a flag
    replaces it."""
    from accelwiz.estimate.planned import planned_run

    flags = {**request.workload_flags, **request.post_flags}
    planned = planned_run(request.config, model=request.model, flags=flags)  # type: ignore[arg-type]
    if flags.get("attention") is not None:
        from accelwiz.estimate.workload import check_attention

        check_attention(planned.workload.model, flags["attention"])
    return planned


def _post_settings(workload: Workload, flags: dict[str, Any]) -> PostTraining | None:
    """The TRL settings the --kind flags give, or None for SFT; a prompt + completion beyond the model's
    positions is refused as --seq-len is."""
    from accelwiz.estimate.resolved import to_post_training
    from accelwiz.resolution.posttraining import beyond_positions, resolve_posttraining

    spec = workload.model
    post = resolve_posttraining(flags=flags, max_positions=spec.max_position_embeddings)
    if not post.is_posttraining:
        return None
    problem = beyond_positions(post, spec.max_position_embeddings, spec.name)
    if problem is not None:
        raise UsageError(problem, hint=f"keep --max-prompt-length + --max-completion-length within "
                                       f"{spec.max_position_embeddings}")
    return to_post_training(post)


def _chosen_strategy(request: EstimateRequest, gpus_per_node: int, nodes: int) -> Any:
    """The strategy --strategy (or an offload flag) names; None: the config's, else the recommended one."""
    if request.strategy is None and request.offload_optimizer == "none" and request.offload_param == "none":
        return None
    from accelwiz.estimate.strategy import strategy_from_options

    named = request.strategy or ("zero3" if request.offload_param != "none" else "zero2")
    return strategy_from_options(named, gpus_per_node=gpus_per_node, nodes=nodes,
                                 offload_optimizer=request.offload_optimizer, offload_param=request.offload_param,
                                 fsdp_version=request.fsdp_version, fsdp_upcast=request.fsdp_upcast)


def _posttraining(workload: Workload, post: PostTraining, choice: Any, strategy: Any,
                  told: dict[str, tuple[str, ...]]) -> Estimated:
    """DPO/GRPO: the TRL estimate (estimate/posttraining.py) beside the report of its training step."""
    from accelwiz.estimate.posttraining_report import (
        build_post_report,
        grpo_batch_problem,
        training_gpus,
        with_training_gpus,
    )

    gpus, nodes = training_gpus(post, choice.gpus_per_node, choice.nodes), choice.nodes
    notes = (f"note: vLLM server mode: {gpus} of {choice.gpus_per_node} GPU(s) train",) \
        if gpus != choice.gpus_per_node else ()
    problem = grpo_batch_problem(post, workload.micro_batch, gpus * nodes)
    warnings = told["warnings"] + ((problem,) if problem else ())
    estimated, report = build_post_report(workload, post, choice.target, with_training_gpus(strategy, gpus), gpus,
                                          nodes)
    return Estimated(report, post=estimated, notes=notes, warnings=warnings, debug=told["debug"])


def _trace(report: Report, layers: int | None, say: Callable[[str], None]) -> TraceComparison:
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
    say(f"tracing {workload.model.name}: {count} of {workload.model.num_layers} layers under fake tensors "
        f"(about {estimated_seconds(traced_layers, workload.model.num_experts):.0f} s)")
    return compare(report.shown, trace_workload(workload, strategy=strategy, layers=layers))
