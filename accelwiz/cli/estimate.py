"""`accelwiz estimate`: training memory per GPU and per node, a verdict, and a recommendation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from accelwiz.cli.common import FormatOption, OutputFormat, SystemOption, exit_on_error, get_console
from accelwiz.errors import EXIT_FINDINGS

if TYPE_CHECKING:
    from accelwiz.console import Console
    from accelwiz.estimate.report import Target
    from accelwiz.probe.model import MachineProfile

EPILOG = """\
Examples:

  $ accelwiz estimate --model llama-8b --gpus 8 --gpu-memory 80GiB --micro-batch 4 --seq-len 4096 \\
      --gradient-checkpointing
  $ accelwiz estimate --model llama-3.1-70b --system 8xH100-80GB --strategy zero3 --offload-optimizer cpu
  $ accelwiz estimate --model path/to/config.json --lora --lora-rank 16 --compare
  $ accelwiz estimate --params 7e9 --qlora --gpu-memory 24GiB
  $ accelwiz estimate --list-models

Sizes read `80GiB` (2^30), `80GB` (10^9) or `81920MiB`. Without --strategy the recommended one is shown.
Exit codes: 0 fits (or no target to judge against), 1 does not fit, 2 bad usage.
"""

_MEM = "Memory target"
_TRAIN = "Training"


def estimate(
    model: Annotated[
        str | None,
        typer.Option(help="Preset or alias (`--list-models`), a local config.json, or a parameter count."),
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
    micro_batch: Annotated[int, typer.Option(min=1, rich_help_panel=_TRAIN)] = 1,
    seq_len: Annotated[int, typer.Option(min=1, rich_help_panel=_TRAIN)] = 2048,
    lora: Annotated[
        bool, typer.Option(help="LoRA adapters on all block linears.", rich_help_panel=_TRAIN)
    ] = False,
    qlora: Annotated[bool, typer.Option(help="LoRA on a 4-bit NF4 base.", rich_help_panel=_TRAIN)] = False,
    lora_rank: Annotated[int, typer.Option(min=1, rich_help_panel=_TRAIN)] = 16,
    lora_target: Annotated[
        list[str] | None,
        typer.Option(help="Module names, repeatable (default all-linear).", rich_help_panel=_TRAIN),
    ] = None,
    precision: Annotated[
        str,
        typer.Option(
            metavar="fp32|mixed|bf16",
            rich_help_panel=_TRAIN,
            help="mixed = 16-bit compute with fp32 master weights.",
        ),
    ] = "mixed",
    optimizer: Annotated[
        str, typer.Option(metavar="adamw|adamw8bit|sgd|adafactor", rich_help_panel=_TRAIN)
    ] = "adamw",
    gradient_checkpointing: Annotated[bool, typer.Option(rich_help_panel=_TRAIN)] = False,
    attention: Annotated[str, typer.Option(metavar="eager|sdpa|flash", rich_help_panel=_TRAIN)] = "sdpa",
    system: SystemOption = None,
    gpu_memory: Annotated[
        str | None, typer.Option(help="Memory of one GPU: 80GiB, 80GB, 81920MiB.", rich_help_panel=_MEM)
    ] = None,
    compare: Annotated[bool, typer.Option(help="Show every strategy side by side.")] = False,
    output_format: FormatOption = OutputFormat.text,
    list_models: Annotated[
        bool, typer.Option("--list-models", help="List the model presets and exit.")
    ] = False,
) -> None:
    """Estimate training memory per GPU and per node (activations included), with a verdict."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.errors import UsageError

        if list_models:
            _print_models(console)
            raise typer.Exit(0)
        if (model is None) == (params is None):
            raise UsageError(
                "pass exactly one of --model and --params", hint="e.g. --model llama-8b or --params 7e9"
            )
        if lora and qlora:
            raise UsageError(
                "--lora and --qlora exclude each other", hint="QLoRA is LoRA on a 4-bit base: pass one"
            )
        from accelwiz.estimate.workload import workload_from_options

        more = {"lora_targets": tuple(lora_target)} if lora_target else {}
        workload = workload_from_options(
            model=model or params or "",
            micro_batch=micro_batch,
            seq_len=seq_len,
            lora_rank=lora_rank,
            regime="qlora" if qlora else "lora" if lora else "full",
            precision=precision,
            optimizer=optimizer,
            gradient_checkpointing=gradient_checkpointing,
            attention=attention,
            **more,
        )
        target, gpus_per_node, node_count = _target(console, system, gpu_memory, gpus, nodes)
        chosen = None
        if strategy is not None or offload_optimizer != "none" or offload_param != "none":
            from accelwiz.estimate.strategy import strategy_from_options

            chosen = strategy_from_options(
                strategy or ("zero3" if offload_param != "none" else "zero2"),
                gpus_per_node=gpus_per_node,
                nodes=node_count,
                offload_optimizer=offload_optimizer,
                offload_param=offload_param,
                fsdp_version=fsdp_version,
            )
        from accelwiz.estimate.render import render_compare, render_json, render_text
        from accelwiz.estimate.report import build_report

        report = build_report(workload, target, chosen, gpus_per_node, node_count, compare=compare)
        if output_format is OutputFormat.json:
            console.data(render_json(report))
        else:
            console.data(render_text(report))
            if report.rows is not None:
                console.data("")
                console.data(render_compare(report.rows))
    # as `check`: exit 1 when it does not fit, so `accelwiz estimate ... && accelerate launch` works
    raise typer.Exit(EXIT_FINDINGS if report.fits is False else 0)


