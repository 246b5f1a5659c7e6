"""What `accelwiz estimate` prints: the report (with --compare's table, the trace beside it, the post-training
phases) as text or JSON, the --plot file, and --list-models. The command (cli/estimate.py) parses the options and
calls the use case (estimate/request.py); this renders its result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.cli.common import OutputFormat

if TYPE_CHECKING:
    from accelwiz.console import Console
    from accelwiz.estimate.report import Report
    from accelwiz.estimate.request import Estimated
    from accelwiz.estimate.trace_compare import TraceComparison


def show(console: Console, estimated: Estimated, plot: str | None, output_format: OutputFormat,
          compare: bool = False) -> None:
    """The report (with --compare's table, the trace beside it, the post-training phases) as text or JSON, and
    the plot file."""
    from accelwiz.estimate.posttraining_report import post_json, render_post_text
    from accelwiz.estimate.json_report import render_json
    from accelwiz.estimate.render import render_compare, render_text

    for line in estimated.debug:
        console.debug(line)
    for line in estimated.warnings:
        console.warn(line)
    for line in estimated.notes:
        console.info(line)
    report, traced = estimated.report, estimated.traced
    if plot is not None and traced is not None:
        _plot(console, report, traced, plot)
    elif plot is not None:
        _plot_compare(console, report, plot)
    if output_format is OutputFormat.json:
        data = render_json(report, trace=None if traced is None else traced.as_dict())
        console.data(data if estimated.post is None else post_json(render_json(report), estimated.post))
        return
    console.data(render_text(report))
    if estimated.post is not None:
        console.data("")
        console.data(render_post_text(estimated.post))
    if report.rows is not None and compare:
        console.data("")
        console.data(render_compare(report.rows))
    if traced is not None:
        from accelwiz.estimate.trace_compare import render_comparison

        console.data("")
        console.data(render_comparison(traced))


def _plot(console: Console, report: Report, traced: TraceComparison, path: str) -> None:
    """--plot: the trace's memory timeline beside the GPU's capacity, written whole."""
    from accelwiz.estimate.plot import render_svg, write_plot

    shown, trace = report.shown, traced.trace
    title = (f"{shown.workload.model.name}, micro-batch {shown.workload.micro_batch} x seq {shown.workload.seq_len}: "
             f"one traced step (one process, unsharded)")
    capacity = None if report.target is None else report.target.gpu_bytes
    write_plot(path, render_svg(trace.timeline, title, capacity, shown.runtime))
    console.info(f"wrote {path}")


def _plot_compare(console: Console, report: Report, path: str) -> None:
    """--plot without --trace: memory per GPU per strategy, stacked by component, against the GPU's memory."""
    from accelwiz.estimate.plot import write_plot
    from accelwiz.estimate.plot_compare import compare_table_html, render_compare_svg

    w = report.shown.workload
    title = (f"{w.model.name}, {w.regime}, micro-batch {w.micro_batch} x seq {w.seq_len}: memory per GPU by "
             f"strategy on {report.shown.strategy.world_size} GPU(s), as asked")
    capacity = None if report.target is None else report.target.gpu_bytes
    write_plot(path, render_compare_svg(report.rows or [], title, capacity), title="GPU memory by strategy",
               after=compare_table_html(report.rows or []))
    console.info(f"wrote {path}")


def print_models(console: Console) -> None:
    from accelwiz.modelspec.lookup import list_models

    for spec in list_models():
        aliases = f"  (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        console.data(f"{spec.name:<16}{spec.num_parameters:>18,}  {spec.family:<8}{aliases}")
