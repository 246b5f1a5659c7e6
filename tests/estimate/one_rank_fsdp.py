"""A one-rank gloo process group and FSDP2's `fully_shard` on the CPU, for tests that read what torch's FSDP does
to a real transformers model (no GPU: a world of one still runs FSDP2's hooks, states and dtypes)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def one_rank_fsdp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The `torch.distributed.fsdp` module inside a one-rank gloo group, destroyed after; skips where this torch
    has no FSDP2. MASTER_ADDR/PORT through `monkeypatch`, undone after (later subprocesses inherit the env)."""
    dist = pytest.importorskip("torch.distributed")
    fsdp = pytest.importorskip("torch.distributed.fsdp")
    if not hasattr(fsdp, "fully_shard"):
        pytest.skip("this torch has no FSDP2 fully_shard")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(_free_port()))
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        yield fsdp
    finally:
        dist.destroy_process_group()


def tiny_llama(dtype: Any = None) -> Any:
    """A two-layer Llama of transformers' own code, small enough for a CPU step."""
    from transformers import LlamaConfig, LlamaForCausalLM

    model = LlamaForCausalLM(LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2))
    return model if dtype is None else model.to(dtype)
