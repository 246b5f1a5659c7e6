"""Issue 19, item 3: DPO and GRPO plans come out of `init`, pass `check`, carry the estimate phase by phase (the
same number `accelwiz estimate --kind` gives), and a DPO plan from init trains for real under `accelwiz run`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.posttraining.test_trl_runs import REWARD, write_jsonl


def init_then_check(cli, tmp_path: Path, *args: str) -> dict:
    written = cli("init", *args, "--defaults", "-o", str(tmp_path / "accelerate.yaml"))
    assert written.exit_code == 0, written.output
    checked = cli("check", str(tmp_path / "accelerate.yaml"))
    assert checked.exit_code == 0, checked.output
    return yaml.safe_load((tmp_path / "accelerate.plan.yaml").read_text())


# A CPU plan is fp32, as `run` trains it there: TRL's configs turn bf16 on unless told, so the plan's TRL command line
# says `--bf16 False`; on GPUs the plan is bf16.
SYSTEMS = [pytest.param(str(Path(__file__).parents[1] / "fixtures" / "systems" / "cpu_only.json"), id="cpu"),
           pytest.param("1xA100-80GB", id="a100")]


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_dpo_plan_from_init_passes_check(cli, tmp_path, system):
    plan = init_then_check(cli, tmp_path, "--system", system, "--kind", "dpo", "--model", "tiny")
    training = plan["training"]
    # tiny has 256 positions: prompt and completion share them (DPOConfig max_length = 256)
    assert {k: training[k] for k in ("kind", "max_prompt_length", "max_completion_length", "beta",
                                     "sequence_length")} == {"kind": "dpo", "max_prompt_length": 128,
                                                             "max_completion_length": 128, "beta": 0.1,
                                                             "sequence_length": 256}
    assert "num_generations" not in training and "reward" not in training
    # TRL's trainer owns the batch: the TrainingArguments and DPOConfig's own that agree with the plan
    assert training["owner"] == "trainer" and training["trainer_arguments"][-4:] == ["--beta", "0.1", "--max_length",
                                                                                     "256"]
    arguments = training["trainer_arguments"]
    bf16 = arguments[arguments.index("--bf16"):][:2]
    assert bf16 == (["--bf16", "False"] if training["precision"] == "fp32" else ["--bf16", "--max_grad_norm"])


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_grpo_plan_with_a_reward_file_from_init_passes_check(cli, tmp_path, monkeypatch, system):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rewards.py").write_text(REWARD)
    plan = init_then_check(cli, tmp_path, "--system", system, "--kind", "grpo", "--model", "tiny", "--reward",
                           "rewards.py:length_reward")
    training = plan["training"]
    # one process, micro-batch 1: the accumulation defaults to 2 so that 2 completions per prompt divide the batch
    assert (training["kind"], training["reward"], training["num_generations"], training["gradient_accumulation"],
            training["beta"]) == ("grpo", "rewards.py:length_reward", 2, 2, 0.0)


def test_kind_needs_a_model_and_a_bad_reward_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    no_model = cli("init", "--kind", "dpo", "--model", "", "--defaults")
    assert no_model.exit_code == 2 and "answer `kind: dpo` cannot apply" in no_model.stderr
    (tmp_path / "rewards.py").write_text(REWARD)
    typo = cli("init", "--kind", "grpo", "--model", "tiny", "--reward", "rewards.py:lenght_reward", "--defaults")
    assert typo.exit_code == 2 and "rewards.py defines no function lenght_reward" in typo.stderr
    assert "Traceback" not in typo.output and list(tmp_path.iterdir()) == [tmp_path / "rewards.py"]


def test_the_plan_records_the_estimate_that_estimate_kind_gives(cli, tmp_path):
    """One vocabulary: init's DPO estimate on 8 H100s is `accelwiz estimate --kind dpo`'s, to the byte, with its
    phases in the YAML header."""
    plan = init_then_check(cli, tmp_path, "--system", "8xH100-80GB", "--model", "llama-3.2-1b", "--kind", "dpo",
                           "--method", "lora", "--strategy", "ddp")
    estimated = cli("estimate", "--model", "llama-3.2-1b", "--kind", "dpo", "--lora", "--lora-rank", "16",
                    "--micro-batch", "1", "--max-prompt-length", "512", "--max-completion-length", "512",
                    "--system", "8xH100-80GB", "--strategy", "ddp", "--gradient-checkpointing", "--precision", "mixed",
                    "--format", "json")
    assert estimated.exit_code == 0, estimated.output
    report = json.loads(estimated.stdout)
    assert plan["estimate"]["per_gpu_bytes"] == report["estimate"]["per_gpu_bytes"]["total"]
    assert plan["estimate"]["phase"] == report["estimate"]["peak_phase"]
    header = (tmp_path / "accelerate.yaml").read_text()
    assert "# Estimate by phase (GiB allocated per GPU, DDP): loading" in header
    assert "reference: the policy with its adapter disabled (PEFT), no second copy" in header


@pytest.mark.slow
def test_a_dpo_plan_from_init_trains_under_run(tmp_path: Path, checkpoint: Path) -> None:
    """`init --kind dpo --model CHECKPOINT --defaults`, then `accelwiz run` with the data alone: TRL's DPOTrainer
    trains what the plan says (its kind, lengths and beta) on the session's tiny pretrained checkpoint."""
    import os
    import subprocess
    import sys

    from tests.posttraining.test_trl_runs import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def accelwiz(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "accelwiz", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=500)

    made = accelwiz("init", "--kind", "dpo", "--model", str(checkpoint), "--defaults")
    assert made.returncode == 0, made.stderr[-2000:]
    data = write_jsonl(tmp_path / "prefs.jsonl", [
        {"prompt": f"The number {i} is", "chosen": " even and small.", "rejected": " a cat on a mat."}
        for i in range(4)])
    done = accelwiz("run", "--config", "accelerate.yaml", "--data", str(data), "--steps", "2", "--output-dir", "out")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "run_report.json").read_text())
    assert (report["kind"], report["trainer"], report["steps"]) == ("dpo", "DPOTrainer", 2)
    assert (report["max_prompt_length"], report["max_completion_length"]) == (128, 128)  # from the plan
    assert report["losses"][0] == pytest.approx(0.6931, abs=1e-3)  # log 2: policy == reference at step 0
