"""CUDA's autocast on a CPU trace (trace.py's docstring, 2): the ops CPU autocast leaves in 16-bit run in fp32.

While a trace runs, each of those operators gets an `AutocastCPU` kernel that does what CUDA's `AutocastCUDA`
kernel does: cast 16-bit floating inputs to fp32 and run the op. The MoE experts' `_grouped_mm`, which CUDA
autocast casts to 16-bit and CPU autocast does not, gets the 16-bit cast. The registrations are removed when
the trace ends.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

# CUDA autocast's fp32 policy (aten/src/ATen/autocast_mode.cpp, AT_FORALL_FP32 and the fp32_set_opt_dtype
# ops) for the operators transformers' language models call; CPU autocast leaves these in 16-bit.
CUDA_FP32_OPS = (
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "reciprocal",
    "rsqrt",
    "pow.Tensor_Scalar",
    "pow.Tensor_Tensor",
    "softplus",
    "layer_norm",
    "group_norm",
    "nll_loss",
    "mse_loss",
    "binary_cross_entropy_with_logits",
    "logsumexp",
    "softmax.int",
    "log_softmax.int",
    "cumsum",
    "cumprod",
)


# CUDA autocast's lower-precision ops that CPU autocast lacks: transformers' MoE experts (grouped_mm) take
# 16-bit inputs only, and CUDA autocast casts the fp32 expert weights for them.
CUDA_LOWER_PRECISION_OPS = ("_grouped_mm",)


@contextlib.contextmanager
def cuda_autocast_on_cpu() -> Iterator[None]:
    """AutocastCPU kernels for CUDA's fp32-policy ops (module docstring, 2); removed on exit."""
    import warnings

    import torch
    from torch.utils._pytree import tree_map_only

    lower = (torch.float16, torch.bfloat16)
    exclude = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)
    library = torch.library.Library("aten", "IMPL")

    def fp32_kernel(op: Any) -> Any:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            with torch._C._ExcludeDispatchKeyGuard(exclude):
                args, kwargs = tree_map_only(
                    torch.Tensor, lambda t: t.float() if t.dtype in lower else t, (args, kwargs)
                )
                return op(*args, **kwargs)

        return kernel

    def lower_kernel(op: Any) -> Any:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            dtype = torch.get_autocast_dtype("cpu")
            with torch._C._ExcludeDispatchKeyGuard(exclude):
                args, kwargs = tree_map_only(
                    torch.Tensor, lambda t: t.to(dtype) if t.dtype == torch.float32 else t, (args, kwargs)
                )
                return op(*args, **kwargs)

        return kernel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
        for name in CUDA_FP32_OPS:
            packet, _, overload = name.partition(".")
            op = getattr(getattr(torch.ops.aten, packet), overload or "default")
            library.impl(name, fp32_kernel(op), "AutocastCPU")
        for name in CUDA_LOWER_PRECISION_OPS:
            library.impl(name, lower_kernel(getattr(torch.ops.aten, name).default), "AutocastCPU")
    try:
        yield
    finally:
        library._destroy()
