"""The launch-relevant values of an Accelerate config, read defensively (the rules report bad types)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelwiz.document import Document


@dataclass(frozen=True)
class LaunchSpec:
    distributed_type: str = "NO"
    num_processes: int = 1
    num_machines: int = 1
    use_cpu: bool = False
    mixed_precision: str = "no"
    main_process_ip: str | None = None
    main_process_port: int | None = None
    rdzv_backend: str | None = None
    same_network: bool | None = None
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
    def from_documents(cls, accelerate: Document, deepspeed: Document | None = None) -> LaunchSpec:
        get = accelerate.get
        stage = _int(get("deepspeed_config", "zero_stage"))
        if deepspeed is not None:
            stage = _int(deepspeed.get("zero_optimization", "stage"), stage)
        distributed = get("distributed_type")
        return cls(
            # an unquoted `NO` is YAML false, and accelerate then behaves as 'NO'
            distributed_type=str(distributed) if distributed not in (None, False) else "NO",
            num_processes=_int(get("num_processes"), 1) or 1,
            num_machines=_int(get("num_machines"), 1) or 1,
            use_cpu=get("use_cpu") is True,
            mixed_precision=_text(get("mixed_precision")) or "no",
            main_process_ip=_text(get("main_process_ip")),
            main_process_port=_int(get("main_process_port")),
            rdzv_backend=_text(get("rdzv_backend")),
            same_network=get("same_network") if isinstance(get("same_network"), bool) else None,
            zero_stage=stage,
            deepspeed_multinode_launcher=_text(get("deepspeed_config", "deepspeed_multinode_launcher")),
        )


def _int(value: Any, default: int | None = None) -> int | None:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return default


def _text(value: Any) -> str | None:
    if value is False:  # unquoted `no`
        return "no"
    return value.strip() if isinstance(value, str) and value.strip() else None
