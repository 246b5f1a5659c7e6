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
    answer(child, "What kind of training", ENTER)  # sft
    answer(child, "How will you fine-tune", ENTER)  # full fine-tuning
    answer(child, "Sequence length", ENTER)
    answer(child, "Who runs the training loop", ENTER)  # accelerate
    answer(child, "Micro-batch", ENTER)
    answer(child, "gradient checkpointing", ENTER)
    answer(child, "How many machines", ENTER)
    answer(child, "GPUs per machine", ENTER)
    # The estimator's explanation is on screen before the menu, which pre-selects the fastest that fits.
    child.expect(r"ZeRO-1: [\d.]+ of 79.2 GiB per GPU; DDP would need [\d.]+ GiB")
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
    answer(child, "Write these files", ENTER)  # the review screen: write
    child.expect("wrote out.yaml, out.ds.json, out.plan.yaml")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    config = yaml.safe_load((tmp_path / "out.yaml").read_text())
    deepspeed = json.loads((tmp_path / "out.ds.json").read_text())
    assert config["distributed_type"] == "DEEPSPEED" and config["num_processes"] == 8
    assert config["deepspeed_config"] == {"deepspeed_config_file": "out.ds.json", "zero3_init_flag": False}
    assert (
        deepspeed["zero_optimization"]["stage"] == 2
        and "offload_optimizer" not in deepspeed["zero_optimization"]
    )
    assert (deepspeed["bf16"]["enabled"], deepspeed["gradient_accumulation_steps"]) == (True, 4)


# Ctrl-D is end-of-file only on an empty line (elsewhere it deletes a character), so it goes to the model
# question, whose default is empty; Ctrl-C goes to a later question, after an answer was given.
CANCELS = {"ctrl-c": [("Which model", ENTER), ("Who runs", ENTER), ("Micro-batch", "\x03")],
           "ctrl-d": [("Which model", "\x04")]}


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
    prompts = ("Who runs", "Micro-batch", "How many machines", "target global batch", "accumulation", "Clip",
               "torch.compile", "Write these files")
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


def test_a_typo_at_the_machine_question_is_asked_again(tmp_path):
    # a typo at "Which machine will train?" used to end the wizard with exit 2; now it is refused at the prompt
    child = spawn("--model '' -o out.yaml", tmp_path)
    answer(child, "Which machine will train", "1xRTX409O")
    child.send(ENTER)
    child.expect("unknown GPU")  # shown under the prompt, which stays open, its input cleared
    child.send("1xRTX4090" + ENTER)  # typed afresh: nothing of the refused answer is left to delete
    for prompt in ("Who runs", "Micro-batch", "How many machines", "GPUs per machine", "distributed", "Mixed",
                   "target global batch", "accumulation", "Clip", "torch.compile"):
        answer(child, prompt, ENTER)
    answer(child, "Write these files", ENTER)
    child.expect("wrote out.yaml")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert yaml.safe_load((tmp_path / "out.plan.yaml").read_text())["system"]["name"] == "1xRTX4090"


def test_a_refused_number_is_cleared_so_the_next_one_stands_alone(tmp_path):
    # `abc` then `2` used to send `abc2`: the refused text stayed in the input and only Ctrl-U got out
    child = spawn("--system 1xT4 --model '' --gpus 1 --strategy single --precision fp16", tmp_path)
    answer(child, "Who runs", ENTER)
    answer(child, "Micro-batch", "abc" + ENTER)
    child.expect("'abc' is not a whole number")
    child.send("2" + ENTER)
    for prompt in ("How many machines", "target global batch", "accumulation", "Clip", "torch.compile"):
        answer(child, prompt, ENTER)
    answer(child, "Write these files", ENTER)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "abc2" not in child.before
    assert yaml.safe_load((tmp_path / "accelerate.plan.yaml").read_text())["training"]["micro_batch"] == 2


