"""init's YAML header for a plan on a machine without GPUs (issue 28): the host-RAM estimate and its verdict, the
same words `accelwiz estimate --config` prints for the plan init wrote (was 'Memory: not estimated (no GPU...)')."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CPU_ONLY = Path(__file__).parents[1] / "fixtures" / "systems" / "cpu_only.json"  # 32 GiB of RAM, no GPU


@pytest.mark.parametrize("processes,kind", [(1, "sft"), (2, "sft"), (1, "dpo")])
def test_the_header_judges_host_ram_as_estimate_does(cli, tmp_path, monkeypatch, processes, kind):
    # DPO: the policy with its reference model, as estimate costs it (the SFT step alone said 0.7 GiB, not 2.0)
    monkeypatch.chdir(tmp_path)
    made = cli("init", "--model", "tiny", "--kind", kind, "--defaults", "--system", str(CPU_ONLY), "--processes",
               str(processes), "-o", "cpu.yaml")
    assert made.exit_code == 0, made.output
    memory = next(line for line in Path("cpu.yaml").read_text().splitlines() if line.startswith("# Memory: "))
    match = re.fullmatch(rf"# Memory: CPU, {processes} process\(es\) per machine: (fits: host RAM ([\d.]+) GiB of "
                         r"32\.0 GiB per machine \(\d+%\)) \(tiny, .*micro-batch \d+\)", memory)
    assert match, memory
    estimated = cli("estimate", "--config", "cpu.yaml")
    assert estimated.exit_code == 0, estimated.output
    assert match[1] in estimated.stdout.splitlines()  # the verdict line, word for word


def test_two_processes_hold_more_than_one(cli, tmp_path, monkeypatch):
    # the number is the estimate's for these answers, not a constant
    monkeypatch.chdir(tmp_path)
    held = []
    for processes in (1, 2):
        cli("init", "--model", "tiny", "--defaults", "--system", str(CPU_ONLY), "--processes", str(processes),
            "-o", f"p{processes}.yaml")
        header = Path(f"p{processes}.yaml").read_text()
        held.append(float(re.search(r"host RAM ([\d.]+) GiB of", header)[1]))
    assert held[1] > held[0]
