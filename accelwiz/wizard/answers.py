"""The validated result of the question flow: one field per question key."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class StrategyChoice(str, Enum):
    """How the wizard distributes training: the vocabulary's strategy kinds (`accelwiz.vocab.STRATEGY_KINDS`, the
    estimator's `Strategy.kind`), the values `--strategy` and answer files accept."""

    single = "single"
    ddp = "ddp"
    zero1 = "zero1"
    zero2 = "zero2"
    zero3 = "zero3"
    fsdp_full = "fsdp_full"
    fsdp_grad_op = "fsdp_grad_op"
    fsdp_hybrid = "fsdp_hybrid"

    @property
    def zero_stage(self) -> int | None:
        return int(self.value[-1]) if self.value.startswith("zero") else None

    @property
    def label(self) -> str:
        return STRATEGY_LABELS[self]

    @property
    def is_fsdp(self) -> bool:
        return self.value.startswith("fsdp")


STRATEGY_LABELS = {
    StrategyChoice.single: "Single process (no distribution)",
    StrategyChoice.ddp: "DDP (replicate the model on every GPU)",
    StrategyChoice.fsdp_full: "FSDP2 (shard parameters, gradients and optimizer state)",
    StrategyChoice.fsdp_grad_op: "FSDP2 shard-grad-op (shard gradients and optimizer state; keep parameters)",
    StrategyChoice.fsdp_hybrid: "FSDP HYBRID_SHARD (shard within each machine, replicate across machines)",
    StrategyChoice.zero1: "DeepSpeed ZeRO-1 (shard optimizer state)",
    StrategyChoice.zero2: "DeepSpeed ZeRO-2 (shard optimizer state and gradients)",
    StrategyChoice.zero3: "DeepSpeed ZeRO-3 (shard everything)",
}


class Regime(str, Enum):
    full = "full"
    lora = "lora"
    qlora = "qlora"


class Precision(str, Enum):
    no = "no"
    fp16 = "fp16"
    bf16 = "bf16"
    fp8 = "fp8"


class Launcher(str, Enum):
    """How a multi-machine run starts: the vocabulary's launcher kinds (`accelwiz.vocab.LAUNCHER_KINDS`) less
    `local`, which starts one machine only."""

    node_commands = "node-commands"
    slurm = "slurm"


class Owner(str, Enum):
    """Who sets micro-batch, accumulation, precision and clipping: the files, or the HF Trainer's arguments."""

    accelerate = "accelerate"
    trainer = "trainer"


class OffloadDevice(str, Enum):
    cpu = "cpu"
    nvme = "nvme"


class TrainingKind(str, Enum):
    """What trains: supervised fine-tuning, or post-training through TRL (the plan's `training.kind`, the
    estimator's `PostTraining.kind`)."""

    sft = "sft"
    dpo = "dpo"
    grpo = "grpo"

    @property
    def post(self) -> bool:
        return self is not TrainingKind.sft


class Generation(str, Enum):
    """How GRPO generates its completions (the estimator's `PostTraining.generation`)."""

    hf = "hf"
    vllm_colocate = "vllm-colocate"
    vllm_server = "vllm-server"


# Every answer key's allowed values, as `init --help` and the answer files spell them.
ENUM_VALUES: dict[str, type[Enum]] = {
    "regime": Regime,
    "strategy": StrategyChoice,
    "precision": Precision,
    "owner": Owner,
    "offload_device": OffloadDevice,
    "launcher": Launcher,
    "kind": TrainingKind,
    "generation": Generation,
}


