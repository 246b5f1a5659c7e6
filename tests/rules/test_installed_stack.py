"""Findings true for the installed stack (issue 29): a rule that speaks of a library version says what that
version does, read from the profile's packages (`--system`) or this environment's metadata."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

from accelwiz.probe.profiles import load_system
from accelwiz.probe.versions import version_at_least
from accelwiz.rules.installed import stack_version
from accelwiz.rules.context import CheckContext
from tests.rules.helpers import diagnostics

V100 = Path(__file__).resolve().parent.parent / "fixtures" / "systems" / "8xV100-32GB.json"


def with_packages(**versions: str | None):
    """The 8 x V100 profile (a real `probe --save`) with other library versions installed."""
    profile = load_system(str(V100))
    return profile.model_copy(update={"packages": {**profile.packages, **versions}})


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(data))
    return path


def messages(path: Path, code: str, **context) -> list[str]:
    return [d.message for d in diagnostics(path, select=(code,), **context) if d.code == code]


def test_the_stack_version_is_the_profiles_else_this_environments():
    assert stack_version(CheckContext(), "transformers") == version("transformers")
    system = with_packages(transformers="4.17.0")
    assert stack_version(CheckContext(system=system), "transformers") == "4.17.0"
    assert stack_version(CheckContext(system=with_packages(deepspeed=None)), "deepspeed") is None


def test_reduce_bucket_size_auto_below_zero3_is_a_finding_only_for_transformers_417(tmp_path):
    """AW232 spoke of transformers <= 4.17 whatever was installed; current transformers fills the key."""
    path = write(tmp_path, {"train_micro_batch_size_per_gpu": 4,
                            "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"}})
    assert version_at_least(version("transformers"), "4.18") is True  # the environment this suite runs in
    assert messages(path, "AW232") == []
    old = messages(path, "AW232", system=with_packages(transformers="4.17.0"))
    assert old == ['`zero_optimization.reduce_bucket_size` is "auto" at ZeRO stage 2: transformers 4.17.0 '
                   '(<= 4.17) leaves it unfilled below ZeRO-3']
    assert messages(path, "AW232", system=with_packages(transformers="4.18.0")) == []


def test_the_zero3_bucket_keys_are_unused_below_stage_3_on_any_version(tmp_path):
    path = write(tmp_path, {"zero_optimization": {"stage": 1, "stage3_param_persistence_threshold": "auto"}})
    assert messages(path, "AW232") == ['`zero_optimization.stage3_param_persistence_threshold` is "auto" at ZeRO '
                                       'stage 1: a ZeRO-3 setting, unused at stage 1']


def test_reduce_bucket_size_zero_says_what_the_installed_deepspeed_does(tmp_path):
    path = write(tmp_path, {"zero_optimization": {"stage": 1, "reduce_bucket_size": 0}})
    assert messages(path, "AW218", system=with_packages(deepspeed="0.19.8")) == [
        "`reduce_bucket_size` is 0: DeepSpeed 0.19.8 refuses it at startup"]
    assert messages(path, "AW218", system=with_packages(deepspeed="0.16.4")) == [
        "`reduce_bucket_size` is 0: DeepSpeed 0.16.4 divides by it in the backward pass (ZeroDivisionError)"]


def test_unset_clipping_is_no_clipping_before_deepspeed_0193(tmp_path):
    json_path = write(tmp_path, {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}})
    yaml = tmp_path / "accelerate.yaml"
    yaml.write_text(f"distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
                    f"  deepspeed_config_file: {json_path}\n")
    assert messages(yaml, "AW228", system=with_packages(deepspeed="0.19.8")) == [
        "gradient_clipping is not set: the run clips gradients at norm 1.0"]
    assert messages(yaml, "AW228", system=with_packages(deepspeed="0.18.5")) == [
        "gradient_clipping is not set: DeepSpeed 0.18.5 does not clip (its default is 0.0 before 0.19.3)"]


def test_an_unknown_top_level_key_deepspeed_ignores_is_a_warning(tmp_path):
    """DeepSpeed reads past unknown top-level keys (checked against its DeepSpeedConfig in
    tests/config/test_ignored_keys.py); a near miss of a known key stays AW001's error."""
    path = write(tmp_path, {"train_micro_batch_size_per_gpu": 4, "cuda_visible_devices": "0,1",
                            "zero_optimisation": {"stage": 2}})
    found = {(d.code, d.severity.value, d.path) for d in diagnostics(path, select=("AW001", "AW017"))}
    assert found == {("AW017", "warning", ("cuda_visible_devices",)), ("AW001", "error", ("zero_optimisation",))}


def test_zero3_init_flag_false_says_what_the_installed_accelerate_does(tmp_path):
    """AW217: before accelerate 1.0 `zero3_init_flag: false` loaded the whole model on every rank; since 1.0 the
    plugin sets transformers' HfDeepSpeedConfig whatever the flag (the installed one: read it below), so it is
    ignored for a transformers model."""
    import inspect

    from accelerate.utils import DeepSpeedPlugin

    weakref_source = inspect.getsource(DeepSpeedPlugin.set_deepspeed_weakref)
    # the HfDeepSpeedConfig is made outside the flag's `if` in the installed accelerate (the 1.0 behaviour)
    assert "\n        self.dschf = HfDeepSpeedConfig(ds_config)" in weakref_source
    yaml = tmp_path / "a.yaml"
    yaml.write_text("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 3\n"
                    "  zero3_init_flag: false\n")
    [today] = messages(yaml, "AW217")
    assert today.startswith(f"`zero3_init_flag: false` is ignored for a transformers model by accelerate "
                            f"{version('accelerate')} ")
    [old] = messages(yaml, "AW217", system=with_packages(accelerate="0.34.2"))
    assert old == ("ZeRO-3 without `zero3_init_flag`: accelerate 0.34.2 builds the model outside "
                   "deepspeed.zero.Init, so every rank loads a full copy and moves it to its GPU before it is "
                   "partitioned")
