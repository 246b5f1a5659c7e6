"""CUDA's dropout on the CPU trace: a 1-byte mask saved for backward, not a noise tensor of the input's dtype.

`at::dropout` (aten/src/ATen/native/Dropout.cpp) takes the fused `native_dropout` kernel only where
`is_fused_kernel_acceptable` holds -- CUDA, XPU, lazy or privateuse1 tensors with 0 < p < 1 -- and autograd's
formula for `native_dropout` (tools/autograd/derivatives.yaml) saves its boolean mask (`result1`), 1 B per
element. On CPU tensors `at::dropout` is `_dropout_impl` instead: `input * noise` with a noise tensor of the
input's dtype, which `mul` keeps for backward (2 or 4 B per element). While a trace runs, `aten::dropout` gets
an `AutogradCPU` kernel that does what CUDA does, so every dropout in the traced model (LoRA's `lora_dropout`,
GPT-2's residual and embedding dropout, eager attention's) keeps what it keeps on a GPU; the registration is
removed on exit.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextlib.contextmanager
def cuda_dropout_on_cpu() -> Iterator[None]:
    """`aten::dropout` through `native_dropout`, as on CUDA (module docstring); removed on exit."""
    import warnings

    import torch

    library = torch.library.Library("aten", "IMPL")

    def kernel(input: Any, p: float, train: bool) -> Any:
        if not train or p == 0 or input.numel() == 0:  # at::dropout returns its input unchanged
            return input
        if p >= 1:  # not fused on CUDA either: all zeros, nothing worth keeping
            return input * 0
        return torch.ops.aten.native_dropout.default(input, p, train)[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
        library.impl("dropout", kernel, "AutogradCPU")
    try:
        yield
    finally:
        library._destroy()
