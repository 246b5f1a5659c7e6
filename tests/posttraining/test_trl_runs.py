"""TRL's own DPOTrainer and GRPOTrainer launched by the built-in trainer (`--kind dpo|grpo`) on the session's tiny
pretrained checkpoint, on CPU: DPO in one process, GRPO under 2-process DDP through `accelerate launch`; the run
report records the kind, the losses and the rewards. Bad data and a bad reward are one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ports import free_port

REPO = Path(__file__).resolve().parents[2]
REWARD = "def length_reward(completions, **kwargs):\n    return [len(c) / 10 for c in completions]\n"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "ACCELERATE_USE_CPU": "true"}


def trainer(*args: str, cwd: Path, launch: Path | None = None) -> subprocess.CompletedProcess:
    head = [sys.executable, "-m"] if launch is None else [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(launch), "-m"]
    return subprocess.run([*head, "accelwiz.trainer.train", *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=400)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow
def test_dpo_trains_in_one_process_and_reports_loss_and_reward_margins(tmp_path: Path, checkpoint: Path) -> None:
    data = write_jsonl(tmp_path / "prefs.jsonl", [
        {"prompt": f"The number {i} is", "chosen": " even and small.", "rejected": " a cat on a mat."}
        for i in range(8)])
    done = trainer("--kind", "dpo", "--model", str(checkpoint), "--data", str(data), "--steps", "3",
                   "--micro-batch", "2", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "run_report.json").read_text())
    assert (report["kind"], report["trainer"], report["steps"]) == ("dpo", "DPOTrainer", 3)
    assert report["losses"][0] == pytest.approx(0.6931, abs=1e-3)  # log 2: policy == reference at step 0
    assert report["final_loss"] < report["losses"][0]
    assert len(report["rewards"]) == 3 and report["rewards"][-1] > 0  # chosen pulled above rejected


@pytest.mark.slow
def test_grpo_trains_under_two_process_ddp_with_a_reward_file(tmp_path: Path, checkpoint: Path) -> None:
    data = write_jsonl(tmp_path / "prompts.jsonl", [{"prompt": f"Count to {i}:"} for i in range(8)])
    (tmp_path / "rewards.py").write_text(REWARD)
    config = tmp_path / "ddp.yaml"
    config.write_text(f"compute_environment: LOCAL_MACHINE\nnum_machines: 1\nmain_process_port: {free_port()}\n"
                      "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: 'no'\n")
    done = trainer("--kind", "grpo", "--model", str(checkpoint), "--data", str(data), "--reward",
                   "rewards.py:length_reward", "--steps", "2", "--micro-batch", "2", "--num-generations", "4",
                   "--max-completion-length", "8", "--output-dir", "out", cwd=tmp_path, launch=config)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "run_report.json").read_text())
    assert (report["kind"], report["world_size"], report["distributed_type"]) == ("grpo", 2, "MULTI_CPU")
    assert len(report["losses"]) == 2 and len(report["rewards"]) == 2
    assert all(r > 0 for r in report["rewards"])  # len(completion) / 10: every completion has text


@pytest.mark.parametrize(("kind", "rows", "expected"), [
    ("dpo", [{"prompt": "a", "chosen": "b", "rejected": "c"}, {"prompt": "a", "chosen": "b"}],
     "prefs.jsonl:2: no `rejected` for --kind dpo"),
    ("grpo", [{"prompt": "a"}, {"prompt": "b"}, {"question": "c"}], "prefs.jsonl:3: no `prompt` for --kind grpo"),
    ("dpo", [{"prompt": "a", "chosen": 3, "rejected": "c"}], "prefs.jsonl:1: `chosen` neither a string"),
])
def test_a_dataset_without_the_columns_names_its_first_bad_line(tmp_path: Path, checkpoint: Path, kind: str,
                                                                rows: list[dict], expected: str) -> None:
    data = write_jsonl(tmp_path / "prefs.jsonl", rows)
    (tmp_path / "rewards.py").write_text(REWARD)
    done = trainer("--kind", kind, "--model", str(checkpoint), "--data", str(data), "--reward",
                   "rewards.py:length_reward", cwd=tmp_path)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], done.stderr[-1500:]
    assert "Traceback" not in done.stderr and not (tmp_path / "accelwiz-run").exists()


@pytest.mark.parametrize(("reward", "expected"), [
    ("rewards.py", "expected FILE.py:FUNCTION"),
    ("rewards.py:missing", "has no function missing"),
    ("rewards.py:positional", "must accept `completions` and `**kwargs`"),
])
def test_a_bad_reward_is_one_line_and_exit_2(tmp_path: Path, checkpoint: Path, reward: str, expected: str) -> None:
    data = write_jsonl(tmp_path / "prompts.jsonl", [{"prompt": "a"}])
    (tmp_path / "rewards.py").write_text(REWARD + "def positional(completions):\n    return [0.0]\n")
    done = trainer("--kind", "grpo", "--model", str(checkpoint), "--data", str(data), "--reward", reward,
                   cwd=tmp_path)
    assert done.returncode == 2
    assert expected in done.stderr and "Traceback" not in done.stderr
