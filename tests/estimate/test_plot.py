"""--trace --plot: the traced step's memory as a self-contained SVG or HTML file, written whole."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from accelwiz.errors import UsageError
from accelwiz.estimate.plot import plot_format, render_svg, write_plot

GIB = 2**30
TIMELINE = (("forward", 1 * GIB, 2 * GIB), ("forward", 3 * GIB, 4 * GIB), ("backward", 2 * GIB, 4 * GIB),
            ("optimizer", 1 * GIB, 4 * GIB))


def test_the_svg_has_both_lines_each_phase_and_the_capacity() -> None:
    svg = render_svg(TIMELINE, "test", capacity=8 * GIB, runtime=GIB // 2)
    root = ET.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polyline")) == 3  # allocated, reserved, reserved + runtime
    texts = " ".join(t.text or "" for t in root.iter(f"{ns}text"))
    assert all(word in texts for word in ("forward", "backward", "optimizer step", "GPU memory 8.0 GiB"))
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing from the network


@pytest.mark.parametrize(("name", "kind"), [("m.svg", "svg"), ("m.HTML", "html"), ("m.htm", "html")])
def test_the_format_follows_the_name(name: str, kind: str) -> None:
    assert plot_format(name) == kind


def test_another_name_or_an_unwritable_path_is_a_usage_error(tmp_path) -> None:
    with pytest.raises(UsageError, match=r"\.svg or \.html"):
        plot_format("mem.png")
    with pytest.raises(UsageError, match="cannot write"):
        write_plot(str(tmp_path / "missing" / "mem.svg"), render_svg(TIMELINE, "t"))
    assert not list(tmp_path.iterdir())  # no half-written file left behind


def test_cli_traces_and_plots_a_tiny_model(cli, tmp_path) -> None:
    config = tmp_path / "tiny" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"model_type": "gpt2", "vocab_size": 1000, "n_embd": 64, "n_layer": 2,
                                  "n_head": 4, "n_positions": 256}))
    out = tmp_path / "mem.html"
    result = cli("estimate", "--model", str(config), "--seq-len", "128", "--strategy", "single",
                 "--gpu-memory", "1GiB", "--trace", "--plot", str(out))
    assert result.exit_code == 0, result.stderr
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "<svg" in page and "reserved (caching allocator)" in page
    assert "GPU memory 1.0 GiB" in page


def test_plot_without_trace_draws_the_strategy_comparison(cli, tmp_path) -> None:
    result = cli("estimate", "--model", "gpt2", "--gpu-memory", "24GiB", "--plot", str(tmp_path / "m.svg"))
    assert result.exit_code == 0 and 'class="part"' in (tmp_path / "m.svg").read_text()  # test_plot_compare.py
