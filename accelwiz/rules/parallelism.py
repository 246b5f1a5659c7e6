"""AW310-AW315: N-D parallelism (`parallelism_config`) and Megatron-LM degrees against the number of processes
and the distributed type."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.effective_settings import PARALLELISM_SIZES
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.fsdp import fsdp_view
from accelwiz.rules.rule import rule
from accelwiz.vocab import MULTI_DEVICE_TYPES


def parallelism_sizes(ctx: CheckContext) -> dict[str, int] | None:
    """The parallelism sizes as accelerate reads them (1 when absent, "2" is 2); None without parallelism_config
    or with a size accelerate cannot read or below 1 (the schema rules report it)."""
    effective = ctx.effective
    sizes = {name: getattr(effective, f"parallelism_{name}_size").value for name in PARALLELISM_SIZES}
    if any(size is None or size < 1 for size in sizes.values()):
        return None
    return sizes


def _total(sizes: dict[str, int]) -> int:
    total = 1
    for size in sizes.values():
        total *= size
    return total


def _deepspeed_sequence_parallel(ctx: CheckContext, sizes: dict[str, int]) -> bool:
    return sizes["sp"] > 1 and ctx.effective.parallelism_sp_backend.value == "deepspeed"


@rule("AW310", "parallelism-size-mismatch", Severity.ERROR,
      fix="Make the product of the parallelism sizes equal num_processes")
def parallelism_size_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `parallelism_config` whose sizes (dp_replicate x dp_shard x tp x cp x sp) multiply to something
    other than `num_processes`.

    ## Why is this bad?
    Every process raises "ParallelismConfig total_size (N) does not match num_processes (M)" when
    `Accelerator()` is built, after the launch has already started on every machine. (DeepSpeed sequence
    parallelism is exempt: DeepSpeed builds those groups itself.)

    ## Example
    ```yaml
    num_processes: 8
    parallelism_config:
      parallelism_config_dp_shard_size: 2
      parallelism_config_tp_size: 2
    ```
    Use instead: `parallelism_config_dp_shard_size: 4` (4 x 2 = 8).
    ```yaml
    num_processes: 8
    parallelism_config:
      parallelism_config_dp_shard_size: 4
      parallelism_config_tp_size: 2
    ```
    """
    sizes = parallelism_sizes(ctx)
    written = ctx.effective.num_processes
    processes = written.strict if written.is_written else None
    if not sizes or processes is None or processes < 1 or _total(sizes) == 1:
        return
    if _deepspeed_sequence_parallel(ctx, sizes) or _total(sizes) == processes:
        return
    product = " x ".join(f"{name} {size}" for name, size in sizes.items() if size > 1)
    yield Finding("accelerate", ("parallelism_config",),
                  f"parallelism sizes multiply to {_total(sizes)} ({product}) but num_processes is "
                  f"{processes}")


@rule("AW311", "context-and-sequence-parallel", Severity.ERROR,
      fix="Use either context parallelism (cp_size) or sequence parallelism (sp_size), not both")
