"""The launch-relevant values of a unit: a view of its effective values (`accelwiz/effective.py`) in the terms
the launcher builders (`command.py`, `slurm.py`, `environment.py`) use. Nothing is read from the files here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

    from accelwiz.effective import EffectiveConfig


def require_config(config_path: Path) -> None:
    """The config every way of launching starts from: absent, one line (before anything else is resolved)."""
    if config_path.is_dir():
        raise _a_folder(config_path)
    if not config_path.is_file():
        raise InputError(
            f"config file `{config_path}` not found", hint="run `accelwiz init` to write one, or pass --config FILE"
        )


def _a_folder(folder: Path) -> InputError:
    """`--config somedir`: say it is a folder and name the Accelerate YAMLs inside (not the plans beside them)."""
    import itertools
    import shlex

    names = sorted(entry.name for entry in itertools.islice(folder.iterdir(), 1000)  # a huge folder: its first
                   if entry.suffix in (".yaml", ".yml") and not entry.name.endswith(".plan.yaml") and entry.is_file())
    if not names:
        return InputError(f"config `{folder}` is a folder with no YAML in it, not an Accelerate config",
                          hint="pass a file: --config FILE, or write one there: "
                               f"accelwiz init -o {shlex.quote(str(folder / 'accelerate.yaml'))}")
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return InputError(f"config `{folder}` is a folder, not an Accelerate config; it holds {', '.join(names[:5])}{more}",
                      hint=f"pass one of them: --config {shlex.quote(str(folder / names[0]))}")


@dataclass(frozen=True)
class LaunchSpec:
    distributed_type: str = "NO"
    num_processes: int = 1
    num_machines: int = 1
    use_cpu: bool = False
    mixed_precision: str = "no"
    main_process_ip: str | None = None
    main_process_port: int | None = None
    rdzv_backend: str | None = None  # only when the YAML writes it: accelerate ignores it there (AW110)
    same_network: bool | None = None  # likewise
    zero_stage: int | None = None
    deepspeed_multinode_launcher: str | None = None

    @property
    def processes_per_machine(self) -> int:
        """What accelerate starts on each node: `num_processes // num_machines` (utils/launch.py)."""
        return max(1, self.num_processes // max(1, self.num_machines))

    @property
    def uses_deepspeed(self) -> bool:
        return self.distributed_type == "DEEPSPEED"

    @classmethod
    def from_effective(cls, effective: EffectiveConfig, config_name: str = "the config") -> LaunchSpec:
        """The launch spec of a unit with an Accelerate YAML.

        A unit without a process count cannot be launched: `accelerate launch` stops with "You need to manually
        pass in `--num_processes`", and per-node commands or a SLURM script cannot guess one, so it is refused
        here, once, for every way `run` launches.
        """
        processes = effective.num_processes
        if processes.value is None or processes.value < 1:
            written = f"num_processes {processes.written!r} is not a process count" if processes.is_written \
                else "no num_processes"
            raise InputError(f"{config_name}: {written}, and `accelerate launch` needs one",
                             hint="set num_processes in the YAML: the total over all machines")
        machines = effective.num_machines.value
        return cls(
            distributed_type=effective.distributed_type.value or "NO",  # an unquoted NO already reads as "NO"
            num_processes=processes.value,
            num_machines=machines if machines is not None and machines >= 1 else 1,
            use_cpu=effective.use_cpu.value is True,
            mixed_precision=effective.launcher_mixed_precision.value or "no",
            main_process_ip=effective.main_process_ip.value,
            main_process_port=effective.main_process_port.value,
            rdzv_backend=effective.rdzv_backend.value if effective.rdzv_backend.is_written else None,
            same_network=effective.same_network.value if effective.same_network.is_written else None,
            zero_stage=effective.zero_stage.value if effective.uses_deepspeed else None,
            deepspeed_multinode_launcher=effective.deepspeed_multinode_launcher.value,
        )