class Answers(BaseModel):
    """Every answer the wizard can collect. None = the question did not apply (e.g. no model was named)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)

    model: str | None = None
    kind: TrainingKind = TrainingKind.sft
    max_prompt_length: int | None = Field(None, ge=1)
    max_completion_length: int | None = Field(None, ge=1)
    generation: Generation | None = None
    vllm_anyway: bool | None = None
    beta: float | None = Field(None, ge=0, allow_inf_nan=False)
    regime: Regime | None = None
    lora_rank: int | None = Field(None, ge=1)
    seq_len: int | None = Field(None, ge=1)
    micro_batch: int = Field(1, ge=1)
    gradient_checkpointing: bool | None = None
    num_machines: int = Field(1, ge=1)
    gpus: int = Field(0, ge=0, description="GPUs per machine; 0 = train on the CPU.")
    processes: int | None = Field(None, ge=1, le=1024, description="Processes per machine without GPUs: CPU DDP "
                                                                  "on gloo (None: one).")
    owner: Owner = Owner.accelerate
    strategy: StrategyChoice = StrategyChoice.single
    offload_optimizer: bool = False
    offload_params: bool = False
    offload_device: OffloadDevice = OffloadDevice.cpu
    nvme_path: str | None = None
    precision: Precision = Precision.no
    use_global_batch: bool = False
    target_global_batch: int | None = Field(None, ge=1)
    gradient_accumulation: int = Field(1, ge=1)
    gradient_clipping: float = Field(1.0, ge=0, allow_inf_nan=False)  # JSON has no Infinity
    torch_compile: bool = False
    zero3_init: bool | None = None
    launcher: Launcher | None = None
    machine_rank: int = Field(0, ge=0)
    main_process_ip: str | None = None
    main_process_port: int = Field(29500, ge=0, le=65535)
    rdzv_backend: str | None = None
    num_generations: int | None = Field(None, ge=2)
    reward: str | None = None

    @property
    def sequence_length(self) -> int | None:
        """Tokens per sample: the SFT sequence, or prompt + completion after SFT (DPO's max_length)."""
        if self.kind.post and self.max_prompt_length and self.max_completion_length:
            return self.max_prompt_length + self.max_completion_length
        return self.seq_len

    @property
    def planned_generation(self) -> Generation | None:
        """GRPO's generation as planned: vLLM only where it is installed or the user insisted (vllm_anyway)."""
        if self.kind is not TrainingKind.grpo:
            return None
        return Generation.hf if self.vllm_anyway is False else (self.generation or Generation.hf)

    @property
    def processes_per_machine(self) -> int:
        """One per GPU; on a machine without GPUs, the CPU processes asked for (1 unless said)."""
        return self.gpus or self.processes or 1

    @property
    def world_size(self) -> int:
        return self.processes_per_machine * self.num_machines

    @property
    def global_batch(self) -> int:
        return self.micro_batch * self.gradient_accumulation * self.world_size

    @property
    def uses_deepspeed(self) -> bool:
        return self.strategy.zero_stage is not None

    @model_validator(mode="before")
    @classmethod
    def _accumulation_from_target(cls, data: Any) -> Any:
        """global batch = micro-batch x accumulation x processes: a target global batch fixes the
        accumulation, and must be a multiple of one step's samples (the error names the nearest valid ones)."""
        if not isinstance(data, dict) or data.get("target_global_batch") is None:
            return data
        numbers = [data.get(k, d) for k, d in (("target_global_batch", 1), ("micro_batch", 1), ("gpus", 0),
                                               ("num_machines", 1))]
        numbers.append(data.get("processes") or 1)
        if not all(type(n) is int for n in numbers) or min(numbers) < 0 or 0 in (numbers[0], numbers[1]):
            return data  # the field validators report the bad value
        target, micro, gpus, machines, cpu_processes = numbers
        step = micro * (gpus or cpu_processes) * max(machines, 1)
        if target % step:
            below, above = target // step, target // step + 1
            nearest = [f"{n * step} (accumulation {n})" for n in (below, above) if n >= 1]
            raise ValueError(
                f"target_global_batch {target} is not a multiple of {step} = {micro} (micro-batch) x "
                f"{step // micro} (processes); choose {' or '.join(nearest)}"
            )
        return {**data, "gradient_accumulation": target // step}

    @model_validator(mode="after")
    def _consistent(self) -> Answers:
        if self.strategy is StrategyChoice.single and self.world_size > 1:
            raise ValueError(
                f"strategy `single` runs one process, but {self.world_size} processes were given; "
                "choose ddp, fsdp_full or zero1/2/3"
            )
        if self.strategy in (StrategyChoice.ddp, StrategyChoice.fsdp_full, StrategyChoice.fsdp_grad_op,
                             StrategyChoice.zero1) and self.world_size == 1:
            raise ValueError(
                f"strategy `{self.strategy.value}` needs more than one GPU; choose single (or "
                "zero2/zero3 to offload to the CPU)"
            )
        if self.gpus == 0 and self.strategy not in (StrategyChoice.single, StrategyChoice.ddp):
            raise ValueError(f"strategy `{self.strategy.value}` needs GPUs; on the CPU choose single or ddp "
                             "(several CPU processes)")
        if self.gpus == 0 and self.precision is not Precision.no:
            raise ValueError(f"mixed precision `{self.precision.value}` needs a GPU; use `no` on the CPU")
        if self.offload_params and self.strategy not in (StrategyChoice.zero3, StrategyChoice.fsdp_full):
            raise ValueError(f"parameter offload needs zero3 or fsdp_full, not `{self.strategy.value}`")
        if self.offload_optimizer and not self.uses_deepspeed:
            raise ValueError("optimizer offload is a DeepSpeed feature; choose zero1/2/3")
        if self.precision is Precision.fp8 and self.uses_deepspeed:
            raise ValueError(
                "fp8 cannot be combined with a DeepSpeed JSON here: the JSON owns precision and "
                "has no fp8 setting; choose bf16 or use ddp/fsdp"
            )
        if self.offload_device is OffloadDevice.nvme and (self.strategy is not StrategyChoice.zero3
                                                          or not (self.offload_optimizer or self.offload_params)):
            raise ValueError("NVMe offload needs ZeRO-3 with optimizer or parameter offload")
        if self.offload_device is OffloadDevice.nvme and not self.nvme_path:
            raise ValueError("NVMe offload needs nvme_path (a directory on a local NVMe drive)")
        if self.strategy is StrategyChoice.fsdp_hybrid and self.num_machines < 2:
            raise ValueError("FSDP HYBRID_SHARD replicates across machines: it needs 2 or more")
        if self.kind.post and self.regime is Regime.qlora:
            raise ValueError(f"regime qlora is not offered for {self.kind.value}: `accelwiz run` trains DPO and GRPO "
                             "in full or with LoRA")
        if self.kind is TrainingKind.grpo and self.num_generations and self.global_batch % self.num_generations:
            raise ValueError(
                f"num_generations {self.num_generations} does not divide the generation batch {self.global_batch} "
                f"(micro-batch x processes x accumulation): GRPOConfig refuses it"
            )
        if self.machine_rank >= self.num_machines:
            raise ValueError(
                f"machine_rank {self.machine_rank} must be below num_machines {self.num_machines}"
            )
        if self.num_machines > 1 and self.launcher is Launcher.node_commands and not self.main_process_ip:
            raise ValueError("multi-node training needs main_process_ip (the address of machine 0)")
        return self