def context_and_sequence_parallel(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `parallelism_config_cp_size` and `parallelism_config_sp_size` both greater than 1.

    ## Why is this bad?
    `ParallelismConfig` raises "Context Parallelism (CP) and Sequence Parallelism (SP) are mutually
    exclusive" in every process.

    ## Example
    ```yaml
    parallelism_config:
      parallelism_config_cp_size: 2
      parallelism_config_sp_size: 2
    ```
    Use instead: one of the two.
    ```yaml
    parallelism_config:
      parallelism_config_cp_size: 2
    ```
    """
    sizes = parallelism_sizes(ctx)
    if sizes and sizes["cp"] > 1 and sizes["sp"] > 1:
        yield Finding("accelerate", ("parallelism_config",),
                      f"cp_size {sizes['cp']} and sp_size {sizes['sp']} cannot be combined")


@rule("AW312", "model-parallel-with-pure-replication", Severity.ERROR,
      fix="Shard instead of replicating: dp_shard_size > 1 (optionally with dp_replicate_size > 1 for HSDP)")
def model_parallel_with_pure_replication(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds tensor or context parallelism (tp_size or cp_size > 1) combined with pure replication
    (dp_replicate_size > 1 and dp_shard_size 1).

    ## Why is this bad?
    `ParallelismConfig` raises "Tensor/Context parallelism ... cannot be used with pure data parallelism".

    ## Example
    ```yaml
    parallelism_config:
      parallelism_config_dp_replicate_size: 2
      parallelism_config_tp_size: 2
    ```
    Use instead: `parallelism_config_dp_shard_size: 2` in place of the replicate size.
    ```yaml
    parallelism_config:
      parallelism_config_dp_replicate_size: 2
      parallelism_config_dp_shard_size: 2
    ```
    """
    sizes = parallelism_sizes(ctx)
    model_parallel = sizes is not None and (sizes["tp"] > 1 or sizes["cp"] > 1)
    if model_parallel and sizes["dp_replicate"] > 1 and sizes["dp_shard"] == 1:
        yield Finding("accelerate", ("parallelism_config",),
                      f"tp {sizes['tp']} / cp {sizes['cp']} with dp_replicate {sizes['dp_replicate']} and "
                      "dp_shard 1 (pure replication)")


@rule("AW313", "parallelism-unsupported-distributed-type", Severity.ERROR,
      fix="Use parallelism_config with FSDP2 (fsdp_version: 2), DeepSpeed, or MULTI_GPU")
def parallelism_unsupported_distributed_type(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a `parallelism_config` with more than one process in it under a distributed type that cannot use
    it: FSDP1, `NO`, MULTI_CPU, XLA or MEGATRON_LM; and context parallelism (cp_size > 1) without FSDP2.

    ## Why is this bad?
    accelerate raises "ParallelismConfig is only compatible DistributedType.FSDP (version 2) or ..." or
    "Using `cp_size>1` requires FSDP2" when `Accelerator()` is built. The launcher's own check for FSDP1
    never fires for config files (it runs before the file is read, and compares the string "1" with the
    int 1; N7).

    ## Example
    ```yaml
    distributed_type: FSDP
    fsdp_config:
      fsdp_version: 1
    parallelism_config:
      parallelism_config_tp_size: 2
    ```
    Use instead: `fsdp_version: 2`.
    """
    sizes, view = parallelism_sizes(ctx), ctx.effective
    if not sizes or _total(sizes) == 1 or view.distributed_type.value is None:
        return
    kind, fsdp2 = view.distributed_type.value, view.is_fsdp and view.fsdp_version.strict == 2
    if view.is_fsdp and view.fsdp_version.strict == 1:
        yield Finding("accelerate", ("parallelism_config",),
                      "parallelism_config needs FSDP2, not fsdp_version 1")
    elif not (fsdp2 or kind in MULTI_DEVICE_TYPES or kind == "DEEPSPEED"):
        yield Finding("accelerate", ("parallelism_config",),
                      f"parallelism_config cannot be used with `distributed_type: {kind}`")
    elif sizes["cp"] > 1 and not fsdp2:
        yield Finding("accelerate", ("parallelism_config",),
                      f"context parallelism (cp_size {sizes['cp']}) needs FSDP2, not {kind}")


@rule("AW314", "fsdp-without-shard-dimension", Severity.ERROR,
      fix="Give FSDP a dimension to shard: dp_shard_size > 1 (e.g. dp_shard 2 instead of tp 2), or drop FSDP")
def fsdp_without_shard_dimension(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds FSDP2 with a `parallelism_config` that spends every process on tensor or sequence parallelism or
    replication, leaving `dp_shard_size` and `cp_size` at 1.

    ## Why is this bad?
    FSDP shards over the joint `dp_shard_cp` mesh dimension, which does not exist then: accelerate 1.15
    raises "FSDP is enabled but the parallelism config has no dimension for FSDP to shard across"; earlier
    versions failed in `prepare()` with `KeyError: Invalid mesh_dim_names ('dp_shard_cp',)` (accelerate#3798).

    ## Example
    ```yaml
    distributed_type: FSDP
    num_processes: 2
    fsdp_config:
      fsdp_version: 2
    parallelism_config:
      parallelism_config_dp_shard_size: 1
      parallelism_config_tp_size: 2
    ```
    Use instead: `parallelism_config_dp_shard_size: 2` and `parallelism_config_tp_size: 1`, or TP without
    FSDP.
    """
    view = fsdp_view(ctx)
    sizes = parallelism_sizes(ctx) if view and view.fsdp_version.strict == 2 else None
    if sizes and _total(sizes) > 1 and sizes["dp_shard"] == 1 and sizes["cp"] == 1:
        yield Finding("accelerate", ("parallelism_config",),
                      "FSDP2 has no dimension to shard across: dp_shard_size and cp_size are both 1")


@rule("AW315", "megatron-degrees-do-not-divide-processes", Severity.ERROR,
      fix="Make num_processes a multiple of megatron_lm_tp_degree x megatron_lm_pp_degree")
def megatron_degrees_do_not_divide_processes(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a MEGATRON_LM config whose `num_processes` is not a multiple of tensor x pipeline parallel degree.

    ## Why is this bad?
    Megatron-LM splits the world into tp x pp model-parallel groups and uses the quotient as the
    data-parallel size; a remainder fails Megatron's initialization in every process.

    ## Example
    ```yaml
    distributed_type: MEGATRON_LM
    num_processes: 6
    megatron_lm_config:
      megatron_lm_tp_degree: 2
      megatron_lm_pp_degree: 2
    ```
    Use instead: `num_processes: 8` (data parallel 2).
    ```yaml
    distributed_type: MEGATRON_LM
    num_processes: 8
    megatron_lm_config:
      megatron_lm_tp_degree: 2
      megatron_lm_pp_degree: 2
    ```
    """
    effective = ctx.effective
    if ctx.accelerate is None or effective.distributed_type.value != "MEGATRON_LM":
        return
    written = effective.num_processes
    processes = written.strict if written.is_written else None
    tp, pp = effective.megatron_tp_degree, effective.megatron_pp_degree  # int(str(value)), as accelerate reads them
    degrees = [tp.value if tp.is_set or tp.is_written else 1, pp.value if pp.is_set or pp.is_written else 1]
    if processes is None or processes < 1 or not all(d is not None and d >= 1 for d in degrees):
        return
    if processes % (degrees[0] * degrees[1]):
        yield Finding("accelerate", ("num_processes",),
                      f"num_processes ({processes}) is not a multiple of tp {degrees[0]} x pp {degrees[1]}")
