"""What `accelwiz init` asks, in order. Branching is a named predicate per question (predicates.py); defaults
and choices are computed from the machine and the answers so far (suggest.py and the question modules:
fine_tuning.py, posttraining.py, grpo_questions.py, precision_question.py). The strategy and offload questions
(strategy_questions.py) and the multi-node launch questions (launch_questions.py) live with their choices and are
spliced in at their place. Nothing here prompts."""

from __future__ import annotations

from accelwiz.wizard import fine_tuning as ft
from accelwiz.wizard import grpo_questions as grpo
from accelwiz.wizard import posttraining as post
from accelwiz.wizard import precision_question as precision
from accelwiz.wizard import predicates as p
from accelwiz.wizard import suggest as s
from accelwiz.wizard.answers import Generation, TrainingKind
from accelwiz.wizard.catalog_types import Choice, Question
from accelwiz.wizard.launch_questions import LAUNCH_QUESTIONS
from accelwiz.wizard.strategy_questions import STRATEGY_QUESTIONS

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
        "kind",
        "What kind of training?",
        kind="select",
        when=p.has_model,
        default=TrainingKind.sft,
        choices=post.kind_choices,
        explain=post.explain_kind,
        help="sft trains on text; dpo on preference pairs; grpo on completions it generates, scored by a reward.",
    ),
    Question(
        "max_prompt_length",
        "Longest prompt (tokens)?",
        kind="int",
        when=p.post_trains,
        default=post.default_prompt_length,
        verify=post.verify_prompt_length,
        explain=post.explain_lengths,
        help="Prompt tokens per sample; with the completion it is one sequence, at most the model's positions.",
    ),
    Question(
        "max_completion_length",
        "Longest completion (tokens)?",
        kind="int",
        when=p.post_trains,
        default=post.default_completion_length,
        verify=post.verify_completion_length,
        help="DPO: the chosen/rejected answer (max_length = prompt + completion); GRPO: max_completion_length.",
    ),
    Question(
        "generation",
        "How should GRPO generate its completions?",
        kind="select",
        when=p.generates_on_gpus,
        default=Generation.hf,
        choices=post.generation_choices,
        explain=post.explain_generation,
        verify=post.verify_generation,
        help="HF generate needs nothing more; vLLM is faster but must be installed (pip install vllm).",
    ),
    Question(
        "vllm_anyway",
        "vLLM is not installed on this machine: plan vLLM generation anyway?",
        kind="confirm",
        when=p.plans_vllm_without_it,
        default=False,
        help="No: plan HF generate. Yes: the plan's TRL arguments say vLLM (install it before launching).",
    ),
    Question(
        "regime",
        "How will you fine-tune it?",
        kind="select",
        when=p.has_model,
        default=ft.default_regime,
        choices=ft.regime_choices,
        refuse=post.refuse_regime,
        explain=ft.explain_regime,
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
        "beta",
        "beta (KL weight to the reference model)?",
        kind="float",
        when=p.post_trains,
        default=post.default_beta,
        verify=post.verify_beta,
        explain=post.explain_beta,
        help="DPO: 0.1 is TRL's default; GRPO: 0.0 (TRL's default) needs no reference model, > 0 loads one.",
    ),
    Question(
        "seq_len",
        "Sequence length (tokens per sample)?",
        kind="int",
        when=p.trains_sft,
        default=s.default_seq_len,
        verify=s.verify_seq_len,
        help="Activation memory grows with it; at most the model's positions.",
    ),
    Question(
        "owner",
        "Who runs the training loop?",
        kind="select",
        when=p.always,
        default=post.default_owner,
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
        default=s.default_checkpointing,
        help="Recomputes activations in the backward pass: about 30% slower, far less memory. Default: on only "
             "where the run needs it to fit without sharding or offload (as `accelwiz estimate` recommends).",
    ),
    Question(
        "num_machines",
        "How many machines (nodes)?",
        kind="int",
        when=p.always,
        default=s.default_machines,
        verify=s.verify_machines,
        help="Identical machines training together; 1 unless you use several.",
    ),
    Question(
        "gpus",
        "How many GPUs per machine?",
        kind="int",
        when=p.has_gpu,
        default=post.default_gpus,
        explain=post.explain_gpus,
        verify=s.verify_gpus,
        help="Per machine, not in total: the world size is this times the number of machines.",
    ),
    Question(
        "processes",
        "How many processes per machine? (no GPU: CPU DDP on gloo)",
        kind="int",
        when=p.no_gpu,
        default=1,
        verify=s.verify_processes,
        help="Each process trains a replica on the CPU and averages gradients with the others (real DDP on gloo).",
    ),
    *STRATEGY_QUESTIONS,
    Question(
        "precision",
        "Mixed precision?",
        kind="select",
        when=p.has_gpu,
        default=precision.default_precision,
        choices=precision.precision_choices,
        refuse=precision.refuse_precision,
        explain=precision.explain_precision,
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
        default=grpo.default_global_batch,
        explain=s.explain_global_batch,
        verify=grpo.verify_grpo_batch("target_global_batch"),
        help="Samples per optimizer step; accumulation = global batch / (micro-batch x processes).",
    ),
    Question(
        "gradient_accumulation",
        "Gradient accumulation steps?",
        kind="int",
        when=p.picks_accumulation,
        default=grpo.default_accumulation,
        explain=s.explain_accumulation,
        verify=grpo.verify_grpo_batch("gradient_accumulation"),
        help="Micro-batches per optimizer step; raises the global batch without more memory.",
    ),
    Question(
        "num_generations",
        "Completions generated per prompt (num_generations)?",
        kind="select",
        when=p.trains_grpo,
        default=grpo.default_generations,
        choices=grpo.generation_choices_for_batch,
        refuse=grpo.refuse_generations,
        explain=grpo.explain_generations,
        help="GRPO scores each completion against the others of its prompt; it must divide the generation batch.",
    ),
    Question(
        "reward",
        "Reward function (FILE.py:FUNCTION; none: decide later)?",
        kind="text",
        when=p.trains_grpo,
        default="",
        verify=post.verify_reward,
        help="A def NAME(completions, **kwargs) -> list[float] in a Python file; checked here without running it.",
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
    *LAUNCH_QUESTIONS,
)


# What `accelwiz init` walks: the machine first, then the catalog (whose defaults are computed from it).
FLOW: tuple[Question, ...] = (SYSTEM_QUESTION, *CATALOG)


def question(key: str) -> Question:
    return next(q for q in FLOW if q.key == key)
