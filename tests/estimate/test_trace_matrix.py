"""The analytic formulas proved against the fake-tensor trace of the real transformers code (issue 12, item 3).

52 settings over 10 architectures at their real widths (2 layers): weights, gradients and optimizer states
must equal the trace's to the byte; activations+logits (what forward keeps for backward) and the peak
(the largest phase) within 10%, and the peak in the same phase. Deterministic (fake tensors, no data, no
timing). The same matrix writes the table in docs/performance.md (benchmarks/formula_vs_trace.py).
"""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")
pytest.importorskip("peft")

from accelwiz.estimate.trace_matrix import ARCHITECTURES, TOLERANCE, Setting, matrix, run  # noqa: E402

SETTINGS = matrix()


def test_the_matrix_covers_what_the_issue_asks():
    assert len(SETTINGS) >= 40
    assert len(ARCHITECTURES) >= 8
    assert {s.precision for s in SETTINGS} == {"fp32", "mixed", "bf16"}
    assert {s.attention for s in SETTINGS} == {"eager", "sdpa"}
    assert {s.gradient_checkpointing for s in SETTINGS} == {True, False}
    assert {s.lora for s in SETTINGS} == {True, False}
    assert len({s.micro_batch for s in SETTINGS}) >= 3 and len({s.seq_len for s in SETTINGS}) >= 3


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.label.replace(" ", "-"))
def test_formulas_match_the_trace(setting: Setting):
    row = run(setting)
    analytic, traced = row["analytic"], row["traced"]
    for exact in ("weights", "gradients", "optimizer_states"):
        assert analytic[exact] == traced[exact], (exact, analytic[exact], traced[exact])
    assert abs(row["error"]["activations"]) <= TOLERANCE, row
    assert abs(row["error"]["peak"]) <= TOLERANCE, row
    assert row["analytic_phase"] == row["traced_phase"], row
