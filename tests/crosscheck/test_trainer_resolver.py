"""accelwiz's model of the HF Trainer's DeepSpeed fill against transformers' and accelerate's own code, on CPU.

Each case is a DeepSpeed config, a training command line, a world size and the way the Trainer meets the config
(`--deepspeed`, the Accelerate YAML's file, or the YAML's inline keys). The real side parses the command line with
`HfArgumentParser(TrainingArguments)` and runs the real calls in the order a run makes them:
`HfTrainerDeepSpeedConfig.trainer_config_process`, accelerate's `DeepSpeedPlugin` and `set_mixed_precision`,
transformers' `propagate_args_to_deepspeed`, and `trainer_config_finalize` (with a stand-in model that only has a
hidden size). accelwiz must agree on every case: the same refusal lines ("- ds X=... vs hf Y=..."), the same
precision refusal, the same filled values and the same dtype.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from accelwiz.config.trainer_deepspeed import get_value, inline_config, resolve_for_trainer
from accelwiz.config.trainer_fields import FIELDS
from accelwiz.config.training_args import parse_argv

pytest.importorskip("transformers")
pytest.importorskip("deepspeed")

AUTO_BATCH = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
              "gradient_accumulation_steps": "auto", "gradient_clipping": "auto", "zero_optimization": {"stage": 2}}
ADAMW = {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}
WARMUP = {"type": "WarmupLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                                         "warmup_num_steps": "auto"}}
COMPARED_KEYS = ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "train_batch_size",
                 "gradient_clipping", "optimizer.params.lr", "optimizer.params.betas", "optimizer.params.eps",
                 "optimizer.params.weight_decay", "scheduler.params.warmup_min_lr", "scheduler.params.warmup_max_lr",
                 "scheduler.params.warmup_num_steps", "scheduler.params.total_num_steps", "fp16.enabled",
                 "bf16.enabled", "checkpoint.use_node_local_storage", "zero_optimization.stage")
NUM_TRAINING_STEPS = 1000  # what the real finalize is told when --max_steps is not given (accelwiz leaves it open)


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    merged.update(changes)
    return merged


@dataclass(frozen=True)
class Case:
    config: dict[str, Any]
    argv: list[str]
    world: int = 8
    path: str = "trainer"  # "trainer" (--deepspeed), "launcher" (the YAML's JSON), "inline" (the YAML's keys)
    launcher_precision: str | None = None  # the YAML's mixed_precision (ACCELERATE_MIXED_PRECISION)
    launcher_env: dict[str, str] = field(default_factory=dict)  # what `accelerate launch` exports for inline keys
    expect_refused: bool = False  # what the case is about, to keep the table honest


CASES: dict[str, Case] = {
    "all auto, defaults": Case(AUTO_BATCH, []),
    "all auto with optimizer and scheduler": Case(with_(AUTO_BATCH, optimizer=ADAMW, scheduler=WARMUP),
                                                  ["--learning_rate", "2e-5", "--weight_decay", "0.1"]),
    "micro-batch 16 vs --per_device_train_batch_size 4": Case(
        with_(AUTO_BATCH, train_micro_batch_size_per_gpu=16), ["--per_device_train_batch_size", "4"],
        expect_refused=True),
    "micro-batch matches": Case(with_(AUTO_BATCH, train_micro_batch_size_per_gpu=4),
                                ["--per_device_train_batch_size=4"]),
    "GA the string '8' (LLaMA-Factory#1116)": Case(with_(AUTO_BATCH, gradient_accumulation_steps="8"),
                                                   ["--gradient_accumulation_steps", "8", "--fp16"],
                                                   expect_refused=True),
    "train_batch_size equals world x micro x GA": Case(with_(AUTO_BATCH, train_batch_size=256),
                                                       ["--per_device_train_batch_size", "4",
                                                        "--gradient_accumulation_steps", "8"]),
    "train_batch_size 128 vs 8 x 4 x 8": Case(with_(AUTO_BATCH, train_batch_size=128),
                                             ["--per-device-train-batch-size", "4", "--gradient_accumulation_steps",
                                              "8"], expect_refused=True),
    "train_batch_size on one process": Case(with_(AUTO_BATCH, train_batch_size=32),
                                            ["--per_device_train_batch_size", "8", "--gradient_accumulation_steps",
                                             "4"], world=1),
    "clipping 1.0 vs --max_grad_norm 0.3": Case(with_(AUTO_BATCH, gradient_clipping=1.0), ["--max_grad_norm", "0.3"],
                                                expect_refused=True),
    "clipping the int 1 vs the default 1.0": Case(with_(AUTO_BATCH, gradient_clipping=1), []),
    "optimizer lr 1e-4 vs --learning_rate 2e-5": Case(
        with_(AUTO_BATCH, optimizer={"type": "AdamW", "params": {"lr": 1e-4}}), ["--learning_rate", "2e-5"],
        expect_refused=True),
    "betas [0.9, 0.95] vs the default betas": Case(
        with_(AUTO_BATCH, optimizer={"type": "AdamW", "params": {"betas": [0.9, 0.95]}}), [], expect_refused=True),
    "betas auto from --adam_beta2": Case(with_(AUTO_BATCH, optimizer=ADAMW), ["--adam_beta2", "0.95"]),
    "bf16 auto with --bf16 (dolly#11)": Case(with_(AUTO_BATCH, bf16={"enabled": "auto"}), ["--bf16"]),
    "bf16 true in the JSON without --bf16": Case(with_(AUTO_BATCH, bf16={"enabled": True}), [],
                                                 expect_refused=True),
    "bf16 'false' as a string with --bf16": Case(with_(AUTO_BATCH, bf16={"enabled": "false"}), ["--bf16", "true"],
                                                 expect_refused=True),
    "fp16 auto with --fp16_full_eval": Case(with_(AUTO_BATCH, fp16={"enabled": "auto"}), ["--fp16_full_eval"]),
    "YAML bf16, fp16 auto, no flag (launcher)": Case(with_(AUTO_BATCH, fp16={"enabled": "auto"}), [],
                                                     path="launcher", launcher_precision="bf16",
                                                     expect_refused=True),
    "YAML bf16, bf16 auto, --bf16 (launcher)": Case(with_(AUTO_BATCH, bf16={"enabled": "auto"}), ["--bf16"],
                                                    path="launcher", launcher_precision="bf16"),
    "YAML bf16, bf16 auto, --deepspeed without --bf16": Case(with_(AUTO_BATCH, bf16={"enabled": "auto"}), [],
                                                             launcher_precision="bf16"),
    "fp16 on in the JSON, --bf16 (launcher)": Case(with_(AUTO_BATCH, fp16={"enabled": True}), ["--bf16"],
                                                   path="launcher", expect_refused=True),
    "no GA key, --gradient_accumulation_steps 4 (launcher)": Case(
        {k: v for k, v in AUTO_BATCH.items() if k != "gradient_accumulation_steps"},
        ["--gradient_accumulation_steps", "4"], path="launcher", expect_refused=True),
    "no GA key, --gradient_accumulation_steps 4 (--deepspeed)": Case(
        {k: v for k, v in AUTO_BATCH.items() if k != "gradient_accumulation_steps"},
        ["--gradient_accumulation_steps", "4"]),
    "auto_find_batch_size with a fixed micro-batch": Case(with_(AUTO_BATCH, train_micro_batch_size_per_gpu=16),
                                                          ["--per_device_train_batch_size", "4",
                                                           "--auto_find_batch_size"], expect_refused=True),
    "scheduler auto with --max_steps and --warmup_steps": Case(
        with_(AUTO_BATCH, scheduler={"type": "WarmupDecayLR", "params": {
            "warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto",
            "total_num_steps": "auto"}}), ["--max_steps", "100", "--warmup_steps", "10"]),
    "warmup_num_steps 100 vs --warmup_steps 10": Case(
        with_(AUTO_BATCH, scheduler={"type": "WarmupLR", "params": {"warmup_num_steps": 100}}),
        ["--warmup_steps", "10"], expect_refused=True),
    "warmup_num_steps 1 with no warmup": Case(
        with_(AUTO_BATCH, scheduler={"type": "WarmupLR", "params": {"warmup_num_steps": 1}}), []),
    "warmup ratio 0.1 of --max_steps 200": Case(
        with_(AUTO_BATCH, scheduler={"type": "WarmupLR", "params": {"warmup_num_steps": 20}}),
        ["--max_steps", "200", "--warmup_steps", "0.1"]),
    "total_num_steps 500 vs --max_steps 1000": Case(
        with_(AUTO_BATCH, scheduler={"type": "WarmupDecayLR", "params": {"total_num_steps": 500,
                                                                         "warmup_num_steps": "auto"}}),
        ["--max_steps", "1000"], expect_refused=True),
    "--save_on_each_node": Case(AUTO_BATCH, ["--save_on_each_node"]),
    "inline GA 4 vs the Trainer's 1 (LLaMA-Factory#201)": Case(
        {"zero_stage": 2, "gradient_accumulation_steps": 4}, [], path="inline",
        launcher_env={"ACCELERATE_GRADIENT_ACCUMULATION_STEPS": "4", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "2"},
        expect_refused=True),
    "inline clipping 0.5 vs the default max_grad_norm": Case(
        {"zero_stage": 3, "gradient_clipping": 0.5}, ["--gradient_accumulation_steps", "2"], path="inline",
        launcher_env={"ACCELERATE_GRADIENT_CLIPPING": "0.5", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"},
        expect_refused=True),
    "inline keys, YAML fp16, --fp16": Case(
        {"zero_stage": 2}, ["--fp16"], path="inline", launcher_precision="fp16",
        launcher_env={"ACCELERATE_DEEPSPEED_ZERO_STAGE": "2"}),
}


@dataclass
class Outcome:
    refusal: list[str]
    precision_error: str | None
    values: dict[str, Any]
    dtype: str | None


def _real(case: Case, monkeypatch, tmp_path) -> Outcome:
    """The libraries' own answer."""
    import torch
    from accelerate.utils import DeepSpeedPlugin
    from transformers import HfArgumentParser, TrainingArguments
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig, propagate_args_to_deepspeed

    for name in [n for n in os.environ if n.startswith("ACCELERATE_")]:
        monkeypatch.delenv(name)
    if case.launcher_precision:
        monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", case.launcher_precision)
    for name, value in case.launcher_env.items():
        monkeypatch.setenv(name, value)

    class Args(TrainingArguments):  # the world size of the launch, without starting a process group
        @property
        def world_size(self) -> int:
            return case.world

    (args,) = HfArgumentParser(Args).parse_args_into_dataclasses(
        [*case.argv, "--output_dir", str(tmp_path), "--use_cpu", "true", "--report_to", "none"])
    model = SimpleNamespace(config=SimpleNamespace(hidden_size=64))
    steps = args.max_steps if args.max_steps > 0 else NUM_TRAINING_STEPS
    error: str | None = None
    hf_config = None
    try:
        if case.path == "trainer":  # TrainingArguments(deepspeed=...), then the Accelerator applies the precision
            hf_config = HfTrainerDeepSpeedConfig(copy.deepcopy(case.config))
            hf_config.trainer_config_process(args)
            plugin = DeepSpeedPlugin(hf_ds_config=hf_config)
            plugin.set_mixed_precision(args.mixed_precision)
        else:  # accelerate's plugin from the launcher's env first, then the Trainer's propagate_args_to_deepspeed
            plugin = DeepSpeedPlugin(hf_ds_config=copy.deepcopy(case.config)) if case.path == "launcher" \
                else DeepSpeedPlugin()
            plugin.set_mixed_precision(args.mixed_precision)
            accelerator = SimpleNamespace(state=SimpleNamespace(deepspeed_plugin=plugin))
            propagate_args_to_deepspeed(accelerator, args)
            hf_config = plugin.hf_ds_config
        hf_config.trainer_config_finalize(args, model, steps)
    except ValueError as exc:
        error = str(exc)
    refusal = [line for line in (error or "").splitlines() if line.startswith("- ds ")]
    precision_error = error if error and "mixed_precision" in error else None
    config = hf_config.config if hf_config is not None else {}
    dtype = None
    if hf_config is not None and getattr(hf_config, "_dtype", None) is not None:
        dtype = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}[hf_config._dtype]
    return Outcome(refusal, precision_error, {k: get_value(config, k) for k in COMPARED_KEYS}, dtype)


