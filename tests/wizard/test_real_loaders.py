"""The generated files are accepted by the libraries' own readers: accelerate's config loader and DeepSpeed's
DeepSpeedConfig (with torch.distributed faked to the planned world size, as the batch identity needs it)."""

from __future__ import annotations

import json

import pytest

from tests.wizard.real_clients import deepspeed_validator
from tests.wizard.scenarios import SCENARIOS, run_scenario


@pytest.fixture(scope="module")
def load_accelerate_config():
    from accelerate.commands.config.config_args import load_config_from_file

    return load_config_from_file


@pytest.fixture(scope="module")
def deepspeed_config():
    yield from deepspeed_validator()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_accelerate_loads_the_yaml(scenario, tmp_path, monkeypatch, load_accelerate_config):
    monkeypatch.chdir(tmp_path)
    generated = run_scenario(scenario).generated
    for file in generated.files:
        file.path.write_text(file.text)
    loaded = load_accelerate_config(str(generated.accelerate.path))
    cpu_processes = scenario.script.get("processes", 1) * scenario.script.get("num_machines", 1)
    strategy = scenario.script.get("strategy", "ddp" if cpu_processes > 1 else "single")  # CPU DDP on gloo
    expected = {"single": "NO", "ddp": "MULTI_GPU", "fsdp_full": "FSDP", "fsdp_grad_op": "FSDP",
                "fsdp_hybrid": "FSDP"}.get(strategy, "DEEPSPEED")
    assert str(loaded.distributed_type).rsplit(".", 1)[-1] == expected


@pytest.mark.parametrize(
    "scenario",
    [s for s in SCENARIOS if s.script.get("strategy", "").startswith("zero") and s.script["owner"] == "accelerate"],
    ids=lambda s: s.name,
)
def test_deepspeed_accepts_the_json(scenario, deepspeed_config):
    generated = run_scenario(scenario).generated
    config = json.loads(generated.deepspeed.text)
    world = scenario.script["gpus"] * scenario.script["num_machines"]
    parsed = deepspeed_config(config, world)
    assert (
        parsed.train_batch_size
        == config["train_micro_batch_size_per_gpu"] * config["gradient_accumulation_steps"] * world
    )
    assert parsed.zero_optimization_stage == config["zero_optimization"]["stage"]
    assert parsed.gradient_clipping == config["gradient_clipping"]


def test_the_trainer_fills_every_auto_from_the_printed_arguments():
    """transformers' own HfTrainerDeepSpeedConfig, given TrainingArguments parsed from the flags init printed,
    leaves no "auto" among the batch, accumulation, clipping and precision keys, with the planned values."""
    from transformers import HfArgumentParser, TrainingArguments
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    scenario = next(s for s in SCENARIOS if s.script["owner"] == "trainer")
    generated = run_scenario(scenario).generated
    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
        ["--output_dir", "unused", "--use_cpu", *generated.trainer_arguments]
    )
    config = HfTrainerDeepSpeedConfig(json.loads(generated.deepspeed.text))
    config.trainer_config_process(args)
    filled = config.config
    script = scenario.script
    assert filled["train_micro_batch_size_per_gpu"] == script["micro_batch"]
    assert filled["gradient_accumulation_steps"] == script["gradient_accumulation"]
    assert filled["gradient_clipping"] == 1.0
    assert filled["bf16"]["enabled"] is True and filled["fp16"]["enabled"] is False


def test_deepspeed_accepts_nvme_offload(deepspeed_config):
    """The NVMe offload the wizard writes (ZeRO-Infinity) is a config DeepSpeed's own parser accepts as such."""
    from dataclasses import replace

    scenario = next(s for s in SCENARIOS if s.script.get("offload_device") == "nvme")
    generated = run_scenario(replace(scenario, script={**scenario.script, "owner": "accelerate"})).generated
    config = json.loads(generated.deepspeed.text)
    parsed = deepspeed_config(config, 1)
    assert parsed.zero_optimization_stage == 3
    assert str(parsed.zero_config.offload_param.device).endswith("nvme")
    assert str(parsed.zero_config.offload_optimizer.device).endswith("nvme")
    assert str(parsed.zero_config.offload_param.nvme_path) == "/local_nvme"
