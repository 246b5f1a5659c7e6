"""What `check`'s launch flags change in a unit's effective topology: `--num-processes` and `--num-machines` are
`accelerate launch --num_processes/--num_machines` (or torchrun's and the `deepspeed` launcher's counts), and the
launcher fills from the YAML only what its command line left None (`_validate_launch_command`), so a flag wins
over the file. A lone DeepSpeed JSON gets its world size from them: DeepSpeed's batch triple
(train_batch_size = micro-batch x accumulation x world size) can then be checked without a YAML or the Trainer.
"""

from __future__ import annotations

from collections.abc import Mapping

from accelwiz.effective_value import EffectiveValue

# effective setting -> the check flag that sets it
LAUNCH_FLAGS = {"num_processes": "--num-processes", "num_machines": "--num-machines"}


def with_launch_flags(topology: Mapping[str, EffectiveValue],
                      flags: Mapping[str, int | None]) -> dict[str, EffectiveValue]:
    """`topology` (effective_launch.topology's values; empty for a lone JSON) with the flags given, source "command
    line"; `written` holds the flag's value, since rules read a count only where someone wrote it."""
    found = dict(topology)
    given = {name: value for name, value in flags.items() if name in LAUNCH_FLAGS and value is not None}
    if not given:
        return found
    for name, value in given.items():
        before = topology.get(name)
        said = f"; the YAML says {before.written}" if before is not None and before.is_written else ""
        found[name] = EffectiveValue(value, "command line", note=f"{LAUNCH_FLAGS[name]} {value}{said}", written=value)
    found.setdefault("num_machines", EffectiveValue(1, "accelerate default"))
    found.setdefault("machine_rank", EffectiveValue(0, "accelerate default"))
    processes, machines = found.get("num_processes"), found["num_machines"].value
    if processes is not None and isinstance(processes.value, int) and processes.value > 0 and \
            isinstance(machines, int) and machines > 0:
        found["processes_per_machine"] = EffectiveValue(processes.value // machines, "derived",
                                                        note="num_processes // num_machines")
    return found
