"""Everything a rule may look at for one unit of checking: an Accelerate YAML, the DeepSpeed JSON it uses,
optionally the machine profile (hardware rules), the training workload (memory rules) and the plan file, and the
facts about how the run will be launched (`LaunchFacts`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.deepspeed_file import DeepSpeedReference
from accelwiz.document import Document

if TYPE_CHECKING:
    from accelwiz.config.validate import SchemaIssue
    from accelwiz.effective import EffectiveConfig
    from accelwiz.plan_file import PlanFile
    from accelwiz.probe.model import MachineProfile


@dataclass(frozen=True)
class LaunchFacts:
    """What the launcher changes about the run beyond what the files say; rules read these facts and decide
    for themselves whether a finding still applies (no module outside accelwiz/rules/ names a rule code).

    The default is a plain `accelerate launch FILE` on the machine checked, which is what `accelwiz check` judges.
    """

    supplies_rendezvous: bool = False
    """Per-node commands or a SLURM script pass --machine_rank, --main_process_ip and --main_process_port."""
    cpu_fallback: bool = False
    """The launch sets ACCELERATE_USE_CPU=true (`accelwiz run` does for MULTI_GPU on a machine without GPUs)."""
    machines_as_launched: int | None = None
    """The machine count as launched when the YAML describes one node and the launcher adds the others (srun)."""
    builtin_trainer: bool = False
    """The run trains with accelwiz's built-in trainer, which asks for the gloo backend on CPU."""


@dataclass
class CheckContext:
    accelerate: Document | None = None
    deepspeed: Document | None = None
    deepspeed_reference: DeepSpeedReference | None = None
    system: MachineProfile | None = None
    workload: Any = None  # accelwiz.estimate.workload.Workload when --model is given
    stack: Any = None  # the library versions that workload was resolved on (resolution/stack.py), where resolved here
    training_args: Any = None  # accelwiz.config.training_args.TrainerArguments when --training-args / -- ARGS
    launch: LaunchFacts = field(default_factory=LaunchFacts)
    plan: PlanFile | None = None  # the plan file init wrote beside the YAML, when there is one
    notes: list[str] = field(default_factory=list)
    workload_flags: dict[str, Any] = field(default_factory=dict)  # check's --seq-len ... (Workload field -> value)
    # check's --num-processes / --num-machines: the launch's counts, which win over the YAML's (effective_flags.py)
    launch_flags: dict[str, int] = field(default_factory=dict)

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
    def files_effective(self) -> EffectiveConfig:
        """The values the files and the plan give, before the Trainer's arguments fill theirs: what the Trainer's
        own view of the unit starts from (it cannot read `effective`, which is built from that view)."""
        from accelwiz.effective import resolve

        # the plan: what only it knows; the launch flags: the counts the launcher is given
        return resolve(self.accelerate, self.deepspeed, self.plan, self.launch_flags)

    @cached_property
    def effective(self) -> EffectiveConfig:
        """The values the run will actually use, and where each comes from."""
        config = self.files_effective
        if self.training_args is not None:  # the HF Trainer's arguments fill "auto" and own the batch (AW7xx)
            from accelwiz.rules.trainer_effective import trainer_effective

            config = trainer_effective(self, config)
        if self.workload_flags:  # check's workload flags, resolved as every command resolves them
            from accelwiz.resolution.given import given_flags

            config = given_flags(config, self.workload_flags)
        return config
