"""Hostile mutants of the corpus (and of an answers YAML and a HF config.json) through every command that reads
a file: 0 uncaught exceptions, exit codes only 0/1/2, 0 hangs, and no raw control character on the terminal.

Fixed seed and a small budget (derandomize, 200 examples, one command each); benchmarks/fuzz_hostile.py runs
10,000 mutants through every command and writes docs/hostile-input.md.
"""

from __future__ import annotations

import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.mutants import laid_out, mutant, run_command


@settings(derandomize=True, max_examples=200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), which=st.integers(min_value=0, max_value=7))
def test_hostile_mutants_never_crash_hang_or_reach_the_terminal_raw(seed, which):
    m = mutant(seed)
    with tempfile.TemporaryDirectory() as folder:
        available = laid_out(m, folder)
        label, argv = available[which % len(available)]
        outcome = run_command(label, argv, timeout=120)
    assert outcome.ok, f"seed {seed} ({m.case} of {m.source}) through `{label}`: {outcome}"
