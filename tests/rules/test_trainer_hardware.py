"""AW713: --tf32 on GPUs without TF32 tensor cores, which `TrainingArguments` refuses."""

from __future__ import annotations

import inspect

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.probe.profiles import load_system
from tests.rules.helpers import codes

YAML = "distributed_type: MULTI_GPU\nnum_processes: 8\n"


@pytest.mark.parametrize("system,argv,refused", [
    ("8xV100-32GB", ["--fp16", "--tf32", "true"], True),
    ("1xT4", ["--tf32", "True"], True),
    ("8xMI300X", ["--bf16", "--tf32", "true"], True),  # a ROCm torch has no torch.version.cuda
    ("8xA100-80GB", ["--bf16", "--tf32", "true"], False),
    ("8xV100-32GB", ["--fp16", "--tf32", "false"], False),
    ("8xV100-32GB", ["--fp16"], False),  # unset: transformers leaves TF32 alone
])
def test_tf32_is_refused_without_ampere(write, system, argv, refused):
    found = codes(write("accelerate.yaml", YAML), select=("AW713",), training_args=parse_argv(argv),
                  system=load_system(system))
    assert ("AW713" in found) is refused


def test_without_a_machine_the_rule_stays_silent(write):
    assert not codes(write("accelerate.yaml", YAML), select=("AW713",), training_args=parse_argv(["--tf32", "true"]))


def test_the_installed_transformers_still_refuses_it():
    """The rule copies transformers' condition: fail when the installed library stops refusing, to revisit it."""
    pytest.importorskip("transformers")
    from transformers import TrainingArguments
    from transformers.utils import import_utils

    assert "--tf32 requires Ampere" in inspect.getsource(TrainingArguments.__post_init__)
    check = inspect.getsource(import_utils.is_torch_tf32_available)
    assert "torch_version.cuda is None" in check and ".major < 8" in check
