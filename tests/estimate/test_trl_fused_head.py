"""TRL's fused LM head ("trl-fused-head", estimate/trl_fused_head.py) against the real `ChunkedLogProbFunction`.

TRL 1.16's kernel runs on a CPU: its Triton folds have torch twins (`_forward_tile`, `_backward_tile`) that fold a
whole tile at once in fp32 temporaries, where the Triton kernels hold one row in registers; they run here one row at
a time (the real functions, on row slices). `_addmm_fp32` takes CUDA's path everywhere (torch >= 2.8:
`addmm(out_dtype=float32)` into the fp32 accumulator, no upcast copies; on a CPU it would upcast both operands), as
an fp32 accumulation in small blocks. Everything else -- the tile buffer, the casts to the compute dtype, the saved
tensors, backward's fp32 `grad_hidden` and `grad_weight` and their casts back -- is TRL's own code, measured with
torch's MemTracker over forward and backward, and must be what the estimate counts (`fused_head_kept` +
`loss_transient_bytes`) within the rows' scratch.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from accelwiz.estimate.activations import logits_bytes, loss_transient_bytes  # noqa: E402
from accelwiz.estimate.trl_fused_head import FUSED_VOCAB  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from accelwiz.modelspec.lookup import resolve_model  # noqa: E402

POSITIONS, HIDDEN, VOCAB = 300, 64, 3000
# one row of the folds' fp32 temporaries (at most 8 at once), the per-position fp32 statistics and outputs, and the
# emulated addmm's three 64 x 64 fp32 blocks: what the CPU run holds that CUDA's does not
SCRATCH = 8 * 4 * min(VOCAB, FUSED_VOCAB) + 12 * 4 * POSITIONS + 3 * 4 * 64 * 64


def _rowwise(fold):
    """The torch fold applied one row at a time: the Triton kernel's memory (a row), TRL's own arithmetic."""
    def run(tile, stride, *args, **kwargs):
        rows = tile.shape[0]
        for r in range(rows):
            sliced = [a[r:r + 1] if isinstance(a, torch.Tensor) and a.dim() and a.shape[0] == rows else a
                      for a in args]
            fold(tile[r:r + 1], stride, *sliced, **kwargs)
    return run


def _addmm_fp32_cuda(acc, a, b, block: int = 64) -> None:
    """`torch.addmm(acc, a, b, out_dtype=torch.float32, out=acc)`: fp32 accumulation, no copy of either operand
    (here 64 x 64 blocks of them: 48 KiB of scratch at most)."""
    for i in range(0, a.shape[0], block):
        for j in range(0, a.shape[1], block):
            acc[i:i + block] += a[i:i + block, j:j + block].float() @ b[j:j + block].float()


@pytest.fixture()
def kernel(monkeypatch):
    import trl.kernels.chunked_logprob as chunked

    monkeypatch.setattr(chunked, "_forward_tile", _rowwise(chunked._forward_tile))
    monkeypatch.setattr(chunked, "_backward_tile", _rowwise(chunked._backward_tile))
    monkeypatch.setattr(chunked, "_addmm_fp32", _addmm_fp32_cuda)
    # the first forward and backward in a process measure 0.76 MB more, once (lazy initialisation outside the
    # head): run one on a toy before measuring
    weight = torch.randn(8, 4, requires_grad=True)
    log_probs, *_ = chunked.ChunkedLogProbFunction.apply(torch.randn(2, 4, requires_grad=True), weight, None,
                                                         torch.zeros(2, dtype=torch.long), 1.0, 8, None, 1.0)
    log_probs.sum().backward()
    return chunked.ChunkedLogProbFunction


def _measured(function, hidden_dtype, weight_dtype, *, head_trains: bool, autocast: bool) -> int:
    """Peak bytes over the head's forward and backward beyond its inputs (hidden rows, weight, targets), with
    entropy requested as TRL's trainers request it."""
    from contextlib import nullcontext

    from torch.distributed._tools.mem_tracker import MemTracker

    torch.manual_seed(0)
    hidden = torch.randn(POSITIONS, HIDDEN, dtype=hidden_dtype, requires_grad=True)
    weight = (torch.randn(VOCAB, HIDDEN, dtype=weight_dtype) / 8).requires_grad_(head_trains)
    targets = torch.randint(0, VOCAB, (POSITIONS,))
    tracker = MemTracker()
    with tracker:
        with torch.autocast("cpu", dtype=torch.bfloat16) if autocast else nullcontext():
            log_probs, *_ = function.apply(hidden, weight, None, targets, 1.0, FUSED_VOCAB, None, 1.0,
                                           ("log_probs", "entropy"))
        (-log_probs.sum()).backward()
    peak = sum(stats["Total"] for stats in tracker.get_tracker_snapshot("peak").values())
    return peak - sum(t.untyped_storage().nbytes() for t in (hidden, weight, targets))


# (hidden states, head weight, precision, regime, autocast): fp32 training; 16-bit weights as DeepSpeed and FSDP
# run them (the casts back of backward's accumulators); autocast over fp32 weights (the casts to bf16)
CASES = [
    (torch.float32, torch.float32, "fp32", "full", False),
    (torch.float32, torch.float32, "fp32", "lora", False),
    (torch.bfloat16, torch.bfloat16, "bf16", "full", False),
    (torch.bfloat16, torch.bfloat16, "bf16", "lora", False),
    (torch.float32, torch.float32, "mixed", "full", True),
]


@pytest.mark.parametrize(("hidden_dtype", "weight_dtype", "precision", "regime", "autocast"), CASES,
                         ids=[f"{c[2]}-{c[3]}{'-autocast' if c[4] else ''}" for c in CASES])
def test_what_trls_head_keeps_and_allocates_is_counted(kernel, hidden_dtype, weight_dtype, precision, regime,
                                                       autocast) -> None:
    measured = _measured(kernel, hidden_dtype, weight_dtype, head_trains=regime == "full", autocast=autocast)
    spec = replace(resolve_model("llama-3.2-1b"), vocab_size=VOCAB, hidden_size=HIDDEN)
    workload = Workload(spec, micro_batch=1, seq_len=POSITIONS, precision=precision, regime=regime,
                        loss_kernel="trl-fused-head")
    forward, backward = loss_transient_bytes(workload, autocast=autocast)
    counted = logits_bytes(workload, autocast=autocast) + max(forward, backward)
    print(f"measured {measured:,} B, counted {counted:,} B")
    assert 0 <= measured - counted <= SCRATCH, (measured, counted)


def test_backwards_fp32_accumulators_are_counted_where_the_head_trains() -> None:
    """Qwen2.5-7B's head (152,064 x 3,584) in bf16 under DeepSpeed: backward's fp32 `grad_weight` and its bf16 cast
    (6 x V x H, 3.0 GiB) dwarf the 128 MiB tile; a frozen head (LoRA) has neither."""
    spec = resolve_model("qwen2.5-7b")
    full = Workload(spec, micro_batch=4, seq_len=1024, precision="bf16", loss_kernel="trl-fused-head",
                    scored_positions_per_sequence=512)
    tile = 2048 * FUSED_VOCAB * 2
    head = 6 * spec.vocab_size * spec.hidden_size
    assert loss_transient_bytes(full) == (tile, tile + 6 * 2048 * spec.hidden_size + head)
    lora = replace(full, regime="lora")
    assert loss_transient_bytes(lora) == (tile, tile + 6 * 2048 * spec.hidden_size)
