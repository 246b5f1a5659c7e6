"""The runtime beside the tensors: each figure is the published one its docstring names."""

from __future__ import annotations

import pytest

from accelwiz.estimate.runtime import generation, runtime

MB, MIB = 10**6, 2**20


@pytest.mark.parametrize(
    ("name", "family"),
    [("NVIDIA H100 80GB HBM3", "hopper"), ("NVIDIA A100-SXM4-80GB", "ampere"), ("Tesla V100-SXM2-16GB", "volta"),
     ("NVIDIA GeForce RTX 3090", "ampere"), ("NVIDIA GeForce RTX 4090", "ada"), ("NVIDIA L4", "ada"),
     ("NVIDIA B200", "blackwell"), ("GeForce GTX 1080", "pascal"), ("Tesla T4", "turing"), ("Mystery 9000", None),
     (None, None)],
)
def test_generation_from_the_gpu_name(name: str | None, family: str | None) -> None:
    assert generation(name) == family


def test_one_gpu_on_cuda12_has_the_lazy_context_and_two_hopper_workspaces() -> None:
    one = runtime(1, gpu="NVIDIA H100 80GB HBM3")
    assert one.parts() == {"cuda_context": 800_653_312, "cublas_workspace": 2 * 32 * MIB, "nccl": 0}
    assert runtime(1, gpu="NVIDIA A100-SXM4-80GB").context == 400 * MB  # the published figure before Hopper


def test_the_hopper_context_is_what_the_h200_measured() -> None:
    """benchmarks/gpu_step.py's NVML figure: used memory less the allocator's reserve, one per setting."""
    import json
    from pathlib import Path

    rows = json.loads((Path(__file__).parents[2] / "benchmarks/results/estimator_accuracy.json").read_text())["rows"]
    context = runtime(1, gpu="NVIDIA H200").total - 2 * 32 * MIB  # the workspaces are inside the allocator's reserve
    single = [row["runtime"] for row in rows if " single " in row["setting"]]
    assert max(single) == context and all(context - value <= 16 * MIB for value in single)  # eager: 16 MiB less
    for row in rows:  # DeepSpeed on one rank: NCCL beside the context (offload and gpt2-medium: up to 18 MiB more)
        if " zero" in row["setting"]:
            stage = 3 if " zero3" in row["setting"] else 2
            expected = runtime(1, gpu="NVIDIA H200", deepspeed_stage=stage).total - 2 * 32 * MIB
            assert 0 <= row["runtime"] - expected <= 20 * MIB, row["setting"]


def test_an_ampere_gpu_gets_the_smaller_cublas_workspace() -> None:
    assert runtime(1, gpu="NVIDIA A100-SXM4-80GB").cublas == 2 * (8 * MIB + 128 * 1024)


def test_eager_loading_before_cuda_11_7_depends_on_the_generation() -> None:
    assert runtime(1, gpu="Tesla V100-SXM2-16GB", cuda_major=11).context == 1343 * MIB
    assert runtime(1, gpu="NVIDIA GeForce RTX 3090", cuda_major=11).context == 1687 * MB
    assert runtime(1, gpu="NVIDIA GeForce RTX 3090", cuda_major=11, lazy_loading=True).context == 400 * MB


@pytest.mark.parametrize(("world", "nodes", "nccl"), [(1, 1, 0), (2, 1, 544 * MB), (8, 1, 688 * MB),
                                                     (16, 2, 688 * MB + 512 * MIB)])
def test_nccl_grows_with_the_group_and_across_nodes(world: int, nodes: int, nccl: int) -> None:
    assert runtime(world, nodes).nccl == nccl
