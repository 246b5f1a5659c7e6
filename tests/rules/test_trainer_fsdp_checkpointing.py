"""AW714: the Trainer's --fsdp with the Trainer's activation checkpointing (transformers#30404), against the
warning TrainingArguments itself logs for the same arguments."""

from __future__ import annotations

import logging

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl_defaults
from tests.rules.helpers import codes

PLAIN = "distributed_type: MULTI_GPU\nnum_processes: 4\n"


@pytest.mark.parametrize("argv,fires", [
    (["--fsdp", "full_shard auto_wrap", "--gradient_checkpointing"], True),
    (["--fsdp", "--activation_checkpointing", "true"], True),  # --fsdp alone is True (nargs="?", const=True)
    (["--fsdp=full_shard", "--gradient_checkpointing", "true", "--bf16"], True),
    (["--fsdp", "full_shard auto_wrap"], False),  # no checkpointing
    (["--gradient_checkpointing"], False),  # no Trainer FSDP
    (["--fsdp", "", "--gradient_checkpointing"], False),  # a falsy fsdp: _process_fsdp_args returns early
    (["--fsdp", "full_shard", "--gradient_checkpointing", "false"], False),
])
def test_fires_exactly_when_transformers_warns(write, tmp_path, argv, fires):
    from transformers import HfArgumentParser, TrainingArguments

    config = write("accelerate.yaml", PLAIN)
    assert ("AW714" in codes(config, select=("AW714",), training_args=parse_argv(argv))) is fires
    records: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: records.append(record.getMessage())  # transformers' loggers do not propagate
    logger = logging.getLogger("transformers.training_args")
    logger.addHandler(handler)
    try:
        HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
            [*argv, "--output_dir", str(tmp_path), "--use_cpu", "true", "--report_to", "none"])
    finally:
        logger.removeHandler(handler)
    assert any("redundant AllGather" in r for r in records) is fires


def test_trls_default_checkpointing_counts(write):
    config = write("accelerate.yaml", PLAIN)
    trl = with_trl_defaults(parse_argv(["--fsdp", "full_shard auto_wrap"]), sft=True)
    assert codes(config, select=("AW714",), training_args=trl) == {"AW714"}


def test_the_fsdp_option_reads_as_hf_argument_parser(tmp_path):
    from transformers import HfArgumentParser, TrainingArguments

    for argv, expected in ((["--fsdp"], True), (["--fsdp", "full_shard auto_wrap"], "full_shard auto_wrap"),
                           ([], None)):
        parser = HfArgumentParser(TrainingArguments)
        namespace, _ = parser.parse_known_args([*argv, "--output_dir", str(tmp_path)])
        assert namespace.fsdp == expected == parse_argv(argv)["fsdp"]