def _target(
    console: Console, system: str | None, gpu_memory: str | None, gpus: int | None, nodes: int | None
) -> tuple[Target | None, int, int]:
    """The memory to judge against and the GPU count: --gpu-memory, else --system, else the local GPUs."""
    from accelwiz.estimate.report import Target
    from accelwiz.estimate.sizes import gib, parse_size

    profile = None
    if system is not None:
        from accelwiz.probe.profiles import load_system

        profile = load_system(system)
    elif gpu_memory is None:
        profile = _local_profile(console)
    gpus_per_node = gpus or (profile.gpu_count if profile is not None and profile.gpu_count else 1)
    node_count = nodes or (profile.num_machines if profile is not None else 1)
    host = profile.host.memory_total_bytes if profile is not None else None
    if gpu_memory is not None:
        return Target(parse_size(gpu_memory), f"--gpu-memory {gpu_memory}", host), gpus_per_node, node_count
    if profile is not None and profile.min_gpu_memory_bytes:
        name = profile.gpus[0].name
        return (
            Target(profile.min_gpu_memory_bytes, f"{name} ({gib(profile.min_gpu_memory_bytes)})", host),
            gpus_per_node,
            node_count,
        )
    if system is not None:
        console.warn(f"the system `{system}` has no GPU; no verdict is possible")
    return None, gpus_per_node, node_count


def _local_profile(console: Console) -> MachineProfile | None:
    """This machine's GPUs, or None without a GPU (never an error: estimating for elsewhere is normal)."""
    if not _nvidia_driver_present():
        console.debug("no NVIDIA driver on this machine: no local GPU to judge against")
        return None
    try:
        from accelwiz.probe.profiles import load_system

        return load_system("local")
    except Exception as exc:  # noqa: BLE001 - a failed probe only means "no local target"
        console.debug(f"local probe failed: {exc}")
        return None


def _nvidia_driver_present() -> bool:
    """A cheap look before the full probe (which imports pydantic and NVML): Linux driver, or WSL's GPU."""
    from pathlib import Path

    return (
        Path("/proc/driver/nvidia").exists() or Path("/dev/nvidiactl").exists() or Path("/dev/dxg").exists()
    )


def _print_models(console: Console) -> None:
    from accelwiz.estimate.models import list_models

    for spec in list_models():
        aliases = f"  (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        console.data(f"{spec.name:<16}{spec.num_parameters:>18,}  {spec.family:<8}{aliases}")
