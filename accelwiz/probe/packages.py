"""Installed versions of the libraries a training run depends on, read from package metadata only.

Importing torch or deepspeed to ask for `__version__` costs seconds (and deepspeed may try to build ops);
`importlib.metadata` reads a small text file per package.
"""

from __future__ import annotations

from importlib import metadata

# Profile key -> distribution names to try (the first one installed wins).
TRACKED: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "accelerate": ("accelerate",),
    "deepspeed": ("deepspeed",),
    "transformers": ("transformers",),
    "peft": ("peft",),
    "bitsandbytes": ("bitsandbytes",),
    "transformer_engine": ("transformer_engine", "transformer-engine-cu12", "transformer-engine-cu13"),
    "msamp": ("msamp", "ms-amp"),
    "torchao": ("torchao",),
    "flash_attn": ("flash_attn", "flash-attn"),
    "nvidia-ml-py": ("nvidia-ml-py",),
}
# The CUDA runtime wheel that a CUDA build of torch from PyPI depends on (those have no `+cuXXX` suffix).
CUDA_RUNTIME_DISTRIBUTIONS = ("nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime",
                              "nvidia-cuda-runtime-cu13")
FP8_BACKENDS = ("transformer_engine", "msamp", "torchao")


def distribution_version(*names: str) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def installed_packages() -> dict[str, str | None]:
    """Version of each tracked package, None when it is not installed."""
    return {key: distribution_version(*names) for key, names in TRACKED.items()}


def torch_is_cuda_build(torch_version: str | None) -> bool | None:
    """Whether the installed torch can use CUDA: a `+cu121` local version, or a CUDA runtime wheel."""
    if torch_version is None:
        return None
    _, _, local = torch_version.partition("+")
    if local:
        return local.startswith("cu")
    return distribution_version(*CUDA_RUNTIME_DISTRIBUTIONS) is not None
