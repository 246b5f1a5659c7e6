"""The run as its activation formulas see it (activations.py): a prepared QLoRA without autocast computes in fp32,
and whether LoRA's adapters are fp32 over a 16-bit base."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload


def kbit_fp32_stream(workload: Workload, *, autocast: bool = False, fp32_adapters: bool | None = None,
                     strategy: Strategy | None = None) -> bool:
    """QLoRA after PEFT's `prepare_model_for_kbit_training` (peft 0.21 casts every parameter that is no
    `Params4bit` to fp32), without autocast: the fp32 embedding starts an fp32 residual stream, the fp32 norms keep
    it fp32, and bitsandbytes' `Linear4bit` computes in its compute dtype but returns its input's dtype (fp32), so
    every activation, every checkpointed input and the logits are fp32, exactly as in fp32 LoRA (the test). Not
    under DeepSpeed, which casts every floating parameter to 16-bit (then no adapter is fp32 either), nor FSDP,
    whose mixed precision gathers the parameters in 16-bit (`strategy`: None, as on one GPU)."""
    if strategy is not None and strategy.kind not in ("single", "ddp"):
        return False
    return (workload.regime == "qlora" and workload.kbit_prepared and workload.precision == "bf16"
            and not autocast and adapters_in_fp32(workload, fp32_adapters))


def as_activations_run(workload: Workload, *, autocast: bool = False, fp32_adapters: bool | None = None,
                       strategy: Strategy | None = None) -> Workload:
    """The workload as its activations see it: fp32 where `kbit_fp32_stream` (the activation formulas then count
    fp32 LoRA's tensors, which the real prepared QLoRA layer keeps to the byte); else unchanged."""
    if not kbit_fp32_stream(workload, autocast=autocast, fp32_adapters=fp32_adapters, strategy=strategy):
        return workload
    from dataclasses import replace

    return replace(workload, precision="fp32")


def adapters_in_fp32(workload: Workload, fp32_adapters: bool | None) -> bool:
    """Whether LoRA's adapters are fp32 over a 16-bit base: as asked, else as states.py counts them (no strategy:
    outside DeepSpeed, which casts them with the model)."""
    if fp32_adapters is not None:
        return fp32_adapters
    from accelwiz.estimate.states import peft_fp32_adapters

    return peft_fp32_adapters(workload, None)
