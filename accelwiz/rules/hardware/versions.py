"""AW612-AW616: features the installed library versions do not support; a machine count that differs from the
profile."""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Role, Severity
from accelwiz.rules.hardware._shared import distributed_type, uses_deepspeed, written
from accelwiz.rules.rule import Needs, rule


@rule("AW612", "deepspeed-not-installed", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Install DeepSpeed: pip install deepspeed")
def deepspeed_not_installed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds a DeepSpeed config (`distributed_type: DEEPSPEED` or a DeepSpeed JSON) for a machine whose probe
    found no DeepSpeed installed.

    ## Why is this bad?
    `accelerate launch` fails at once ("DeepSpeed is not installed"), after the job has waited in the queue.

    ## Example
    ```yaml
    # accelwiz check --system cpu_only.json
    distributed_type: DEEPSPEED
    num_processes: 1
    deepspeed_config:
      zero_stage: 2
    ```
    in an environment without deepspeed (`cpu_only.json`: its profile, saved with `accelwiz probe --save`).
    Use instead: `pip install deepspeed`, or another distributed type.
    """
    if ctx.system is None or not uses_deepspeed(ctx) or not ctx.system.package_missing("deepspeed"):
        return
    role: Role = "accelerate" if ctx.accelerate is not None else "deepspeed"
    path: KeyPath = ("distributed_type",) if ctx.accelerate is not None else ()
    where = ctx.system.name or "the machine"
    yield Finding(role, path, f"the config uses DeepSpeed, which is not installed on {where}")


@rule("AW613", "fsdp2-with-old-torch", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Upgrade torch to 2.6 or newer, or use `fsdp_version: 1`")
def fsdp2_with_old_torch(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `fsdp_version: 2` when the installed torch is older than 2.6.

    ## Why is this bad?
    Accelerate raises "FSDP2 requires PyTorch >= 2.6.0" in every process, after launch.

    ## Example
    ```yaml
    # accelwiz check --system 8xV100-32GB.json
    distributed_type: FSDP
    num_processes: 8
    fsdp_config:
      fsdp_version: 2
    ```
    with torch 2.5.1 (the profile's packages). Use instead: torch >= 2.6, or `fsdp_version: 1`.
    ```yaml
    # accelwiz check --system 8xV100-32GB.json
    distributed_type: FSDP
    num_processes: 8
    fsdp_config:
      fsdp_version: 1
    ```
    """
    if ctx.system is None or distributed_type(ctx) != "FSDP" or ctx.effective.fsdp_version.value != 2:
        return
    installed = ctx.system.installed_older_than("torch", "2.6")
    if installed:
        yield Finding("accelerate", ("fsdp_config", "fsdp_version"),
                      f"FSDP2 needs torch >= 2.6; {installed} is installed")


@rule("AW614", "nossh-launcher-with-old-deepspeed", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Upgrade DeepSpeed to 0.14.5 or newer, or use the `standard` launcher")
def nossh_launcher_with_old_deepspeed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `deepspeed_multinode_launcher: nossh` when the installed DeepSpeed is older than 0.14.5.

    ## Why is this bad?
    `accelerate launch` refuses it ("nossh launcher requires DeepSpeed >= 0.14.5") on every node.

    ## Example
    ```yaml
    # accelwiz check --system 8xV100-32GB.json
    distributed_type: DEEPSPEED
    num_machines: 2
    num_processes: 16
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    deepspeed_config:
      zero_stage: 2
      deepspeed_multinode_launcher: nossh
    ```
    with deepspeed 0.13.1 (the profile's packages).
    Use instead: deepspeed >= 0.14.5, or `deepspeed_multinode_launcher: standard`.
    ```yaml
    # accelwiz check --system 8xV100-32GB.json
    distributed_type: DEEPSPEED
    num_machines: 2
    num_processes: 16
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    deepspeed_config:
      zero_stage: 2
      deepspeed_multinode_launcher: standard
    ```
    """
    launcher = ctx.effective.deepspeed_multinode_launcher.value
    if ctx.system is None or launcher is None or launcher.lower() != "nossh":
        return
    installed = ctx.system.installed_older_than("deepspeed", "0.14.5")
    if installed:
        yield Finding("accelerate", ("deepspeed_config", "deepspeed_multinode_launcher"),
                      f"the `nossh` launcher needs DeepSpeed >= 0.14.5; {installed} is installed")


@rule("AW615", "moe-layer-names-with-old-deepspeed", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Upgrade DeepSpeed to 0.14.0 or newer, or remove `deepspeed_moe_layer_cls_names`")
def moe_layer_names_with_old_deepspeed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `deepspeed_moe_layer_cls_names` when the installed DeepSpeed is older than 0.14.0.

    ## Why is this bad?
    Accelerate needs `deepspeed.utils.set_z3_leaf_modules` for MoE leaf modules and raises an ImportError
    when the DeepSpeed plugin is created, in every process.

    ## Example
    ```yaml
    # accelwiz check --system 8xV100-32GB.json
    distributed_type: DEEPSPEED
    num_processes: 8
    deepspeed_config:
      zero_stage: 2
      deepspeed_moe_layer_cls_names: MixtralSparseMoeBlock
    ```
    with deepspeed 0.13.1 (the profile's packages). Use instead: deepspeed >= 0.14.0.
    """
    names = ctx.effective.moe_layer_cls_names.value
    if ctx.system is None or names is None:
        return
    installed = ctx.system.installed_older_than("deepspeed", "0.14.0")
    if installed:
        yield Finding("accelerate", ("deepspeed_config", "deepspeed_moe_layer_cls_names"),
                      f"MoE layer class names need DeepSpeed >= 0.14.0; {installed} is installed")


@rule("AW616", "num-machines-differs-from-system", Severity.INFO, needs=Needs.SYSTEM,
      fix="Plan with the profile that matches the cluster, or set `num_machines` to its node count")
def num_machines_differs_from_system(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Compares the config's `num_machines` with the node count of the preset, or of a profile that describes
    several nodes. A probe (live or saved) describes one node and says nothing about the cluster, so a
    one-node profile is not compared.

    ## Why is this bad?
    The plan (processes per node, memory per GPU, global batch) was made for a different cluster than the one
    the config launches on.

    ## Example
    ```yaml
    # accelwiz check --system 2x8xH100
    distributed_type: MULTI_GPU
    num_machines: 1
    num_processes: 8
    ``` Use instead: `num_machines: 2` and `num_processes: 16`.
    ```yaml
    # accelwiz check --system 2x8xH100
    distributed_type: MULTI_GPU
    num_machines: 2
    num_processes: 16
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    ```
    """
    system = ctx.system
    if system is None or ctx.accelerate is None or (system.source != "preset" and system.num_machines == 1):
        return
    machines = written(ctx.effective.num_machines)
    configured = machines if machines is not None else 1
    if configured != system.num_machines:
        yield Finding("accelerate", ("num_machines",),
                      f"the config plans {configured} machine(s); {system.name or 'the profile'} has "
                      f"{system.num_machines}")
