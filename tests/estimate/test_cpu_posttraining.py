"""`estimate --kind dpo|grpo` on a machine without GPUs: judged on host RAM as a CPU run, as `check` and `run`
judge the same plan (rules/memory_view.estimate_for), not with the GPU report's loading figure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

CPU_ONLY = Path(__file__).parents[1] / "fixtures" / "systems" / "cpu_only.json"  # 32 GiB of RAM, no GPU


def _host(cli, *flags: str) -> dict:
    result = cli("estimate", "--model", "llama-3.2-1b", "--system", str(CPU_ONLY), "--format", "json", *flags)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("kind", ["dpo", "grpo"])
def test_post_training_on_the_cpu_holds_the_policy_step_and_more(cli, kind):
    sft, post = _host(cli), _host(cli, "--kind", kind, "--method", "lora")
    sft_lora = _host(cli, "--method", "lora")
    # the CPU run's whole step in host RAM (was the GPU report's loading + 2 GiB: 6.6 GiB for a 1B DPO run)
    assert post["estimate"]["host_bytes_per_node"] >= sft_lora["estimate"]["host_bytes_per_node"] * 0.9
    assert sft["estimate"]["host_bytes_per_node"] > sft_lora["estimate"]["host_bytes_per_node"]  # full holds more


def test_the_text_shows_no_negative_part_at_the_peak(cli):
    result = cli("estimate", "--model", "llama-3.2-1b", "--kind", "dpo", "--system", str(CPU_ONLY))
    assert "per process (host RAM)" in result.stdout
    assert not re.search(r"\s-\d", result.stdout), result.stdout
