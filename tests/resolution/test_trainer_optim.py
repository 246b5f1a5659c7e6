"""Issue 28: the HF Trainer's AdamW kernel where `optim` is not given follows the stack (resolution/trainer_optim.py):
adamw_torch_fused from transformers 4.54 on torch >= 2.8, adamw_torch (foreach) before it, transformers' own
per-parameter AdamW (adamw_hf) before 4.32; a given `optim` wins. The installed transformers is the check of the
newest branch: its TrainingArguments' own default is compared with what the resolution says."""

from __future__ import annotations

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.resolution.stack import Stack, installed_stack
from accelwiz.resolution.trainer_optim import trainer_default_kernel
from accelwiz.resolution.workload import TRAINER, resolve_workload


@pytest.mark.parametrize(("transformers", "torch", "kernel", "named"), [
    ((4, 54, 0), (2, 8, 0), "fused", "adamw_torch_fused"),
    ((5, 25, 0), (2, 13, 0), "fused", "adamw_torch_fused"),
    ((4, 53, 3), (2, 8, 0), "foreach", "fused needs transformers >= 4.54.0"),
    ((4, 56, 0), (2, 7, 1), "foreach", "fused needs torch >= 2.8"),
    ((4, 32, 0), (2, 0, 1), "foreach", "adamw_torch"),
    ((4, 36, 2), (1, 13, 1), "loop", "before 2.0 loops over the parameters"),
    ((4, 31, 0), (2, 0, 1), "loop", "adamw_hf"),
    (None, None, "fused", "today's"),
])
def test_the_default_kernel_follows_transformers_and_torch(transformers, torch, kernel, named) -> None:
    chosen = trainer_default_kernel(Stack(transformers=transformers, torch=torch))
    assert chosen.value == kernel and chosen.source == TRAINER and named in chosen.note


def _kernel(argv: list[str], *stack: str):
    flags = {"stack": list(stack)} if stack else {}
    return resolve_workload(trainer_args=parse_argv(argv), flags=flags).optimizer_kernel


def test_the_trainer_layer_reads_the_stack_and_a_given_optim_wins() -> None:
    assert _kernel(["--output_dir", "o"], "transformers==4.46.3", "torch==2.5.1").value == "foreach"
    assert _kernel(["--output_dir", "o"], "transformers==4.30.2").value == "loop"
    old = _kernel(["--output_dir", "o", "--optim", "adamw_torch_fused"], "transformers==4.46.3", "torch==2.5.1")
    assert (old.value, old.note) == ("fused", "--optim adamw_torch_fused")
    assert _kernel(["--output_dir", "o", "--optim", "adamw_torch"]).value == "foreach"


def test_the_installed_trainer_default_is_the_one_resolved() -> None:
    transformers = pytest.importorskip("transformers")
    default = transformers.TrainingArguments.__dataclass_fields__["optim"].default
    expected = {"adamw_torch_fused": "fused", "adamw_torch": "foreach", "adamw_hf": "loop"}[str(default)]
    assert trainer_default_kernel(installed_stack()).value == expected
    assert _kernel(["--output_dir", "o"]).value == expected


def test_the_loop_step_holds_only_the_largest_tensors_temporaries() -> None:
    from accelwiz.estimate.step_temporaries import optimizer_step_temporaries
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.modelspec.lookup import resolve_model

    workload = Workload(resolve_model("llama-3.1-8b"), precision="bf16")
    foreach, _ = optimizer_step_temporaries(workload, Strategy("single"))
    loop, note = optimizer_step_temporaries(Workload(workload.model, precision="bf16", optimizer_kernel="loop"),
                                            Strategy("single"))
    # torch's single-tensor loop (no --stack: today's transformers, no adamw_hf): the untied LM head's root and
    # quotient beside the final norm's denom (estimate/loop_step.py), not one temporary per parameter
    assert foreach == 2 * workload.trainable_parameters and "per-parameter loop" in note
    assert loop == 2 * (2 * 128256 * 4096 + 4096)
