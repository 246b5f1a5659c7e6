"""Issue 32's fuzz in the suite: 450 mutants of a sealed doctor record through the real reader (fast: no
store), and every flag that takes a file given each hostile file (tests/hostile/round_two.py). The slow tier is
`benchmarks/fuzz_hostile.py --round-two`."""

from __future__ import annotations

import pytest

from tests.hostile.round_two import HOSTILE_FILES, WIRE_MUTATIONS, fuzz_flags, fuzz_wire, genuine_facts


def test_every_wire_mutant_is_accepted_or_refused_never_a_crash():
    table, crashes = fuzz_wire(450)
    assert crashes == []
    assert set(table) == set(WIRE_MUTATIONS)
    # a changed byte of the seal or body, a cut, another rank's record: always refused (never "accepted")
    for mutation in ("cut", "grow", "reseal a non-UTF-8 body", "reseal deep nesting", "another rank's record",
                     "empty"):
        assert table[mutation]["accepted"] == 0, (mutation, table[mutation])


def test_the_genuine_record_is_accepted():
    from accelwiz.doctor.model import NodeFacts
    from accelwiz.doctor.wire import open_record, seal

    record = open_record(b"k" * 32, "facts", 1, seal(b"k" * 32, "facts", 1, genuine_facts()), NodeFacts)
    assert record.rank == 1 and record.folders[0].nonce == "0123456789ab"


@pytest.mark.slow
def test_every_file_flag_with_every_hostile_file(tmp_path):
    results, failures = fuzz_flags(tmp_path, timeout=60)
    assert failures == []
    assert {kind for _, kind in results} == set(HOSTILE_FILES)
