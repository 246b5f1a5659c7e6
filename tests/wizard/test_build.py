"""What the builder writes: one owner per setting, explicit values, hardware-aware defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from accelwiz.wizard.answers import Precision, StrategyChoice
from accelwiz.wizard.build import build, checkpointing_flag
from accelwiz.wizard.catalog import CATALOG, question
from accelwiz.wizard.flow import validate, walk
from accelwiz.wizard.prompters import DefaultsPrompter
from accelwiz.wizard.render import render_yaml
from accelwiz.wizard.precision_question import default_precision, precision_choices
from accelwiz.wizard.strategy_questions import strategy_choices
from tests.wizard.scenarios import CPU, SCENARIOS, run_scenario, system

# accelerate's DeepSpeedPlugin raises if any of these sits next to deepspeed_config_file
# (`_deepspeed_config_checks`).
FORBIDDEN_BESIDE_JSON = {
    "gradient_accumulation_steps",
    "gradient_clipping",
    "zero_stage",
    "offload_optimizer_device",
    "offload_param_device",
    "offload_param_nvme_path",
    "offload_optimizer_nvme_path",
    "zero3_save_16bit_model",
}


def defaults_for(machine, **preset):
    result = walk(CATALOG, machine, DefaultsPrompter(), preset)
    return validate(result.answers, machine)


def test_cpu_defaults_are_a_working_cpu_config():
    config = build(defaults_for(CPU), CPU).accelerate
    assert (
        config["distributed_type"],
        config["use_cpu"],
        config["num_processes"],
        config["mixed_precision"],
    ) == ("NO", True, 1, "no")
    text = render_yaml(config, None)
    assert "distributed_type: 'NO'" in text and "mixed_precision: 'no'" in text


@pytest.mark.parametrize(
    "scenario",
    [s for s in SCENARIOS if s.script.get("strategy", "").startswith("zero") and s.script["owner"] == "accelerate"],
    ids=lambda s: s.name,
)
def test_deepspeed_json_owns_precision_batch_accumulation_and_clipping(scenario):
    generated = run_scenario(scenario).generated
    accelerate = yaml.safe_load(generated.accelerate.text)
    deepspeed = json.loads(generated.deepspeed.text)
    assert "mixed_precision" not in accelerate
    assert not FORBIDDEN_BESIDE_JSON & set(accelerate["deepspeed_config"])
    assert accelerate["deepspeed_config"]["deepspeed_config_file"] == str(generated.deepspeed.path)
    assert "zero3_init_flag" in accelerate["deepspeed_config"]
    script = scenario.script
    assert deepspeed["train_micro_batch_size_per_gpu"] == script["micro_batch"]
    world = script["gpus"] * script["num_machines"]
    accumulation = script.get("gradient_accumulation") or script["target_global_batch"] // (
        script["micro_batch"] * world
    )
    assert deepspeed["gradient_accumulation_steps"] == accumulation
    assert deepspeed["gradient_clipping"] == float(script["gradient_clipping"])
    assert deepspeed["bf16"]["enabled"] is (script["precision"] == "bf16")
    assert deepspeed["fp16"]["enabled"] is (script["precision"] == "fp16")
    assert deepspeed["zero_optimization"]["stage"] == int(script["strategy"][-1])
    assert '"auto"' not in generated.deepspeed.text


def test_for_the_trainer_the_json_says_auto_and_the_flags_agree_with_the_plan():
    scenario = next(s for s in SCENARIOS if s.script["owner"] == "trainer")
    generated = run_scenario(scenario).generated
    deepspeed = json.loads(generated.deepspeed.text)
    for key in ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "gradient_clipping"):
        assert deepspeed[key] == "auto", key
    assert deepspeed["bf16"]["enabled"] == "auto" and deepspeed["fp16"]["enabled"] == "auto"
    assert deepspeed["zero_optimization"]["offload_param"] == {"device": "nvme", "nvme_path": "/local_nvme",
                                                               "pin_memory": True}
    script = scenario.script
    assert generated.trainer_arguments == [
        "--per_device_train_batch_size", str(script["micro_batch"]),
        "--gradient_accumulation_steps", str(script["gradient_accumulation"]),
        "--bf16", "--max_grad_norm", "1", checkpointing_flag(),
    ]
    plan = yaml.safe_load(generated.plan.text)
    assert plan["training"]["owner"] == "trainer"
    assert plan["training"]["trainer_arguments"] == generated.trainer_arguments
    assert "mixed_precision" not in yaml.safe_load(generated.accelerate.text)


def test_clipping_off_is_written_as_zero():
    machine = system("8xH100-80GB")
    answers = defaults_for(machine, strategy="zero2", gradient_clipping=0)
    assert build(answers, machine).deepspeed["gradient_clipping"] == 0.0


def test_zero3_with_a_named_model_writes_hidden_size_buckets_not_auto():
    machine = system("8xH100-80GB")
    answers = defaults_for(machine, model="llama-3.1-8b", strategy="zero3")
    zero = build(answers, machine, hidden_size=4096).deepspeed["zero_optimization"]
    assert zero["reduce_bucket_size"] == 4096 * 4096
    assert zero["stage3_param_persistence_threshold"] == 40960


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("8xH100-80GB", Precision.bf16),
        ("2xV100-16GB", Precision.fp16),
        ("1xT4", Precision.fp16),
        ("cpu", Precision.no),
    ],
)
def test_precision_default_follows_the_hardware(preset, expected):
    assert default_precision({}, system(preset)) is expected


def test_fp8_is_offered_only_with_fp8_gpus_a_backend_and_no_deepspeed_json():
    h100 = system("8xH100-80GB")
    with_te = h100.model_copy(update={"packages": {**h100.packages, "transformer_engine": "2.1"}})
    without = h100.model_copy(
        update={"packages": {**h100.packages, "transformer_engine": None, "torchao": None, "msamp": None}}
    )
    values = lambda machine, strategy: [c.value for c in precision_choices({"strategy": strategy}, machine)]  # noqa: E731
    assert Precision.fp8 in values(with_te, StrategyChoice.ddp)
    assert Precision.fp8 not in values(with_te, StrategyChoice.zero2)
    assert Precision.fp8 not in values(without, StrategyChoice.ddp)
    assert Precision.fp8 not in values(
        system("2xV100-16GB").model_copy(update={"packages": {"transformer_engine": "2.1"}}), StrategyChoice.ddp
    )


def test_strategy_defaults_to_the_estimators_fastest_fitting_choice():
    machine = system("8xH100-80GB")
    small = defaults_for(machine, model="llama-3.2-1b")
    large = defaults_for(machine, model="llama-3.1-70b")
    assert small.strategy in (StrategyChoice.ddp, StrategyChoice.zero1)
    assert large.strategy is StrategyChoice.zero3 and large.offload_optimizer


def test_strategy_choices_show_the_estimate():
    labels = [c.label for c in strategy_choices({"model": "llama-3.1-8b", "gpus": 8}, system("8xH100-80GB"))]
    assert all("GiB per GPU" in label for label in labels)


def test_one_gpu_offers_no_replication_strategies():
    values = [c.value for c in strategy_choices({"gpus": 1}, system("1xT4"))]
    assert values == [StrategyChoice.single, StrategyChoice.zero2, StrategyChoice.zero3]


def test_param_offload_question_only_at_zero3_or_fsdp():
    applies = question("offload_params").when
    machine = system("8xH100-80GB")
    assert [applies({"strategy": s}, machine) for s in StrategyChoice] == [
        s in (StrategyChoice.zero3, StrategyChoice.fsdp_full) for s in StrategyChoice
    ]


def test_fp8_names_the_installed_backend_and_passes_check():
    from accelwiz.wizard.generate import generate
    from accelwiz.wizard.write import errors_of

    h100 = system("8xH100-80GB")
    machine = h100.model_copy(
        update={"packages": {**h100.packages, "transformer_engine": None, "torchao": "0.9"}}
    )
    answers = defaults_for(machine, strategy="ddp", precision="fp8")
    generated = generate(answers, machine, output=Path("accelerate.yaml"), command="test")
    config = yaml.safe_load(generated.accelerate.text)
    assert (config["mixed_precision"], config["fp8_config"]) == ("fp8", {"backend": "AO"})
    assert errors_of(generated.diagnostics) == []


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.script.get("num_machines", 1) > 1],
                         ids=lambda s: s.name)
def test_a_multi_node_plan_writes_every_machine_and_process(scenario):
    generated = run_scenario(scenario).generated
    config = yaml.safe_load(generated.accelerate.text)
    machines, gpus = scenario.script["num_machines"], scenario.script["gpus"]
    assert (config["num_machines"], config["num_processes"]) == (machines, machines * gpus)
    plan = yaml.safe_load(generated.plan.text)
    assert (plan["system"]["machines"], plan["system"]["gpus_per_machine"]) == (machines, gpus)
    assert plan["launcher"]["kind"] == scenario.script["launcher"]  # one vocabulary: the answer is the plan's word
