"""`estimate --compare` shows each strategy as the recommendation would run it (issue 28): the rows were the
workload as asked while the recommendation applied its ladder (checkpointing, a smaller micro-batch), so the
recommended strategy's row and the recommendation disagreed. Now every row carries the ladder's changes for that
strategy alone, and the recommended row is the recommendation's estimate."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from accelwiz.cli import app

# full fine-tuning of a 7B model at 8 x 4096 tokens on one A100: only optimizer offload with checkpointing and a
# smaller micro-batch fits
_CASE = ("estimate", "--model", "qwen2.5-7b", "--system", "1xA100-80GB", "--micro-batch", "8", "--seq-len", "4096",
         "--compare")


def _run(*argv: str) -> dict:
    result = CliRunner().invoke(app, [*argv, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_the_recommended_row_is_the_recommendation() -> None:
    data = _run(*_CASE)
    advice = data["recommendation"]
    assert advice["changes"], "the case must need the ladder"
    row = next(r for r in data["compare"] if r["strategy"]["label"] == advice["strategy"])
    assert row["changes"] == advice["changes"]
    assert (row["micro_batch"], row["gradient_checkpointing"]) == (advice["micro_batch"], True)
    assert row["per_gpu_bytes"]["total"] == data["estimate"]["per_gpu_bytes"]["total"]
    assert row["verdict"] == "fits"


def test_rows_nothing_rescues_stay_as_asked_and_say_so() -> None:
    data = _run(*_CASE)
    single = data["compare"][0]
    assert single["strategy"]["kind"] == "single" and single["changes"] == []
    assert (single["micro_batch"], single["gradient_checkpointing"], single["verdict"]) == (8, False, "does not fit")
    table = CliRunner().invoke(app, list(_CASE)).stdout
    rows = {line.split("  ")[0].strip(): line for line in table.splitlines()}
    assert rows["single GPU"].endswith("as asked")
    assert rows["ZeRO-2 +CPU opt"].endswith("ckpt, mb 4 x2")


def test_a_fixed_flag_is_never_changed_in_a_row() -> None:
    # --no-gradient-checkpointing is the user's: no row turns it on
    data = _run(*_CASE, "--no-gradient-checkpointing")
    assert all(not row["gradient_checkpointing"] for row in data["compare"])
    assert all("gradient checkpointing on" not in row["changes"] for row in data["compare"])


def test_the_plot_s_table_says_what_each_row_carries(tmp_path) -> None:
    page = tmp_path / "memory.html"
    result = CliRunner().invoke(app, [*_CASE, "--plot", str(page)])
    assert result.exit_code in (0, 1), result.output
    html = page.read_text()
    assert "<th>as run</th>" in html
    assert ("<td>gradient checkpointing on; micro-batch 8 -&gt; 4 with gradient accumulation x2 (the same global "
            "batch)</td>") in html
    assert "<td>as asked</td>" in html
