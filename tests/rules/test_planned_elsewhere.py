"""issue 28: a plan made for a GPU machine, checked on a machine without GPUs, is told so, not "offload less"."""

from __future__ import annotations

from pathlib import Path

CPU_ONLY = str(Path(__file__).parents[1] / "fixtures" / "systems" / "cpu_only.json")


def test_an_8xh100_plan_on_a_cpu_machine_names_the_machine_it_was_planned_for(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-70b", "--strategy", "zero3", "--defaults",
               "-o", "z.yaml")
    assert made.exit_code == 0, made.stderr
    on_gpus = cli("check", "z.yaml", "--select", "AW50")
    assert on_gpus.exit_code == 0 and "AW502" not in on_gpus.stdout  # fits the machine it was planned for
    here = cli("check", "z.yaml", "--system", CPU_ONLY, "--select", "AW502,AW506")
    assert "AW502" in here.stdout or "AW506" in here.stdout
    assert "the plan is for 8xH100-80GB (1 x 8 GPU(s)) and this machine has no GPU" in here.stdout
    assert "accelwiz check z.yaml --system 8xH100-80GB" in here.stdout  # the file judged, pasteable
    assert "Offload less" not in here.stdout

