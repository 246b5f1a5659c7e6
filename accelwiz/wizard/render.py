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

from accelwiz.resources import schemas_dir

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
    schema = schemas_dir() / SCHEMA_FILE
    return "".join(f"# {line}\n" for line in lines) + f"# yaml-language-server: $schema={schema}\n"


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
