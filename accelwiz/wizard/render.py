"""Config dicts -> file text: the YAML with a header that says where it came from, the JSON strict.

The JSON carries no comments: accelerate reads it with `json.load` (`HfDeepSpeedConfig`), which rejects the
`//` comments DeepSpeed's own hjson reader would accept. So everything a reader needs is in the YAML header.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from accelwiz.console import printable

SCHEMA_FILE = "accelerate-config.schema.json"


@dataclass(frozen=True)
class Header:
    """What the YAML header says: the command that wrote it, the hardware, the estimate, how to launch."""

    command: str
    hardware: str
    estimate: str
    launch: Sequence[str]
    extra: Sequence[str] = ()


def render_yaml(config: dict[str, Any], header: Header | None) -> str:
    """YAML in the builder's key order; PyYAML quotes 'NO' and 'no' itself (they would read back as false)."""
    body = yaml.safe_dump(config, sort_keys=False, default_flow_style=False)
    return (header_text(header) if header else "") + body


def header_text(header: Header) -> str:
    lines = [
        f"Written by: {header.command}",
        f"Hardware: {header.hardware}",
        f"Memory: {header.estimate}",
        *header.extra,
        "Launch:",
        *(f"  {command}" for command in header.launch),
    ]
    # One comment line each, whatever they hold: a newline in a file name (`-o $'a\nb: 1'`) written raw would
    # end the comment and put the rest into the YAML as a key.
    return "".join(f"# {printable(line)}\n" for line in lines) + schema_note("accelerate", SCHEMA_FILE)


def schema_note(which: str, file_name: str) -> str:
    """The header line that tells an editor user how to get the schema. No `$schema=` modeline: the schema's
    path on the machine that wrote the file means nothing on another one, and there is no published URL. The
    plan file's header (accelwiz.plan_file.dump_plan) says the same for the plan schema."""
    return (f"# Schema for editors: `accelwiz schema --which {which} > {file_name}`, then add a "
            f"yaml-language-server $schema line naming that file\n")


def render_json(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=2) + "\n"


def describe_hardware(system: Any) -> str:
    """'8 x NVIDIA H100 80GB HBM3 (80.0 GiB, sm_90), 1 machine' or 'CPU only (23.5 GiB RAM)'."""
    ram = system.host.memory_total_bytes / 1024**3
    if not system.gpus:
        return f"CPU only ({ram:.1f} GiB RAM), {system.num_machines} machine(s)"
    gpu = system.gpus[0]
    major, minor = gpu.compute_capability
    return (
        f"{system.gpu_count} x {gpu.name} ({gpu.memory_total_bytes / 1024**3:.1f} GiB, sm_{major}{minor}) "
        f"per machine, {system.num_machines} machine(s), {ram:.0f} GiB RAM"
        + (f" [{system.name}]" if system.name else "")
    )
