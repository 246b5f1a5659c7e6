"""The loading phase: the resident weights and the loading path's transient, by strategy (loading.py)."""

from __future__ import annotations

from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload

SPEC = resolve_model("llama-3.1-8b")


def _loading(workload: Workload, strategy: Strategy) -> tuple[int, int]:
    estimate = estimate_memory(workload, strategy)
    phases = dict(estimate.phases)
    assert next(iter(phases)) == "loading"  # the first phase, before the step
    return phases["loading"], phases["forward"]


def test_qlora_quantizes_each_linear_from_its_16_bit_copy_on_the_gpu() -> None:
    workload = Workload(SPEC, regime="qlora", precision="bf16")
    loading, forward = _loading(workload, Strategy("single"))
    largest = max(t.numel for t in SPEC.block_linears())  # gate/up: 14336 x 4096
    base = estimate_memory(workload, Strategy("single")).weights
    assert loading == base + 2 * largest and loading < forward


def test_zero2_flattens_a_second_16_bit_copy_while_the_parameters_exist() -> None:
    workload = Workload(SPEC)
    loading, _ = _loading(workload, Strategy("zero2", gpus_per_node=8))
    weights = estimate_memory(workload, Strategy("zero2", gpus_per_node=8)).weights
    assert loading == weights + 2 * SPEC.num_parameters


def test_zero3_gathers_one_module_and_fsdp_one_block() -> None:
    workload = Workload(SPEC)
    zero3 = estimate_memory(workload, Strategy("zero3", gpus_per_node=8))
    fsdp = estimate_memory(workload, Strategy("fsdp_full", gpus_per_node=8))
    assert dict(zero3.phases)["loading"] == zero3.weights + 2 * SPEC.largest_layer_parameters
    assert dict(fsdp.phases)["loading"] == round(fsdp.weights + 2 * SPEC.layer_parameters)
    assert any(a.startswith("loading:") for a in fsdp.assumptions)


def test_parameter_offload_brings_only_the_transient() -> None:
    workload = Workload(SPEC)
    offloaded = estimate_memory(workload, Strategy("zero3", gpus_per_node=8, offload_param="cpu",
                                                   offload_optimizer="cpu"))
    assert dict(offloaded.phases)["loading"] == 2 * SPEC.largest_layer_parameters
