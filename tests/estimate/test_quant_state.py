"""QLoRA under FSDP/ZeRO-3: bitsandbytes' quantization state is no parameter, so every rank holds all of it.

The library side is read off a real bitsandbytes NF4 weight quantized on the CPU; the estimate's weights are
checked against the hand computation.
"""

from __future__ import annotations

import pytest

from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.frozen_base import QLORA_BYTES_PER_PARAM, quant_state_bytes
from accelwiz.estimate.states import model_states
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload


def test_bitsandbytes_keeps_the_quant_state_outside_the_parameters():
    """What FSDP flattens and ZeRO-3 partitions is `module.parameters()`: for a Linear4bit that is the packed
    weight alone (0.5 B per weight in bf16 quant storage); the absmax (uint8 per 64 weights, double
    quantization) and its fp32 second level are attributes of the QuantState, in no parameter or buffer."""
    torch = pytest.importorskip("torch")
    bnb = pytest.importorskip("bitsandbytes")
    out_features, in_features = 512, 256
    layer = bnb.nn.Linear4bit(in_features, out_features, bias=False, compute_dtype=torch.bfloat16,
                              quant_type="nf4", quant_storage=torch.bfloat16)
    layer.weight = bnb.nn.Params4bit(torch.randn(out_features, in_features, dtype=torch.bfloat16),
                                     requires_grad=False, quant_type="nf4", quant_storage=torch.bfloat16,
                                     compress_statistics=True)
    if not layer.weight.bnb_quantized:
        layer.weight = layer.weight._quantize("cpu")
    weights = out_features * in_features
    state = layer.weight.quant_state
    held = {id(t) for t in (*layer.parameters(), *layer.buffers())}
    assert [p.numel() * p.element_size() for p in layer.parameters()] == [weights // 2]
    assert id(state.absmax) not in held and id(state.state2.absmax) not in held
    state_bytes = state.absmax.numel() * state.absmax.element_size() + state.state2.absmax.numel() * 4
    assert state_bytes / weights == pytest.approx(QLORA_BYTES_PER_PARAM - 0.5)


@pytest.mark.parametrize("kind", ["fsdp_full", "zero3"])
def test_sharded_qlora_weights_keep_the_whole_quant_state_per_rank(kind):
    """Doubling the ranks halves the packed weights and the 16-bit rest, never the quantization state; with
    parameter offload the quantization state stays on the GPU."""
    workload = Workload(resolve_model("llama-2-70b"), regime="qlora", precision="bf16", lora_rank=8)
    replicated = (QLORA_BYTES_PER_PARAM - 0.5) * workload.quantized_parameters
    assert quant_state_bytes(workload) == pytest.approx(replicated)
    two = model_states(workload, Strategy(kind, gpus_per_node=2)).weights
    four = model_states(workload, Strategy(kind, gpus_per_node=4)).weights
    assert two - replicated == pytest.approx(2 * (four - replicated))
    offloaded = model_states(workload, Strategy(kind, gpus_per_node=2, offload_optimizer="cpu",
                                                offload_param="cpu"))
    assert offloaded.weights == pytest.approx(replicated)


def test_lora_and_single_gpu_qlora_have_nothing_apart():
    lora = Workload(resolve_model("llama-2-7b"), regime="lora")
    assert quant_state_bytes(lora) == 0
    # loaded in bf16 without PEFT's k-bit fp32 cast (tests/estimate/test_base_dtype.py counts that one)
    qlora = Workload(resolve_model("llama-2-7b"), regime="qlora", precision="bf16", kbit_prepared=False)
    single = model_states(qlora, Strategy("single")).weights  # one GPU: the state is in the 4.127 bits/param
    assert single == pytest.approx(
        QLORA_BYTES_PER_PARAM * qlora.quantized_parameters
        + 2 * (qlora.model.num_parameters - qlora.quantized_parameters) + 2 * qlora.trainable_parameters
    )
