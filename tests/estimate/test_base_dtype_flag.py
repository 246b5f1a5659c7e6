"""`--base-dtype`: LoRA/QLoRA's frozen base as a script loads it (from_pretrained's dtype; transformers < 5 and TRL
of 2024 loaded fp32 where a script named none, Lightning Fabric's bf16-mixed keeps fp32 weights), where the
built-in trainer's default is a 16-bit base under --precision mixed|bf16. It reaches the estimator as a Trainer's
own load does (resolution/workload.py `base_as_loaded`) and is refused where it means nothing."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app

ARGV = ["estimate", "--model", "llama-2-7b", "--system", "1xA100-80GB", "--strategy", "single", "--precision", "mixed",
        "--micro-batch", "2", "--seq-len", "1024", "--gradient-checkpointing", "--format", "json"]
LLAMA2_7B = 6_738_415_616


def _run(*extra: str):
    return CliRunner().invoke(app, [*ARGV, *extra])


def _weights(*extra: str) -> int:
    result = _run(*extra)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["estimate"]["per_gpu_bytes"]["weights"]


def test_an_fp32_base_holds_two_more_bytes_per_frozen_parameter():
    sixteen, fp32 = _weights("--lora"), _weights("--lora", "--base-dtype", "fp32")
    # the adapters are fp32 either way; autocast's 16-bit copy of what it casts for the matmuls comes on top
    assert 2 * LLAMA2_7B <= fp32 - sixteen <= 2.05 * LLAMA2_7B
    assert _weights("--lora", "--base-dtype", "bf16") == sixteen


@pytest.mark.parametrize(("extra", "said"), [
    (["--base-dtype", "fp32"], "with full fine-tuning"),
    (["--lora", "--base-dtype", "fp8"], "invalid base_dtype `fp8`"),
])
def test_refused_in_one_line_where_it_means_nothing(extra, said):
    result = _run(*extra)
    assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output
