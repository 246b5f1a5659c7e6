"""The wizard on a real pseudo-terminal: arrow keys, Enter, y/n, Ctrl-C and Ctrl-D, read from the screen."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import yaml

pexpect = pytest.importorskip("pexpect")

DOWN, ENTER = "\x1b[B", "\r"
pytestmark = pytest.mark.skipif(
    shutil.which("accelwiz") is None, reason="the accelwiz script is not installed"
)


def spawn(arguments: str, cwd):
    return pexpect.spawn(
        f"accelwiz init {arguments}",
        cwd=str(cwd),
        encoding="utf-8",
        timeout=20,
        dimensions=(50, 200),
        env={**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1"},
    )


def answer(child, prompt: str, keys: str) -> None:
    child.expect(prompt)
    child.send(keys)


def test_full_deepspeed_path(tmp_path):
    child = spawn("--system 8xH100-80GB -o out.yaml", tmp_path)
    answer(child, "Which model", "llama-3.1-8b" + ENTER)
    answer(child, "How will you fine-tune", ENTER)  # full fine-tuning
    answer(child, "Sequence length", ENTER)
    answer(child, "Micro-batch", ENTER)
    answer(child, "gradient checkpointing", ENTER)
    answer(child, "How many machines", ENTER)
    answer(child, "GPUs per machine", ENTER)
    # The estimator's explanation is on screen before the menu, which pre-selects the fastest that fits.
    child.expect(r"ZeRO-1: [\d.]+ of 79.6 GiB per GPU; DDP would need [\d.]+ GiB")
    child.expect("How should training be distributed")
    child.expect(
        r"»\s*(?:\x1b\[[0-9;]*m)*DeepSpeed ZeRO-1"
    )  # the pointer, styling codes, the pre-selected item
    child.send(DOWN + ENTER)  # ZeRO-2 instead
    answer(child, "Offload optimizer", "n")
    answer(child, "Mixed precision", ENTER)  # bf16 on H100
    answer(child, "target global batch", ENTER)  # no: give the accumulation steps
    answer(child, "accumulation", "4" + ENTER)  # typing replaces the default shown as [1]
    answer(child, "Clip", ENTER)
    answer(child, "torch.compile", ENTER)
    child.expect("wrote out.yaml, ds_config.json")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    config = yaml.safe_load((tmp_path / "out.yaml").read_text())
    deepspeed = json.loads((tmp_path / "ds_config.json").read_text())
    assert config["distributed_type"] == "DEEPSPEED" and config["num_processes"] == 8
    assert config["deepspeed_config"] == {"deepspeed_config_file": "ds_config.json", "zero3_init_flag": False}
    assert (
        deepspeed["zero_optimization"]["stage"] == 2
        and "offload_optimizer" not in deepspeed["zero_optimization"]
    )
    assert (deepspeed["bf16"]["enabled"], deepspeed["gradient_accumulation_steps"]) == (True, 4)


# Ctrl-D is end-of-file only on an empty line (elsewhere it deletes a character), so it goes to the model
# question, whose default is empty; Ctrl-C goes to a later question, after an answer was given.
CANCELS = {"ctrl-c": [("Which model", ENTER), ("Micro-batch", "\x03")], "ctrl-d": [("Which model", "\x04")]}


@pytest.mark.parametrize("steps", CANCELS.values(), ids=CANCELS.keys())
def test_cancel_writes_nothing_and_exits_130(tmp_path, steps):
    child = spawn("--system 8xH100-80GB", tmp_path)
    for prompt, keys in steps:
        answer(child, prompt, keys)
    child.expect("nothing was written")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("reply", ["y", "n"])
def test_overwrite_asks_first_and_keeps_a_backup(tmp_path, reply):
    (tmp_path / "accelerate.yaml").write_text("# mine\n")
    child = spawn("--system 1xT4 --model '' --gpus 1 --strategy single --precision fp16", tmp_path)
    prompts = ("Micro-batch", "How many machines", "target global batch", "accumulation", "Clip", "torch.compile")
    for prompt in prompts:
        answer(child, prompt, ENTER)
    answer(child, "accelerate.yaml exists. Replace it", reply)
    child.expect(pexpect.EOF)
    child.close()
    if reply == "y":
        assert child.exitstatus == 0
        assert (tmp_path / "accelerate.yaml.bak").read_text() == "# mine\n"
        assert "mixed_precision: fp16" in (tmp_path / "accelerate.yaml").read_text()
    else:
        assert child.exitstatus == 2
        assert (tmp_path / "accelerate.yaml").read_text() == "# mine\n"
        assert not (tmp_path / "accelerate.yaml.bak").exists()


def test_going_back_after_check_refuses_keeps_the_answers(tmp_path):
    # Nothing fits a 405B model on one T4, so `check` refuses the first result; going back, earlier answers
    # are the defaults: only the model is changed (`none` skips it), the micro-batch of 3 is kept.
    zero3_tail = [
        ("Offload optimizer", ENTER),
        ("Offload parameters", ENTER),
        ("Mixed precision", ENTER),
        ("target global batch", ENTER),
        ("accumulation", ENTER),
        ("Clip", ENTER),
        ("torch.compile", ENTER),
        ("zero.Init", ENTER),
    ]
    first = [
        ("Which model", "llama-3.1-405b" + ENTER),
        ("fine-tune", ENTER),
        ("Sequence length", ENTER),
        ("Micro-batch", "3" + ENTER),
        ("gradient checkpointing", ENTER),
        ("How many machines", ENTER),
        ("GPUs per machine", ENTER),
        ("distributed", ENTER),
        *zero3_tail,
    ]
    second = [
        ("Which model", "none" + ENTER),
        ("Micro-batch", ENTER),
        ("How many machines", ENTER),
        ("GPUs per machine", ENTER),
        ("distributed", ENTER),
        *zero3_tail,
    ]
    child = spawn("--system 1xT4", tmp_path)
    for prompt, keys in first:
        answer(child, prompt, keys)
    child.expect("AW5")  # the memory rules' error on the screen
    answer(child, "Go back and change answers", ENTER)
    for prompt, keys in second:
        answer(child, prompt, keys)
    child.expect("start training with")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert json.loads((tmp_path / "ds_config.json").read_text())["train_micro_batch_size_per_gpu"] == 3


def test_a_target_global_batch_replaces_the_accumulation_question(tmp_path):
    child = spawn("--system 8xH100-80GB --model '' --strategy zero2 --precision bf16", tmp_path)
    for prompt, keys in (
        ("Micro-batch", "2" + ENTER),
        ("How many machines", ENTER),
        ("GPUs per machine", ENTER),
        ("Offload optimizer", "n"),
        ("target global batch", "y"),
    ):
        answer(child, prompt, keys)
    child.expect(r"a multiple of 16 = 2 \(micro-batch\) x 8 \(processes\)")
    child.send("128" + ENTER)
    answer(child, "Clip", ENTER)  # the accumulation question is not asked
    answer(child, "torch.compile", ENTER)
    child.expect("start training with")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert json.loads((tmp_path / "ds_config.json").read_text())["gradient_accumulation_steps"] == 8
