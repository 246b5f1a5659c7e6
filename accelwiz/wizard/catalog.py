"""What `accelwiz init` asks, in order. Branching is a named predicate per question (predicates.py); defaults
and choices are computed from the machine and the answers so far (suggest.py). Nothing here prompts."""

from __future__ import annotations

from accelwiz.wizard import predicates as p
from accelwiz.wizard import suggest as s
from accelwiz.wizard.answers import Launcher, Owner
from accelwiz.wizard.catalog_types import Choice, Question

__all__ = ["CATALOG", "FLOW", "SYSTEM_QUESTION", "Choice", "Question", "question"]

# Asked before everything else, because every default below depends on the machine it names.
SYSTEM_QUESTION = Question(
    "system",
    "Which machine will train?",
    kind="text",
    when=p.always,
    default="local",
    verify=s.verify_system,
    help="`local` probes this machine; a preset (accelwiz probe --list-presets); NxGPU or MxNxGPU such as "
    "1xA100-80GB or 2x8xH100-80GB; or a saved profile JSON.",
)

CATALOG: tuple[Question, ...] = (
    Question(
        "model",
        "Which model will you train? (none: skip the memory estimate)",
        kind="text",
        when=p.always,
        default="",
        verify=s.verify_model,
        help="A preset name (llama-3-8b), a path to a config.json, or a parameter count such as 7B.",
    ),
    Question(
        "regime",
        "How will you fine-tune it?",
        kind="select",
        when=p.has_model,
        default=s.default_regime,
        choices=s.regime_choices,
        explain=s.explain_regime,
        help="LoRA trains small adapters and needs far less optimizer memory than full fine-tuning.",
    ),
    Question(
        "lora_rank",
        "LoRA rank?",
        kind="int",
        when=p.uses_adapter,
        default=16,
        verify=s.verify_positive("lora_rank"),
        help="The adapters' inner dimension; 8 to 64 is typical.",
    ),
    Question(
        "seq_len",
        "Sequence length (tokens per sample)?",
        kind="int",
        when=p.has_model,
        default=2048,
        verify=s.verify_positive("seq_len"),
        help="Activation memory grows with it.",
    ),
    Question(
        "owner",
        "Who runs the training loop?",
        kind="select",
        when=p.always,
        default=Owner.accelerate,
        choices=s.owner_choices,
        help="The HF Trainer (and TRL) set micro-batch, accumulation, precision and clipping from TrainingArguments.",
    ),
    Question(
        "micro_batch",
        "Micro-batch size per GPU?",
        kind="int",
        when=p.always,
        default=1,
        verify=s.verify_positive("micro_batch"),
        help="Samples per process per forward pass (per_device_train_batch_size for the HF Trainer).",
    ),
    Question(
        "gradient_checkpointing",
        "Use gradient checkpointing?",
        kind="confirm",
        when=p.has_model,
        default=True,
        help="Recomputes activations in the backward pass: about 30% slower, far less memory.",
    ),
    Question(
        "num_machines",
        "How many machines (nodes)?",
        kind="int",
        when=p.has_gpu,
        default=s.default_machines,
        verify=s.verify_machines,
        help="Identical machines training together; 1 unless you use several.",
    ),
    Question(
        "gpus",
        "How many GPUs per machine?",
        kind="int",
        when=p.has_gpu,
        default=s.default_gpus,
        verify=s.verify_gpus,
        help="Per machine, not in total: the world size is this times the number of machines.",
    ),
    Question(
        "strategy",
        "How should training be distributed?",
        kind="select",
        when=p.has_gpu,
        default=s.default_strategy,
        choices=s.strategy_choices,
        explain=s.explain_strategy,
        help="Pre-selected: the fastest strategy that fits in GPU memory according to the estimate.",
    ),
    Question(
        "offload_optimizer",
        "Offload optimizer state off the GPU (to CPU memory, or NVMe with ZeRO-3)?",
        kind="confirm",
        when=p.uses_deepspeed,
        default=s.default_offload_optimizer,
        help="Frees GPU memory for large models at the cost of speed (DeepSpeed CPU Adam).",
    ),
    Question(
        "offload_params",
        "Offload parameters off the GPU (to CPU memory, or NVMe with ZeRO-3)?",
        kind="confirm",
        when=p.can_offload_params,
        default=s.default_offload_params,
        help="Only sharded parameters can leave the GPU (ZeRO-3, FSDP); slow, for models that do not fit.",
    ),
    Question(
        "offload_device",
        "Offload to which device?",
        kind="select",
        when=p.offloads_with_zero3,
        default=s.default_offload_device,
        choices=s.offload_device_choices,
        explain=s.explain_offload_device,
        help="CPU memory is faster; an NVMe drive holds what host RAM cannot (ZeRO-Infinity).",
    ),
    Question(
        "nvme_path",
        "Directory on a local NVMe drive for the offloaded states?",
        kind="path",
        when=p.offloads_to_nvme,
        default=None,
        verify=s.verify_nvme_path,
        help="An absolute directory on every machine; DeepSpeed swaps tensors there (needs libaio).",
    ),
    Question(
        "precision",
        "Mixed precision?",
        kind="select",
        when=p.has_gpu,
        default=s.default_precision,
        choices=s.precision_choices,
        refuse=s.refuse_precision,
        explain=s.explain_precision,
        help="bf16 on Ampere and newer; fp16 on older GPUs; fp8 on Ada/Hopper with a backend, without DeepSpeed.",
    ),
    Question(
        "use_global_batch",
        "Set a target global batch size?",
        kind="confirm",
        when=p.always,
        default=False,
        help="Yes: give the samples per optimizer step; the accumulation steps are derived from it.",
    ),
    Question(
        "target_global_batch",
        "Target global batch (samples per optimizer step)?",
        kind="int",
        when=p.wants_global_batch,
        default=s.default_global_batch,
        explain=s.explain_global_batch,
        verify=s.verify_global_batch,
        help="Samples per optimizer step; accumulation = global batch / (micro-batch x processes).",
    ),
    Question(
        "gradient_accumulation",
        "Gradient accumulation steps?",
        kind="int",
        when=p.picks_accumulation,
        default=1,
        explain=s.explain_accumulation,
        verify=s.verify_positive("gradient_accumulation"),
        help="Micro-batches per optimizer step; raises the global batch without more memory.",
    ),
    Question(
        "gradient_clipping",
        "Clip gradients to which norm? (0 = off)",
        kind="float",
        when=p.always,
        default=1.0,
        verify=s.verify_clipping,
        help="Written explicitly, also when off, so no layer silently applies its own default.",
    ),
    Question(
        "torch_compile",
        "Compile the model with torch.compile?",
        kind="confirm",
        when=p.always,
        default=False,
        help="Faster steps after a compile warm-up of a minute or more.",
    ),
    Question(
        "zero3_init",
        "Create the model already sharded (deepspeed.zero.Init)?",
        kind="confirm",
        when=p.is_zero3,
        default=True,
        help="Without it every process first loads the full model into CPU memory.",
    ),
    Question(
        "launcher",
        "How will the machines be started?",
        kind="select",
        when=p.is_multi_node,
        default=Launcher.slurm,
        choices=s.launcher_choices,
        help="SLURM derives each machine's rank; otherwise run one command per machine.",
    ),
    Question(
        "machine_rank",
        "Rank of this machine (0 = main)?",
        kind="int",
        when=p.launches_per_node,
        default=0,
        verify=s.verify_machine_rank,
        help="0 on the machine whose address the others connect to.",
    ),
    Question(
        "main_process_ip",
        "IP address of the main machine (rank 0)?",
        kind="text",
        when=p.launches_per_node,
        default=None,
        verify=s.verify_address,
        help="Every machine connects here; it must be reachable from all of them.",
    ),
    Question(
        "main_process_port",
        "Port on the main machine?",
        kind="int",
        when=p.is_multi_node,
        default=29500,
        verify=s.verify_port,
        help="A free TCP port on the main machine, open to the others.",
    ),
    Question(
        "rdzv_backend",
        "Rendezvous backend?",
        kind="select",
        when=p.is_multi_node,
        default="c10d",
        choices=s.rdzv_choices,
        help="How the machines find each other at start-up.",
    ),
)


# What `accelwiz init` walks: the machine first, then the catalog (whose defaults are computed from it).
FLOW: tuple[Question, ...] = (SYSTEM_QUESTION, *CATALOG)


def question(key: str) -> Question:
    return next(q for q in FLOW if q.key == key)
