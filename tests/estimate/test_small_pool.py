"""LoRA's small tensors in the allocator's small pool (estimate/small_pool.py), against the H200's own streams.

Each LoRA stream of tests/fixtures/allocator_streams (r=16 on every linear, fp32 adapters under autocast) is
replayed through the allocator model, reading its small pool's segments at their most: they hold the
adapters' AdamW states (static, counted at their size), the gradients and the step's foreach temporary (what
small_pool.py adds to the reserve) and a few small activations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from accelwiz.estimate.allocator import K_SMALL_SIZE, replay
from accelwiz.estimate.allocator_stream import events_from_history, read_history
from accelwiz.estimate.small_pool import adapter_small_pool_bytes
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "allocator_streams"
sys.path.insert(0, str(REPO / "benchmarks"))

from estimator_accuracy import Setting  # noqa: E402

from tests.estimate.accuracy_settings import internal_workload  # noqa: E402

ROWS = {row["setting"]: row for row in json.loads((REPO / "benchmarks/results/estimator_accuracy.json").read_text())["rows"]}
LORA_STREAMS = {name: entry["setting"] for name, entry in json.loads((FIXTURES / "index.json").read_text())["streams"].items()
                if " lora single " in entry["setting"]}


def small_pool_segments(name: str) -> int:
    """The most the real allocator held in small-pool segments over the whole run (none is released)."""
    return replay(events_from_history(read_history(FIXTURES / name))).peak_small_reserved


def test_the_lora_streams_are_there() -> None:
    assert len(LORA_STREAMS) == 8


@pytest.mark.parametrize("name", sorted(LORA_STREAMS), ids=lambda n: LORA_STREAMS[n])
def test_the_small_pool_holds_the_states_the_gradients_and_the_temporary(name: str) -> None:
    workload = internal_workload(Setting.from_row(ROWS[LORA_STREAMS[name]]))
    held, note = adapter_small_pool_bytes(workload, Strategy("single"), "backward")
    states = 2 * 4 * workload.trainable_parameters  # AdamW's two fp32 states
    assert held == 2 * 4 * workload.trainable_parameters  # every r=16 matrix of these models is 1 MiB or less
    assert "foreach temporary" in note
    taken = small_pool_segments(name)
    assert states + held <= taken <= states + held + 0.2 * 2**30  # the rest: a few small activations


def test_not_counted_where_the_tensors_are_flat_or_the_step_is_the_peak() -> None:
    from accelwiz.modelspec.lookup import resolve_model

    lora = Workload(resolve_model("mistral-7b"), micro_batch=2, seq_len=2048, regime="lora", precision="mixed")
    assert adapter_small_pool_bytes(lora, Strategy("single"), "backward")[0] > 0
    assert adapter_small_pool_bytes(lora, Strategy("ddp", gpus_per_node=2), "forward")[0] > 0
    assert adapter_small_pool_bytes(lora, Strategy("zero2", gpus_per_node=2), "backward")[0] == 0
    assert adapter_small_pool_bytes(lora, Strategy("fsdp_full", gpus_per_node=2), "backward")[0] == 0
    assert adapter_small_pool_bytes(lora, Strategy("single"), "optimizer")[0] == 0
    full = Workload(resolve_model("mistral-7b"), micro_batch=2, seq_len=2048, regime="full")
    assert adapter_small_pool_bytes(full, Strategy("single"), "backward")[0] == 0


def test_large_adapter_matrices_go_to_the_large_pool() -> None:
    """r=64 on Llama-2-7B's 11008-wide MLP: 64 x 11008 x 4 B = 2.7 MiB per matrix, not small."""
    from accelwiz.modelspec.lookup import resolve_model

    model = resolve_model("llama-2-7b")
    r16 = Workload(model, micro_batch=1, seq_len=512, regime="lora", lora_rank=16, precision="mixed")
    r64 = Workload(model, micro_batch=1, seq_len=512, regime="lora", lora_rank=64, precision="mixed")
    assert adapter_small_pool_bytes(r64, Strategy("single"), "backward")[0] < adapter_small_pool_bytes(
        r16, Strategy("single"), "backward")[0] * 4
    # r=64: the 4096 x 64 matrices are exactly 1 MiB (small); the MLP's 11008-wide ones are not
    small = sum(n * 4 for n in r64.adapter_matrices if n * 4 <= K_SMALL_SIZE)
    assert adapter_small_pool_bytes(r64, Strategy("single"), "backward")[0] == 2 * small
