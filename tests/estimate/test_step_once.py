"""The optimizer step as each engine runs it, its reserve counted once (issue 28, cause 2).

`estimate --model qwen2.5-7b --system 2xA100-80GB --strategy zero2 --micro-batch 1 --seq-len 256
--gradient-checkpointing --precision bf16` counted 28.4 GiB of step buffers inside the allocated peak and the same
28.4 GiB again as allocator reserve (122.4 GiB). The H200's ZeRO streams show the step's flat buffers taking
segments beside what forward and backward reserved, once; a fused AdamW (torch's fused=True, the HF Trainer's
default adamw_torch_fused, DeepSpeed's FusedAdam) has no foreach temporary."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from accelwiz.config.training_args import parse_argv
from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.deepspeed_step import deepspeed_step_segments
from accelwiz.estimate.step_temporaries import optimizer_step_temporaries
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.resolution.workload import resolve_workload

_ISSUE = Workload(resolve_model("qwen2.5-7b"), micro_batch=1, seq_len=256, gradient_checkpointing=True,
                  precision="bf16")
_ZERO2 = Strategy("zero2", gpus_per_node=2)


def test_the_step_buffers_are_reserved_once() -> None:
    estimate = estimate_memory(_ISSUE, _ZERO2)
    step = deepspeed_step_segments(_ISSUE, _ZERO2)
    before_step = max(total for name, total in estimate.phases if name != "optimizer")
    allocated = max(total for _, total in estimate.phases)
    # reserved: what forward and backward held, plus the step's segments; never the step's peak plus them again
    assert estimate.reserved == round(max(allocated, before_step + step))
    assert estimate.reserved < allocated + step


def test_a_fused_adamw_has_no_foreach_temporary() -> None:
    foreach, _ = optimizer_step_temporaries(_ISSUE, _ZERO2)
    fused, note = optimizer_step_temporaries(replace(_ISSUE, optimizer_kernel="fused"), _ZERO2)
    partition = _ISSUE.trainable_parameters / 2
    # at the update: the fp32 gradient copy and AdamW's fp32 foreach temporary, the 16-bit partition freed
    assert foreach == (4 + 4 - 2) * partition
    # fused: the copy's moment is the peak (the flattened 16-bit gradients and their fp32 copy)
    assert fused == (2 + 4) * partition and "fp32 copy" in note and "foreach" not in note
    single, _ = optimizer_step_temporaries(replace(_ISSUE, optimizer_kernel="fused"), Strategy("single"))
    assert single == 0.0
    fused_estimate = estimate_memory(replace(_ISSUE, optimizer_kernel="fused"), _ZERO2)
    before_step = max(total for name, total in fused_estimate.phases if name != "optimizer")
    # the reserve: the fp32 copy's segment beside what forward and backward held, never below the allocated
    # peak (where the flattened gradients found no free block large enough)
    assert fused_estimate.reserved == round(max(before_step + 4 * partition, fused_estimate.allocated))
    assert estimate_memory(_ISSUE, _ZERO2).reserved > fused_estimate.reserved


def test_the_trainers_optim_and_deepspeeds_optimizer_section_decide_the_kernel() -> None:
    assert resolve_workload().optimizer_kernel.value == "foreach"  # the built-in trainer's torch.optim.AdamW
    trainer = resolve_workload(trainer_args=parse_argv(["--bf16"])).optimizer_kernel
    assert (trainer.value, trainer.source) == ("fused", "trainer arguments")  # default optim adamw_torch_fused
    assert resolve_workload(trainer_args=parse_argv(["--optim", "adamw_torch"])).optimizer_kernel.value == "foreach"
    text = json.dumps({"zero_optimization": {"stage": 2}, "bf16": {"enabled": True},
                       "optimizer": {"type": "AdamW", "params": {"lr": "auto"}}})
    effective = resolve(None, parse_text(text, Path("ds.json"), kind="deepspeed"))
    # DeepSpeed builds its FusedAdam from the section, whatever the Trainer's optim says
    kernel = resolve_workload(effective=effective, trainer_args=parse_argv(["--optim", "adamw_torch"])).optimizer_kernel
    assert (kernel.value, kernel.source) == ("fused", "deepspeed json")


def test_the_command_line_says_which_adamw_kernel_steps(tmp_path) -> None:
    """`--optimizer-kernel fused|loop` reaches the workload unchanged (a user can say the Trainer's default
    adamw_torch_fused, or its adamw_hf loop of before 4.32); it is refused beside an optimizer that is not AdamW."""
    import subprocess
    import sys

    def estimate(*extra: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "accelwiz", "estimate", "--model", "llama-2-7b", "--gpu-memory",
                               "80GiB", "--strategy", "single", "--precision", "bf16", "--seq-len", "512",
                               "--format", "json", *extra], capture_output=True, text=True, check=False)
        return {"rc": done.returncode, "out": done.stdout, "err": done.stderr}

    foreach, fused, loop = estimate(), estimate("--optimizer-kernel", "fused"), estimate("--optimizer-kernel", "loop")
    sizes = [json.loads(r["out"])["estimate"]["sizes"] for r in (foreach, fused, loop)]
    # pure bf16: torch AdamW's foreach step keeps one 2-byte temporary per parameter; fused, none; a per-parameter
    # loop (here torch's single-tensor AdamW: today's transformers has no adamw_hf) the root and quotient of the
    # largest tensor it steps, the LM head, beside the final norm's denom (loop_step.py)
    assert sizes[0]["temporaries"] == 2 * resolve_model("llama-2-7b").num_parameters
    assert sizes[1]["temporaries"] == 0
    assert sizes[2]["temporaries"] == 2 * (2 * 32000 * 4096 + 4096)
    refused = estimate("--optimizer", "sgd", "--optimizer-kernel", "fused")
    assert refused["rc"] == 2 and refused["err"].startswith("error: --optimizer-kernel fused with --optimizer sgd")
