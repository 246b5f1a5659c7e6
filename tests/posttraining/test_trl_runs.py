"""TRL's own DPOTrainer and GRPOTrainer launched by the built-in trainer (`--kind dpo|grpo`) on the session's tiny
pretrained checkpoint, on CPU, through `accelwiz run -- --kind ...`: DPO in one process (full and LoRA) and under
2-process ZeRO-2 and ZeRO-3, GRPO under 2-process DDP and ZeRO-3 (with a reference model); the run report records
the kind, the losses, the rewards and how TRL holds the reference model. Bad data and a bad reward are one line and
exit 2, before the launch."""

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


CONFIGS = {
    "single": "distributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\nmixed_precision: 'no'\n",
    "ddp": "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: 'no'\n",
    "zero2": "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: 'no'\ndeepspeed_config:\n"
             "  zero_stage: 2\n  gradient_accumulation_steps: 1\n  gradient_clipping: 1.0\n",
    # zero3_init_flag: TRL loads policy and reference under deepspeed.zero.Init (TrainingArguments' HfDeepSpeedConfig)
    "zero3": "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: 'no'\ndeepspeed_config:\n"
             "  zero_stage: 3\n  zero3_init_flag: true\n  gradient_accumulation_steps: 1\n  gradient_clipping: 1.0\n",
}


def accelwiz_run(config: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`accelwiz run --config NAME.yaml ... -- --kind ...`: the preflight, then `accelerate launch` of the trainer."""
    path = cwd / f"{config}.yaml"
    path.write_text(f"compute_environment: LOCAL_MACHINE\nnum_machines: 1\nmain_process_port: {free_port()}\n"
                    + CONFIGS[config])
    return subprocess.run([sys.executable, "-m", "accelwiz", "run", "--config", str(path), *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=500)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("config", "method", "distributed", "world", "reference"), [
    ("single", "full", "NO", 1, {"wrapper": "LlamaForCausalLM", "zero_stage": None}),
    ("single", "lora", "NO", 1, None),  # the adapter disabled is the reference; PEFT's "all-linear" targets
    ("zero2", "full", "DEEPSPEED", 2, {"wrapper": "DeepSpeedEngine", "zero_stage": 0}),  # a whole copy per rank
    ("zero3", "full", "DEEPSPEED", 2, {"wrapper": "DeepSpeedEngine", "zero_stage": 3}),  # sharded like the policy
])
def test_dpo_trains_and_reports_loss_and_reward_margins(tmp_path: Path, checkpoint: Path, config: str, method: str,
                                                        distributed: str, world: int, reference: dict | None) -> None:
    """TRL's prepare_deepspeed (trl/models/utils.py) runs the reference at stage 0 under ZeRO-2, at 3 under ZeRO-3."""
    data = write_jsonl(tmp_path / "prefs.jsonl", [
        {"prompt": f"The number {i} is", "chosen": " even and small.", "rejected": " a cat on a mat."}
        for i in range(8)])
    done = accelwiz_run(config, "--model", str(checkpoint), "--data", str(data), "--steps", "3",
                        "--micro-batch", "2", "--method", method, "--output-dir", "out", "--", "--kind", "dpo",
                        cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "run_report.json").read_text())
    assert (report["kind"], report["trainer"], report["steps"], report["method"]) == ("dpo", "DPOTrainer", 3, method)
    assert (report["distributed_type"], report["world_size"]) == (distributed, world)
    assert report["reference_model"] == reference
    assert report["losses"][0] == pytest.approx(0.6931, abs=1e-3)  # log 2: policy == reference at step 0
    assert report["final_loss"] < report["losses"][0]
    assert len(report["rewards"]) == 3 and report["rewards"][-1] > 0  # chosen pulled above rejected


@pytest.mark.slow
@pytest.mark.parametrize(("config", "beta", "distributed", "reference"), [
    ("ddp", [], "MULTI_CPU", None),  # TRL's beta 0.0: no reference model
    # beta > 0 under ZeRO-3: generation gathers the sharded policy (ds3_gather_for_generation), the reference is a
    # stage-3 engine whose log-probs give the KL term
    ("zero3", ["--beta", "0.04"], "DEEPSPEED", {"wrapper": "DeepSpeedEngine", "zero_stage": 3}),
])
def test_grpo_trains_under_two_processes_with_a_reward_file(tmp_path: Path, checkpoint: Path, config: str,
                                                            beta: list[str], distributed: str,
                                                            reference: dict | None) -> None:
    data = write_jsonl(tmp_path / "prompts.jsonl", [{"prompt": f"Count to {i}:"} for i in range(8)])
    (tmp_path / "rewards.py").write_text(REWARD)
    done = accelwiz_run(config, "--model", str(checkpoint), "--data", str(data), "--steps", "2", "--micro-batch",
                        "2", "--output-dir", "out", "--", "--kind", "grpo", "--reward", "rewards.py:length_reward",
                        "--num-generations", "4", "--max-completion-length", "8", *beta, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "run_report.json").read_text())
    assert (report["kind"], report["world_size"], report["distributed_type"]) == ("grpo", 2, distributed)
    assert len(report["losses"]) == 2 and len(report["rewards"]) == 2
    assert all(r > 0 for r in report["rewards"])  # len(completion) / 10: every completion has text
    assert report["reference_model"] == reference
    kl = [entry["kl"] for entry in report["log_history"] if "kl" in entry]
    assert (len(kl) == 2) == (reference is not None)  # TRL logs the KL only when it has a reference


