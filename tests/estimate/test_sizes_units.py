"""Sizes on the command line need a unit: a bare number is ambiguous between bytes and GiB."""

from __future__ import annotations

import pytest

from accelwiz.errors import UsageError
from accelwiz.estimate.sizes import parse_size


def test_a_bare_number_is_refused_with_the_units_to_write():
    with pytest.raises(UsageError, match="has no unit") as info:
        parse_size("80")
    assert info.value.hint == "write 80GiB or 80GB"


@pytest.mark.parametrize(("text", "expected"), [("80GiB", 80 * 2**30), ("80GB", 80 * 10**9),
                                                  ("81920MiB", 80 * 2**30), ("512B", 512)])
def test_sizes_with_units(text, expected):
    assert parse_size(text) == expected
