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
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from accelwiz.defaults import PLAN_SUFFIX, find_plan, plan_path_for  # noqa: F401 (where a plan lives)
from accelwiz.errors import InputError
from accelwiz.vocab import RENAMED_LAUNCHERS, LauncherKind, Verdict  # the one verdict: fits, tight, does not fit

if TYPE_CHECKING:
    from accelwiz.probe.gpus import GpuModel
    from accelwiz.probe.model import MachineProfile

PLAN_SCHEMA_VERSION = 1

# "none": init was given no model (`accelwiz init --defaults`); older plans wrote that as `name: none` from
# "parameters" with no count, which `PlanModel.missing` reads the same way
ModelSource = Literal["preset", "config", "checkpoint", "hub", "parameters", "none"]
Method = Literal["full", "lora", "qlora"]
Attention = Literal["eager", "sdpa", "flash"]
Precision = Literal["fp32", "fp16", "bf16", "fp8"]
Owner = Literal["accelerate", "trainer"]
Kind = Literal["sft", "dpo", "grpo"]


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
    processes_per_machine: int | None = Field(None, ge=1, description="Processes on each machine; default: one "
                                                                      "per GPU, 1 on a CPU-only machine.")

    @property
    def gpu_capacity_bytes(self) -> int | None:
        """What the plan's GPU verdicts judge: the CUDA total of `gpu` whose NVML total is `gpu_memory_bytes`."""
        if not self.gpu_memory_bytes:
            return self.gpu_memory_bytes
        from accelwiz.probe.cuda_totals import cuda_total_bytes

        return cuda_total_bytes(self.gpu or "", self.gpu_memory_bytes)

    @property
    def processes(self) -> int:
        """Processes on each machine."""
        return self.processes_per_machine or max(1, self.gpus_per_machine)

    @property
    def world_size(self) -> int:
        return self.machines * self.processes


class PlanLauncher(_Strict):
    kind: LauncherKind = "local"
    rdzv_backend: Literal["static", "c10d"] | None = None
    time_limit: str | None = Field(None, description="SLURM's --time for the job (e.g. 2-00:00:00); without it the "
                                                     "sbatch script asks for a day, so a hung job frees its nodes.")
    preflight: bool = Field(True, description="Run `accelwiz doctor` on every node before training (multi-node).")

    @property
    def supplies_rendezvous(self) -> bool:
        """Whether the launcher supplies machine_rank and main_process_ip at launch (so the YAML need not)."""
        return self.kind in ("slurm", "node-commands")


class PlanModel(_Strict):
    name: str = Field(description="A preset name, a config.json path, a checkpoint directory or a hub id.")
    source: ModelSource = "preset"
    parameters: int | None = Field(None, ge=0, description="Total parameters, as estimated.")
    trainable_parameters: int | None = Field(None, ge=0)

    @property
    def missing(self) -> bool:
        """True for a plan written without a model: nothing to size or train."""
        return self.source == "none" or (self.source == "parameters" and self.parameters is None
                                          and self.name.strip().lower() == "none")


class PlanFineTuning(_Strict):
    method: Method = "full"
    lora_rank: int | None = Field(None, ge=1)
    lora_alpha: int | None = Field(None, ge=1)
    lora_targets: list[str] | None = None
    lora_dropout: float | None = Field(None, ge=0.0, lt=1.0, description="PEFT's lora_dropout (default 0.0).")
    lora_modules_to_save: list[str] | None = Field(
        None, description="PEFT's modules_to_save: modules trained whole beside the adapters (e.g. embed_tokens, "
                          "lm_head), each a trainable copy of the frozen original.")

    @model_validator(mode="after")
    def _lora_fields_need_lora(self) -> PlanFineTuning:
        lora_fields = (self.lora_rank, self.lora_alpha, self.lora_targets, self.lora_dropout,
                       self.lora_modules_to_save)
        if self.method == "full" and any(v is not None for v in lora_fields):
            raise ValueError("lora_rank/lora_alpha/lora_targets/lora_dropout/lora_modules_to_save are only "
                             "meaningful with method lora or qlora")
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
    # post-training through TRL (docs/posttraining.md): what `run` trains and `estimate --kind` sizes
    kind: Kind = Field("sft", description="sft (supervised), dpo (preference pairs) or grpo (generations scored by "
                                          "a reward).")
    reward: str | None = Field(None, description="GRPO's reward, FILE.py:FUNCTION (relative to the plan).")
    num_generations: int | None = Field(None, ge=2, description="GRPO: completions generated per prompt.")
    max_prompt_length: int | None = Field(None, ge=1)
    max_completion_length: int | None = Field(None, ge=1)
    beta: float | None = Field(None, ge=0, description="The KL weight (DPO, GRPO); GRPO's 0 needs no reference "
                                                       "model.")


class PlanEstimate(_Strict):
    strategy: str = Field(description="The estimator's label, e.g. 'ZeRO-3 + CPU optimizer offload'.")
    per_gpu_bytes: int = Field(ge=0)
    host_bytes: int = Field(ge=0, description="Host RAM per machine.")
    verdict: Verdict
    phase: str | None = Field(None, description="The training phase at which the peak falls, when known.")


