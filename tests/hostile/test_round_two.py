"""Issue 32's reads, reward files and internal errors, each reproduced as the attack ran it: every one is now a
one-line refusal (exit 2) or a finding, within the test's alarm, never a hang, a MemoryError or a traceback.
Commands run in-process under an alarm (tests/hostile/mutants.run_command) where they could hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.mutants import run_command

REPO = Path(__file__).resolve().parents[2]
BIG = str(10**400)
DEEPSPEED_YAML = "distributed_type: DEEPSPEED\nnum_processes: 1\ndeepspeed_config:\n  zero_stage: 2\n"
SINGLE = 'distributed_type: "NO"\nnum_processes: 1\nmixed_precision: "no"\nuse_cpu: true\n'


@pytest.fixture()
def specials(tmp_path):  # noqa: ANN201 - {label: path}
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    return {"fifo": fifo, "/dev/zero": Path("/dev/zero")}


def _ends(label: str, argv: list[str], cwd: Path | None = None):  # noqa: ANN202 - the CliRunner result
    """The command ends under the alarm (no hang), then runs again for its text."""
    from typer.testing import CliRunner

    from accelwiz.cli import app

    outcome = run_command(label, argv, timeout=60)
    assert outcome.ok and outcome.exit_code is not None, (label, outcome)
    return CliRunner().invoke(app, argv)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_the_trainers_deepspeed_file_is_read_bounded(tmp_path, specials, special):
    """`check b.yaml -- --deepspeed FIFO` blocked forever; /dev/zero ended in MemoryError."""
    config = tmp_path / "b.yaml"
    config.write_text(DEEPSPEED_YAML)
    result = _ends("check --deepspeed", ["check", str(config), "--", "--deepspeed", str(specials[special])])
    assert result.exit_code == 1, result.stderr
    assert "AW701" in result.stdout and "not a regular file; nothing was read" in result.stdout, result.stdout


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_run_dry_run_data_is_sampled_from_a_regular_file_only(tmp_path, specials, special, monkeypatch):
    """`run --dry-run --data FIFO.jsonl` blocked; for SFT `--data /dev/zero` passed the dry run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "single.yaml").write_text(SINGLE)
    argv = ["run", "--config", "single.yaml", "--model", "tiny", "--dry-run", "--data", str(specials[special])]
    result = _ends("run --data", argv)
    assert result.exit_code == 2, result.stderr
    assert "not a regular file; nothing was read" in result.stderr, result.stderr


def test_a_data_file_is_judged_by_its_sample(tmp_path):
    """A bad record past the first MiB is the workers' to find; one inside it is named by line."""
    from accelwiz.trainer.data import SAMPLE_BYTES, DataError, sample_records

    good = '{"text": "' + "a" * 1000 + '"}\n'
    path = tmp_path / "d.jsonl"
    path.write_text(good * (SAMPLE_BYTES // len(good) + 10) + "not json\n")
    assert 1000 < len(sample_records(path)) < SAMPLE_BYTES // len(good) + 5
    path.write_text(good + "not json\n")
    with pytest.raises(DataError, match=r"d.jsonl:2: not JSON"):
        sample_records(path)


def test_a_huge_training_script_is_not_read_whole(tmp_path):
    from accelwiz.config.trainer_script import trainer_arguments_for_script

    script = tmp_path / "train.py"
    with open(script, "wb") as handle:  # a sparse 7 GiB file: no disk used
        handle.truncate(7 * 2**30)
    assert trainer_arguments_for_script(script, ["--deepspeed", "x.json"]) is None
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    assert run_command("script", ["check", "--help"], timeout=5).ok  # the alarm itself works here
    assert trainer_arguments_for_script(fifo, []) is None  # returned: never opened for a blocking read


# --- reward files: one parser, no import before the launch ---

REWARD = "def f(completions, **kwargs):\n    return [0.0 for _ in completions]\n"


@pytest.mark.parametrize(("name", "source", "spec", "ok"), [
    ("a .txt file", REWARD, "r.txt:f", False),
    ("a ~/ path", REWARD, "~/r.py:f", True),
    ("a def under if True:", "if True:\n" + "".join("    " + line + "\n" for line in REWARD.splitlines()),
     "r.py:f", True),
    ("a class", "class f:\n    def __call__(self, completions, **kwargs):\n        return []\n", "r.py:f", False),
])
def test_init_and_run_agree_on_every_reward_form(tmp_path, monkeypatch, name, source, spec, ok):
    from accelwiz.errors import AccelwizError
    from accelwiz.trainer.rewards import find_reward
    from accelwiz.wizard.posttraining import verify_reward

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / spec.rpartition(":")[0].removeprefix("~/")).write_text(source)
    verdicts = []
    for check in (lambda: verify_reward(spec, {}, None), lambda: find_reward(spec)):  # init's, run's
        try:
            check()
            verdicts.append(True)
        except AccelwizError:
            verdicts.append(False)
    assert verdicts == [ok, ok], name


def test_a_dry_run_never_imports_the_reward_file(tmp_path, checkpoint):
    """`run --dry-run -- --kind grpo --reward evil.py:f` imported evil.py: its top-level code ran."""
    (tmp_path / "evil.py").write_text("open('imported', 'w').close()\n\n" + REWARD)
    (tmp_path / "single.yaml").write_text(SINGLE)
    (tmp_path / "p.jsonl").write_text('{"prompt": "a"}\n')
    done = subprocess.run([sys.executable, "-m", "accelwiz", "run", "--config", "single.yaml", "--model",
                           str(checkpoint), "--data", "p.jsonl", "--micro-batch", "2", "--dry-run", "--",
                           "--kind", "grpo", "--reward", "evil.py:f", "--num-generations", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "imported").exists(), done.stderr[-2000:]


def test_200000_unary_minus_signs_are_one_line(tmp_path, monkeypatch):
    """`init --reward` of this file ended in MemoryError (Python's parser stack)."""
    from accelwiz.errors import UsageError
    from accelwiz.trainer.rewards import find_reward

    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text("x = " + "-" * 200_000 + "1\n" + REWARD)
    with pytest.raises(UsageError, match="nested too deeply for Python's parser"):
        find_reward("r.py:f")


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_reward_that_is_a_special_file_is_refused_unread(tmp_path, special, monkeypatch):
    from accelwiz.errors import UsageError
    from accelwiz.trainer.rewards import find_reward

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "r.py"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(UsageError, match="not a regular file"):
        find_reward("r.py:f")


# --- internal errors ---

@pytest.mark.parametrize("flag", ["--micro-batch", "--gpus"])
def test_a_400_digit_count_is_one_line_not_an_overflow(flag):
    result = _ends("estimate", ["estimate", "--model", "llama-3-8b", flag, BIG])
    assert result.exit_code == 2, result.stderr
    assert f"{flag}: a number of 401 digits is too large" in result.stderr, result.stderr


def test_a_script_writing_rank_x_into_the_exit_dir_does_not_crash_run(tmp_path):
    (tmp_path / "single.yaml").write_text(SINGLE)
    (tmp_path / "s.py").write_text("import os\nfor name in ('rank-x', 'rank-', 'rank-0x1'):\n"
                                   "    open(os.path.join(os.environ['ACCELWIZ_EXIT_DIR'], name), 'w').write('x')\n"
                                   "raise SystemExit(3)\n")
    done = subprocess.run([sys.executable, "-m", "accelwiz", "run", "--config", "single.yaml", "s.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 3, done.stderr[-2000:]  # the script's own status, passed through
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