def _accelwiz(case: Case) -> tuple[Outcome, list[str]]:
    args = parse_argv(case.argv)
    assert not args.problems, args.problems
    config = inline_config(case.config) if case.path == "inline" else case.config
    resolution = resolve_for_trainer(config, args, world_size=case.world, path=case.path,  # type: ignore[arg-type]
                                     launcher_precision=case.launcher_precision)
    values = {k: get_value(resolution.config, k) for k in COMPARED_KEYS}
    dtype = None if resolution.precision_error else resolution.dtype
    return Outcome([m.line for m in resolution.mismatches], resolution.precision_error, values, dtype), \
        resolution.open_keys


def test_the_table_is_large_and_mixed():
    assert len(CASES) >= 20
    refused = sum(c.expect_refused for c in CASES.values())
    assert 8 <= refused <= len(CASES) - 8


@pytest.mark.parametrize("name", sorted(CASES))
def test_accelwiz_agrees_with_transformers(name, monkeypatch, tmp_path):
    case = CASES[name]
    real = _real(case, monkeypatch, tmp_path)
    ours, open_keys = _accelwiz(case)
    assert bool(real.refusal or real.precision_error) == case.expect_refused, real
    assert sorted(ours.refusal) == sorted(real.refusal)
    assert (ours.precision_error is None) == (real.precision_error is None)
    if real.precision_error:
        assert ours.precision_error in real.precision_error
        return
    for key in COMPARED_KEYS:
        if key in open_keys:
            continue
        assert ours.values[key] == real.values[key], f"{key}: accelwiz {ours.values[key]!r}, real {real.values[key]!r}"
    if real.dtype is not None:
        assert ours.dtype == real.dtype


