"""The GPU benchmark's FSDP2 path (benchmarks/gpu_step.py) trains here on the CPU, so the next lent GPU measures
FSDP instead of failing on it. FSDP1 refuses a machine without an accelerator ("FSDP needs a non-CPU accelerator
device"), so its path waits for the GPU."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from estimator_accuracy import matrix  # noqa: E402
from gpu_step import _train_single, wrap_fsdp  # noqa: E402

from tests.estimate.accuracy_settings import internal_strategy  # noqa: E402


def test_the_fsdp_settings_are_estimated_as_full_shard_of_their_version():
    fsdp = [s for s in matrix() if s.strategy.startswith("fsdp")]
    assert [internal_strategy(s).fsdp_version for s in fsdp] == [2, 1, 2, 1]
    assert {internal_strategy(s).kind for s in fsdp} == {"fsdp_full"}


def test_fsdp2_wraps_each_block_and_the_root_and_trains_a_step(monkeypatch):
    import socket

    import torch
    import torch.distributed as dist
    from transformers import LlamaConfig, LlamaForCausalLM

    # the launcher's variables for one process, set here so they are undone after: left in this worker's
    # environment, they made later subprocesses (TRL's configs) start a process group on the same fixed port
    # as another worker's, and fail with EADDRINUSE
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                       ("MASTER_PORT", str(port))):
        monkeypatch.setenv(key, value)

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2))
    before = model.model.layers[0].mlp.up_proj.weight.detach().clone()
    try:
        wrapped = wrap_fsdp(model, 2, "cpu")
        _train_single(wrapped, torch.randint(0, 64, (2, 16)), autocast=False)
        assert type(wrapped).__name__ == "FSDPLlamaForCausalLM"
        assert all(type(block).__name__.startswith("FSDP") for block in wrapped.model.layers)
        after = wrapped.model.layers[0].mlp.up_proj.weight.full_tensor()
        assert not torch.equal(before, after)  # the steps changed the sharded fp32 parameters
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
