"""FSDP's root unit (embeddings, final norm, LM head) stays gathered from forward to the end of backward.

The library behaviour is read off a real FSDP2 model on the CPU (a one-rank gloo group); the estimate's
gathered buffers are checked against the hand computation for Llama-2-7B.
"""

from __future__ import annotations

import socket

import pytest

from accelwiz.estimate.buffers import buffer_bytes
from accelwiz.estimate.fsdp_reserve import fsdp_root_parameters
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.frozen_base import QLORA_BYTES_PER_PARAM
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload

# Llama-2-7B: vocab 32,000, hidden 4,096, intermediate 11,008, 32 layers, untied LM head
VOCAB, HIDDEN, INTER = 32_000, 4_096, 11_008
BLOCK = 4 * HIDDEN * HIDDEN + 3 * HIDDEN * INTER + 2 * HIDDEN  # q, k, v, o + gate, up, down + two norms
ROOT = 2 * VOCAB * HIDDEN + HIDDEN  # embed_tokens, lm_head, final norm


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_fsdp2_keeps_the_root_unsharded_between_forward_and_backward(monkeypatch):
    """torch's rule (FSDPState._lazy_init: the root's post_forward_mesh_info is None), on a real model: after
    forward the root's parameters are still gathered while a block's are sharded again; backward reshards."""
    torch = pytest.importorskip("torch")
    dist = pytest.importorskip("torch.distributed")
    fsdp = pytest.importorskip("torch.distributed.fsdp")
    if not hasattr(fsdp, "fully_shard"):
        pytest.skip("this torch has no FSDP2 fully_shard")
    from torch.distributed.fsdp._fully_shard._fsdp_param import ShardedState
    from transformers import LlamaConfig, LlamaForCausalLM

    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")  # undone after: the worker's later subprocesses inherit it
    monkeypatch.setenv("MASTER_PORT", str(_free_port()))
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        config = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2)
        model = LlamaForCausalLM(config)
        for layer in model.model.layers:  # accelerate's TRANSFORMER_BASED_WRAP: the decoder layers, then the root
            fsdp.fully_shard(layer)
        fsdp.fully_shard(model)

        def state(module):
            return module._get_fsdp_state()._fsdp_param_group.fsdp_params[0].sharded_state

        tokens = torch.randint(0, 128, (1, 8))
        loss = model(input_ids=tokens, labels=tokens).loss
        assert state(model) == ShardedState.UNSHARDED
        assert all(state(layer) == ShardedState.SHARDED for layer in model.model.layers)
        loss.backward()
        assert state(model) == ShardedState.SHARDED
    finally:
        dist.destroy_process_group()


def test_root_parameters_are_everything_outside_the_blocks():
    spec = resolve_model("llama-2-7b")
    assert fsdp_root_parameters(spec) == ROOT
    assert spec.layer_parameters == BLOCK
    assert spec.num_parameters == ROOT + 32 * BLOCK


@pytest.mark.parametrize("regime", ["lora", "qlora"])
def test_fsdp_buffers_are_two_blocks_and_the_root_by_hand(regime):
    """bf16 LoRA on FSDP full shard: two 16-bit blocks (the current one and the prefetched one) and the 16-bit
    root; QLoRA gathers its blocks packed (4.127 bits) but the root unquantized, and dequantizes its largest
    block linear (gate/up/down, 4,096 x 11,008) to 16-bit."""
    workload = Workload(resolve_model("llama-2-7b"), precision="bf16", regime=regime)
    buffers, notes = buffer_bytes(workload, Strategy("fsdp_full", gpus_per_node=2, fsdp_version=1))
    if regime == "lora":
        expected = 2 * 2 * BLOCK + 2 * ROOT
    else:
        expected = 2 * QLORA_BYTES_PER_PARAM * BLOCK + 2 * ROOT + 2 * HIDDEN * INTER
    assert buffers == pytest.approx(expected, rel=1e-12)
    assert any("root unit" in note for note in notes)


def test_shard_grad_op_keeps_everything_gathered_without_a_root_term():
    """SHARD_GRAD_OP never reshards after forward: its gathered parameters are in the weights already."""
    workload = Workload(resolve_model("llama-2-7b"), precision="bf16", regime="lora")
    full, _ = buffer_bytes(workload, Strategy("fsdp_full", gpus_per_node=2))
    grad_op, _ = buffer_bytes(workload, Strategy("fsdp_grad_op", gpus_per_node=2))
    assert full - grad_op == pytest.approx(2 * 2 * BLOCK + 2 * ROOT)
