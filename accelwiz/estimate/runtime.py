"""The GPU memory a training process holds beside its tensors: CUDA context, cuBLAS workspaces, NCCL buffers.

The context and NCCL's buffers are only in nvidia-smi. The cuBLAS workspaces come from the caching allocator:
the H200's event streams show them as two 32 MiB blocks allocated at the first matmuls and never freed, so
they are inside `max_memory_allocated` and `max_memory_reserved` too; accelwiz counts them here,
once. Each constant is a published measurement, named beside it:

* CUDA context. Before CUDA 11.7 every kernel of every loaded library was put into the context at start
  (eager module loading), and its size grew with the GPU: 721 MB on a GTX 1080 (torch 1.8.2+cu101) and 1687 MB
  on an RTX 3090 (torch 1.8.2+cu111), pytorch/pytorch#55277; 1343 MB on a V100, the Hugging Face guide
  "Efficient training on a single GPU" (transformers v4.27, `print_gpu_utilization` after a 1-element
  tensor). With CUDA >= 11.7 PyTorch sets CUDA_MODULE_LOADING=LAZY (pytorch/pytorch#86509, since 1.13): a
  bare context measured 287,047,680 bytes there (a 20 MiB allocator segment included) against 666,632,192
  eager, and "around 400MB if CUDA >= 11.7 is used and lazy module loading enabled" (ptrblck,
  pytorch/pytorch#109888): 400 MB is taken before Hopper. On Hopper it is twice that: 800,653,312 bytes on an
  H200 (torch 2.11.0+cu130, lazy loading) measured by benchmarks/gpu_step.py as NVML's used memory less the
  allocator's reserve after three training steps, the same in each of 11 single-process settings from 0.1B to
  8B parameters (benchmarks/results/estimator_accuracy.json); Hopper and later, or an unknown GPU, take it.
* cuBLAS workspace: aten/src/ATen/cuda/CublasHandlePool.cpp `parseChosenWorkspaceSize`, one per handle and
  stream: `4096 * 8 * 1024` (32 MiB) on sm90 (Hopper), else `4096 * 1024 * 2 + 16 * 1024 * 8` (8 MiB +
  128 KiB). A training step uses two handles: forward on the main thread, backward on autograd's device
  thread (handles are per thread, `DeviceThreadHandlePool`).
* NCCL: per process, intra-node, NVLink A100s, PyTorch front end: 544 MB for a 2-GPU group, 688 MB for a
  group of more than 2 (NVIDIA/nccl#964). Cross-check: 1.06 GB beside PyTorch's memory (context included) on
  8 x H100 after the first collectives (NVIDIA/nccl#1685). Across nodes NCCL adds its NET transport's shared
  buffer, 536,870,912 bytes (NVIDIA/nccl#2363, NCCL 2.28).
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 10**6
MIB = 2**20

# CUDA context by generation, eager module loading (CUDA < 11.7), with the source of each figure.
EAGER_CONTEXT = {
    "pascal": (721 * MB, "GTX 1080, torch 1.8.2+cu101 (pytorch/pytorch#55277)"),
    "volta": (1343 * MIB, "V100, HF 'Efficient training on a single GPU' (transformers v4.27)"),
    "turing": (1343 * MIB, "as Volta (no published Turing figure)"),
    "ampere": (1687 * MB, "RTX 3090, torch 1.8.2+cu111 (pytorch/pytorch#55277)"),
}
LAZY_CONTEXT = 400 * MB  # CUDA >= 11.7 with PyTorch's lazy loading (pytorch/pytorch#109888)
LAZY_CONTEXT_HOPPER = 800_653_312  # H200, torch 2.11.0+cu130, after a training step (measured, see above)
CUBLAS_WORKSPACE_HOPPER = 4096 * 8 * 1024  # sm90
CUBLAS_WORKSPACE = 4096 * 1024 * 2 + 16 * 1024 * 8
CUBLAS_HANDLES = 2  # forward thread + autograd's backward thread
NCCL_TWO_RANKS = 544 * MB
NCCL_MORE_RANKS = 688 * MB
NCCL_NET_SHARED = 536_870_912
NCCL_ONE_RANK_DEEPSPEED = {"zero3": 994_050_048, "other": 585_105_408}  # H200 measurements

# GPU name fragments -> generation (the name as NVML or a --system profile writes it)
_GENERATIONS = (
    ("blackwell", ("B100", "B200", "B300", "GB200", "GB300", "RTX 50", "RTX PRO 6000")),
    ("hopper", ("H100", "H200", "H800", "H20", "GH200")),
    ("ada", ("L4", "L40", "RTX 40", "RTX 6000 Ada", "RTX 4000 Ada")),
    ("ampere", ("A100", "A800", "A10", "A30", "A40", "A16", "A2", "RTX 30", "RTX A")),
    ("turing", ("T4", "RTX 20", "TITAN RTX", "Quadro RTX")),
    ("volta", ("V100", "TITAN V")),
    ("pascal", ("P100", "P40", "P4", "GTX 10", "TITAN X")),
)


# the GPU table's architectures (accelwiz/probe/gpu_table_nvidia.py) -> generation
_TABLE_ARCHS = {"Blackwell": "blackwell", "Hopper": "hopper", "Ada Lovelace": "ada", "Ampere": "ampere",
                "Turing": "turing", "Volta": "volta", "Pascal": "pascal"}


def generation(gpu: str | None) -> str | None:
    """'NVIDIA H100 80GB HBM3' -> 'hopper'; None when the name is unknown or not given.

    The GPU table's row first (its architecture, from the data sheet): name fragments alone took the L20 (Ada)
    and RTX 5000 Ada for Hopper and Blackwell; the fragments for a name the table does not list."""
    if not gpu:
        return None
    from accelwiz.probe.gpus import match_gpu_name

    listed = match_gpu_name(gpu)
    if listed is not None and listed.arch in _TABLE_ARCHS:
        return _TABLE_ARCHS[listed.arch]
    name = gpu.upper().replace("GEFORCE ", "").replace("NVIDIA ", "")
    for family, fragments in _GENERATIONS:
        if any(name.startswith(f.upper()) or f" {f.upper()}" in f" {name}" for f in fragments):
            return family
    return None


@dataclass(frozen=True)
class Runtime:
    """Bytes per process beside the tensors, by part, and what each rests on."""

    context: int
    cublas: int
    nccl: int
    notes: tuple[str, ...]

    @property
    def total(self) -> int:
        return self.context + self.cublas + self.nccl

    def parts(self) -> dict[str, int]:
        return {"cuda_context": self.context, "cublas_workspace": self.cublas, "nccl": self.nccl}


def runtime(world_size: int, nodes: int = 1, gpu: str | None = None, cuda_major: int = 12,
            lazy_loading: bool | None = None, deepspeed_stage: int | None = None) -> Runtime:
    """The runtime beside the tensors of one training process (see the module docstring for each figure).

    `gpu`: the GPU's name (None: unknown, Hopper's context and workspace assumed, the larger); `cuda_major`: the
    CUDA PyTorch was built with; `lazy_loading`: CUDA_MODULE_LOADING=LAZY (PyTorch's default from CUDA 11.7;
    None: lazy from CUDA 12, eager before, as the CUDA minor version is not known); `deepspeed_stage`: the ZeRO
    stage of a DeepSpeed run (which opens NCCL on one rank too).
    """
    family = generation(gpu)
    hopper = family in (None, "hopper", "blackwell")
    notes = []
    if lazy_loading if lazy_loading is not None else cuda_major >= 12:
        context = LAZY_CONTEXT_HOPPER if hopper else LAZY_CONTEXT
        notes.append(f"CUDA context {context / MB:.0f} MB (lazy module loading, CUDA >= 11.7"
                     + (": measured on an H200 after a training step)" if hopper else ")"))
    else:
        context, source = EAGER_CONTEXT.get(family or "ampere", EAGER_CONTEXT["ampere"])
        notes.append(f"CUDA context {context / MB:.0f} MB (eager module loading before CUDA 11.7: {source})")
    cublas = CUBLAS_HANDLES * (CUBLAS_WORKSPACE_HOPPER if hopper else CUBLAS_WORKSPACE)
    notes.append(f"cuBLAS workspaces {CUBLAS_HANDLES} x {cublas / CUBLAS_HANDLES / MIB:.3g} MiB "
                 f"({'sm90' if hopper else 'before sm90'}: CublasHandlePool.cpp)")
    nccl = _nccl(world_size, nodes, deepspeed_stage)
    if nccl:
        source = "NVIDIA/nccl#964" + (", #2363" if nodes > 1 else "") if world_size > 1 else \
            "DeepSpeed on one rank, measured on an H200"
        notes.append(f"NCCL {nccl / MB:.0f} MB ({world_size} rank{'s' if world_size > 1 else ''}"
                     f"{', across nodes' if nodes > 1 else ''}: {source})")
    return Runtime(context, cublas, nccl, tuple(notes))


def _nccl(world_size: int, nodes: int, deepspeed_stage: int | None) -> int:
    if world_size == 1:
        if deepspeed_stage is None:
            return 0
        return NCCL_ONE_RANK_DEEPSPEED["zero3" if deepspeed_stage == 3 else "other"]
    nccl = NCCL_TWO_RANKS if world_size == 2 else NCCL_MORE_RANKS
    return nccl + (NCCL_NET_SHARED if nodes > 1 else 0)
