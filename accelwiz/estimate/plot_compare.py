"""`estimate --plot mem.html|mem.svg` (without --trace): the strategy comparison as a chart.

One bar per strategy, fastest first, as `--compare` lists them: the memory one GPU holds at the step's peak,
stacked by what holds it (render.at_peak: the tensors live at the allocated peak, the caching allocator's reserve
beyond them, the CUDA runtime beside them; the parts sum to `--compare`'s total), each bar labelled with that
total and its verdict, against the GPU's memory (solid) and the 90 % up to which a run "fits" (dashed). A
self-contained SVG, or an HTML page around it with the numbers as a table: no script, nothing from the network.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from accelwiz.estimate.render import ROWS, _ROW_LABEL, at_peak
from accelwiz.vocab import HEADROOM

if TYPE_CHECKING:
    from accelwiz.estimate.memory import MemoryEstimate
    from accelwiz.estimate.verdict import MemoryVerdict

GIB = 2**30
LEFT, RIGHT, TOP, BOTTOM = 70, 250, 40, 110
BAR, GAP, HEIGHT = 46, 22, 460
# one colour per component, in stacking order (bottom first)
COLOURS = {"weights": "#1f77b4", "gradients": "#ff7f0e", "optimizer_states": "#2ca02c", "paged_states": "#98df8a",
           "activations": "#d62728",
           "logits": "#9467bd", "temporaries": "#8c564b", "buffers": "#e377c2", "reserve": "#bcbd22",
           "runtime": "#7f7f7f"}
_VERDICT_WORD = {"yes": "fits", "no": "does not fit", "tight": "tight", "?": "no verdict"}

Rows = list[tuple["MemoryEstimate", "MemoryVerdict | None"]]


def render_compare_svg(rows: Rows, title: str, capacity: int | None = None) -> str:
    """The stacked bars of `rows` (estimate, verdict), against `capacity` (one GPU's memory) when known."""
    width = LEFT + RIGHT + len(rows) * (BAR + GAP) + GAP
    span = HEIGHT - TOP - BOTTOM
    top = max([e.per_gpu_total for e, _ in rows] + [capacity or 0]) * 1.1 or 1

    def y(value: float) -> float:
        return TOP + span * (1 - value / top)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
             f'viewBox="0 0 {width} {HEIGHT}" font-family="sans-serif" font-size="12">',
             f"<title>{escape(title)}</title>", f'<text x="{LEFT}" y="20" font-size="14">{escape(title)}</text>']
    for tick in range(6):  # the memory axis in GiB
        value = top * tick / 5
        parts.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value / GIB:.1f}</text>')
    parts.append(f'<text x="14" y="{TOP + span / 2}" transform="rotate(-90 14 {TOP + span / 2})" '
                 'text-anchor="middle">GiB per GPU</text>')
    for i, (estimate, judged) in enumerate(rows):
        parts += _bar(estimate, judged, LEFT + GAP + i * (BAR + GAP), y)
    if capacity:
        for value, dash, label in ((capacity, "", f"GPU memory {capacity / GIB:.1f} GiB"),
                                   (HEADROOM * capacity, ' stroke-dasharray="6 4"',
                                    f"fits below {HEADROOM:.0%}: {HEADROOM * capacity / GIB:.1f} GiB")):
            parts.append(f'<line class="capacity" x1="{LEFT}" x2="{width - RIGHT}" y1="{y(value):.1f}" '
                         f'y2="{y(value):.1f}" stroke="#000"{dash}/>')
            parts.append(f'<text x="{width - RIGHT + 6}" y="{y(value) + 4:.1f}">{escape(label)}</text>')
    for i, row in enumerate(reversed(ROWS)):  # the legend in stacking order, top first
        base = TOP + 60 + 16 * i
        parts.append(f'<rect x="{width - RIGHT + 6}" y="{base - 9}" width="12" height="10" fill="{COLOURS[row]}"/>')
        parts.append(f'<text x="{width - RIGHT + 24}" y="{base}">{escape(_ROW_LABEL.get(row, row))}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _bar(estimate: MemoryEstimate, judged: MemoryVerdict | None, x: float, y) -> list[str]:  # noqa: ANN001
    """One strategy: its components stacked bottom-up, its total and verdict above, its name below."""
    parts, base = [], 0
    for row, value in at_peak(estimate).items():
        if value <= 0:
            continue
        parts.append(f'<rect class="part" data-strategy="{escape(estimate.strategy.short_label)}" '
                     f'data-part="{row}" data-bytes="{value}" x="{x:.1f}" y="{y(base + value):.1f}" width="{BAR}" '
                     f'height="{max(y(base) - y(base + value), 0.5):.1f}" fill="{COLOURS[row]}">'
                     f"<title>{escape(_ROW_LABEL.get(row, row))}: {value / GIB:.2f} GiB</title></rect>")
        base += value
    word = _VERDICT_WORD[judged.short().split(" ")[0]] if judged is not None else "no verdict"
    parts.append(f'<text x="{x + BAR / 2:.1f}" y="{y(base) - 18:.1f}" text-anchor="middle">'
                 f"{estimate.per_gpu_total / GIB:.1f}</text>")
    parts.append(f'<text x="{x + BAR / 2:.1f}" y="{y(base) - 5:.1f}" text-anchor="middle" font-size="10">'
                 f"{escape(word)}</text>")
    label_y = HEIGHT - BOTTOM + 12
    parts.append(f'<text x="{x + BAR / 2:.1f}" y="{label_y}" text-anchor="end" '
                 f'transform="rotate(-40 {x + BAR / 2:.1f} {label_y})">{escape(estimate.strategy.short_label)}</text>')
    return parts


def compare_table_html(rows: Rows) -> str:
    """The numbers under the chart, as `--compare` prints them (GiB per GPU, the total, the verdict and what the
    recommendation's ladder changed for that strategy: recommend.CompareRow)."""
    head = "".join(f"<th>{escape(_ROW_LABEL.get(r, r))}</th>" for r in ROWS)
    body = []
    for row in rows:
        estimate, judged = row
        cells = "".join(f"<td>{value / GIB:.2f}</td>" for value in at_peak(estimate).values())
        verdict = "?" if judged is None else judged.short()
        changes = "; ".join(getattr(row, "changes", ())) or "as asked"
        body.append(f"<tr><th>{escape(estimate.strategy.short_label)}</th>{cells}"
                    f"<td>{estimate.per_gpu_total / GIB:.2f}</td><td>{escape(verdict)}</td>"
                    f"<td>{escape(changes)}</td></tr>")
    return (f'<table border="1" cellspacing="0" cellpadding="3"><tr><th>strategy</th>{head}<th>total</th>'
            f"<th>fits</th><th>as run</th></tr>\n" + "\n".join(body) + "\n</table>")