def test_modelled_defaults_are_transformers_defaults():
    import dataclasses

    from transformers import TrainingArguments

    from accelwiz.config.trainer_fields import ALL_FIELDS

    real = {f.name: f for f in dataclasses.fields(TrainingArguments) if f.init}
    assert set(real) == set(ALL_FIELDS)
    for name, spec in FIELDS.items():
        assert real[name].default == spec.default, name


@pytest.mark.parametrize("argv", [
    ["--bf16", "--per_device_train_batch", "4"],  # an abbreviation argparse completes
    ["--bf16=no", "--gradient-accumulation-steps=3"],
    ["--gradient_checkpointing", "--max_steps", "-1", "--fp16", "False"],
    ["--bf16", "true", "--no_dataloader_pin_memory", "--learning_rate", "1e-4", "--max_grad_norm=0"],
    ["--warmup_steps", "0.05", "--optim", "adafactor", "--lr_scheduler_type", "cosine"],
])
def test_command_line_reads_as_hf_argument_parser(argv, tmp_path):
    from transformers import HfArgumentParser, TrainingArguments

    (real,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
        [*argv, "--output_dir", str(tmp_path), "--use_cpu", "true", "--report_to", "none"])
    ours = parse_argv(argv)
    for name in FIELDS:
        if name in ("deepspeed", "use_cpu"):  # use_cpu: added above so that --bf16 parses on this CPU machine
            continue
        if name in ("fsdp", "fsdp_config"):  # rewritten by __post_init__: test_trainer_fsdp_plugin.py
            continue
        expected = getattr(real, name)
        expected = getattr(expected, "value", expected)  # enums (optim, lr_scheduler_type)
        if name in ("gradient_checkpointing", "activation_checkpointing"):
            assert ours.gradient_checkpointing == bool(expected), name  # __post_init__ mirrors the two names
        else:
            assert ours[name] == expected, name


