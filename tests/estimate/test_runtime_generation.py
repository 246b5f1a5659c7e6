"""The runtime's GPU generation (CUDA context and cuBLAS workspace sizes) agrees with the GPU table's architecture
for every NVIDIA row: by name fragments alone the L20 (Ada, sm89) and the RTX 5000 Ada were taken for Hopper and
Blackwell, so their estimates counted Hopper's 800 MB context and 32 MiB cuBLAS workspaces."""

from __future__ import annotations

import pytest

from accelwiz.estimate.runtime import LAZY_CONTEXT, generation, runtime
from accelwiz.probe.gpu_table_nvidia import NVIDIA_GPUS

ARCHS = {"Blackwell": "blackwell", "Hopper": "hopper", "Ada Lovelace": "ada", "Ampere": "ampere",
         "Turing": "turing", "Volta": "volta", "Pascal": "pascal"}


@pytest.mark.parametrize("gpu", [g for g in NVIDIA_GPUS if g.arch in ARCHS], ids=lambda g: g.key)
def test_every_listed_gpu_has_its_data_sheet_generation(gpu) -> None:
    assert generation(gpu.name) == ARCHS[gpu.arch]


def test_an_l20_process_holds_the_pre_hopper_context_and_workspaces() -> None:
    l20 = runtime(1, gpu="NVIDIA L20", cuda_major=12)
    assert l20.context == LAZY_CONTEXT
    assert l20.cublas == runtime(1, gpu="NVIDIA L40S", cuda_major=12).cublas
    assert l20.total < runtime(1, gpu="NVIDIA H20", cuda_major=12).total
