"""init speaks the estimate's verdict and follows its recommendation (issues 28 and 31): menus in the verdict's
own numbers, checkpointing defaulted as `estimate` recommends it, each kind costed with the method that fits, and
no findings about the files it has just written."""

from __future__ import annotations

import json
import re

import pytest

from accelwiz.probe.profiles import load_system
from accelwiz.wizard import costing
from accelwiz.wizard.answers import Regime
from accelwiz.wizard.posttraining import kind_choices
from accelwiz.wizard.strategy_questions import strategy_choices


def test_no_menu_calls_a_need_above_the_gpu_tight():
    """70B LoRA without checkpointing on 8 x H100: every cell's GiB and word agree with the verdict (the offloaded
    ZeRO-3 reserves past the GPU; its cell shows what the tensors hold, 'allocator retries')."""
    system = load_system("8xH100-80GB")
    answers = {"model": "llama-3.1-70b", "regime": Regime.lora, "gradient_checkpointing": False, "gpus": 8,
               "num_machines": 1}
    capacity = system.min_gpu_memory_bytes / 2**30
    cells = [c.label for c in strategy_choices(answers, system)]
    for cell in cells:
        match = re.search(r": ([\d.]+) GiB per GPU[^,]*, (fits|tight|does not fit)", cell)
        assert match, cell
        need, word = float(match.group(1)), match.group(2)
        assert (word == "does not fit") is (need > capacity), cell
        if word == "fits":
            assert need <= 0.9 * capacity + 0.05, cell


@pytest.mark.parametrize(("system", "model", "method", "expected"), [
    ("1xRTX4090", "qwen2.5-7b", "qlora", True),   # single GPU only with checkpointing (11.2 GiB), not offload
    ("8xH100-80GB", "llama-3.2-1b", "full", False),  # DDP fits as asked: nothing to recompute
])
def test_checkpointing_defaults_as_estimate_recommends(cli, system, model, method, expected):
    answers = {"model": model, "regime": Regime(method)}
    assert costing.recommended_checkpointing(answers, load_system(system)) is expected
    flag = "--qlora" if method == "qlora" else "--lora" if method == "lora" else None
    data = json.loads(cli("estimate", "--model", model, "--system", system, *([flag] if flag else []),
                          "--format", "json").stdout)
    assert data["recommendation"]["gradient_checkpointing"] is expected


def test_init_and_estimate_pick_the_same_plan(cli, tmp_path, monkeypatch):
    """qwen2.5-7b QLoRA on one RTX 4090: init writes single GPU with checkpointing, estimate recommends it."""
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", "1xRTX4090", "--model", "qwen2.5-7b", "--method", "qlora", "--defaults")
    assert result.exit_code == 0, result.stderr
    plan = (tmp_path / "accelerate.plan.yaml").read_text()
    data = json.loads(cli("estimate", "--model", "qwen2.5-7b", "--system", "1xRTX4090", "--qlora", "--format",
                          "json").stdout)
    assert "gradient_checkpointing: true" in plan
    assert f"strategy: {data['recommendation']['strategy']}" in plan


def test_the_first_question_costs_each_kind_with_the_method_that_fits():
    """issue 31: a 7B on one RTX 4090 was 'does not fit' for SFT, DPO and GRPO (costed as full fine-tuning)."""
    system = load_system("1xRTX4090")
    labels = [c.label for c in kind_choices({"model": "qwen2.5-7b"}, system)]
    assert not any(label.endswith("does not fit") for label in labels), labels
    assert any("LoRA, " in label for label in labels), labels


def test_deepspeed_init_prints_no_findings_about_its_own_files(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", "8xH100-80GB", "--model", "llama-3.1-70b", "--method", "lora", "--defaults")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "accelerate.ds.json").exists()
    assert not re.search(r"AW\d{3} info", result.stdout + result.stderr)
    checked = cli("check", "accelerate.yaml")  # the infos are still there for who asks
    assert re.search(r"AW\d{3} info", checked.stdout)
