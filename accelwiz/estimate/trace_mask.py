"""The causal mask on the CPU trace: none where a real unpadded batch has none, as on the GPU.

transformers' masking_utils skips the causal mask for SDPA when nothing is padded (`_ignore_causal_mask_sdpa`:
SDPA then runs `is_causal=True`), and before that asks whether the batch is several sequences packed into one
row: with no attention mask and no cache, `find_packed_sequence_indices(position_ids)` reads the position ids and
returns None for a plain `arange` per row. Under fake tensors it cannot read them (`is_tracing` is true of a
FakeTensor), so it answers as if the batch were packed, and a boolean [b, 1, s, s] mask is built for every
traced model. The trace then runs SDPA with a mask, which no real unpadded run does: grouped-query attention's
K and V are expanded to every head (`use_gqa_in_sdpa` needs no mask: activations_gqa.py) and CPU's SDPA keeps a
16-bit copy of the mask per layer. The trace's input is its own unpacked token ids, so while it runs
`find_packed_sequence_indices` answers what it answers on those ids with real tensors: None. Eager attention
still builds its mask (masking_utils never skips it), as on the GPU.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextlib.contextmanager
def unpacked_positions() -> Iterator[None]:
    """masking_utils sees the trace's positions as one sequence per row (module docstring); restored on exit."""
    try:
        from transformers import masking_utils
    except ImportError:  # a transformers without masking_utils builds its masks in the model: nothing to correct
        yield
        return
    original = getattr(masking_utils, "find_packed_sequence_indices", None)
    if original is None:
        yield
        return
    masking_utils.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        masking_utils.find_packed_sequence_indices = original
