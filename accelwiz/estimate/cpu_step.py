"""torch's AdamW step on CPU tensors: what it holds beside the states (states.py asks for a CPU strategy's step).

A leaf module: states.py imports it, and it imports nothing of the estimator (cpu.py imports memory.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

ADAM_CPU_TEMPORARIES = 2  # exp_avg_sq.sqrt() and its quotient, both alive before `.add_(eps)` returns


def cpu_step_temporaries(workload: Workload) -> tuple[float, str]:
    """The bytes torch's AdamW step holds beside the states on CPU tensors: its single-tensor path, two
    temporaries the size of the largest trainable parameter: `_default_to_fused_or_foreach` picks foreach only
    for cuda/xpu/mtia tensors, and `_single_tensor_adam` computes `(exp_avg_sq.sqrt() / bias_correction2_sqrt)`."""
    # pure bf16 keeps bf16 states, but for LoRA: PEFT's adapters are fp32 (states.py `peft_fp32_adapters`)
    width = 2 if workload.precision == "bf16" and workload.regime == "full" else 4
    if workload.regime == "full":
        largest = max(t.numel for t in workload.model.tensors())
    else:
        largest = max(workload.adapter_matrices, default=0)
    return (ADAM_CPU_TEMPORARIES * width * largest,
            f"AdamW on CPU tensors: the single-tensor loop (no foreach), {ADAM_CPU_TEMPORARIES} temporaries of the "
            f"largest trainable parameter ({largest:,} elements)")