class PlanFile(_Strict):
    """The plan; `path` is where it was read from (not a field: a plan never names itself)."""

    schema_version: int = PLAN_SCHEMA_VERSION
    created_by: str = Field("accelwiz", description="The command line that wrote it.")
    files: PlanFiles
    system: PlanSystem
    launcher: PlanLauncher = PlanLauncher()
    model: PlanModel
    fine_tuning: PlanFineTuning = PlanFineTuning()
    training: PlanTraining
    estimate: PlanEstimate | None = None
    _path: Path | None = PrivateAttr(None)

    @property
    def path(self) -> Path | None:
        """The file this plan was read from; None for a plan built in memory."""
        return self._path

    def resolve(self, relative: str) -> Path:
        """A path written in the plan, relative to the plan's directory (as written when absolute)."""
        candidate = Path(relative).expanduser()
        if candidate.is_absolute() or self._path is None:
            return candidate
        return self._path.parent / candidate

    @property
    def world_size(self) -> int:
        return self.system.world_size

    @property
    def global_batch(self) -> int:
        return self.training.micro_batch * self.training.gradient_accumulation * self.world_size


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
    data = _renamed(data, path)
    try:
        plan = PlanFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<top>"
        raise InputError(f"{path}: invalid plan at `{where}`: {first['msg']}",
                         hint="fix the value, or regenerate the plan with `accelwiz init`") from None
    plan._path = path
    return plan


def _renamed(data: dict, path: Path) -> dict:
    """A plan written by hand with an old word (`launcher.kind: per-node`, the wizard's former answer) is read as
    the vocabulary's (`node-commands`), with a deprecation note once per file and process (several readers of
    one command load the same plan)."""
    launcher = data.get("launcher")
    old = launcher.get("kind") if isinstance(launcher, dict) else None
    new = RENAMED_LAUNCHERS.get(old.strip().lower()) if isinstance(old, str) else None
    if new is None:
        return data
    if str(path) not in _NOTED:
        from accelwiz.console import Console

        _NOTED.add(str(path))
        Console().warn(f"{path}: `launcher.kind: {old}` is the old name of `{new}` (run --print-node-commands); "
                       f"read as `{new}`: write that, the old name is deprecated")
    return {**data, "launcher": {**launcher, "kind": new}}


_NOTED: set[str] = set()


def dump_plan(plan: PlanFile) -> str:
    """The plan as YAML text, keys in model order, with a schema line for editors."""
    import yaml

    # No $schema modeline: no URL publishes the schema, and a local path is the writing machine's (as the
    # YAML header of accelwiz.wizard.render.schema_note says too).
    header = ("# accelwiz plan: what the memory estimate assumed and how the job is launched.\n"
              "# `accelwiz check` and `accelwiz run` read it beside the YAML it names.\n"
              "# Schema for editors: `accelwiz schema --which plan > accelwiz-plan.schema.json`, then add a "
              "yaml-language-server $schema line naming that file\n")
    body = yaml.safe_dump(plan.model_dump(mode="json", exclude_none=True), sort_keys=False, width=120)
    return header + body


# What the hardware rules read from a plan (its model, sized by the estimator: accelwiz/modelspec/lookup.py plan_model).

def plan_system(plan: PlanFile) -> MachineProfile:
    """The machine the plan is for: its preset, or its profile file (relative to the plan), else a profile
    composed from what the plan records (GPU model and memory, host RAM), with the plan's machine count."""
    from accelwiz.probe.model import GpuInfo, HostInfo, MachineProfile
    from accelwiz.probe.presets import find_preset, preset_profile
    from accelwiz.probe.profiles import load_profile

    system = plan.system
    profile = None
    preset = find_preset(system.name)
    if preset is not None:
        profile = preset_profile(preset)
    elif system.name.endswith(".json") and plan.resolve(system.name).is_file():
        profile = load_profile(plan.resolve(system.name))
    if profile is not None:
        return profile.model_copy(update={"num_machines": system.machines})
    notes = [f"composed from the plan {plan.path or ''}".rstrip()]
    gpus = []
    if system.gpus_per_machine:
        known = _gpu_model(system.gpu or "")
        if known is None:  # Ampere's features (bf16, tf32): the plan does not say, and older GPUs are rare now
            notes.append(f"GPU `{system.gpu}` is not in accelwiz's table: compute capability 8.0 assumed")
        if not system.gpu_memory_bytes:  # 0: the memory rules have no GPU memory to judge against
            notes.append("the plan records no GPU memory: GPU memory is not judged")
        gpus = [GpuInfo(index=i, name=system.gpu or "GPU", memory_total_bytes=system.gpu_memory_bytes or 0,
                        compute_capability=known.compute_capability if known else (8, 0))
                for i in range(system.gpus_per_machine)]
    host = HostInfo(memory_total_bytes=system.host_memory_bytes or 0)
    return MachineProfile(source="file", name=system.name, num_machines=system.machines, gpus=gpus, host=host,
                          notes=notes)


def _gpu_model(name: str) -> GpuModel | None:
    from accelwiz.probe.gpus import find_gpu

    return find_gpu(name)
