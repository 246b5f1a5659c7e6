"""Show a MachineProfile to a person: rich tables for `accelwiz probe`, Markdown for `accelwiz env`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from accelwiz.probe.model import GpuInfo, HostInfo, MachineProfile
from accelwiz.probe.presets import PRESETS, preset_profile
from accelwiz.vocab import GIB


def gib(value: int | None) -> str:
    return "?" if value is None else f"{value / GIB:.1f} GiB"


def yes_no(value: bool | None) -> str:
    return "?" if value is None else "yes" if value else "no"


def gpu_columns(gpus: list[GpuInfo], *, wide: bool) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the GPU table; narrow (80 columns) drops what is empty or only in the JSON."""
    columns: list[tuple[str, Callable[[GpuInfo], str]]] = [
        ("#", lambda g: str(g.index)), ("GPU", lambda g: g.name),
        ("memory", lambda g: gib(g.memory_total_bytes)),
        ("CUDA total", lambda g: gib(g.capacity_bytes)),  # what torch can allocate, what verdicts judge
        ("free", lambda g: gib(g.memory_free_bytes)),
        ("CC", lambda g: g.arch if g.vendor == "amd" and g.arch
         else f"{g.compute_capability[0]}.{g.compute_capability[1]}"),
        ("bf16", lambda g: "yes" if g.native_bf16 else "emul"), ("fp8", lambda g: yes_no(g.fp8)),
        ("NVLink", lambda g: str(g.nvlink_links)), ("MIG", lambda g: yes_no(g.mig_enabled)),
        ("UUID", lambda g: g.uuid or "-"), ("PCI bus", lambda g: g.pci_bus_id or "-"),
    ]
    if not wide:
        unknown = {"free": all(g.memory_free_bytes is None for g in gpus),
                   "MIG": not any(g.mig_enabled for g in gpus), "UUID": True, "PCI bus": True,
                   "CUDA total": True}
        columns = [c for c in columns if not unknown.get(c[0], False)]
    return [name for name, _ in columns], [[cell(g) for _, cell in columns] for g in gpus]


def host_rows(host: HostInfo) -> list[tuple[str, str]]:
    cores = f"{host.cpu_physical_cores or '?'} physical / {host.cpu_logical_cores or '?'} logical"
    rows = [("host", host.hostname or "-"), ("CPU", host.cpu_model or "?"), ("cores", cores),
            ("RAM", f"{gib(host.memory_total_bytes)} total, {gib(host.memory_available_bytes)} available"),
            ("swap", gib(host.swap_total_bytes)), ("NUMA nodes", str(host.numa_nodes or "?"))]
    if host.disk is not None:
        disk = host.disk
        device = f"{disk.device or '?'}, NVMe: {yes_no(disk.is_nvme)}"
        space = f"{gib(disk.free_bytes)} free of {gib(disk.total_bytes)}"
        rows.append(("disk", f"{disk.path}: {space} ({device})"))
    return rows


def summary_rows(profile: MachineProfile) -> list[tuple[str, str]]:
    machines = f"{profile.num_machines} identical nodes" if profile.num_machines > 1 else "1"
    return [("profile", f"{profile.name or '-'} ({profile.source})"), ("machines", machines),
            ("GPUs per node", str(profile.gpu_count)), ("topology", profile.topology.summary),
            ("driver", profile.driver_version or "-"), ("CUDA (driver)", profile.cuda_driver_version or "-"),
            ("torch build", {True: "CUDA", False: "CPU only", None: "?"}[profile.torch_cuda])]


def render_profile(profile: MachineProfile, rich_console: Any) -> None:
    """Print the profile as tables on a rich console."""
    from rich import box
    from rich.table import Table

    def pairs(title: str, rows: Iterable[tuple[str, str]]) -> Table:
        table = Table(title=title, show_header=False, title_justify="left")
        table.add_column(style="bold")
        table.add_column()
        for key, value in rows:
            table.add_row(key, value)
        return table

    rich_console.print(pairs("Machine", summary_rows(profile)))
    if profile.gpus:
        header, rows = gpu_columns(profile.gpus, wide=False)
        gpus = Table(*header, title="GPUs", title_justify="left", box=box.SIMPLE)
        for row in rows:
            gpus.add_row(*row)
        rich_console.print(gpus)
    if len(profile.topology.p2p) > 1:
        matrix = Table("", *(f"GPU{j}" for j in range(len(profile.topology.p2p))), box=box.SIMPLE,
                       title=f"Peer-to-peer ({profile.topology.summary})", title_justify="left")
        for i, row in enumerate(profile.topology.p2p):
            matrix.add_row(f"GPU{i}", *row)
        rich_console.print(matrix)
    rich_console.print(pairs("Host", host_rows(profile.host)))
    if profile.packages:
        packages = ((name, version or "not installed") for name, version in profile.packages.items())
        rich_console.print(pairs("Packages", packages))
    for note in profile.notes:
        rich_console.print(f"note: {note}")


