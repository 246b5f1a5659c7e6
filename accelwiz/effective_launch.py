"""The launcher's values of an Accelerate YAML, as accelerate 1.15's `ClusterConfig` and `accelerate launch` read
them: the distributed type, the topology (processes, machines, rank), where the ranks meet, which devices, and the
precision (a DeepSpeed JSON's enabled fp16/bf16 block first). accelwiz/effective.py's `resolve` joins them with
the other readers; its docstring has the precedence.
"""

from __future__ import annotations

from typing import Any

from accelwiz import coerce
from accelwiz.config.base import AUTO
from accelwiz.effective_reader import DocumentReader
from accelwiz.effective_value import UNSET, EffectiveValue


def distributed_type(yaml: DocumentReader) -> EffectiveValue:
    raw = yaml.raw("distributed_type")
    if yaml.has("distributed_type") and raw is False:
        # `DistributedType(value)` is only applied to strings: the boolean stays, and no launcher flag is set,
        # so the simple launcher runs one process, exactly as for 'NO'.
        return EffectiveValue("NO", "yaml", "accelerate", ("distributed_type",), written=False, invalid=True,
                              note="an unquoted NO is YAML false; accelerate runs it as 'NO'")
    return yaml.value("distributed_type", read=coerce.text, exact=lambda v: isinstance(v, str) and v == v.strip())


def topology(yaml: DocumentReader) -> dict[str, EffectiveValue]:
    if yaml.document is None:
        return {}
    # accelerate's ClusterConfig: 1 for the string "NO" (not the boolean an unquoted NO loads as), else -1,
    # which `accelerate launch` refuses unless --num_processes is passed.
    absent = (EffectiveValue(1, "accelerate default") if yaml.raw("distributed_type") == "NO" else
              EffectiveValue(None, "accelerate default", note="-1: `accelerate launch` needs --num_processes"))
    processes = yaml.value("num_processes", read=coerce.integer, exact=coerce.exact_integer, default=absent)
    machines = yaml.value("num_machines", read=coerce.integer, exact=coerce.exact_integer,
                          default=EffectiveValue(1, "accelerate default"))
    rank = yaml.value("machine_rank", read=coerce.integer, exact=coerce.exact_integer,
                      default=EffectiveValue(0, "accelerate default"))
    per_machine = UNSET
    if processes.value is not None and processes.value > 0 and machines.value and machines.value > 0:
        per_machine = EffectiveValue(processes.value // machines.value, "derived",
                                     note="num_processes // num_machines")
    elif processes.value is None and processes.source == "accelerate default":
        per_machine = EffectiveValue(None, "unset", note="needs --num_processes")
    return {"num_processes": processes, "num_machines": machines, "machine_rank": rank,
            "processes_per_machine": per_machine}


def launcher(yaml: DocumentReader) -> dict[str, EffectiveValue]:
    """The other launcher keys: where the ranks meet, which devices, CPU or not."""
    if yaml.document is None:
        return {}
    ignored = "accelerate launch ignores the file's value (pass --rdzv_backend); torchrun uses static"
    backend = yaml.value("rdzv_backend", read=coerce.text, default=EffectiveValue("static", "accelerate default"))
    if backend.is_set and backend.value != "static":
        backend = EffectiveValue(backend.value, backend.source, backend.role, backend.path, ignored,
                                 backend.written, backend.invalid)
    return {
        "main_process_ip": yaml.value("main_process_ip", read=coerce.text),
        "main_process_port": yaml.value("main_process_port", read=coerce.integer, exact=coerce.exact_integer),
        "rdzv_backend": backend,
        "same_network": yaml.value("same_network", read=coerce.flag, exact=coerce.exact_flag,
                                   default=EffectiveValue(False, "accelerate default")),
        "use_cpu": yaml.value("use_cpu", read=coerce.flag, exact=coerce.exact_flag,
                              default=EffectiveValue(False, "accelerate default")),
        # accelerate splits the string on commas; an integer (`gpu_ids: 0`) is a schema error, read as its digits
        "gpu_ids": yaml.value("gpu_ids", read=_gpu_ids, exact=lambda v: isinstance(v, str)),
        "deepspeed_multinode_launcher": yaml.value("deepspeed_config", "deepspeed_multinode_launcher",
                                                   read=coerce.text),
    }


def _gpu_ids(value: Any) -> str | None:
    if coerce.exact_integer(value):
        return str(value)
    return coerce.text(value)


PRECISIONS = ("no", "fp16", "bf16", "fp8")


def precision(yaml: DocumentReader, json: DocumentReader, alone: bool) -> EffectiveValue:
    from accelwiz.effective_settings import precision_blocks

    for name, block in precision_blocks(json).items():  # fp16 first: DeepSpeed's order
        if block.value is True:
            return EffectiveValue(name.removesuffix("_enabled"), "json", "deepspeed", block.path,
                                  written=block.written, invalid=block.written is not True)
    written = launcher_precision(yaml)
    if written.is_written:
        return written
    decided_later = any(json.raw(block, "enabled") == AUTO for block in ("fp16", "bf16", "bfloat16"))
    if json.document is not None and not decided_later:
        # the JSON owns the precision (accelerate fills only "auto" from the launcher): no enabled block is fp32
        return EffectiveValue("no", "deepspeed default", note="no fp16/bf16 block enabled in the JSON")
    if decided_later and alone:
        return EffectiveValue(None, "unset", note='"auto": the launcher\'s or the Trainer\'s precision')
    if yaml.document is not None:
        note = '"auto": no, unless the script or the Trainer asks for fp16/bf16' if decided_later else ""
        return EffectiveValue("no", "accelerate default", note=note)
    return UNSET


def launcher_precision(yaml: DocumentReader) -> EffectiveValue:
    """The YAML's mixed_precision; the launcher lower-cases it (`PrecisionType(args.mixed_precision.lower())`)."""
    if yaml.document is None:
        return UNSET
    if yaml.has("mixed_precision") and yaml.raw("mixed_precision") is False:
        return EffectiveValue("no", "yaml", "accelerate", ("mixed_precision",), written=False, invalid=True,
                              note="an unquoted no is YAML false")
    return yaml.value("mixed_precision", read=lambda v: coerce.choice(v, PRECISIONS, case="lower"),
                      default=EffectiveValue("no", "accelerate default"))
