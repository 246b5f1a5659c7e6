"""AW713: a Trainer argument that `TrainingArguments` refuses on the machine's GPUs.

`TrainingArguments.__post_init__` (transformers 5 training_args.py) raises "--tf32 requires Ampere or a newer GPU
arch, cuda>=11 and torch>=1.7" when `tf32` is true and `is_torch_tf32_available()` (utils/import_utils.py) is
false: no CUDA build of torch (ROCm included), or a current device below compute capability 8.0. The check runs in
every process, before any training. (bf16 on the same GPUs is AW703: torch now emulates it, so it only slows.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import Needs, rule

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


@rule("AW713", "trainer-tf32-without-ampere", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Drop --tf32 (or pass --tf32 false) on GPUs older than Ampere (V100, T4, RTX 20xx) and on AMD GPUs")
def trainer_tf32_without_ampere(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `--tf32 true` in the Trainer's arguments on a machine (`--system`) whose GPUs have no TF32 tensor cores:
    NVIDIA below compute capability 8.0, or AMD (transformers' check requires a CUDA build of torch).

    ## Why is this bad?
    `TrainingArguments` raises "--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7" in every
    process, after the launcher has started them. Recipes written for A100s (stanford_alpaca's and FastChat's
    `--bf16 True --tf32 True`) hit it on V100s and T4s even after --bf16 is switched to --fp16.

    ## Example
    ```yaml
    # accelwiz check --system 8xV100-32GB accelerate.yaml -- --fp16 --tf32 true
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    Use instead: `--fp16` alone (or `--tf32 false`).
    """
    args = getattr(ctx, "training_args", None)
    system = ctx.system
    if args is None or system is None or not system.gpus or args["tf32"] is not True or args["use_cpu"]:
        return
    older = [gpu for gpu in system.gpus if not gpu.tf32]
    if older:
        gpu = older[0]
        what = "an AMD GPU" if gpu.vendor == "amd" else f"compute capability {gpu.compute_capability[0]}." \
                                                          f"{gpu.compute_capability[1]}"
        yield Finding(None, (), f"{args.where('tf32')} on {gpu.name} ({what}, {len(older)} GPU(s)): no TF32 tensor "
                                "cores, TrainingArguments refuses it (\"--tf32 requires Ampere or a newer GPU arch\")")
