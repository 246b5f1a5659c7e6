"""Everything a rule may look at for one unit of checking: an Accelerate YAML, the DeepSpeed JSON it uses, and
optionally the machine profile (hardware rules) and the training workload (memory rules)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.document import Document

if TYPE_CHECKING:
    from accelwiz.config.validate import SchemaIssue
    from accelwiz.effective import EffectiveConfig
    from accelwiz.probe.model import MachineProfile


@dataclass(frozen=True)
class DeepSpeedReference:
    """How `deepspeed_config.deepspeed_config_file` was written and what it resolved to.

    accelerate hands the string to the worker processes, which open it relative to the directory
    `accelerate launch` runs in; accelwiz resolves it the same way and, failing that, next to the YAML.
    """

    written: str
    resolved: Path | None
    relative_to_yaml_only: bool = False


@dataclass
class CheckContext:
    accelerate: Document | None = None
    deepspeed: Document | None = None
    deepspeed_reference: DeepSpeedReference | None = None
    system: MachineProfile | None = None
    workload: Any = None  # accelwiz.estimate.workload.Workload when --model is given
    notes: list[str] = field(default_factory=list)

    @property
    def documents(self) -> list[Document]:
        return [d for d in (self.accelerate, self.deepspeed) if d is not None]

    def document(self, role: str | None) -> Document | None:
        return {"accelerate": self.accelerate, "deepspeed": self.deepspeed}.get(role or "")

    @cached_property
    def schema(self) -> dict[str, list[SchemaIssue]]:
        """Schema issues per role, computed once and shared by the AW0xx rules."""
        from accelwiz.config.models import model_for
        from accelwiz.config.validate import schema_issues

        return {doc.kind: schema_issues(doc, model_for(doc)) for doc in self.documents}

    @cached_property
    def effective(self) -> EffectiveConfig:
        """The values the run will actually use, and where each comes from."""
        from accelwiz.effective import resolve

        return resolve(self.accelerate, self.deepspeed)
