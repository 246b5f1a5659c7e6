"""One `accelwiz init` from options to files: gather preset answers, pick a prompter, walk, check, write."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.console import Console
from accelwiz.errors import EXIT_FINDINGS, AccelwizError
from accelwiz.wizard.preset import preset_answers
from accelwiz.wizard.print_or_write import print_or_write
from accelwiz.wizard.review import report_diagnostics, review, select_menu

if TYPE_CHECKING:
    from accelwiz.wizard.generate import Generated


@dataclass
class InitRequest:
    output: Path
    answers_file: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)  # --model, --strategy, ... (None = not given)
    defaults: bool = False
    dry_run: bool = False
    force: bool = False
    interactive: bool | None = None  # None: decide from the terminal
    deepspeed_output: Path | None = None  # --ds-output; default: beside the YAML, named after it
    command: str = "accelwiz init"


def is_interactive(request: InitRequest) -> bool:
    if request.interactive is not None:
        return request.interactive
    return sys.stdin.isatty() and sys.stderr.isatty()


def choose_prompter(request: InitRequest) -> Any:
    from accelwiz.wizard.prompters import DefaultsPrompter, NoTerminalPrompter, QuestionaryPrompter

    if request.defaults:
        return DefaultsPrompter(log=sys.stderr)
    return QuestionaryPrompter() if is_interactive(request) else NoTerminalPrompter()


class NothingFits(AccelwizError):
    """Not even QLoRA with offload fits the machine: nothing is written."""

    exit_code = EXIT_FINDINGS


# How often --defaults may apply a fallback before giving up (each one makes the plan smaller: never a loop).
MAX_FALLBACKS = 4


def run_init(request: InitRequest, console: Console) -> list[Path]:
    """Ask (the machine first), generate, check, review, then write (or print with --dry-run)."""
    from accelwiz.wizard.prompters import QuestionaryPrompter

    preset, notes = preset_answers(request.answers_file, request.options)
    for note in notes:
        console.warn(note)
    prompter = choose_prompter(request)
    interactive = isinstance(prompter, QuestionaryPrompter)
    generated = plan_until_accepted(request, prompter, preset, console, interactive=interactive)
    written = print_or_write(generated.files, request, console, interactive=interactive)
    for todo in generated.todos:
        console.warn(todo)
    if written:
        if generated.trainer_arguments:
            console.info("TrainingArguments that agree with the plan:\n  " + " ".join(generated.trainer_arguments))
        console.info("start training with:\n" + "\n".join(f"  {line}" for line in generated.launch))
    return written


def plan_until_accepted(request: InitRequest, prompter: Any, preset: dict[str, Any], console: Console, *,
                        interactive: bool, select: Callable[[str, list[tuple[str, Any]]], Any] | None = None
                        ) -> Generated:
    """Walk, validate, render, check; when the plan does not fit, apply the fastest fallback that does (or, on a
    terminal, offer them on the review screen); on a terminal, review before writing."""
    from accelwiz.wizard.generate import generate

    preset = dict(preset)
    keep: dict[str, Any] = {}
    remembered: dict[str, Any] = {}
    applied = 0
    while True:
        result, answers = _walk(prompter, preset, keep, remembered, console, interactive=interactive)
        system = result.system
        generated = generate(answers, system, output=request.output, command=request.command,
                             system_spec=result.system_spec, deepspeed_output=request.deepspeed_output)
        runs = _runs(generated, result.answers, system)
        options = [] if runs else _fallbacks(result.answers, system, preset, interactive=interactive)
        if not interactive:
            if runs:
                report_diagnostics(generated.diagnostics, console)
                return generated
            if not options or applied >= MAX_FALLBACKS:
                raise _nothing_fits(generated, result.answers, system, fixed=set(preset))
            keep = _apply(options[0], result.answers, console)
            applied += 1
            continue
        if not runs and not options:  # say what would fit; the user may still edit an answer
            console.warn(_nothing_fits(generated, result.answers, system, fixed=set(preset)).message)
        action, detail = review(result, generated, options, console, runs=runs, select=select or select_menu)
        if action == "write":
            return generated
        keep = _apply(detail, result.answers, console) if action == "apply" else dict(result.answers)
        if action == "edit":
            keep.pop(detail, None)
            preset.pop(detail, None)
            remembered[detail] = result.answers.get(detail)


def _walk(prompter: Any, preset: dict[str, Any], keep: dict[str, Any], remembered: dict[str, Any],
          console: Console, *, interactive: bool) -> tuple[Any, Any]:
    """One walk of the questions and its validated Answers; NothingFits where only NVMe offload fits and
    --defaults has no directory to give it."""
    from accelwiz.wizard.catalog import FLOW
    from accelwiz.wizard.flow import reject_contradicted, validate, walk
    from accelwiz.wizard.prompters import MissingAnswer

    on_refused = prompter.refused if interactive else None
    try:
        result = walk(FLOW, None, prompter, preset, keep=keep, remembered=remembered, on_refused=on_refused)
    except MissingAnswer as exc:
        if exc.key != "nvme_path":
            raise
        tried = "" if "regime" in preset else f" (not even {_lightest(keep or preset)} with CPU offload)"
        raise NothingFits(
            f"nothing fits without NVMe offload{tried}; what would: ZeRO-3 with NVMe offload, given a "
            "directory on a local NVMe drive",
            hint="nothing was written; add `nvme_path: /your/nvme/dir` to an --answers file, or plan for a "
            "larger machine (--system MxNxGPU)",
        ) from None
    assert result.system is not None
    for key in result.ignored:
        console.warn(f"answer `{key}` ignored: the question does not apply to these answers")
    answers = validate(result.answers, result.system)
    reject_contradicted(result, preset, answers)
    return result, answers


def _runs(generated: Generated, answers: dict[str, Any], system: Any) -> bool:
    """The plan runs as asked: its costed GPU option, or on a machine without GPUs its processes in host RAM
    (cpu_plan.py, the verdict `estimate` gives); True where nothing was costed (no model)."""
    if generated.option is not None:
        return bool(generated.option.verdict.runs)
    from accelwiz.wizard.cpu_plan import cpu_cost

    cost = cpu_cost(answers, system)
    return cost is None or cost.runs


def _apply(fallback: Any, answers: dict[str, Any], console: Console) -> dict[str, Any]:
    """The answers with a fallback's changes, said in one line: the next walk keeps them."""
    console.info(f"chose {fallback.title}: {fallback.reason}")
    return {**answers, **fallback.changes}


