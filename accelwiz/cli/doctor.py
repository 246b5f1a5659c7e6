"""`accelwiz doctor`: the multi-node preflight, on demand or from the job script, one process per node."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from accelwiz.cli.common import exit_on_error, get_console
from accelwiz.doctor import DEFAULT_TIMEOUT

EPILOG = """\
Examples (one process per node: srun inside the allocation, or by hand):

  $ srun --ntasks-per-node=1 accelwiz doctor --expect-nodes 2

  $ export MASTER_ADDR=10.0.0.1 MASTER_PORT=29500  # node 0's, on every node
  $ accelwiz doctor --nodes 2 --node-rank 0 --config accelerate.yaml  # on 0
  $ accelwiz doctor --nodes 2 --node-rank 1 --config accelerate.yaml  # on 1
  $ accelwiz doctor --format json   # one node, or each node of a CI job: JSON

Exit codes: 0 the nodes can train together; 2 bad usage; 3 nodes differ
(versions, GPUs, Python) or differ from the plan; 4 a node did not join or
could not reach node 0; 5 the main port is in use or blocked; 6 an interface
named in NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME is absent; 7 the output or
cache folder is not writable, or the output folder is not shared; 8 the test
all-reduce failed; 9 a record on the store is not a sealed record of this job
(set the same ACCELWIZ_DOCTOR_SECRET on every node; `accelwiz run`'s job
scripts do). Every node prints the same table and exit code.
"""


class DoctorFormat(str, Enum):
    text = "text"
    json = "json"


def doctor(
    nodes: Annotated[int | None, typer.Option(help="Nodes in the allocation (default: SLURM_NTASKS, WORLD_SIZE, "
                                                   "--expect-nodes, 1).")] = None,
    node_rank: Annotated[int | None, typer.Option(help="This node's rank (default: SLURM_PROCID, NODE_RANK, "
                                                       "RANK, 0).")] = None,
    main_address: Annotated[str | None, typer.Option(help="Node 0's address (default: MASTER_ADDR, the first "
                                                          "host of SLURM_NODELIST).")] = None,
    main_port: Annotated[int | None, typer.Option(help="The training's main port, checked free on node 0 and "
                                                       "reachable from the others (default: MASTER_PORT, 29500).")]
    = None,
    store_port: Annotated[int | None, typer.Option(help="Where node 0 hosts the preflight itself "
                                                        "(default: main port + 1).")] = None,
    expect_nodes: Annotated[int | None, typer.Option(help="The node count the job was planned for.")] = None,
    config: Annotated[Path | None, typer.Option(metavar="FILE", help="The Accelerate YAML (its plan beside it) or "
                                                                     "a plan file, to compare the nodes with.")]
    = None,
    output_dir: Annotated[Path, typer.Option(metavar="DIR", help="The training's output folder: must be "
                                                                 "writable and shared.")] = Path("."),
    cache_dir: Annotated[Path | None, typer.Option(metavar="DIR", help="The Hugging Face cache (default: HF_HOME, "
                                                                       "~/.cache/huggingface): must be writable.")]
    = None,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds a node waits for the others, once it is ready "
                                                       "(torch imported).")] = DEFAULT_TIMEOUT,
    allreduce: Annotated[bool, typer.Option(help="Run the test all-reduce when nothing else is wrong.")] = True,
    output_format: Annotated[DoctorFormat, typer.Option("--format", "-f", help="Output format.")]
    = DoctorFormat.text,
) -> None:
    """Preflight a multi-node allocation: versions, GPUs, interfaces, ports, shared folders, a test all-reduce."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.doctor.allocation import read_allocation
        from accelwiz.doctor.gather import default_cache_dir
        from accelwiz.doctor.preflight import Options, run_preflight

        alloc = read_allocation(os.environ, nodes=nodes, node_rank=node_rank, main_address=main_address,
                                main_port=main_port, store_port=store_port, expect_nodes=expect_nodes)
        plan, plan_name = _plan(config)
        options = Options(output_dir=output_dir, cache_dir=cache_dir or default_cache_dir(os.environ),
                          timeout=timeout, plan=plan, plan_name=plan_name, expect_nodes=expect_nodes,
                          allreduce=allreduce)
        report = run_preflight(alloc, options, environ=os.environ, say=console.info)
        if output_format is DoctorFormat.json:
            from accelwiz.doctor.render import render_json

            console.data(render_json(report))
        else:
            from accelwiz.doctor.render import render_text

            render_text(report, console.rich)
    _end(report.exit_code, multi_node=alloc.nodes > 1)


def _plan(config: Path | None):  # noqa: ANN202 - (PlanSystem | None, name); pydantic is imported lazily
    """The planned system from --config (a plan file, or the Accelerate YAML it sits beside)."""
    if config is None:
        return None, "the plan"
    from accelwiz.defaults import PLAN_SUFFIX, find_plan
    from accelwiz.errors import InputError
    from accelwiz.plan_file import load_plan

    if not config.is_file():
        raise InputError(f"config file `{config}` not found", hint="pass the Accelerate YAML or its plan file")
    path = config if config.name.endswith(PLAN_SUFFIX) else find_plan(config)
    if path is None:
        get_console().info(f"no plan beside {config}: comparing the nodes with each other only")
        return None, "the plan"
    return load_plan(path).system, path.name


def _end(code: int, *, multi_node: bool) -> None:
    """Exit with the report's code. After a multi-node preflight, leave at once (after flushing): a store
    handshake or a collective that never finished still holds a thread inside torch, which could block the
    interpreter's shutdown, and tearing torch down costs seconds on a loaded node (3 s measured on the 2-core
    test machine) that the job's deadline does not have. The token files are removed and the port
    listener closed by then; the store's sockets the kernel closes."""
    # Decided by what this call did, not by what the interpreter imported: in a test run torch.distributed is
    # already loaded, and leaving at once would end the test runner itself.
    if multi_node and "torch.distributed" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise typer.Exit(code)