def test_back_goes_one_step_and_keeps_the_answer(tmp_path):
    child = spawn("--system 1xT4 --model '' --gpus 1 --strategy single --precision fp16", tmp_path)
    answer(child, "Who runs", ENTER)
    answer(child, "Micro-batch", "3" + ENTER)
    answer(child, "How many machines", "<")  # back one question: the micro-batch, not question 1
    child.expect(r"Micro-batch size per GPU\? \[3\]")  # the answer given is kept as the default
    child.send(ENTER)
    for prompt in ("How many machines", "target global batch", "accumulation", "Clip", "torch.compile"):
        answer(child, prompt, ENTER)
    answer(child, "Write these files", ENTER)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Who runs" not in child.before  # nothing before the micro-batch was asked again
    assert yaml.safe_load((tmp_path / "accelerate.plan.yaml").read_text())["training"]["micro_batch"] == 3


def test_the_review_screen_edits_one_answer(tmp_path):
    child = spawn("--system 1xT4 --model '' --gpus 1 --strategy single --precision fp16", tmp_path)
    for prompt in ("Who runs", "Micro-batch", "How many machines", "target global batch", "accumulation", "Clip",
                   "torch.compile"):
        answer(child, prompt, ENTER)
    child.expect("Review the plan")
    answer(child, "Write these files", DOWN + ENTER)  # Edit one answer
    answer(child, "Which answer", "micro")  # typing filters the list to micro_batch
    child.send(ENTER)
    child.expect(r"Micro-batch size per GPU\? \[1\]")
    child.send("4" + ENTER)
    answer(child, "Write these files", ENTER)  # only the edited answer was asked
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Clip" not in child.before
    assert yaml.safe_load((tmp_path / "accelerate.plan.yaml").read_text())["training"]["micro_batch"] == 4


def test_llama_3_8b_on_an_rtx4090_ends_in_a_written_plan(tmp_path):
    # The regression: full fine-tuning was the default on a 24 GB card and the run ended with exit 1.
    child = spawn("--system 1xRTX4090 -o out.yaml", tmp_path)
    answer(child, "Which model", "llama-3-8b" + ENTER)
    answer(child, "What kind of training", ENTER)  # sft
    child.expect("default LoRA")  # why the default is not full fine-tuning, in one line
    for prompt in ("How will you fine-tune", "LoRA rank", "Sequence length", "Who runs", "Micro-batch",
                   "gradient checkpointing", "How many machines", "GPUs per machine", "distributed", "Mixed",
                   "target global batch", "accumulation", "Clip", "torch.compile"):
        answer(child, prompt, ENTER)
    child.expect(r"estimate +single GPU: GPU memory [\d.]+ of 23.6 GiB per GPU; host RAM [\d.]+ of 64.0 GiB")
    answer(child, "Write these files", ENTER)
    child.expect("wrote out.yaml, out.plan.yaml")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    plan = yaml.safe_load((tmp_path / "out.plan.yaml").read_text())
    assert plan["fine_tuning"]["method"] == "lora" and plan["estimate"]["verdict"] == "fits"


