"""`accelwiz init --system S --model M --defaults` for common machines and models: it writes files that `check`
passes (with the plan beside them), or, only where even QLoRA with offload cannot fit, exits 1 with one
"nothing fits; what would" line and writes nothing."""

from __future__ import annotations

import pytest
import yaml

SYSTEMS = ("1xRTX4090", "1xA100-80GB", "4xA100-40GB", "8xH100-80GB", "2x8xH100-80GB")
MODELS = ("gpt2", "llama-3.2-1b", "llama-3.1-8b", "qwen2.5-32b", "llama-3.1-70b")


def _qlora_with_offload_fits(system_name: str, model: str) -> bool:
    """Independently of the wizard's flow: does any costed strategy fit QLoRA at the shortest sequence tried?"""
    from accelwiz.probe.profiles import load_system
    from accelwiz.wizard.costing import plan_for
    from accelwiz.wizard.fallbacks import SHORTER_SEQUENCES

    system = load_system(system_name)
    answers = {"model": model, "regime": "qlora", "seq_len": min(SHORTER_SEQUENCES), "micro_batch": 1,
               "gradient_checkpointing": True, "gpus": system.gpu_count, "num_machines": system.num_machines}
    plan = plan_for(answers, system)
    return plan is not None and plan.best_option(nvme=False) is not None


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("system", SYSTEMS)
def test_defaults_write_files_that_check_passes(cli, tmp_path, monkeypatch, system, model):
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", system, "--model", model, "--defaults", "-o", "plan.yaml")
    if result.exit_code == 1 and "nothing fits" in result.stderr:
        assert not _qlora_with_offload_fits(system, model), result.stderr
        assert [line for line in result.stderr.splitlines() if line.startswith("error:")] == [
            next(line for line in result.stderr.splitlines() if "nothing fits" in line)]
        assert "what would" in result.stderr
        assert list(tmp_path.iterdir()) == []
        return
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "plan.plan.yaml").is_file()
    config = yaml.safe_load((tmp_path / "plan.yaml").read_text())
    plan = yaml.safe_load((tmp_path / "plan.plan.yaml").read_text())
    machines, gpus = (2, 8) if system.startswith("2x8") else (1, int(system.split("x")[0]))
    assert (config["num_machines"], config["num_processes"]) == (machines, machines * gpus)
    assert (plan["system"]["machines"], plan["system"]["gpus_per_machine"]) == (machines, gpus)
    assert plan["estimate"]["verdict"] in ("fits", "tight")
    checked = cli("check", "plan.yaml")
    assert checked.exit_code == 0, checked.stdout + checked.stderr


# estimate_posttraining's phases replace estimate_memory's with the fused head's forward/backward/optimizer and drop
# its `loading` phase: ZeRO-2 + CPU offload "fits" GRPO at 64.8 GiB while loading the 32B model needs 122 GiB per
# GPU, which AW501 (the SFT step, loading included) sees, so init refuses its own pick (estimate/posttraining.py).
LOADING_DROPPED = pytest.mark.xfail(strict=True, reason="estimate_posttraining drops the loading phase")
POST_CASES = [pytest.param(system, model, kind) for system in SYSTEMS
              for model in ("llama-3.2-1b", "llama-3.1-8b", "qwen2.5-32b") for kind in ("dpo", "grpo")]


@pytest.mark.parametrize(("system", "model", "kind"), POST_CASES)
def test_dpo_and_grpo_defaults_write_files_that_check_passes(cli, tmp_path, monkeypatch, system, model, kind):
    """Issue 19: `init --kind dpo|grpo --defaults` writes a plan of that kind that `check` passes, its estimate
    phase by phase in the header, or says nothing fits and writes nothing."""
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", system, "--model", model, "--kind", kind, "--defaults", "-o", "plan.yaml")
    if result.exit_code == 1 and "nothing fits" in result.stderr:
        assert "not even LoRA" in result.stderr and "QLoRA" not in result.stderr  # run trains DPO/GRPO full or LoRA
        assert list(tmp_path.iterdir()) == []
        return
    assert result.exit_code == 0, result.stderr
    plan = yaml.safe_load((tmp_path / "plan.plan.yaml").read_text())
    assert (plan["training"]["kind"], plan["estimate"]["verdict"] in ("fits", "tight")) == (kind, True)
    assert plan["fine_tuning"]["method"] in ("full", "lora")
    assert f"peak at {plan['estimate']['phase']}" in (tmp_path / "plan.yaml").read_text()
    # TRL's trainer owns the batch: the plan records the TrainingArguments and TRL's own that agree with it, and
    # the files are checked with them, as the TRL command line will run (`check` alone judges a DPO/GRPO plan with
    # TRL's defaults, per_device_train_batch_size 8 included, not the plan's training.trainer_arguments)
    arguments = plan["training"]["trainer_arguments"]
    assert plan["training"]["owner"] == "trainer" and "--per_device_train_batch_size" in arguments
    assert "--max_length" in arguments if kind == "dpo" else "--num_generations" in arguments
    checked = cli("check", "plan.yaml", "--", *arguments)
    assert checked.exit_code == 0, checked.stdout + checked.stderr
