"""AW401-AW419: precision in the DeepSpeed JSON, and its agreement with the Accelerate YAML."""

from __future__ import annotations

import json

import pytest

from tests.rules.helpers import codes, diagnostics

BASE = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}


def ds(**blocks) -> str:
    return json.dumps({**BASE, **blocks})


@pytest.mark.parametrize("code,bad,good", [
    ("AW401", ds(fp16={"enabled": True}, bf16={"enabled": True}),
     ds(fp16={"enabled": "auto"}, bf16={"enabled": True})),
    ("AW401", ds(fp16={"enabled": "true"}, bfloat16={"enabled": True}),  # DeepSpeed reads "true" as true
     # DeepSpeed reads `bfloat16` only when there is no `bf16`
     ds(fp16={"enabled": True}, bf16={"enabled": False}, bfloat16={"enabled": True})),
    ("AW403", ds(bf16={"enabled": True}), ds(bf16={"enabled": "auto"})),
    ("AW404", ds(communication_data_type="bf16"), ds(communication_data_type="bf16", bf16={"enabled": True})),
    ("AW404", ds(communication_data_type="fp16", bf16={"enabled": True}),
     ds(communication_data_type="fp32", bf16={"enabled": True})),
    ("AW405", ds(bf16={"enabled": True}, zero_optimization={"stage": 0}),
     ds(bf16={"enabled": True}, zero_optimization={"stage": 1})),
    ("AW406", ds(bf16={"enabled": True, "bf16_optimizer_states": True}),
     ds(bf16={"enabled": True, "bf16_optimizer_states": True, "bf16_master_weights_and_grads": True})),
    ("AW407", ds(bf16={"enabled": True, "bf16_master_weights_and_grads": True},
                 zero_optimization={"stage": 0}),
     ds(bf16={"enabled": True, "bf16_master_weights_and_grads": True}, zero_optimization={"stage": 2})),
    ("AW408", ds(fp16={"enabled": True, "loss_scale": -1}), ds(fp16={"enabled": True, "loss_scale": 128})),
    ("AW408", ds(fp16={"enabled": True, "loss_scale": 0, "min_loss_scale": 0}),
     # only checked when dynamic loss scaling is on
     ds(fp16={"enabled": False, "loss_scale": 0, "min_loss_scale": 0})),
    ("AW408", ds(fp16={"enabled": "auto", "loss_scale_window": 0}), ds(fp16={"enabled": "auto"})),
    ("AW409", ds(data_types={"param_dtype": "bf16"}, fp16={"enabled": True}),
     ds(data_types={"param_dtype": "fp16"}, fp16={"enabled": True})),
    ("AW409", ds(data_types={"param_dtype": "bf16"}),
     ds(data_types={"param_dtype": "bf16"}, bf16={"enabled": "auto"})),
])
def test_json_precision_rule_fires_on_the_mistake_only(write, code, bad, good):
    assert code in codes(write("bad.json", bad), select=(code,))
    assert code not in codes(write("good.json", good), select=(code,))


def unit(write, mixed_precision: str | None, json_text: str):
    """An inline-reference YAML (which accelerate would refuse with a mixed_precision: see AW201) and its "
      "JSON."""
    path = write("ds.json", json_text)
    top = f"mixed_precision: {mixed_precision}\n" if mixed_precision else ""
    return write("a.yaml", f"distributed_type: DEEPSPEED\nnum_processes: 2\n{top}deepspeed_config:\n"
                           f"  deepspeed_config_file: {path}\n")


@pytest.mark.parametrize("mixed_precision,json_text,expected", [
    ("bf16", ds(fp16={"enabled": True}), {"AW402"}),  # transformers#39849
    ("fp16", ds(bf16={"enabled": True}), {"AW402"}),
    ("fp8", ds(bf16={"enabled": True}), set()),  # fp8 runs on bf16 autocast in DeepSpeed
    ("'no'", ds(bf16={"enabled": True}), {"AW402"}),  # runs in bf16 although the YAML says no
    ("bf16", ds(bf16={"enabled": True}), set()),
    ("bf16", ds(bf16={"enabled": "auto"}, fp16={"enabled": "auto"}), set()),
    (None, ds(fp16={"enabled": True}), {"AW403"}),
])
def test_yaml_precision_against_the_json(write, mixed_precision, json_text, expected):
    assert codes(unit(write, mixed_precision, json_text), select=("AW402", "AW403")) == expected


def test_misplaced_mixed_precision_inside_the_json_is_compared_too(write):
    path = write("a.json", ds(mixed_precision="fp16", bf16={"enabled": True}))
    [finding] = diagnostics(path, select=("AW402",))
    assert finding.dotted_path == "mixed_precision"
    assert finding.message == "`mixed_precision: fp16` disagrees with the DeepSpeed JSON, which enables bf16"


def test_communication_type_is_not_judged_when_the_launcher_decides(write):
    path = write("a.json", ds(communication_data_type="bf16", bf16={"enabled": "auto"}))
    assert codes(path, select=("AW404",)) == set()