@pytest.mark.parametrize("argv", [[], ["--fp16"], ["--gradient_checkpointing", "false", "--learning_rate", "1e-4"]])
def test_trl_defaults_are_sftconfigs(argv, tmp_path):
    """accelwiz's TRL defaults against SFTConfig itself (skipped where trl is not installed, as on this machine)."""
    trl = pytest.importorskip("trl")
    from transformers import HfArgumentParser

    from accelwiz.config.trl_arguments import with_trl_defaults

    (real,) = HfArgumentParser(trl.SFTConfig).parse_args_into_dataclasses(
        [*argv, "--output_dir", str(tmp_path), "--use_cpu", "true", "--report_to", "none"])
    ours = with_trl_defaults(parse_argv(argv), sft=True)
    assert (ours["bf16"], ours["fp16"], ours["learning_rate"]) == (real.bf16, real.fp16, real.learning_rate)
    assert ours.gradient_checkpointing == bool(real.gradient_checkpointing)


_VALUES = {"int": ["4", "1", "16"], "float": ["0.3", "2e-5", "1", "0.05"], "bool": ["true", "False", "yes", "0", "t"],
           "optional_bool": ["true", "false"], "str": ["adafactor", "cosine", "adamw_torch"]}
_STR_CHOICES = {"optim": ["adafactor", "adamw_torch", "sgd"], "lr_scheduler_type": ["cosine", "linear", "constant"],
                "eval_strategy": ["no", "steps", "epoch"], "save_strategy": ["no", "steps", "epoch", "best"]}


