"""`estimate --plot FILE` without --trace: the strategy comparison as a chart, parsed back from the file.

Each bar's stacked parts must add up to the total `--compare --format json` prints for that strategy, in the same
order, with the GPU's memory and the 90 % line drawn at the target's bytes; the page loads nothing.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

NS = "{http://www.w3.org/2000/svg}"
ARGS = ("--model", "llama-8b", "--system", "8xH100-80GB", "--micro-batch", "4", "--seq-len", "4096",
        "--gradient-checkpointing")


def bars(svg: ET.Element) -> dict[str, int]:
    """strategy -> the sum of its stacked parts' bytes, in drawing order."""
    totals: dict[str, int] = {}
    for rect in svg.iter(f"{NS}rect"):
        if rect.get("class") == "part":
            totals[rect.get("data-strategy")] = totals.get(rect.get("data-strategy"), 0) + int(rect.get("data-bytes"))
    return totals


@pytest.mark.parametrize("name", ["cmp.html", "cmp.svg"])
def test_the_chart_has_the_numbers_of_compare(cli, tmp_path, name) -> None:
    out = tmp_path / name
    drawn = cli("estimate", *ARGS, "--plot", str(out))
    assert drawn.exit_code == 0, drawn.stderr
    assert f"wrote {out}" in drawn.stderr and "GiB per GPU by strategy" not in drawn.stdout  # the table: --compare's
    compared = json.loads(cli("estimate", *ARGS, "--compare", "--format", "json").stdout)
    text = out.read_text()
    svg = ET.fromstring(re.search(r"<svg.*</svg>", text, re.S).group(0))
    from accelwiz.estimate.strategy import Strategy

    expected = {Strategy(**{k: v for k, v in row["strategy"].items() if k != "label"}).short_label:
                row["per_gpu_bytes"]["total"] for row in compared["compare"]}
    assert bars(svg) == expected and list(bars(svg)) == list(expected)  # same totals, fastest first
    lines = [line for line in svg.iter(f"{NS}line") if line.get("class") == "capacity"]
    assert len(lines) == 2  # the GPU's memory and the 90 % "fits" line
    labels = " ".join(t.text or "" for t in svg.iter(f"{NS}text"))
    gpu = compared["target"]["gpu_memory_bytes"]
    assert f"GPU memory {gpu / 2**30:.1f} GiB" in labels and f"fits below 90%: {0.9 * gpu / 2**30:.1f} GiB" in labels
    assert "does not fit" in labels and "fits" in labels.replace("does not fit", "")  # DDP does not, ZeRO-1 fits
    assert "http" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # self-contained
    if name.endswith(".html"):
        assert text.startswith("<!doctype html>") and text.count("<tr>") == len(expected) + 1


def test_plot_of_a_dpo_run_is_refused_in_one_line(cli, tmp_path) -> None:
    result = cli("estimate", "--model", "gpt2", "--kind", "dpo", "--plot", str(tmp_path / "m.html"))
    assert result.exit_code == 2 and "--plot show the SFT step" in result.stderr
    assert not list(tmp_path.iterdir())


def test_plot_on_a_machine_without_gpu_says_why(cli, tmp_path) -> None:
    from tests.profiles import machine

    profile = tmp_path / "cpu.json"
    profile.write_text(machine(ram_gib=16).model_dump_json())
    result = cli("estimate", "--model", "tiny", "--system", str(profile), "--plot", str(tmp_path / "m.html"))
    assert result.exit_code == 2 and "has no GPU" in result.stderr and not (tmp_path / "m.html").exists()
