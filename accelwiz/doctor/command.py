"""The line a job script runs on every node before training: `accelwiz doctor ...`, for the sbatch script and
the per-node commands that `accelwiz run` writes (accelwiz/launch/). Exit 0 lets `&&` go on to training;
any other code (accelwiz/doctor/model.py) stops the node with one table instead of a hang."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

# `$NAME`, `${NAME}`, or `${NAME:?message}` (stop with the message when NAME is unset or empty, as the launch part
# of a printed node line does): double-quoted, so the message may hold spaces and `<>`, but nothing that double
# quotes would still expand or end (`"`, `$`, a backquote, a backslash, `}`) nor `!` (history at a prompt)
_SHELL_VARIABLE = re.compile(r"\$(\w+|\{\w+(:\?[^\"$`\\}!]*)?\})")


def preflight_line(*, nodes: int, main_address: str, main_port: int | str, node_rank: int | str | None = None,
                   config: str | Path | None = None, output_dir: str | Path | None = None,
                   timeout: float | None = None) -> str:
    """`accelwiz doctor --expect-nodes N --main-address A --main-port P [...]` as one shell line.

    A value written as a shell variable (`$MAIN_PROCESS_IP`, `${SLURM_NODEID}`, `${MAIN_PROCESS_IP:?message}`) is
    expanded by the shell at job time (it is double-quoted); every other value is quoted literally. Under srun, leave `node_rank` out: each
    task reads its rank from SLURM_PROCID. `config` (the Accelerate YAML or its plan) adds the plan comparison.
    """
    words = ["accelwiz", "doctor", "--expect-nodes", str(nodes), "--main-address", _word(main_address),
             "--main-port", _word(main_port)]
    if node_rank is not None:
        words += ["--node-rank", _word(node_rank)]
    if config is not None:
        words += ["--config", _word(config)]
    if output_dir is not None:
        words += ["--output-dir", _word(output_dir)]
    if timeout is not None:
        words += ["--timeout", f"{timeout:g}"]
    return " ".join(words)


def _word(value: object) -> str:
    text = str(value)
    if _SHELL_VARIABLE.fullmatch(text):
        return f'"{text}"'
    return shlex.quote(text)
