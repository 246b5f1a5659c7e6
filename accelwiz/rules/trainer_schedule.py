"""AW709: the Trainer's evaluation and checkpoint schedule, as `TrainingArguments` validates it at start-up.

`load_best_model_at_end` keeps the checkpoint with the best evaluation, so every evaluation must have a checkpoint
to keep: transformers refuses a save schedule that does not line up with the evaluation schedule
(transformers 5 training_args.py `TrainingArguments._validate_args`, added by transformers#12786 after
load_best_model_at_end silently overrode --save_steps, transformers#12685). The check runs in
`TrainingArguments.__post_init__`, on every rank, after the launcher has started them all.
tests/rules/test_trainer_schedule.py builds the real `TrainingArguments` and asserts it refuses exactly when the
function below says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

if TYPE_CHECKING:
    from accelwiz.config.training_args import TrainerArguments
    from accelwiz.rules.context import CheckContext

# TrainingArguments' own multiplier for comparing ratio steps (values below 1 are fractions of the total steps)
_LARGE_MULTIPLIER = 1_000_000


def _strategy(value: Any) -> str:
    return str(getattr(value, "value", value)).strip().lower()


def effective_eval_steps(args: TrainerArguments) -> Any:
    """eval_steps after `__post_init__`: with eval_strategy "steps" and no (or 0) eval_steps, logging_steps."""
    steps = args["eval_steps"]
    if _strategy(args["eval_strategy"]) == "steps" and not steps and args["logging_steps"] > 0:
        return args["logging_steps"]
    return steps


def best_model_schedule_problem(args: TrainerArguments) -> str | None:
    """Why `TrainingArguments` refuses the schedule with load_best_model_at_end, or None (the same conditions, in
    the same order, as `_validate_args` of transformers 5)."""
    if not args["load_best_model_at_end"]:
        return None
    save, evaluate = _strategy(args["save_strategy"]), _strategy(args["eval_strategy"])
    if save == "best":
        return None
    if evaluate != save:
        return (f"save strategy {save!r} and evaluation strategy {evaluate!r}, which differ "
                f"({args.where('save_strategy')}; {args.where('eval_strategy')})")
    eval_steps, save_steps = effective_eval_steps(args), args["save_steps"]
    if evaluate != "steps" or not eval_steps or save_steps % eval_steps == 0:
        return None
    steps = f"save_steps {save_steps:g} and eval_steps {eval_steps:g}"
    if eval_steps >= 1 and save_steps >= 1:
        return f"{steps}: the saving steps are not a round multiple of the evaluation steps"
    if not (eval_steps < 1 and save_steps < 1):
        return f"{steps}: one is a ratio of the total steps and the other a step count"
    if (save_steps * _LARGE_MULTIPLIER) % (eval_steps * _LARGE_MULTIPLIER) != 0:
        return f"{steps}: the saving ratio is not a multiple of the evaluation ratio"
    return None


@rule("AW709", "trainer-best-model-schedule-mismatch", Severity.ERROR,
      fix="Evaluate and save on the same schedule (--eval_strategy steps with --save_strategy steps and save_steps "
          "a multiple of eval_steps), or pass --save_strategy best")
def trainer_best_model_schedule_mismatch(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    With `load_best_model_at_end`, checks the save schedule against the evaluation schedule as `TrainingArguments`
    does: the same strategy (unless `save_strategy` is "best"), and with "steps" a `save_steps` that is a
    multiple of `eval_steps` (which defaults to `logging_steps`), both counts or both ratios.

    ## Why is this bad?
    The best checkpoint can only be kept if a checkpoint is written at every evaluation. `TrainingArguments`
    raises "--load_best_model_at_end requires the save and eval strategy to match" (or "... the saving steps to
    be a round multiple of the evaluation steps") in every process, after the launcher started them and before
    training. The defaults trip it: `--load_best_model_at_end` alone evaluates never ("no") and saves every 500
    steps.

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml -- --load_best_model_at_end --save_steps 500
    distributed_type: MULTI_GPU
    num_processes: 2
    ```
    Use instead: `--eval_strategy steps --eval_steps 100` beside `--save_steps 500` (a multiple of 100), or
    `--save_strategy best`.
    """
    args: TrainerArguments | None = getattr(ctx, "training_args", None)
    if args is None or any(p.name in _SCHEDULE for p in args.problems):
        return  # no Trainer arguments, or AW701 already reports the value TrainingArguments stops at
    problem = best_model_schedule_problem(args)
    if problem is not None:
        yield Finding(None, (), f"{args.where('load_best_model_at_end')} with {problem}: TrainingArguments refuses "
                                "it (\"--load_best_model_at_end requires the save and eval strategy to match\")")


_SCHEDULE = ("load_best_model_at_end", "eval_strategy", "save_strategy", "eval_steps", "save_steps", "logging_steps")
