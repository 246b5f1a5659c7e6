"""AW815: arguments trl 1.16's configs no longer have, against the installed trl's own parsers."""

from __future__ import annotations

import dataclasses

import pytest

from accelwiz.config.training_args import parse_argv, parse_file
from accelwiz.config.trl_arguments import with_trl_defaults
from accelwiz.config.trl_arguments import with_trl
from accelwiz.rules.trl_removed import ABBREVIATES, CONFIG_NAMES, REMOVED
from tests.rules.helpers import codes, diagnostics

ENTRIES = [(config, name, instead) for config, table in REMOVED.items() for name, (_, instead) in table.items()]


@pytest.mark.parametrize("config,name,instead", ENTRIES)
def test_trls_parser_leaves_the_removed_option_unused_and_reads_the_new_one(config, name, instead, tmp_path):
    import trl
    from transformers import HfArgumentParser

    cls = getattr(trl, CONFIG_NAMES[config])
    assert name not in {f.name for f in dataclasses.fields(cls)}
    # a recipe file: TrlParser.parse_args_and_config raises "Unknown arguments from config file" for what is left
    assert trl.TrlParser([cls]).set_defaults_with_config(**{name: 1}) == [f"--{name}", "1"]
    _, unused = HfArgumentParser(cls).parse_known_args([f"--{name}", "1", "--output_dir", str(tmp_path)])
    if (config, name) in ABBREVIATES:  # argparse completes the old name to the new field on the command line
        assert not unused
    else:  # parse_args_into_dataclasses raises "Some specified arguments are not used"
        assert f"--{name}" in unused
    if instead.startswith("write --"):
        new = instead.removeprefix("write --").split()[0]
        _, unused = HfArgumentParser(cls).parse_known_args([f"--{new}", "1", "--output_dir", str(tmp_path)])
        assert not unused


def _check(write, args):
    return codes(write("accelerate.yaml", "distributed_type: 'NO'\n"), select=("AW815",), training_args=args)


def test_fires_for_the_config_that_lost_the_field_only(write):
    argv = ["--max_prompt_length", "512"]
    assert _check(write, with_trl(parse_argv(argv), "grpo", None, argv)) == {"AW815"}
    assert _check(write, with_trl(parse_argv(argv), "dpo", None, argv)) == {"AW815"}
    sft = ["--max_seq_length", "4096"]
    assert _check(write, with_trl_defaults(parse_argv(sft), sft=True)) == {"AW815"}
    assert not _check(write, with_trl(parse_argv(sft), "grpo", None, sft))  # not a GRPOConfig name that was removed
    assert not _check(write, parse_argv(sft))  # a plain Trainer script may define it itself
    ok = ["--max_length", "4096"]
    assert not _check(write, with_trl_defaults(parse_argv(ok), sft=True))


def test_an_abbreviation_argparse_completes_is_not_reported_from_the_command_line(write):
    argv = ["--vllm_max_model_len", "4096"]
    assert not _check(write, with_trl(parse_argv(argv), "grpo", None, argv))


def test_a_recipe_file_key_counts_too(write):
    recipe = write("recipe.yaml", "vllm_max_model_len: 4096\nnum_generations: 8\n")
    args = with_trl(parse_file(recipe), "grpo", recipe, [])
    (found,) = diagnostics(write("accelerate.yaml", "distributed_type: 'NO'\n"), select=("AW815",),
                           training_args=args)
    assert "recipe.yaml" in found.message and "--vllm_max_model_length" in found.message