def render_presets(rich_console: Any) -> None:
    from rich import box
    from rich.table import Table

    table = Table("preset", "GPUs", "memory", "CC", "topology", "vCPUs", "RAM",
                  box=box.SIMPLE, pad_edge=False)
    for preset in PRESETS:
        profile = preset_profile(preset)
        gpu = profile.gpus[0]
        nodes = f"{preset.num_machines}x" if preset.num_machines > 1 else ""
        table.add_row(preset.name, f"{nodes}{preset.gpus_per_node}x {preset.gpu}",
                      gib(gpu.memory_total_bytes),
                      f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}", profile.topology.summary,
                      str(preset.vcpus), f"{preset.ram_gib} GiB")
    rich_console.print(table)
    rich_console.print("Host numbers are the published ones of:")
    for preset in PRESETS:
        rich_console.print(f"  {preset.name:<12} {preset.instance}")


def gpu_table_rows(*, sources: bool) -> tuple[list[str], list[list[str]]]:
    """Every GPU of the table (`--system NxKEY` takes its key), for `probe --list-gpus` and docs/gpus.md."""
    from accelwiz.probe.gpus import GPU_MODELS

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:g}"

    header = ["key", "device name", "memory", "CUDA total", "CC / gfx", "bf16", "fp8", "bf16 TFLOP/s",
              "fp8 TFLOP/s", "fp32", "interconnect"] + (["data sheet"] if sources else [])
    rows = []
    for m in GPU_MODELS:
        arch = m.arch if m.vendor == "amd" else f"{m.compute_capability[0]}.{m.compute_capability[1]}"
        memory = f"{m.memory_bytes / GIB:.1f} GiB" + (" (nominal)" if m.memory_nominal else "")
        sixteen = number(m.tflops.get("bf16")) if m.bf16 else (f"fp16 {number(m.tflops.get('fp16'))}"
                                                               if "fp16" in m.tflops else "-")
        rows.append([m.key, m.name, memory, f"{m.cuda_total_bytes / GIB:.1f} GiB", arch, yes_no(m.bf16),
                     yes_no(m.fp8), sixteen, number(m.tflops.get("fp8")), number(m.tflops.get("fp32")),
                     m.interconnect]
                    + ([m.source] if sources else []))
    return header, rows


def render_gpus(rich_console: Any) -> None:
    from rich import box
    from rich.table import Table

    header, rows = gpu_table_rows(sources=False)
    keep = [header.index(c) for c in ("key", "memory", "CC / gfx", "bf16", "fp8", "bf16 TFLOP/s", "fp8 TFLOP/s")]
    table = Table(box=box.SIMPLE, pad_edge=False)
    for i in keep:
        table.add_column(header[i], no_wrap=header[i] == "key")  # the key is what --system takes: never cut
    for row in rows:
        table.add_row(*(row[i] for i in keep))
    rich_console.print(table)
    rich_console.print("Peak dense TFLOP/s from each GPU's data sheet (docs/gpus.md cites them); "
                       "use a key as `--system 8xKEY`.")


def gpu_table_markdown() -> str:
    """docs/gpus.md: the GPU table with each row's data sheet (tests/probe/test_gpu_table.py keeps it current)."""
    intro = ("# GPUs accelwiz knows\n\nEvery key works as `--system NxKEY` (`accelwiz probe --list-gpus` prints "
             "this table); the probe recognises the device names through NVML or, for AMD, AMD SMI. Generated from "
             "`accelwiz/probe/gpu_table_nvidia.py` and `gpu_table_amd.py`. Memory is what the management library "
             "reports (nominal: the data sheet's size); CUDA total is what torch can allocate there, what verdicts "
             "judge (a published reading or the family's rule: docs/gpu-cuda-totals.md). TFLOP/s are peak dense "
             "(no sparsity) figures; GeForce 16-bit figures accumulate in fp32. Precision support: NVIDIA by "
             "compute capability, AMD by gfx target (ROCm's precision-support table).\n")
    header, rows = gpu_table_rows(sources=True)
    return intro + "\n" + markdown_table(header, rows) + "\n"


def markdown_table(header: list[str], rows: Iterable[Iterable[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def profile_markdown(profile: MachineProfile) -> str:
    """The hardware part of `accelwiz env`: every GPU, the P2P matrix, the host, the notes."""
    parts = [markdown_table(["", ""], summary_rows(profile))]
    if profile.gpus:
        parts.append(markdown_table(*gpu_columns(profile.gpus, wide=True)))
    if len(profile.topology.p2p) > 1:
        header = ["", *(f"GPU{j}" for j in range(len(profile.topology.p2p)))]
        rows = ([f"GPU{i}", *row] for i, row in enumerate(profile.topology.p2p))
        parts.append(markdown_table(header, rows))
    parts.append(markdown_table(["", ""], host_rows(profile.host)))
    if profile.notes:
        parts.append("\n".join(f"- {note}" for note in profile.notes))
    return "\n\n".join(parts)
