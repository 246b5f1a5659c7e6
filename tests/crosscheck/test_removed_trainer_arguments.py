"""The transformers 4 arguments accelwiz reports as removed (REMOVED_IN_5) are refused by the installed
HfArgumentParser, on the command line and in an arguments file, and none is a TrainingArguments field."""

from __future__ import annotations

import dataclasses

import pytest

from accelwiz.config.trainer_fields import ALL_FIELDS, REMOVED_IN_5

transformers = pytest.importorskip("transformers")


def test_no_removed_name_is_a_field_of_the_installed_training_arguments():
    fields = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    assert not set(REMOVED_IN_5) & fields
    assert not set(REMOVED_IN_5) & ALL_FIELDS


@pytest.mark.parametrize("name", ["warmup_ratio", "no_cuda", "evaluation_strategy"])
def test_hf_argument_parser_refuses_them(name, tmp_path):
    parser = transformers.HfArgumentParser(transformers.TrainingArguments)
    with pytest.raises(ValueError, match="not used by the HfArgumentParser"):
        parser.parse_args_into_dataclasses(["--output_dir", str(tmp_path), f"--{name}", "1"])
    with pytest.raises(ValueError, match="not used by the HfArgumentParser"):
        parser.parse_dict({"output_dir": str(tmp_path), name: 1})
