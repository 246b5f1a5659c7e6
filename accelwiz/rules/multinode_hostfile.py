"""AW116: a multi-node DeepSpeed launch through DeepSpeed's own runner without a hostfile trains on one node.

`accelerate launch` 1.15 starts DeepSpeed on more than one machine with DeepSpeed's runner unless the launcher is
`standard` (utils/launch.py `prepare_deepspeed_cmd_env`: `deepspeed --hostfile str(args.deepspeed_hostfile) ...`,
with `--deepspeed_hostfile` defaulting to None, so the runner is handed the path "None"). DeepSpeed's runner
(launcher/runner.py `fetch_hostfile`, `main`) then warns "Unable to find hostfile, will proceed with training with
local resources only", resets the master address to 127.0.0.1 and starts one process per local GPU: the run trains
on the launching node alone, with a world size of its GPUs (accelerate#1867: "dist_world_size=8" on 2 x 8 GPUs).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

# accelerate's DEEPSPEED_MULTINODE_LAUNCHERS[1]: the one that runs torchrun on each node and needs no hostfile
STANDARD = "standard"
DEFAULT_LAUNCHER = "pdsh"  # DEEPSPEED_MULTINODE_LAUNCHERS[0], what prepare_deepspeed_cmd_env picks when unset


@rule("AW116", "deepspeed-multinode-without-hostfile", Severity.ERROR,
      fix="Set `deepspeed_config.deepspeed_hostfile` to a hostfile listing every node (`host slots=N`), or use "
          "`deepspeed_multinode_launcher: standard` and run `accelerate launch` on each node")
def deepspeed_multinode_without_hostfile(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds `distributed_type: DEEPSPEED` on more than one machine whose launcher is DeepSpeed's runner (`pdsh`,
    the default, or `openmpi`, `mvapich`, `slurm`, `nossh`) with no `deepspeed_config.deepspeed_hostfile`.
    Silent when the plan file says the job is started by per-node commands or SLURM, whose commands run
    `accelerate launch --deepspeed_multinode_launcher standard` on each node.

    ## Why is this bad?
    accelerate hands DeepSpeed's runner `--hostfile None`. The runner finds no such file, warns that it
    "will proceed with training with local resources only", and starts one process per GPU of the launching
    node with the master address 127.0.0.1: the other machines never join, the world size is one node's GPUs,
    and the data is split that many ways instead of `num_processes` (accelerate#1867, accelerate#1795).

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    num_machines: 2
    num_processes: 16
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    deepspeed_config:
      zero_stage: 3
    ```
    Use instead: a hostfile for DeepSpeed's runner (or the `standard` launcher on each node).
    ```yaml
    distributed_type: DEEPSPEED
    num_machines: 2
    num_processes: 16
    main_process_ip: 10.0.0.1
    main_process_port: 29500
    deepspeed_config:
      zero_stage: 3
      deepspeed_hostfile: /job/hostfile
    ```
    """
    launcher = _runner_without_hostfile(ctx)
    if launcher is None:
        return
    view = ctx.effective
    where = ("deepspeed_config", "deepspeed_multinode_launcher") \
        if view.deepspeed_multinode_launcher.value else ("num_machines",)
    # accelwiz's per-node commands and SLURM scripts pass --deepspeed_multinode_launcher standard (launch/command.py)
    handled = "each node's command passes --deepspeed_multinode_launcher standard" \
        if ctx.launch.supplies_rendezvous else None
    yield Finding("accelerate", where,
                  f"num_machines {view.num_machines.strict} with the `{launcher}` launcher"
                  f"{'' if view.deepspeed_multinode_launcher.value else ' (the default)'} but no "
                  "deepspeed_config.deepspeed_hostfile: DeepSpeed's runner gets `--hostfile None`, falls back to "
                  "the local GPUs and trains on this node alone", handled=handled)


def _runner_without_hostfile(ctx: CheckContext) -> str | None:
    """DeepSpeed's runner (its name) on two or more machines with no hostfile; None where the launch is fine."""
    if ctx.accelerate is None or ctx.effective.is_sagemaker:
        return None
    if ctx.plan is not None and ctx.plan.launcher.supplies_rendezvous:
        return None  # the plan's launcher (SLURM, per-node commands) runs `accelerate launch` on each node itself
    view = ctx.effective
    machines = view.num_machines.strict
    if view.distributed_type.value != "DEEPSPEED" or machines is None or machines < 2:
        return None
    launcher = (view.deepspeed_multinode_launcher.value or DEFAULT_LAUNCHER).lower()
    if launcher == STANDARD or view.deepspeed_hostfile.value:
        return None
    return launcher
