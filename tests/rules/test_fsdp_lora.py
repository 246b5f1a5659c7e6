"""AW317: LoRA under FSDP1 with use_orig_params, from the Accelerate YAML or from the Trainer's --fsdp_config."""

from __future__ import annotations

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.workload import Workload
from tests.rules.helpers import diagnostics

FSDP = "distributed_type: FSDP\nnum_processes: 2\nmixed_precision: bf16\nfsdp_config:\n"
LORA = Workload(resolve_model("llama-2-7b"), micro_batch=2, seq_len=2048, regime="lora")
FULL = Workload(resolve_model("llama-2-7b"), micro_batch=2, seq_len=2048)


def aw317(write, yaml: str, argv: list[str] | None = None, workload: Workload = LORA):
    return diagnostics(write("accelerate.yaml", yaml), select=("AW317",), workload=workload,
                       training_args=parse_argv(argv) if argv is not None else None)


def test_the_launchers_default_gives_the_frozen_base_a_gradient(write):
    [found] = aw317(write, FSDP + "  fsdp_version: 1\n")
    assert "fsdp_use_orig_params unset (accelerate launch's default: true)" in found.message
    assert "12.6 GiB per GPU over 2 GPU(s) for 40.0M trainable parameters" in found.message


@pytest.mark.parametrize("yaml,workload", [
    (FSDP + "  fsdp_version: 1\n  fsdp_use_orig_params: false\n", LORA),
    (FSDP + "  fsdp_version: 2\n", LORA),
    (FSDP + "  fsdp_version: 1\n", FULL),
])
def test_silent_without_the_flat_gradient(write, yaml, workload):
    assert not aw317(write, yaml, workload=workload)


def test_the_trainers_fsdp1_default_is_reported_as_the_trainers(write):
    fsdp1 = ["--fsdp", "full_shard auto_wrap", "--fsdp_config", '{"version": 1}']
    [found] = aw317(write, FSDP + "  fsdp_version: 1\n  fsdp_use_orig_params: false\n", fsdp1)
    assert "not written, the Trainer's default" in found.message  # the Trainer's plugin replaces the YAML's


def test_the_trainers_use_orig_params_false_and_its_fsdp2_are_silent(write):
    off = ["--fsdp", "full_shard auto_wrap", "--fsdp_config", '{"version": 1, "use_orig_params": false}']
    assert not aw317(write, FSDP + "  fsdp_version: 1\n", off)
    assert not aw317(write, FSDP + "  fsdp_version: 1\n", ["--fsdp", "full_shard auto_wrap"])  # version 2
