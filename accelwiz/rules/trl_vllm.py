"""AW81x: GRPO with vLLM (`--use_vllm`): the processes and GPUs each mode needs, and colocate's share of memory.

vLLM does not run here (no vLLM, no GPU), and trl 1.16 checks none of this before it needs vLLM: GRPOConfig
validates no vLLM option but the importance-sampling bounds (AW806), and GRPOTrainer.__init__ hands the rest to
`VLLMGeneration._init_vllm` (trl/generation/vllm_generation.py), whose first statement is the
`is_vllm_available()` gate. So these rules rest on that source, cited at each rule, and are tested against it in
tests/posttraining/test_trl_vllm_source.py (AW810 by running `_init_vllm` itself past the gate).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import Needs, rule
from accelwiz.rules.trl_batch import trl_view

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext


def _vllm(ctx: CheckContext, mode: str) -> tuple[Any, int] | None:
    found = trl_view(ctx, "grpo")
    if found is None or not found[0].trl["use_vllm"] or str(found[0].trl["vllm_mode"]) != mode:
        return None
    return found


@rule("AW810", "vllm-tensor-parallel-not-dividing-processes", Severity.ERROR,
      fix="Set vllm_tensor_parallel_size to a divisor of the number of processes")
def vllm_tensor_parallel_not_dividing_processes(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    In vLLM colocate mode, checks that `vllm_tensor_parallel_size` divides the number of training processes
    (`VLLMGeneration._init_vllm`: "tensor_parallel_size (...) must divide world size (...) evenly", with the
    world size `accelerator.num_processes`). TRL checks it only after `is_vllm_available()`, so without vLLM the
    trainer stops on the import instead; the test runs `_init_vllm` past that gate over worlds 1-8 and sizes 1-8.

    ## Why is this bad?
    Each group of tensor-parallel ranks runs one vLLM engine inside the training processes; TRL raises while
    building the trainer, after every rank has loaded the model.

    ## Example
    ```yaml
    # accelwiz check --kind grpo -- --use_vllm --vllm_mode colocate --vllm_tensor_parallel_size 4
    distributed_type: MULTI_GPU
    num_processes: 6
    ```
    """
    found = _vllm(ctx, "colocate")
    if found is None:
        return
    args, world = found
    tensor = args.trl["vllm_tensor_parallel_size"]
    if tensor and world % tensor:
        yield Finding(None, (), f"vllm_tensor_parallel_size {tensor} does not divide the {world} training "
                                "process(es): TRL refuses to start colocated vLLM")


@rule("AW811", "vllm-server-without-spare-gpu", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Launch fewer training processes than GPUs and start `trl vllm-serve` on the GPUs left")
def vllm_server_without_spare_gpu(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    In vLLM server mode on one machine, checks that the training processes leave at least one GPU of the
    machine (`--system`) for `trl vllm-serve`. TRL itself checks nothing here: rank 0's `VLLMClient.check_server`
    (trl/generation/vllm_client.py) retries for `vllm_server_timeout` (240 s) and raises ConnectionError.

    ## Why is this bad?
    The server is a separate process on GPUs of its own (TRL's docs: `CUDA_VISIBLE_DEVICES=0 trl vllm-serve`,
    then `accelerate launch --num_processes N-1`). With every GPU training, the server either cannot start or
    shares a training GPU and runs it out of memory; the trainer waits `vllm_server_timeout` seconds and fails.

    ## Example
    ```yaml
    # accelwiz check --system 8xH100-80GB --kind grpo -- --use_vllm --vllm_mode server --per_device_train_batch_size 8
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    Use instead:
    ```yaml
    distributed_type: MULTI_GPU
    num_processes: 7
    ```
    """
    found = _vllm(ctx, "server")
    system = ctx.system
    if found is None or system is None or not system.gpus:
        return
    _, world = found
    machines = ctx.effective.num_machines.value if hasattr(ctx.effective, "num_machines") else 1
    if isinstance(machines, int) and machines > 1:
        return  # the server may run on a machine of its own
    if world >= len(system.gpus):
        yield Finding("accelerate", ("num_processes",),
                      f"{world} training process(es) on a machine with {len(system.gpus)} GPU(s) leave none for "
                      "the vLLM server")


@rule("AW812", "vllm-colocate-share-exceeds-memory", Severity.ERROR, needs=Needs.WORKLOAD,
      fix="Lower vllm_gpu_memory_utilization or the micro-batch, or shard more (ZeRO-3), or use vLLM server mode")
def vllm_colocate_share_exceeds_memory(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    In vLLM colocate mode, adds vLLM's share (`vllm_gpu_memory_utilization` of each GPU's total memory, taken
    inside the training process) to the GRPO estimate of the training step (the `--model` workload, the
    config's strategy) and compares it with the GPU of `--system`; also checks that the share leaves vLLM a
    KV cache large enough to start (one request of its max_model_len, vLLM's `check_enough_kv_cache_memory`).
    Both are vLLM's own arithmetic, which needs vLLM and a GPU to run: TRL passes the share to
    `LLM(gpu_memory_utilization=...)` in `VLLMGeneration._init_vllm` unchecked; vLLM's worker requests
    `total_memory × gpu_memory_utilization` and refuses to start when that much is not free
    (vllm/v1/worker/gpu_worker.py, `init_device`), and sizes the cache as estimate/vllm_kv.py does.

    ## Why is this bad?
    vLLM allocates its share when the trainer is built; the training step then runs out of memory in the
    first backward, or vLLM refuses to start for want of KV-cache blocks.

    ## Example
    ```yaml
    # accelwiz check --system 8xH100-80GB --model llama-8b --kind grpo -- --use_vllm --vllm_gpu_memory_utilization 0.7
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    """
    found = _vllm(ctx, "colocate")
    if found is None or ctx.system is None or not ctx.system.gpu_capacity_bytes:
        return
    from accelwiz.rules.trl_memory import posttraining_estimate

    args = found[0]
    estimate = posttraining_estimate(ctx, args)
    if estimate is None or estimate.generation is None:
        return
    gpu = ctx.system.gpu_capacity_bytes
    total, share = estimate.combined.per_gpu_total, estimate.generation.reserved_bytes
    if total > gpu:
        utilization = args.trl["vllm_gpu_memory_utilization"]
        step = (total - share) / 2**30
        yield Finding(None, (), f"vLLM colocate takes {utilization:.0%} ({share / 2**30:.1f} GiB) and the GRPO "
                                f"step needs {step:.1f} GiB more: {total / 2**30:.1f} GiB of {gpu / 2**30:.1f} GiB "
                                f"per GPU ({estimate.combined.strategy.label})")
    cache = estimate.generation.vllm
    if cache is not None and not cache.starts:
        yield Finding(None, (), f"vLLM's share leaves a KV cache of {cache.blocks} blocks; one request of "
                                f"max_model_len {cache.max_model_len} needs {cache.blocks_one_request}: vLLM refuses "
                                "to start", fix="Set vllm_max_model_length to prompt + completion, or raise "
                                                "vllm_gpu_memory_utilization")
