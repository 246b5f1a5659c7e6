"""AW235/AW236: `"zero_optimization": true`, DeepSpeed's boolean form of the ZeRO block (DeepSpeed#118).

Plain DeepSpeed reads it as ZeRO stage 1, so such a file is not a wrong type (it was reported as AW003, a false
error); accelerate and the Trainer cannot read it. Both halves are checked against the installed libraries."""

from __future__ import annotations

import json

import pytest

from tests.rules.helpers import codes, diagnostics

FLAG = json.dumps({"train_micro_batch_size_per_gpu": 1, "zero_optimization": True})
BLOCK = json.dumps({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 1}})
HF_FLAG = json.dumps({"train_micro_batch_size_per_gpu": "auto", "zero_optimization": True})


def test_deepspeed_reads_the_boolean_as_stage_1():
    # the library fact AW235 rests on: runtime/zero/config.py get_zero_config -> read_zero_config_deprecated
    from deepspeed.runtime.zero.config import get_zero_config

    assert get_zero_config({"zero_optimization": True}).stage == 1
    assert get_zero_config({"zero_optimization": False}).stage == 0


def test_accelerate_cannot_read_the_boolean():
    # the library fact AW236 rests on: HfDeepSpeedConfig.find_config_node calls .get on the block
    from accelerate.utils.deepspeed import HfDeepSpeedConfig

    with pytest.raises(AttributeError, match="'bool' object has no attribute 'get'"):
        HfDeepSpeedConfig(json.loads(HF_FLAG))


def test_plain_deepspeed_boolean_is_a_warning_not_a_type_error(write):
    found = codes(write("ds.json", FLAG))
    assert "AW235" in found
    assert not found & {"AW003", "AW236"}  # DeepSpeed accepts the form: no error
    assert not {d.code for d in diagnostics(write("ok.json", BLOCK))} & {"AW235", "AW236"}


def test_boolean_reads_as_the_stage_deepspeed_runs(write):
    # stage 1, not the "no stage given" 0: rules that depend on the stage see what DeepSpeed runs
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    result = check_paths([write("ds.json", FLAG)], select_rules(("AW235",)))
    assert [d.code for d in result.diagnostics] == ["AW235"]
    assert "stage 1" in result.diagnostics[0].message


def test_boolean_through_accelerate_is_an_error(write):
    ds = write("ds.json", HF_FLAG)
    yaml = write("accelerate.yaml", f"distributed_type: DEEPSPEED\nnum_processes: 2\n"
                                    f"deepspeed_config:\n  deepspeed_config_file: {ds}\n")
    found = codes(yaml)
    assert "AW236" in found and "AW235" not in found
