"""The mechanisms behind the frozen thread corpus's misses (issue 29), each through `accelwiz check` as a user runs it:
the Trainer's accumulation with a JSON that lacks the key (AW719/AW720), a --deepspeed name that is no file (AW701),
the launch's process count against CUDA_VISIBLE_DEVICES (AW620), an --optim value transformers 5 removed (AW701),
a scheduler block that runs the schedule asked for (AW706 silent), and a JSON only DeepSpeed's hjson reads (AW016)."""

from __future__ import annotations

import json

import pytest

NO_ACCUMULATION = {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}


def findings(cli, *argv: str) -> tuple[int, list[dict]]:
    result = cli("check", "--format", "json", *argv)
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else []


def of(found: list[dict], code: str) -> list[dict]:
    return [d for d in found if d["code"] == code]


@pytest.fixture
def here(tmp_path, monkeypatch):
    """The directory the script runs in: --deepspeed names are opened from it."""
    monkeypatch.chdir(tmp_path)
    for name in ("CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.mark.parametrize("written,steps,expected", [
    ({}, "4", "AW719"), ({"gradient_accumulation_steps": "auto"}, "4", None), ({}, "1", None),
    ({"train_batch_size": "auto"}, "4", "AW720"), ({"gradient_accumulation_steps": 4}, "4", None)])
def test_accumulation_without_the_key(cli, here, written, steps, expected):
    # ChatGLM-6B@47a5ec1 (silent: 4 x 1 x 3 = 12, not 48) and codealpaca#14 (256 != 8 * 1 * 8)
    (here / "ds.json").write_text(json.dumps({**NO_ACCUMULATION, **written}))
    code, found = findings(cli, "ds.json", "--num-processes", "3", "--", "--deepspeed", "ds.json",
                           "--per_device_train_batch_size", "4", "--gradient_accumulation_steps", steps)
    fired = {d["code"] for d in found} & {"AW719", "AW720"}
    assert fired == ({expected} if expected else set())
    if expected == "AW719":
        assert "global batch 4 x 1 x 3 = 12 instead of 48" in of(found, "AW719")[0]["message"] and code == 0
    if expected == "AW720":
        assert of(found, "AW720")[0]["message"].endswith("48 != 4 * 1 * 3") and code == 1


def test_a_deepspeed_name_that_is_no_file(cli, here):
    # Llama2-Chinese@244efde: the JSON given to check is not the one the Trainer's --deepspeed names
    (here / "ds.json").write_text(json.dumps(NO_ACCUMULATION))
    code, found = findings(cli, "ds.json", "--", "--deepspeed", "../ds.json")
    assert code == 1 and "--deepspeed names `../ds.json`, which does not exist" in of(found, "AW701")[0]["message"]
    code, found = findings(cli, "ds.json", "--", "--deepspeed", "ds.json")
    assert not of(found, "AW701")


@pytest.mark.parametrize("visible,processes,fires", [("0,1", "8", True), ("0,1", "2", False), (None, "8", False)])
def test_processes_against_the_visible_gpus(cli, here, monkeypatch, visible, processes, fires):
    # Qwen#1175: torchrun --nproc_per_node 8 under CUDA_VISIBLE_DEVICES=0,1, no Accelerate YAML
    if visible:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    (here / "ds.json").write_text(json.dumps(NO_ACCUMULATION))
    code, found = findings(cli, "ds.json", "--system", "8xA100-80GB", "--num-processes", processes, "--",
                           "--deepspeed", "ds.json", "--bf16")
    assert bool(of(found, "AW620")) is fires and (code == 1) is fires
    if fires:
        message = of(found, "AW620")[0]["message"]
        assert "--num-processes 8" in message and "CUDA_VISIBLE_DEVICES=0,1 leaves 2 GPU(s)" in message
        assert of(found, "AW620")[0]["fix"] == "Pass `--num-processes 2`"


def test_gpu_ids_replace_the_variable(cli, here, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    config = here / "accelerate.yaml"
    config.write_text("distributed_type: MULTI_GPU\nnum_processes: 4\ngpu_ids: 0,1,2,3\n")
    _, found = findings(cli, str(config))
    assert not of(found, "AW620")  # accelerate launch puts gpu_ids in place of CUDA_VISIBLE_DEVICES: AW617's


def test_optimizer_names_are_the_installed_ones():
    from transformers.training_args import OptimizerNames

    from accelwiz.config.trainer_fields import OPTIMIZERS, REMOVED_OPTIMIZERS_IN_5

    installed = {member.value for member in OptimizerNames}
    assert OPTIMIZERS == installed and not set(REMOVED_OPTIMIZERS_IN_5) & installed


@pytest.mark.parametrize("optim,refused", [("adamw_hf", True), ("adamw_torch", False), ("adamw_bnb_8bit", False)])
def test_a_removed_optimizer_value(cli, here, optim, refused):
    # Firefly: --optim adamw_hf was an AW706 "is ignored"; transformers 5 refuses the value itself
    (here / "ds.json").write_text(json.dumps({**NO_ACCUMULATION, "optimizer": {"type": "Adam", "params": {}}}))
    _, found = findings(cli, "ds.json", "--", "--deepspeed", "ds.json", "--optim", optim)
    problems = [d["message"] for d in of(found, "AW701")]
    assert bool(problems) is refused
    if refused:
        assert "removed from OptimizerNames in transformers 5; write adamw_torch" in problems[0]
    assert any("--optim" in d["message"] for d in of(found, "AW706")) is not refused


WARMUP_DECAY = {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto", "warmup_min_lr": "auto",
                                                    "warmup_max_lr": "auto", "warmup_num_steps": "auto"}}


@pytest.mark.parametrize("schedule,warmup,says", [
    ("linear", "0", None), ("linear", "100", "rises logarithmically"), ("cosine", "0", "a linear decay to 0")])
def test_scheduler_block_against_the_schedule_asked_for(cli, here, schedule, warmup, says):
    # open-instruct@e44fcf5: WarmupDecayLR is --lr_scheduler_type linear when the warm-up does not differ
    (here / "ds.json").write_text(json.dumps({**NO_ACCUMULATION, "scheduler": WARMUP_DECAY}))
    _, found = findings(cli, "ds.json", "--", "--deepspeed", "ds.json", "--lr_scheduler_type", schedule,
                        "--warmup_steps", warmup)
    messages = [d["message"] for d in of(found, "AW706")]
    assert (says is None) is (not messages)
    if says:
        assert says in messages[0] and f"--lr_scheduler_type {schedule} is replaced" in messages[0]


MISSING_COMMA = '{\n  "train_batch_size": 16,\n  "fp16": {"enabled": false}\n  "zero_optimization": {"stage": 0}\n}\n'


def test_a_json_only_hjson_reads(cli, here):
    # DeepSpeedExamples#954: a lone JSON its consumer (deepspeed.initialize, hjson) reads is a warning, not exit 2
    (here / "ds.json").write_text(MISSING_COMMA)
    code, found = findings(cli, "ds.json")
    disagree = of(found, "AW016")
    assert code == 0 and disagree and "refused by accelerate and the HF Trainer" in disagree[0]["message"]
    # named by an Accelerate YAML, accelerate's json.load is its consumer: an error naming it
    config = here / "accelerate.yaml"
    config.write_text("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
                      "  deepspeed_config_file: ds.json\n")
    code, found = findings(cli, str(config))
    assert code == 1 and "accelerate reads it with json.load" in of(found, "AW015")[0]["message"]
