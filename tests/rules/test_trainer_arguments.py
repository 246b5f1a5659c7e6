"""AW7xx: the HF Trainer's arguments against the YAML and the JSON. Each rule fires on a case that fails (or
silently does something else) and stays quiet on the close case that works; the parser reads the command line and
arguments files as transformers does (tests/crosscheck/test_trainer_resolver.py compares with the real parser)."""

from __future__ import annotations

import json

import pytest

from accelwiz.config.training_args import load_training_arguments, parse_argv, parse_file
from accelwiz.errors import InputError
from accelwiz.probe.profiles import load_system
from tests.rules.helpers import codes, diagnostics

DS_YAML = "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
AUTO_JSON = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
             "gradient_accumulation_steps": "auto", "gradient_clipping": "auto", "zero_optimization": {"stage": 2}}


def pair(write, json_changes: dict | None = None, yaml_extra: str = ""):
    data = {**AUTO_JSON, **(json_changes or {})}
    return write("accelerate.yaml", DS_YAML + yaml_extra), write("ds.json", json.dumps(data, indent=2))


def trainer_codes(paths, argv, **context) -> set[str]:
    return codes(*paths, select=("AW7",), training_args=parse_argv(argv), **context)


@pytest.mark.parametrize("code,json_changes,yaml_extra,bad,good", [
    ("AW701", {}, "", ["--per_device_train_batch_size", "4.5"], ["--per_device_train_batch_size", "4"]),
    ("AW701", {}, "", ["--fp16", "--bf16"], ["--bf16"]),
    ("AW701", {}, "", ["--bf16", "maybe"], ["--bf16", "yes"]),
    ("AW702", {"train_micro_batch_size_per_gpu": 16}, "", ["--per_device_train_batch_size", "4"],
     ["--per_device_train_batch_size", "16"]),
    ("AW702", {"gradient_accumulation_steps": "8"}, "", ["--gradient_accumulation_steps", "8"], None),
    ("AW702", {"train_batch_size": 128}, "", ["--per_device_train_batch_size", "4", "--gradient_accumulation_steps",
                                              "8"], ["--per_device_train_batch_size", "4",
                                                     "--gradient_accumulation_steps", "4"]),
    ("AW702", {"gradient_clipping": 1.0}, "", ["--max_grad_norm", "0.3"], ["--max_grad_norm", "1"]),
    ("AW702", {"fp16": {"enabled": "auto"}}, "mixed_precision: bf16\n", [], ["--bf16"]),
    ("AW704", {"bf16": {"enabled": "auto"}}, "mixed_precision: bf16\n", ["--deepspeed", "ds.json"],
     ["--deepspeed", "ds.json", "--bf16"]),
    ("AW706", {"optimizer": {"type": "AdamW", "params": {"lr": "auto"}}}, "", ["--optim", "adafactor"], []),
    ("AW707", {"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}, "", ["--optim", "sgd"],
     ["--optim", "adamw_torch"]),
    ("AW707", {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}, "",
     ["--optim", "adafactor"], []),
    ("AW708", {"zero_optimization": {"stage": 3}, "activation_checkpointing": {"partition_activations": True}}, "",
     [], None),
])
def test_rule_fires_on_the_bad_arguments_and_not_on_the_good(write, code, json_changes, yaml_extra, bad, good,
                                                             tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # --deepspeed ds.json is opened from the working directory, as the Trainer does
    paths = pair(write, json_changes, yaml_extra)
    assert code in trainer_codes(paths, bad)
    if good is not None:
        assert code not in trainer_codes(paths, good)


def test_aw707_quiet_when_the_json_has_an_optimizer_or_allows_a_client_one(write):
    offload = {"stage": 3, "offload_optimizer": {"device": "cpu"}}
    sgd = ["--optim", "sgd"]
    assert "AW707" not in trainer_codes(pair(write, {"zero_optimization": offload,
                                                     "optimizer": {"type": "AdamW", "params": {}}}), sgd)
    assert "AW707" not in trainer_codes(pair(write, {"zero_optimization": offload,
                                                     "zero_force_ds_cpu_optimizer": False}), sgd)
    # accelerate tests the value's truth: the string "false" still swaps the Trainer's optimizer
    assert "AW707" in trainer_codes(pair(write, {"zero_optimization": offload,
                                                 "zero_force_ds_cpu_optimizer": "false"}), sgd)


@pytest.mark.parametrize("optim", ["adamw_torch", "adamw_torch_fused", "adagrad", "lion_32bit"])
def test_aw707_quiet_for_the_optimizers_offload_keeps(write, optim):
    offload = {"stage": 2, "offload_optimizer": {"device": "nvme"}}
    assert "AW707" not in trainer_codes(pair(write, {"zero_optimization": offload}), ["--optim", optim])


def test_aw708_says_checkpointing_is_off_without_the_flag(write):
    paths = pair(write, {"zero_optimization": {"stage": 3}, "activation_checkpointing": {"cpu_checkpointing": True}})
    without = [d for d in diagnostics(*paths, select=("AW708",), training_args=parse_argv([]))]
    with_flag = [d for d in diagnostics(*paths, select=("AW708",),
                                        training_args=parse_argv(["--gradient_checkpointing", "true"]))]
    assert "is not given" in without[0].message and "no effect" in with_flag[0].message


def test_aw702_points_at_the_json_key_and_explains_a_quoted_number(write):
    paths = pair(write, {"gradient_accumulation_steps": "8"})
    (found,) = diagnostics(*paths, select=("AW702",), training_args=parse_argv(["--gradient_accumulation_steps", "8"]))
    assert found.file.endswith("ds.json") and found.path == ("gradient_accumulation_steps",)
    assert "'8' is a str" in found.message and "ds gradient_accumulation_steps=8 vs hf" in found.message


def test_aw702_inline_yaml_gradient_accumulation(write):
    """LLaMA-Factory#201: the inline GA 4 is refused by a Trainer running with GA 1."""
    yaml = write("accelerate.yaml", "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
                                    "  zero_stage: 2\n  gradient_accumulation_steps: 4\n")
    (found,) = diagnostics(yaml, select=("AW702",), training_args=parse_argv([]))
    assert found.path == ("deepspeed_config", "gradient_accumulation_steps")
    assert not codes(yaml, select=("AW702",), training_args=parse_argv(["--gradient_accumulation_steps", "4"]))


def test_aw703_bf16_on_v100_only_with_trainer_arguments(write, corpus):
    dolly = corpus / "broken" / "databrickslabs-dolly__11.json"
    v100 = load_system("8xV100-32GB")
    assert "AW703" not in codes(dolly, system=v100)  # the JSON alone says "auto": nothing to see
    assert "AW703" in codes(dolly, system=v100, training_args=parse_argv(["--bf16"]))
    assert "AW703" not in codes(dolly, system=v100, training_args=parse_argv(["--fp16"]))
    assert "AW703" not in codes(dolly, system=load_system("8xA100-80GB"), training_args=parse_argv(["--bf16"]))


def test_aw705_another_json_and_deepspeed_under_another_distributed_type(write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = pair(write)
    write("other.json", json.dumps(AUTO_JSON))
    assert "AW705" in trainer_codes(paths, ["--deepspeed", "other.json"])
    assert "AW705" not in trainer_codes(paths, ["--deepspeed", "ds.json"])
    ddp = write("ddp.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\n")
    assert "AW705" in trainer_codes([ddp], ["--deepspeed", "ds.json"])
    assert "AW701" in trainer_codes([ddp], ["--deepspeed", "missing.json"])


def test_aw704_trainer_flag_overrides_the_yaml_without_deepspeed(write):
    yaml = write("accelerate.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\n")
    assert "AW704" in trainer_codes([yaml], ["--fp16"])
    assert "AW704" not in trainer_codes([yaml], ["--bf16"])
    assert "AW704" not in trainer_codes([yaml], [])  # TrainingArguments takes the launcher's bf16


def test_rules_are_silent_without_trainer_arguments(write):
    paths = pair(write, {"train_micro_batch_size_per_gpu": 16})
    assert not codes(*paths, select=("AW7",))


def test_explain_shows_the_trainer_as_a_source(write):
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.report import render_explanation

    paths = pair(write)
    result = check_paths(list(paths), training_args=parse_argv(["--per_device_train_batch_size", "4",
                                                                "--gradient_accumulation_steps", "2"]))
    effective = result.units[0].effective
    assert (effective.micro_batch.value, effective.micro_batch.source) == (4, "trainer")
    assert (effective.global_batch.value, effective.gradient_accumulation.value) == (64, 2)
    text = render_explanation(result.units[0])
    assert "trainer" in text and "--per_device_train_batch_size 4" in text


@pytest.mark.parametrize("text,name", [
    ("per_device_train_batch_size: 4\nbf16: true\nlearning_rate: 2e-5\nmodel_name_or_path: x\n", "args.yaml"),
    ('{"per_device_train_batch_size": 4, "bf16": true, "learning_rate": "2e-5", "dataset": "x"}', "args.json"),
])
def test_arguments_file_json_and_yaml(write, text, name):
    args = parse_file(write(name, text))
    assert (args["per_device_train_batch_size"], args["bf16"], args["learning_rate"]) == (4, True, 2e-5)
    assert args.is_given("bf16") and not args.is_given("fp16") and not args.problems
    assert any("ignored 1 argument" in note for note in args.notes)


def test_arguments_file_problems_and_errors(write):
    args = parse_file(write("a.yaml", "per_device_train_batch_size: 4.5\nbf16: maybe\n"))
    assert {p.name for p in args.problems} == {"per_device_train_batch_size", "bf16"}
    with pytest.raises(InputError):
        parse_file(write("list.yaml", "- a\n- b\n"))
    with pytest.raises(InputError):
        parse_file(write("bad.json", "{not json"))
    with pytest.raises(InputError):
        parse_file(write("x.yaml", "a: 1").parent / "absent.yaml")


def test_command_line_wins_over_the_file(write):
    args = load_training_arguments(write("a.yaml", "per_device_train_batch_size: 4\nbf16: true\n"),
                                   ["--per_device_train_batch_size=2"])
    assert (args["per_device_train_batch_size"], args["bf16"]) == (2, True)


def test_cli_check_reads_arguments_after_double_dash(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yaml, _ = pair(write, {"train_micro_batch_size_per_gpu": 16})
    result = cli("check", str(yaml), "--select", "AW7", "--", "--per_device_train_batch_size", "4", "--output_dir", "o")
    assert result.exit_code == 1 and "AW702" in result.stdout
    assert "--output_dir" in result.stderr  # the note: arguments accelwiz does not read
    result = cli("check", str(yaml), "--select", "AW7", "--", "--per_device_train_batch_size", "16")
    assert result.exit_code == 0, result.stdout


def test_cli_check_training_args_file_and_json_from_deepspeed(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("ds.json", json.dumps({**AUTO_JSON, "train_micro_batch_size_per_gpu": 16}))
    yaml = write("plain.yaml", "distributed_type: DEEPSPEED\nnum_processes: 2\n")
    args = write("args.yaml", "deepspeed: ds.json\nper_device_train_batch_size: 4\n")
    result = cli("check", str(yaml), "--training-args", str(args), "--select", "AW7")
    assert result.exit_code == 1 and "AW702" in result.stdout and "ds.json" in result.stdout


def test_run_preflights_a_trainer_scripts_arguments(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yaml, _ = pair(write, {"train_micro_batch_size_per_gpu": 16})
    trainer_script = write("train.py", "from transformers import HfArgumentParser, Trainer, TrainingArguments\n")
    plain_script = write("plain.py", "print('no Trainer here')\n")
    refused = cli("run", "--dry-run", "--config", str(yaml), str(trainer_script), "--",
                  "--per_device_train_batch_size", "4")
    assert refused.exit_code != 0 and "AW702" in refused.stdout + refused.stderr
    plain = cli("run", "--dry-run", "--config", str(yaml), str(plain_script), "--", "--per_device_train_batch_size", "4")
    assert "AW702" not in plain.stdout + plain.stderr


def test_trl_config_file_is_read_for_a_trl_script(write, tmp_path):
    from accelwiz.config.trainer_script import trainer_arguments_for_script

    script = write("sft.py", "from trl import SFTConfig, TrlParser\n")
    recipe = write("recipe.yaml", "per_device_train_batch_size: 2\nbf16: true\n")
    args = trainer_arguments_for_script(script, ["--config", str(recipe), "--gradient_accumulation_steps", "4"])
    assert (args["per_device_train_batch_size"], args["bf16"], args["gradient_accumulation_steps"]) == (2, True, 4)
    assert trainer_arguments_for_script(write("plain.py", "print(1)\n"), ["--bf16"]) is None


def test_trl_defaults_turn_bf16_and_checkpointing_on(write):
    from accelwiz.config.trl_arguments import with_trl_defaults

    args = with_trl_defaults(parse_argv([]), sft=True)
    assert (args["bf16"], args.gradient_checkpointing, args["learning_rate"]) == (True, True, 2e-05)
    fp16 = with_trl_defaults(parse_argv(["--fp16", "--gradient_checkpointing", "false"]))
    assert (fp16["bf16"], fp16["fp16"], fp16.gradient_checkpointing) == (False, True, False)
    assert not fp16.problems  # TRL's bf16 default yields to --fp16: no "fp16 and bf16" refusal
    assert with_trl_defaults(parse_argv(["--bf16", "--fp16"])).problems  # given both: still refused


def test_trl_script_on_a_v100_is_bf16_without_flags(write, corpus):
    """A TRL script with no --bf16 trains in bf16 (TRL's default): on a V100 that is AW703."""
    from accelwiz.config.trainer_script import trainer_arguments_for_script

    script = write("sft.py", "from trl import SFTConfig, SFTTrainer, TrlParser\n")
    args = trainer_arguments_for_script(script, ["--per_device_train_batch_size", "4"])
    dolly = corpus / "broken" / "databrickslabs-dolly__11.json"
    assert "AW703" in codes(dolly, system=load_system("8xV100-32GB"), training_args=args)
    plain = trainer_arguments_for_script(write("hf.py", "from transformers import Trainer\n"), [])
    assert "AW703" not in codes(dolly, system=load_system("8xV100-32GB"), training_args=plain)


def test_cli_check_trl_flag(cli, corpus):
    dolly = corpus / "broken" / "databrickslabs-dolly__11.json"
    result = cli("check", str(dolly), "--system", "8xV100-32GB", "--select", "AW7", "--trl")
    assert "AW703" in result.stdout and "TRL default" in result.stdout
    assert "AW703" not in cli("check", str(dolly), "--system", "8xV100-32GB", "--select", "AW7").stdout


LONE = {"train_batch_size": 100, "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
        "zero_optimization": {"stage": 2}}


def test_a_lone_json_batch_no_world_size_can_give_is_refused(write):
    """Without a YAML the world size is unknown, but 100 is no multiple of 8 x 1: no process count works."""
    lone = write("ds.json", json.dumps(LONE))
    assert "AW702" in trainer_codes([lone], ["--per_device_train_batch_size", "8"])
    assert "AW702" not in trainer_codes([lone], ["--per_device_train_batch_size", "5"])  # 20 processes would do


@pytest.mark.parametrize("world,refused", [(4, True), (20, False)])
def test_num_processes_gives_a_lone_json_its_world_size(cli, write, world, refused):
    lone = write("ds.json", json.dumps(LONE))
    found = json.loads(cli("check", str(lone), "--num-processes", str(world), "--select", "AW702", "--format",
                           "json", "--", "--per_device_train_batch_size", "5").stdout)
    assert bool(found) is refused
    if refused:
        assert "calculated) is 20" in found[0]["message"]


@pytest.mark.parametrize("world,refused", [(7, True), (8, False)])
def test_num_processes_alone_checks_a_lone_json_s_batch_triple(cli, write, world, refused):
    # a JSON for the deepspeed launcher (no Trainer): DeepSpeed infers the micro-batch 256 // world and asserts
    # 256 == micro x 1 x world, which 7 processes fail (36 x 7 = 252); was refused as a usage error
    lone = write("ds.json", json.dumps({"train_batch_size": 256, "zero_optimization": {"stage": 2}}))
    result = cli("check", str(lone), "--num-processes", str(world), "--format", "json")
    found = [d for d in json.loads(result.stdout) if d["code"] == "AW212"]
    assert bool(found) is refused and result.exit_code == (1 if refused else 0)
    if refused:
        assert "256 != 36 * 1 * 7" in found[0]["message"] and "--num-processes 7" in found[0]["message"]


@pytest.mark.parametrize("argv,replacement", [
    (["--warmup_ratio", "0.1"], "--warmup_steps"), (["--warmup-ratio=0.03"], "--warmup_steps"),
    (["--no_cuda"], "--use_cpu"), (["--evaluation_strategy", "steps"], "--eval_strategy"),
])
def test_transformers_4_arguments_are_read_and_refused(write, argv, replacement):
    """transformers 5 removed them: HfArgumentParser refuses the option ("Some specified arguments are not used")."""
    args = parse_argv([*argv, "--per_device_train_batch_size", "4"])
    assert [p.name for p in args.problems] and replacement in args.problems[0].message
    assert args["per_device_train_batch_size"] == 4  # the value after a removed option is not taken for another
    found = diagnostics(write("a.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\n"), select=("AW701",),
                        training_args=args)
    assert found and "transformers 5 spelling" in (found[0].fix or "")


def test_an_arguments_file_with_warmup_ratio_is_refused_too(write):
    args = parse_file(write("args.yaml", "warmup_ratio: 0.1\nlearning_rate: 2.0e-5\n"))
    assert [p.name for p in args.problems] == ["warmup_ratio"] and args["learning_rate"] == 2e-05