def _argv_strategy():
    from hypothesis import strategies as st

    from accelwiz.config.trainer_fields import FIELDS

    # tf32: TrainingArguments refuses --tf32 true without an Ampere GPU, which this machine may or may not have
    # fsdp/fsdp_config: TrainingArguments rewrites both; tests/crosscheck/test_trainer_fsdp_plugin.py compares them
    names = [n for n, spec in FIELDS.items() if spec.kind not in ("deepspeed", "mapping", "fsdp")
             and n not in ("use_cpu", "tf32")]

    @st.composite
    def one(draw):
        name = draw(st.sampled_from(names))
        kind = FIELDS[name].kind
        option = draw(st.sampled_from([f"--{name}", f"--{name.replace('_', '-')}"]))
        value = draw(st.sampled_from(_STR_CHOICES.get(name, _VALUES[kind])))
        if kind in ("bool", "optional_bool") and draw(st.booleans()):
            return [option]  # a flag alone is true
        return [f"{option}={value}"] if draw(st.booleans()) else [option, value]

    unknown = st.sampled_from([["--model_name_or_path", "gpt2"], ["--dataset_name=x"], ["--lora_r", "8"]])
    return st.lists(st.one_of(one(), unknown), max_size=6).map(lambda parts: [t for p in parts for t in p])


def test_random_command_lines_read_as_hf_argument_parser(tmp_path):
    """Random training command lines (both spellings, `=` or not, flags alone, unknown options among them): every
    modelled field reads as HfArgumentParser(TrainingArguments).parse_args_into_dataclasses reads it."""
    from hypothesis import given, settings
    from transformers import HfArgumentParser, TrainingArguments

    from accelwiz.config.trainer_fields import FIELDS
    from accelwiz.rules.trainer_schedule import best_model_schedule_problem, effective_eval_steps

    parser = HfArgumentParser(TrainingArguments)

    @settings(max_examples=15, deadline=None)  # each example builds a real TrainingArguments
    @given(_argv_strategy())
    def check(argv):
        ours = parse_argv(argv)
        if (ours["fp16"] and ours["bf16"]) or (ours["fp16_full_eval"] and ours["bf16_full_eval"]):
            assert ours.problems  # TrainingArguments refuses both; nothing more to compare
            return
        if best_model_schedule_problem(ours) is not None:  # AW709: TrainingArguments refuses the schedule
            with pytest.raises(ValueError, match="load_best_model_at_end requires"):
                parser.parse_args_into_dataclasses(
                    [*argv, "--output_dir", str(tmp_path), "--use_cpu", "true", "--report_to", "none"],
                    return_remaining_strings=True)
            return
        real, _ = parser.parse_args_into_dataclasses(
            [*argv, "--output_dir", str(tmp_path), "--use_cpu", "true", "--report_to", "none"],
            return_remaining_strings=True)
        for name in FIELDS:
            if name in ("deepspeed", "use_cpu"):
                continue
            expected = getattr(real, name)
            expected = getattr(expected, "value", expected)
            if name in ("gradient_checkpointing", "activation_checkpointing"):
                assert ours.gradient_checkpointing == bool(expected), (argv, name)
            elif name == "eval_steps":  # __post_init__ falls back to logging_steps
                assert effective_eval_steps(ours) == expected, (argv, name)
            else:
                assert ours[name] == expected, (argv, name, ours[name], expected)

    check()
