"""AW014 and AW002 split the renamed key `fsdp_backward_prefetch_policy` by what runs: accelerate 1.15 reads only
`fsdp_backward_prefetch` (FullyShardedDataParallelPlugin.__post_init__, unset or NO_PREFETCH = no prefetch), so
the dead key is a harmless warning when it asks for what runs anyway and an error when it asks for something else
(transformers#35234 recorded the error as a false alarm)."""

from __future__ import annotations

import pytest

from tests.rules.helpers import diagnostics


def fsdp(*lines: str, version: int = 1) -> str:
    return ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n" f"  fsdp_version: {version}\n"
            + "".join(f"  {line}\n" for line in lines))


@pytest.mark.parametrize("lines,version,expected", [
    (("fsdp_backward_prefetch_policy: NO_PREFETCH",), 1, "AW014"),
    (("fsdp_backward_prefetch_policy: no_prefetch",), 1, "AW014"),  # read as its live name is: upper-cased
    (("fsdp_backward_prefetch_policy: BACKWARD_PRE",), 1, "AW002"),  # asks for prefetching the run does not do
    (("fsdp_backward_prefetch_policy: BACKWARD_PRE", "fsdp_backward_prefetch: BACKWARD_PRE"), 1, "AW014"),
    (("fsdp_backward_prefetch_policy: BACKWARD_PRE",), 2, "AW002"),  # FSDP2 never prefetches
    (("fsdp_backward_prefetch_policy: NO_PREFETCH",), 2, "AW014"),
])
def test_a_dead_key_is_an_error_only_when_its_value_is_not_what_runs(write, lines, version, expected):
    found = diagnostics(write("a.yaml", fsdp(*lines, version=version)), select=("AW002", "AW014"))
    assert [(d.code, d.path) for d in found] == [(expected, ("fsdp_config", "fsdp_backward_prefetch_policy"))]
    assert found[0].severity.value == ("warning" if expected == "AW014" else "error")
