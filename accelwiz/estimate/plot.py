"""`estimate --trace --plot mem.svg|mem.html`: GPU memory over one traced step, allocated and reserved (without
--trace, `--plot` draws the strategy comparison: plot_compare.py).

The timeline is the caching-allocator replay of the trace's allocation stream (allocator.py), after every
allocation and free of the second step (the one with optimizer states): the allocated line (the tensors)
and the reserved line (what the allocator holds), phases shaded and named, and the GPU's capacity as a
dashed line when there is a target. A self-contained SVG (or an HTML page around it): no script, no font or
style from the network. The file is written whole or not at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from html import escape
from pathlib import Path

from accelwiz.errors import UsageError

WIDTH, HEIGHT = 900, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 50
_PHASE_FILL = {"forward": "#eef4fb", "backward": "#fbf3ea", "optimizer": "#eefaf0"}
_PHASE_LABEL = {"forward": "forward", "backward": "backward", "optimizer": "optimizer step"}
GIB = 2**30


def plot_format(path: str) -> str:
    """'svg' or 'html' from the file name; anything else is a usage error."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".svg", ".html", ".htm"):
        raise UsageError(f"--plot {path}: the plot is written as .svg or .html", hint="pass e.g. --plot mem.html")
    return "svg" if suffix == ".svg" else "html"


def render_svg(timeline: tuple[tuple[str, int, int], ...], title: str, capacity: int | None = None,
               runtime: int = 0) -> str:
    """The step's allocated and reserved bytes (plus `runtime`, drawn as its own line) against the capacity."""
    if not timeline:
        raise UsageError("the trace recorded no allocations to plot", hint="trace a training step (--trace)")
    frame = _Frame(max(max(r for _, _, r in timeline) + runtime, capacity or 0) * 1.08, max(len(timeline) - 1, 1))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
             f'<title>{escape(title)}</title>',
             f'<text x="{LEFT}" y="20" font-size="14">{escape(title)}</text>',
             *_phase_bands(timeline, frame), *_memory_axis(frame), *_lines(timeline, frame, capacity, runtime),
             *_legend(runtime),
             f'<text x="{LEFT}" y="{HEIGHT - 8}" fill="#555">allocations and frees of one training step, '
             'in order (replayed through the caching-allocator model)</text>',
             "</svg>"]
    return "\n".join(parts)


@dataclass(frozen=True)
class _Frame:
    """The plot area: `top` bytes at its top edge, `count` steps across."""

    top: float
    count: int

    def x(self, i: int) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * i / self.count

    def y(self, value: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - value / self.top)


def _phase_bands(timeline: tuple[tuple[str, int, int], ...], frame: _Frame) -> list[str]:
    """One shaded, named band per run of the same phase."""
    parts, start, x = [], 0, frame.x
    for end in range(1, len(timeline) + 1):
        if end == len(timeline) or timeline[end][0] != timeline[start][0]:
            phase = timeline[start][0]
            parts.append(f'<rect x="{x(start):.1f}" y="{TOP}" width="{max(x(end - 1) - x(start), 1):.1f}" '
                         f'height="{HEIGHT - TOP - BOTTOM}" fill="{_PHASE_FILL.get(phase, "#f4f4f4")}"/>')
            parts.append(f'<text x="{x(start) + 4:.1f}" y="{TOP + 14}" fill="#555">'
                         f'{escape(_PHASE_LABEL.get(phase, phase))}</text>')
            start = end
    return parts


def _memory_axis(frame: _Frame) -> list[str]:
    """Six grid lines labelled in GiB, and the axis title."""
    parts, middle = [], TOP + (HEIGHT - TOP - BOTTOM) / 2
    for tick in range(0, 6):
        value = frame.top * tick / 5
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{frame.y(value):.1f}" y2="{frame.y(value):.1f}" '
                     'stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{frame.y(value) + 4:.1f}" text-anchor="end">{value / GIB:.1f}</text>')
    parts.append(f'<text x="14" y="{middle}" transform="rotate(-90 14 {middle})" text-anchor="middle">GiB per GPU'
                 '</text>')
    return parts


def _lines(timeline: tuple[tuple[str, int, int], ...], frame: _Frame, capacity: int | None,
           runtime: int) -> list[str]:
    """The allocated and reserved lines, reserved + runtime where there is one, the capacity dashed."""
    x, y = frame.x, frame.y
    parts = []
    for colour, column in (("#1f77b4", 1), ("#d62728", 2)):
        points = " ".join(f"{x(i):.1f},{y(point[column]):.1f}" for i, point in enumerate(timeline))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points}"/>')
    if runtime:
        points = " ".join(f"{x(i):.1f},{y(point[2] + runtime):.1f}" for i, point in enumerate(timeline))
        parts.append(f'<polyline fill="none" stroke="#9467bd" stroke-width="1" points="{points}"/>')
    if capacity:
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(capacity):.1f}" y2="{y(capacity):.1f}" '
                     'stroke="#000" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{LEFT + 4}" y="{y(capacity) + 14:.1f}">GPU memory {capacity / GIB:.1f} GiB</text>')
    return parts


def _legend(runtime: int) -> list[str]:
    """The lines' names, stacked at the top right, inside the frame."""
    legend = [("allocated (tensors)", "#1f77b4"), ("reserved (caching allocator)", "#d62728")]
    if runtime:
        legend.append((f"reserved + runtime ({runtime / GIB:.2f} GiB: CUDA context, cuBLAS, NCCL)", "#9467bd"))
    parts = []
    for i, (label, colour) in enumerate(legend):
        base, offset = TOP + 40 + 16 * i, WIDTH - RIGHT - 420
        parts.append(f'<line x1="{offset}" x2="{offset + 20}" y1="{base}" y2="{base}" stroke="{colour}" '
                     'stroke-width="2"/>')
        parts.append(f'<text x="{offset + 26}" y="{base + 4}">{escape(label)}</text>')
    return parts


def write_plot(path: str, svg: str, title: str = "GPU memory over one step", after: str = "") -> None:
    """Write the SVG (or an HTML page around it, `after` below the chart) atomically: a temporary file beside
    it, then renamed."""
    kind = plot_format(path)
    text = svg if kind == "svg" else (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{escape(title)}</title></head>\n'
        f"<body>\n{svg}\n{after}</body></html>\n"
    )
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UsageError(f"cannot write --plot {path}: {exc.strerror or exc}", hint="pass a writable path") from None
