"""The plan file: what `init` planned, so that `check`, `run` and the trainer use the same assumptions.

`init` writes it beside the Accelerate YAML (`accelerate.yaml` -> `accelerate.plan.yaml`). It records what no
Accelerate or DeepSpeed key can say: the machine the plan is for, how the job is launched, the model, the
fine-tuning method, the workload the memory estimate assumed (sequence length, checkpointing, attention), who owns
the batch (accelerate or the HF Trainer), and the estimate itself. `check` reads it to run the memory and hardware
rules with that workload and system; `run` and the built-in trainer read it to train what was planned.

A pydantic model, like the other two files: `schemas/accelwiz-plan.schema.json` is generated from it. Paths inside
the plan are relative to the plan file's directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from accelwiz.errors import InputError

PLAN_SCHEMA_VERSION = 1
PLAN_SUFFIX = ".plan.yaml"

LauncherKind = Literal["local", "node-commands", "slurm"]
ModelSource = Literal["preset", "config", "checkpoint", "hub", "parameters"]
Method = Literal["full", "lora", "qlora"]
Attention = Literal["eager", "sdpa", "flash"]
Precision = Literal["fp32", "fp16", "bf16", "fp8"]
Owner = Literal["accelerate", "trainer"]
Verdict = Literal["fits", "tight", "does not fit"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlanFiles(_Strict):
    accelerate: str = Field(description="The Accelerate YAML this plan belongs to (relative to the plan).")
    deepspeed: str | None = Field(None, description="The DeepSpeed JSON, when the plan uses DeepSpeed.")


class PlanSystem(_Strict):
    name: str = Field(description="What `--system` was given: a preset, an NxGPU spec, a profile file or 'local'.")
    machines: int = Field(1, ge=1)
    gpus_per_machine: int = Field(0, ge=0, description="0 for a CPU-only machine.")
    gpu: str | None = Field(None, description="GPU model name, e.g. 'NVIDIA H100 80GB HBM3'.")
    gpu_memory_bytes: int | None = Field(None, ge=0)
    host_memory_bytes: int | None = Field(None, ge=0, description="RAM of one machine.")

    @property
    def world_size(self) -> int:
        return self.machines * max(1, self.gpus_per_machine)


class PlanLauncher(_Strict):
    kind: LauncherKind = "local"
    rdzv_backend: Literal["static", "c10d"] | None = None

    @property
    def supplies_rendezvous(self) -> bool:
        """Whether the launcher supplies machine_rank and main_process_ip at launch (so the YAML need not)."""
        return self.kind in ("slurm", "node-commands")


class PlanModel(_Strict):
    name: str = Field(description="A preset name, a config.json path, a checkpoint directory or a hub id.")
    source: ModelSource = "preset"
    parameters: int | None = Field(None, ge=0, description="Total parameters, as estimated.")
    trainable_parameters: int | None = Field(None, ge=0)


class PlanFineTuning(_Strict):
    method: Method = "full"
    lora_rank: int | None = Field(None, ge=1)
    lora_alpha: int | None = Field(None, ge=1)
    lora_targets: list[str] | None = None

    @model_validator(mode="after")
    def _lora_fields_need_lora(self) -> PlanFineTuning:
        if self.method == "full" and any(v is not None for v in (self.lora_rank, self.lora_alpha, self.lora_targets)):
            raise ValueError("lora_rank/lora_alpha/lora_targets are only meaningful with method lora or qlora")
        return self


class PlanTraining(_Strict):
    owner: Owner = Field("accelerate", description="Who sets micro-batch, accumulation, precision and clipping: "
                                                   "the Accelerate/DeepSpeed files, or the HF Trainer's arguments.")
    micro_batch: int = Field(ge=1)
    gradient_accumulation: int = Field(1, ge=1)
    sequence_length: int = Field(ge=1)
    gradient_checkpointing: bool = False
    attention: Attention = "sdpa"
    precision: Precision = "bf16"
    optimizer: Literal["adamw", "adamw8bit", "sgd", "adafactor"] = "adamw"
    trainer_arguments: list[str] = Field(default_factory=list,
                                         description="TrainingArguments flags that agree with this plan.")


class PlanEstimate(_Strict):
    strategy: str = Field(description="The estimator's label, e.g. 'ZeRO-3 + CPU optimizer offload'.")
    per_gpu_bytes: int = Field(ge=0)
    host_bytes: int = Field(ge=0, description="Host RAM per machine.")
    verdict: Verdict
    phase: str | None = Field(None, description="The training phase at which the peak falls, when known.")


class PlanFile(_Strict):
    schema_version: int = PLAN_SCHEMA_VERSION
    created_by: str = Field("accelwiz", description="The command line that wrote it.")
    files: PlanFiles
    system: PlanSystem
    launcher: PlanLauncher = PlanLauncher()
    model: PlanModel
    fine_tuning: PlanFineTuning = PlanFineTuning()
    training: PlanTraining
    estimate: PlanEstimate | None = None

    @property
    def world_size(self) -> int:
        return self.system.world_size

    @property
    def global_batch(self) -> int:
        return self.training.micro_batch * self.training.gradient_accumulation * self.world_size


def plan_path_for(config: Path) -> Path:
    """Where `init` writes the plan of an Accelerate YAML, and where `check` and `run` look for it."""
    return config.with_name(config.stem + PLAN_SUFFIX)


def find_plan(config: Path) -> Path | None:
    """The plan beside `config`, if there is one."""
    candidate = plan_path_for(config)
    return candidate if candidate.is_file() else None


def load_plan(path: Path) -> PlanFile:
    """Read and validate a plan file; any problem is one InputError line (exit 2) with a hint."""
    from accelwiz.document import load_document

    document = load_document(path, kind="plan")
    data = document.data
    if not isinstance(data, dict):
        raise InputError(f"{path}: a plan file must be a mapping", hint="regenerate it with `accelwiz init`")
    version = data.get("schema_version", PLAN_SCHEMA_VERSION)
    if isinstance(version, int) and version > PLAN_SCHEMA_VERSION:
        raise InputError(f"{path}: plan schema_version {version} is newer than this accelwiz reads "
                         f"({PLAN_SCHEMA_VERSION})", hint="upgrade accelwiz")
    try:
        return PlanFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<top>"
        raise InputError(f"{path}: invalid plan at `{where}`: {first['msg']}",
                         hint="fix the value, or regenerate the plan with `accelwiz init`") from None


def dump_plan(plan: PlanFile) -> str:
    """The plan as YAML text, keys in model order, with a schema line for editors."""
    import yaml

    header = ("# yaml-language-server: $schema=https://accelwiz.dev/schemas/accelwiz-plan.schema.json\n"
              "# accelwiz plan: what the memory estimate assumed and how the job is launched.\n"
              "# `accelwiz check` and `accelwiz run` read it beside the YAML it names.\n")
    body = yaml.safe_dump(plan.model_dump(mode="json", exclude_none=True), sort_keys=False, width=120)
    return header + body