def _fallbacks(answers: dict[str, Any], system: Any, preset: dict[str, Any], *, interactive: bool) -> list[Any]:
    from accelwiz.wizard.fallbacks import fallbacks

    # NVMe needs a path: offered on a terminal (it asks), or when the answers name one
    return fallbacks(answers, system, fixed=frozenset(preset), nvme=interactive or "nvme_path" in preset)


def _nothing_fits(generated: Generated, answers: dict[str, Any], system: Any, *, fixed: set[str]) -> NothingFits:
    """One line: what was planned and which resource is short, that not even QLoRA with offload at the shortest
    sequence fits (when those were free to change), and what would."""
    from accelwiz.wizard.costing import REGIME_NAME
    from accelwiz.wizard.fallbacks import SHORTER_SEQUENCES, what_would_fit

    if not system.gpus:  # CPU training: host RAM is the one resource
        from accelwiz.wizard.cpu_plan import nothing_fits

        return NothingFits(nothing_fits(answers, system, frozenset(fixed)),
                           hint="nothing was written; train on a machine with more RAM or a GPU "
                           "(--system PRESET|profile.json), or change the answers given")
    option = generated.option
    regime = answers.get("regime")
    planned = f"{REGIME_NAME[regime]} with " if regime in REGIME_NAME else ""
    need = f"{planned}{option.label}: {option.verdict.describe()}" if option is not None else "not costed"
    from accelwiz.wizard.post_settings import training_kind

    shortened = (f"completion {int(answers.get('max_completion_length') or 512) // 4}"
                 if training_kind(answers).post else f"sequence {min(SHORTER_SEQUENCES)}")
    tried = "" if fixed & {"regime", "seq_len", "max_completion_length", "strategy", "offload_optimizer",
                           "offload_params"} else f"; not even {_lightest(answers)} with offload at {shortened}"
    return NothingFits(
        f"nothing fits: {need}{tried}; what would: {what_would_fit(answers, system, fixed=frozenset(fixed))}",
        hint="nothing was written; plan for a larger machine (--system MxNxGPU), or change the answers given",
    )


def _lightest(answers: dict[str, Any]) -> str:
    """The lightest fine-tuning the fallbacks try: QLoRA, or LoRA for DPO/GRPO (which `run` trains full or LoRA)."""
    from accelwiz.wizard.costing import REGIME_NAME
    from accelwiz.wizard.post_settings import regimes_for

    try:
        return REGIME_NAME[regimes_for(answers)[-1]]
    except ValueError:  # a kind spelled wrong is refused at its question
        return "QLoRA"


def copy_template(name: str, request: InitRequest, console: Console) -> list[Path]:
    from accelwiz.wizard.generate import deepspeed_path_for
    from accelwiz.wizard.templates import find_template, template_files

    files = template_files(find_template(name), request.output,
                           deepspeed_path_for(request.output, request.deepspeed_output))
    return print_or_write(files, request, console, interactive=is_interactive(request))