def test_a_target_global_batch_replaces_the_accumulation_question(tmp_path):
    child = spawn("--system 8xH100-80GB --model '' --strategy zero2 --precision bf16", tmp_path)
    for prompt, keys in (
        ("Who runs", ENTER),
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
    answer(child, "Write these files", ENTER)
    child.expect("start training with")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert json.loads((tmp_path / "accelerate.ds.json").read_text())["gradient_accumulation_steps"] == 8


def test_back_works_from_menus_and_yes_no_and_ctrl_c_at_the_review_writes_nothing(tmp_path):
    child = spawn("--system 8xH100-80GB", tmp_path)
    answer(child, "Which model", "gpt2" + ENTER)
    answer(child, "What kind of training", "<")  # a menu: back to the model, remembered
    child.expect(r"Which model.*\[gpt2\]")
    child.send(ENTER)
    for prompt in ("What kind of training", "How will you fine-tune", "Sequence length", "Who runs", "Micro-batch"):
        answer(child, prompt, ENTER)
    answer(child, "gradient checkpointing", "<")  # a yes/no question: back to the micro-batch
    child.expect(r"Micro-batch size per GPU\? \[1\]")
    child.send(ENTER)
    for prompt in ("gradient checkpointing", "How many machines", "GPUs per machine", "distributed", "Mixed",
                   "target global batch", "accumulation", "Clip", "torch.compile"):
        answer(child, prompt, ENTER)
    answer(child, "Write these files", "\x03")
    child.expect("nothing was written")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert list(tmp_path.iterdir()) == []


def test_grpo_is_planned_with_the_estimate_beside_each_choice(tmp_path):
    """Issue 19: the kind menu, GRPO's settings with their memory, num_generations among the divisors of the
    generation batch, and a reward refused at its prompt until the file defines the function."""
    (tmp_path / "rewards.py").write_text("def length(completions, **kwargs):\n    return [len(c) for c in completions]\n")
    child = spawn("--system 8xH100-80GB -o out.yaml", tmp_path)
    answer(child, "Which model", "llama-3.2-1b" + ENTER)
    child.expect("What kind of training")
    child.expect(r"GRPO \(completions generated per prompt, scored by your reward function\): full fine-tuning, "
                 r"DDP, [\d.]+ GiB per GPU")
    child.send(DOWN + DOWN + ENTER)
    answer(child, "Longest prompt", ENTER)
    answer(child, "Longest completion", "256" + ENTER)
    child.expect("How should GRPO generate")
    child.expect(r"vLLM colocate \(vLLM inside each training process, a share of its GPU\): full fine-tuning, DDP, "
                 r"[\d.]+ GiB per GPU")
    child.send(ENTER)  # HF generate
    answer(child, "How will you fine-tune", ENTER)  # full
    # the reference model's cost at TRL's beta 0.0 (none loaded) and with a KL weight (a whole copy)
    child.expect(r"beta 0: DDP, ([\d.]+) GiB per GPU; beta 0.04: DDP, ([\d.]+) GiB per GPU")
    without, with_reference = map(float, child.match.groups())
    assert with_reference > without
    answer(child, r"beta \(KL weight", "0.04" + ENTER)
    for prompt in ("Who runs", "Micro-batch", "gradient checkpointing", "How many machines", "GPUs per machine",
                   "distributed", "Mixed", "target global batch"):
        answer(child, prompt, ENTER)
    answer(child, "accumulation", "2" + ENTER)  # generation batch 1 x 8 x 2 = 16
    child.expect(r"divide the generation batch 16")
    child.expect(r"Completions generated per prompt")
    child.expect(r"»\s*(?:\x1b\[[0-9;]*m)*8 completions per prompt")  # TRL's 8 divides it: pre-selected
    child.send(DOWN + ENTER)  # 16
    answer(child, "Reward function", "rewards.py:lenght" + ENTER)
    child.expect("defines no function lenght")  # shown under the prompt, which stays open, its input cleared
    child.send("rewards.py:length" + ENTER)
    answer(child, "Clip", ENTER)
    answer(child, "torch.compile", ENTER)
    child.expect(r"estimate +DDP: GPU memory [\d.]+ of 79.2 GiB per GPU.*grpo, full, prompt 512 \+ completion 256")
    answer(child, "Write these files", ENTER)
    child.expect("wrote out.yaml, out.plan.yaml")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    plan = yaml.safe_load((tmp_path / "out.plan.yaml").read_text())
    training = {key: plan["training"][key] for key in ("kind", "num_generations", "beta", "reward",
                                                       "max_prompt_length", "max_completion_length")}
    assert training == {"kind": "grpo", "num_generations": 16, "beta": 0.04, "reward": "rewards.py:length",
                        "max_prompt_length": 512, "max_completion_length": 256}
    assert plan["training"]["sequence_length"] == 768 and plan["estimate"]["phase"]
    assert "Estimate by phase" in (tmp_path / "out.yaml").read_text()
