"""issue 31: `init --defaults` on a machine without GPUs judges the CPU run on host RAM as `estimate` does and walks
estimate's CPU ladder (gradient checkpointing, micro-batch 1, one process, LoRA; QLoRA needs a GPU), writing the
first plan that fits; where nothing does, one line says so and names the RAM that would (was: AW502 "24.0 GiB of
host RAM ... exceeds the machine's 23.5 GiB", then "the generated configs have 1 error(s); nothing was written").

The RAM of each saved profile is placed between two of the estimator's own figures, read through `estimate
--config` of a plan init wrote, so no test depends on this machine's RAM or on a hard-coded estimate."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from accelwiz.vocab import GIB, HEADROOM

CPU_ONLY = Path(__file__).parents[1] / "fixtures" / "systems" / "cpu_only.json"
MODEL = "llama-3.2-1b"


def profile(folder: Path, ram_bytes: float, name: str) -> str:
    """The saved CPU-only profile with `ram_bytes` of RAM."""
    data = json.loads(CPU_ONLY.read_text())
    data["host"]["memory_total_bytes"] = int(ram_bytes)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def need(cli, folder: Path, **answers) -> int:
    """Host RAM per machine `estimate --config` gives the CPU plan of these answers (planned on a roomy machine)."""
    roomy = profile(folder, 4096 * GIB, "roomy")
    name = "_".join(f"{k}-{v}" for k, v in answers.items())
    (folder / f"{name}.answers.yaml").write_text("".join(f"{k}: {v}\n" for k, v in answers.items()))
    made = cli("init", "--model", MODEL, "--system", roomy, "--answers", str(folder / f"{name}.answers.yaml"),
               "--defaults", "-o", str(folder / f"{name}.yaml"))
    assert made.exit_code == 0, made.stderr
    estimated = cli("estimate", "--config", str(folder / f"{name}.yaml"), "--format", "json")
    return int(json.loads(estimated.stdout)["estimate"]["host_bytes_per_node"])


def between(low: int, high: int) -> float:
    """RAM on which `low` fits with the headroom and `high` does not even run (a tight plan runs, with AW506)."""
    assert low / HEADROOM < high
    return (low / HEADROOM + high) / 2


def plan_of(path: Path) -> str:
    return path.with_name(path.stem + ".plan.yaml").read_text()


def test_gradient_checkpointing_is_chosen_where_it_is_what_fits(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    full = need(cli, tmp_path, regime="full", gradient_checkpointing="false")
    checkpointed = need(cli, tmp_path, regime="full", gradient_checkpointing="true")
    box = profile(tmp_path, between(checkpointed, full), "box")
    made = cli("init", "--model", MODEL, "--system", box, "--defaults", "-o", "a.yaml")
    assert made.exit_code == 0, made.stderr
    assert "chose gradient_checkpointing: true" in made.stderr
    assert f"with gradient checkpointing, fits: host RAM {checkpointed / GIB:.1f} GiB" in made.stderr
    assert f"as asked, does not fit: host RAM {full / GIB:.1f} GiB" in made.stderr
    assert "method: full" in plan_of(tmp_path / "a.yaml")
    checked = cli("check", "a.yaml", "--system", box)
    assert checked.exit_code == 0 and "AW502" not in checked.stdout, checked.stdout


def test_lora_is_the_default_where_checkpointing_is_not_enough(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    checkpointed = need(cli, tmp_path, regime="full", gradient_checkpointing="true")
    lora = need(cli, tmp_path, regime="lora", gradient_checkpointing="false")
    box = profile(tmp_path, between(lora, checkpointed), "box")
    made = cli("init", "--model", MODEL, "--system", box, "--defaults", "-o", "a.yaml")
    assert made.exit_code == 0, made.stderr
    assert "How will you fine-tune it? lora" in made.stderr
    assert f"full fine-tuning needs {checkpointed / GIB:.1f} GiB even with gradient checkpointing" in made.stderr
    assert "method: lora" in plan_of(tmp_path / "a.yaml")
    assert cli("check", "a.yaml", "--system", box).exit_code == 0


def test_where_nothing_fits_one_line_names_the_ram_that_would_and_it_does(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    small = profile(tmp_path, 2 * GIB, "small")
    refused = cli("init", "--model", MODEL, "--system", small, "--defaults", "-o", "a.yaml")
    assert refused.exit_code == 1 and not list(tmp_path.glob("a.*"))
    said = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert len(said) == 1 and "nothing fits this machine's RAM" in said[0], refused.stderr
    assert "not even with gradient checkpointing + LoRA" in said[0] and "QLoRA needs a GPU" in said[0]
    assert "the generated configs have" not in refused.stderr
    would = float(re.search(r"what would: a machine with ([\d.]+) GiB of RAM", said[0])[1])
    made = cli("init", "--model", MODEL, "--system", profile(tmp_path, would * GIB, "would"), "--defaults",
               "-o", "a.yaml")
    assert made.exit_code == 0, made.stderr


def test_given_answers_are_not_changed(cli, tmp_path, monkeypatch):
    # --method full is the user's: the ladder may add checkpointing, never switch to LoRA
    monkeypatch.chdir(tmp_path)
    checkpointed = need(cli, tmp_path, regime="full", gradient_checkpointing="true")
    lora = need(cli, tmp_path, regime="lora", gradient_checkpointing="false")
    box = profile(tmp_path, between(lora, checkpointed), "box")
    refused = cli("init", "--model", MODEL, "--system", box, "--method", "full", "--defaults", "-o", "a.yaml")
    assert refused.exit_code == 1 and "nothing fits this machine's RAM" in refused.stderr
    assert "LoRA" not in refused.stderr.split("what would")[0]


def test_this_machine(cli, tmp_path, monkeypatch):
    # the newcomer's command as typed: a plan its own check passes here, or the one line of what would
    monkeypatch.chdir(tmp_path)
    made = cli("init", "--defaults", "--model", MODEL, "--system", "local")
    assert "the generated configs have" not in made.stderr
    from accelwiz.probe.profiles import load_system

    if load_system("local").gpus:
        pytest.skip("this machine has GPUs: the CPU plan is not what init makes here")
    if made.exit_code == 1:
        assert "nothing fits this machine's RAM" in made.stderr
        return
    assert made.exit_code == 0, made.stderr
    checked = cli("check", "accelerate.yaml", "--system", "local", "--select", "AW502")
    assert checked.exit_code == 0, checked.stdout


def test_the_first_questions_cost_each_choice_on_host_ram(tmp_path):
    from accelwiz.probe.profiles import load_system
    from accelwiz.wizard.fine_tuning import regime_choices
    from accelwiz.wizard.posttraining import kind_choices

    box = load_system(profile(tmp_path, 1 * GIB, "box"))
    kinds = {c.value.value: c.label for c in kind_choices({"model": MODEL}, box)}
    assert all(": does not fit (" in label and "of 1.0 GiB host RAM" in label for label in kinds.values()), kinds
    roomy = load_system(profile(tmp_path, 4096 * GIB, "roomy"))
    methods = {c.value.value: c.label for c in regime_choices({"model": MODEL}, roomy)}
    assert re.search(r": full fine-tuning, [\d.]+ of 4096.0 GiB host RAM$", methods["full"]), methods
    assert methods["qlora"].endswith(": needs a GPU")
