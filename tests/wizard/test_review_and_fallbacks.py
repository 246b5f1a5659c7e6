"""The question flow never dead-ends: fallbacks that fit (each chosen at least once), answers refused and asked
again at their question, back one step from every question, and the review screen's write, edit and cancel.
Every path that writes ends in files that `check` passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from accelwiz.console import Console
from accelwiz.wizard.catalog import FLOW
from accelwiz.wizard.flow import walk
from accelwiz.wizard.prompters import BACK, KEEP, ScriptedPrompter, Tries
from accelwiz.wizard.session import InitRequest, plan_until_accepted
from accelwiz.wizard.write import errors_of, write_files
from tests.wizard.scenarios import REWARD, WITHOUT_VLLM

# 1xRTX4090 + Llama-3.1-8B with full fine-tuning on one GPU without offload: 157.8 GiB per GPU, does not fit.
FULL_ON_A_4090 = {
    "system": "1xRTX4090", "model": "llama-3.1-8b", "kind": "sft", "regime": "full", "seq_len": 2048, "owner": "accelerate",
    "micro_batch": 1, "gradient_checkpointing": True, "num_machines": 1, "gpus": 1, "strategy": "single",
    "precision": "bf16", "use_global_batch": False, "gradient_accumulation": 1, "gradient_clipping": 1.0,
    "torch_compile": False,
}
# Answers the fallbacks' new questions bring (a LoRA rank, ZeRO-3's questions, a path for NVMe).
FOLLOW_UPS = {"lora_rank": KEEP, "offload_optimizer": KEEP, "offload_params": KEEP, "offload_device": KEEP,
              "nvme_path": "/local_nvme", "zero3_init": KEEP}


class Reviewer:
    """The review screen, scripted: each call picks the first choice whose label contains the next word."""

    def __init__(self, *picks: str) -> None:
        self.picks = list(picks)
        self.screens: list[list[str]] = []

    def __call__(self, title: str, choices: list[tuple[str, object]]) -> object:
        self.screens.append([label for label, _ in choices])
        wanted = self.picks.pop(0)
        return next(value for label, value in choices if wanted in label)


def plan(tmp_path: Path, script: dict, *picks: str, preset: dict | None = None):
    prompter = ScriptedPrompter(script)
    reviewer = Reviewer(*picks)
    request = InitRequest(output=tmp_path / "accelerate.yaml", command="test")
    generated = plan_until_accepted(request, prompter, dict(preset or {}), Console(), interactive=True,
                                    select=reviewer)
    return generated, prompter, reviewer


def written_and_checked(cli, tmp_path: Path, generated) -> dict:
    write_files(generated.files, force=False)
    assert errors_of(generated.diagnostics) == []
    checked = cli("check", str(tmp_path / "accelerate.yaml"))
    assert checked.exit_code == 0, checked.stdout
    return yaml.safe_load((tmp_path / "accelerate.plan.yaml").read_text())


@pytest.mark.parametrize(
    ("system", "overrides", "pick", "expected"),
    [
        # full fine-tuning on one A100-80GB fits only with the optimizer in host RAM
        ("1xA100-80GB", {}, "CPU offload", {"method": "full", "strategy": "ZeRO-2 + CPU offload (optimizer)"}),
        # on a 64 GiB host CPU offload does not hold an 8B model's states: NVMe does (and asks for the path)
        ("1xRTX4090", {}, "NVMe offload", {"method": "full", "strategy": "ZeRO-3 + NVMe offload (optimizer, params)"}),
        ("1xRTX4090", {}, "LoRA fits", {"method": "lora", "strategy": "single GPU"}),
        # (70B no longer: a quantized base never loads under zero.Init, so every GPU holds all its 4-bit weights)
        ("1xRTX4090", {"model": "qwen2.5-14b", "regime": "lora"}, "QLoRA fits", {"method": "qlora"}),
        ("1xRTX4090", {}, "sequence 1024", {"method": "qlora", "sequence_length": 1024}),
        ("8xH100-80GB", {"model": "llama-3.1-70b", "gpus": 2, "strategy": "ddp"}, "8 GPUs fit", {"gpus": 8}),
    ],
    ids=["cpu-offload", "nvme", "lora", "qlora", "shorter-sequence", "more-gpus"],
)
def test_each_fallback_is_offered_and_ends_in_files_that_check_passes(cli, tmp_path, system, overrides, pick,
                                                                       expected):
    script = {**FULL_ON_A_4090, "system": system, **overrides, **FOLLOW_UPS}
    generated, _, reviewer = plan(tmp_path, script, pick, "Write")
    assert not any("Write the files" in label for label in reviewer.screens[0])  # it did not fit: no write
    assert any(label.startswith("Write the files") for label in reviewer.screens[1])
    recorded = written_and_checked(cli, tmp_path, generated)
    found = {"method": recorded["fine_tuning"]["method"], "strategy": recorded["estimate"]["strategy"],
             "sequence_length": recorded["training"]["sequence_length"],
             "gpus": recorded["system"]["gpus_per_machine"]}
    assert {key: found[key] for key in expected} == expected
    assert recorded["estimate"]["verdict"] in ("fits", "tight")


def test_a_refused_answer_is_asked_again_at_its_question(tmp_path):
    # 100 is not a multiple of 16 = 2 (micro-batch) x 8 (processes): refused where it is given, then 128
    script = {**FULL_ON_A_4090, "model": "", "gpus": 8, "strategy": "zero2",
              "offload_optimizer": False, "micro_batch": 2, "use_global_batch": True,
              "target_global_batch": Tries(100, 128), "num_machines": Tries(0, 1),
              "system": Tries("8xH10O-80GB", "8xH100-80GB")}
    generated, prompter, _ = plan(tmp_path, script, "Write")
    refused = dict(prompter.refusals)
    assert "not a multiple of 16" in refused["target_global_batch"]
    assert "out of range" in refused["num_machines"]
    assert "unknown GPU" in refused["system"]
    assert '"gradient_accumulation_steps": 8' in generated.deepspeed.text


def _asked(script: dict) -> list[str]:
    prompter = ScriptedPrompter(script)
    walk(FLOW, None, prompter)
    return prompter.asked


BACK_PATH = {**FULL_ON_A_4090, "system": "2x8xH100-80GB", "model": "llama-3.1-8b", "regime": "lora",
             "lora_rank": 8, "gpus": 8, "num_machines": 2, "strategy": "zero3", "offload_optimizer": False,
             "offload_params": False, "use_global_batch": False, "zero3_init": True, "launcher": "node-commands",
             "machine_rank": 0, "main_process_ip": "10.0.0.1", "main_process_port": 29500, "rdzv_backend": "c10d"}


# The questions BACK_PATH does not reach: offload to NVMe, a target global batch, the Trainer.
NVME_PATH = {**FULL_ON_A_4090, "strategy": "zero3", "offload_optimizer": True, "offload_params": True,
             "offload_device": "nvme", "nvme_path": "/local_nvme", "owner": "trainer", "use_global_batch": True,
             "target_global_batch": 4, "zero3_init": True}
# A machine without GPUs: CPU processes per machine (issue 16: init refused any count there).
CPU_PATH = {"system": str(Path(__file__).parents[1] / "fixtures" / "systems" / "cpu_only.json"), "model": "gpt2",
            "kind": "sft", "regime": "full", "seq_len": 1024, "owner": "accelerate", "micro_batch": 1, "gradient_checkpointing": True,
            "num_machines": 1, "processes": 2, "use_global_batch": False, "gradient_accumulation": 1,
            "gradient_clipping": 1.0, "torch_compile": False}
# GRPO (issue 19): its lengths, generation (vLLM insisted on where it is not installed), beta, num_generations
# dividing the generation batch 1 x 2 x 2 = 4, and the reward.
GRPO_PATH = {**CPU_PATH, "system": str(WITHOUT_VLLM), "model": "llama-3.2-1b", "kind": "grpo",
             "max_prompt_length": 128, "max_completion_length": 64, "generation": "vllm-colocate",
             "vllm_anyway": True, "beta": 0.04, "gpus": 2, "strategy": "ddp", "precision": "bf16",
             "gradient_accumulation": 2, "num_generations": 4, "reward": REWARD}
del GRPO_PATH["seq_len"], GRPO_PATH["processes"]  # DPO and GRPO ask prompt and completion; GPUs, not processes
PATHS = {"multi-node": BACK_PATH, "nvme": NVME_PATH, "cpu": CPU_PATH, "grpo": GRPO_PATH}
STEPS = [(name, key) for name, path in PATHS.items() for key in _asked(path)[1:]]


def test_the_back_paths_reach_every_question():
    from accelwiz.wizard.catalog import FLOW

    assert {key for _, key in STEPS} | {"system"} == {q.key for q in FLOW}


@pytest.mark.parametrize(("path", "key"), STEPS, ids=[f"{p}-{k}" for p, k in STEPS])
def test_back_from_every_question_goes_one_step_and_keeps_the_answers(path, key):
    answers = PATHS[path]
    order = _asked(answers)
    previous = order[order.index(key) - 1]
    script = dict(answers)
    script[key] = Tries(BACK, answers[key])
    script[previous] = Tries(answers[previous], KEEP)  # asked again: Enter keeps the remembered answer
    prompter = ScriptedPrompter(script)
    result = walk(FLOW, None, prompter, remembered={})
    position = order.index(key)
    # the questions up to `key`, then the one before it again (one step back, not to question 1), then on
    assert prompter.asked == order[: position + 1] + order[position - 1:]
    assert result.answers == walk(FLOW, None, ScriptedPrompter(answers)).answers


def test_review_edits_one_answer_and_keeps_the_rest(cli, tmp_path):
    script = {**FULL_ON_A_4090, "regime": "lora", "lora_rank": 16, "seq_len": Tries(2048, 1024)}
    generated, prompter, reviewer = plan(tmp_path, script, "Edit", "seq_len", "Write")
    assert prompter.asked.count("seq_len") == 2 and prompter.asked.count("model") == 1
    assert prompter.defaults["seq_len"] == 2048  # the old answer is the default when editing it
    assert any(label.startswith("seq_len: 2048") for label in reviewer.screens[1])
    recorded = written_and_checked(cli, tmp_path, generated)
    assert (recorded["training"]["sequence_length"], recorded["fine_tuning"]["method"]) == (1024, "lora")


def test_review_cancel_writes_nothing(tmp_path):
    script = {**FULL_ON_A_4090, "regime": "lora", "lora_rank": 16}
    with pytest.raises(KeyboardInterrupt):
        plan(tmp_path, script, "Cancel")
    assert list(tmp_path.iterdir()) == []


def test_fp8_is_judged_from_the_target_not_this_machine(cli, tmp_path, monkeypatch):
    # no fp8 backend is installed here; an H100 preset lists no packages, so its backend is assumed
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", "8xH100-80GB", "--precision", "fp8", "--defaults")
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load((tmp_path / "accelerate.yaml").read_text())["mixed_precision"] == "fp8"


def test_where_nothing_fits_the_review_says_what_would_and_offers_no_write(tmp_path, capsys):
    script = {**FULL_ON_A_4090, "system": "1xT4", "model": "llama-3.1-405b", "strategy": "zero3",
              "offload_optimizer": True, "offload_params": True, "offload_device": "cpu", "zero3_init": True}
    reviewer = Reviewer("Cancel")
    request = InitRequest(output=tmp_path / "accelerate.yaml", command="test")
    with pytest.raises(KeyboardInterrupt):
        plan_until_accepted(request, ScriptedPrompter(script), {}, Console(), interactive=True, select=reviewer)
    assert "nothing fits" in capsys.readouterr().err
    assert reviewer.screens[0] == ["Edit one answer", "Cancel (write nothing)"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("system", "model", "strategy", "method"),
    [("1xA100-80GB", "llama-3.1-8b", "single", "lora"), ("8xH100-80GB", "llama-3.1-70b", "ddp", "qlora")],
)
def test_defaults_apply_the_fastest_fallback_and_say_why_in_one_line(cli, tmp_path, monkeypatch, system, model,
                                                                     strategy, method):
    # the strategy is given, so only the fine-tuning can change: full does not fit with it
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", system, "--model", model, "--strategy", strategy, "--defaults")
    assert result.exit_code == 0, result.stderr
    chose = [line for line in result.stderr.splitlines() if line.startswith("chose ")]
    assert len(chose) == 1 and f"regime: {method}" in chose[0] and "GPU memory" in chose[0]
    assert "host RAM" not in chose[0]  # the one resource that is short, named as such
    plan_file = yaml.safe_load((tmp_path / "accelerate.plan.yaml").read_text())
    assert plan_file["fine_tuning"]["method"] == method
    assert cli("check", "accelerate.yaml").exit_code == 0


def test_defaults_where_only_nvme_fits_say_so_and_write_nothing(cli, tmp_path, monkeypatch):
    # Llama-3.1-70B on one A10G: not even QLoRA with CPU offload fits a 32 GiB host; NVMe would, and needs a path
    # (Mixtral-8x7B fits since bitsandbytes' quantization state is counted on the GPU, where it stays: 28.6 GiB)
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", "1xA10G", "--model", "llama-3.1-70b", "--defaults")
    assert result.exit_code == 1
    assert "nothing fits without NVMe offload" in result.stderr and "nvme_path" in result.stderr
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "answers.yaml").write_text("nvme_path: /local_nvme\n")
    result = cli("init", "--system", "1xA10G", "--model", "llama-3.1-70b", "--answers", "answers.yaml",
                 "--defaults")
    assert result.exit_code == 0, result.stderr
    deepspeed = json.loads((tmp_path / "accelerate.ds.json").read_text())
    assert deepspeed["zero_optimization"]["offload_param"]["nvme_path"] == "/local_nvme"
    assert cli("check", "accelerate.yaml").exit_code == 0