PAIR = json.dumps({"prompt": "a", "chosen": "b", "rejected": "c"}) + "\n"
CHAT = [{"role": "user", "content": "b"}]


BAD_DATA = [
    ("dpo", PAIR + json.dumps({"prompt": "a", "chosen": "b"}) + "\n", "prefs.jsonl:2: no `rejected` for --kind dpo"),
    ("grpo", '{"prompt": "a"}\n\n{"prompt": "b"}\n{"question": "c"}\n', "prefs.jsonl:4: no `prompt` for --kind grpo"),
    ("dpo", json.dumps({"prompt": "a", "chosen": 3, "rejected": "c"}), "prefs.jsonl:1: `chosen` neither a non-empty"),
    ("grpo", '{"prompt": ""}\n', "prefs.jsonl:1: `prompt` neither a non-empty string"),
    ("dpo", "", "prefs.jsonl: no records"),  # an empty file
    ("grpo", "\n  \n", "prefs.jsonl: no records"),
    ("dpo", PAIR + '{"prompt": "a", "chosen": "b",\n', "prefs.jsonl:2: not JSON"),
    ("grpo", '{"prompt": "a"}\n["b"]\n', "prefs.jsonl:2: a list, not a JSON object"),
    # Arrow takes one type per column: a chat prompt after a text one would fail in every worker after the launch
    ("grpo", '{"prompt": "a"}\n' + json.dumps({"prompt": CHAT}) + "\n",
     "prefs.jsonl:2: `prompt` is a messages list where line 1 has a string"),
    ("dpo", PAIR.replace("}", ', "id": null}') + json.dumps({"prompt": "a", "chosen": "b", "rejected": "c", "id": 1})
     + "\n"
     + json.dumps({"prompt": "a", "chosen": "b", "rejected": "c", "id": "x"}) + "\n",
     "prefs.jsonl:3: `id` is a string where line 2 has a number"),
    # Dataset.from_list takes the first record's columns: `answer` would never reach the reward
    ("grpo", '\n{"prompt": "a"}\n{"prompt": "b", "answer": "c"}\n',
     "prefs.jsonl:3: `answer` not on the first record (line 2)"),
]


@pytest.mark.parametrize(("kind", "text", "expected"), BAD_DATA)
def test_a_bad_dataset_names_its_first_bad_line(tmp_path: Path, kind: str, text: str, expected: str) -> None:
    from accelwiz.trainer.data import DataError
    from accelwiz.trainer.trl_data import read_trl_records

    data = tmp_path / "prefs.jsonl"
    data.write_text(text)
    with pytest.raises(DataError) as raised:
        read_trl_records(data, kind)
    assert expected in str(raised.value) and "\n" not in str(raised.value) and raised.value.hint


@pytest.mark.parametrize(("kind", "text", "expected"), [BAD_DATA[i] for i in (0, 4, 6, 8)])
def test_a_bad_dataset_is_one_line_and_exit_2_before_the_launch(tmp_path: Path, checkpoint: Path, kind: str,
                                                                text: str, expected: str) -> None:
    data = tmp_path / "prefs.jsonl"
    data.write_text(text)
    (tmp_path / "rewards.py").write_text(REWARD)
    done = accelwiz_run("single", "--model", str(checkpoint), "--data", str(data), "--micro-batch", "2", "--",
                        "--kind", kind, "--reward", "rewards.py:length_reward", "--num-generations", "2",
                        cwd=tmp_path)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], done.stderr[-1500:]
    assert "Traceback" not in done.stderr and not (tmp_path / "accelwiz-run").exists()


@pytest.mark.parametrize(("reward", "expected"), [
    ("rewards.py", "expected FILE.py:FUNCTION"),
    ("rewards.py:missing", "defines no function missing"),
    ("rewards.py:positional", "must accept `completions` and `**kwargs`"),
])
def test_a_bad_reward_is_one_line_and_exit_2(tmp_path: Path, checkpoint: Path, reward: str, expected: str) -> None:
    data = write_jsonl(tmp_path / "prompts.jsonl", [{"prompt": "a"}])
    (tmp_path / "rewards.py").write_text(REWARD + "def positional(completions):\n    return [0.0]\n")
    done = accelwiz_run("single", "--model", str(checkpoint), "--data", str(data), "--micro-batch", "2", "--",
                        "--kind", "grpo", "--reward", reward, "--num-generations", "2", cwd=tmp_path)
    assert done.returncode == 2
    assert expected in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("args", "expected"), [
    (["--num-generations", "3"], "AW801 error the generation batch 4 is not divisible by num_generations 3"),
    (["--num-generations", "1"], "AW801 error num_generations 1: GRPO needs at least 2 generations"),
])
def test_a_grpo_batch_trl_refuses_stops_the_preflight(tmp_path: Path, checkpoint: Path, args: list[str],
                                                      expected: str) -> None:
    """GRPOConfig would raise on both ranks after the launch; run's preflight checks the TRL arguments the
    built-in trainer will hand it (AW801) and does not launch."""
    data = write_jsonl(tmp_path / "prompts.jsonl", [{"prompt": "a"}])
    (tmp_path / "rewards.py").write_text(REWARD)
    done = accelwiz_run("ddp", "--model", str(checkpoint), "--data", str(data), "--micro-batch", "2", "--", "--kind",
                        "grpo", "--reward", "rewards.py:length_reward", *args, cwd=tmp_path)
    assert done.returncode == 1 and expected in done.stderr, done.stderr[-1500:]
    assert "not launching" in done.stderr and "Traceback" not in done.stderr
