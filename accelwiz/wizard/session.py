"""One `accelwiz init` from options to files: gather preset answers, pick a prompter, walk, check, write."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.console import Console
from accelwiz.errors import EXIT_FINDINGS, AccelwizError, InputError, UsageError

if TYPE_CHECKING:
    from accelwiz.wizard.generate import Generated


class ChecksFailed(AccelwizError):
    """The rendered configs did not pass `check`; nothing was written."""

    exit_code = EXIT_FINDINGS


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


def valid_keys() -> list[str]:
    from accelwiz.wizard.catalog import FLOW

    return [q.key for q in FLOW]


def preset_answers(answers_file: Path | None, options: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Answers from the --answers file, overridden by explicit options, and the deprecation notes of old spellings
    read as the vocabulary's words (wizard/aliases.py); unknown keys are a usage error."""
    from accelwiz.wizard.aliases import renamed

    preset: dict[str, Any] = {}
    notes: list[str] = []
    if answers_file is not None:
        preset, notes = renamed(read_answers_file(answers_file), where=str(answers_file))
    given, option_notes = renamed({key: value for key, value in options.items() if value is not None}, where="option")
    preset.update(given)
    notes += option_notes
    # Giving the target (or the accumulation steps) also answers "set a target global batch?", so answer
    # files written before that question existed stay complete.
    if answers_file is not None:  # files written before the owner question existed mean the files own the batch
        if preset.get("model"):  # and those written before the kind question mean supervised fine-tuning
            preset.setdefault("kind", "sft")
        if str(preset.get("kind", "sft")).strip().lower() == "sft":
            preset.setdefault("owner", "accelerate")
    from accelwiz.wizard.posttraining import lengths_from_seq_len

    lengths_from_seq_len(preset)  # DPO/GRPO: seq_len is prompt + completion, applied or refused, never dropped
    if "target_global_batch" in preset:
        preset.setdefault("use_global_batch", True)
    elif "gradient_accumulation" in preset:
        preset.setdefault("use_global_batch", False)
    unknown = sorted(set(preset) - set(valid_keys()))
    if unknown:
        import difflib

        close = {key: difflib.get_close_matches(str(key), valid_keys(), n=1, cutoff=0.6) for key in unknown}
        meant = [match[0] if len(unknown) == 1 else f"{match[0]} for {key}" for key, match in close.items() if match]
        raise UsageError(
            f"unknown answer key(s): {', '.join(unknown)}" + (f" (did you mean {', '.join(meant)}?)" if meant else ""),
            hint=f"valid keys: {', '.join(valid_keys())}"
        )
    return preset, notes


def read_answers_file(path: Path) -> dict[str, Any]:
    """The answers file as data: read as a config is (document.read: a regular file, bounded, UTF-8) and parsed
    by the config reader, whose node cap stops an alias bomb and whose depth cap stops deep nesting."""
    from accelwiz.document.read import read_text
    from accelwiz.document.yaml_reader import read_yaml

    text = read_text(path, what="an answers YAML")
    try:
        data, _ = read_yaml(text)
    except InputError as exc:
        raise InputError(f"{path}: {exc.message}", hint=exc.hint or "write one `key: value` per line") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: expected `key: value` lines, found a {type(data).__name__}",
            hint=f"valid keys: {', '.join(valid_keys())}",
        )
    return {str(key): value for key, value in data.items()}


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
    written = _print_or_write(generated.files, request, console, interactive=interactive)
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
    from accelwiz.wizard.catalog import FLOW
    from accelwiz.wizard.flow import reject_contradicted, validate, walk
    from accelwiz.wizard.generate import generate
    from accelwiz.wizard.prompters import MissingAnswer

    preset = dict(preset)
    keep: dict[str, Any] = {}
    remembered: dict[str, Any] = {}
    applied = 0
    while True:
        on_refused = prompter.refused if interactive else None
        try:
            result = walk(FLOW, None, prompter, preset, keep=keep, remembered=remembered, on_refused=on_refused)
        except MissingAnswer as exc:
            if exc.key != "nvme_path":
                raise
            # only NVMe offload fits, and --defaults has no directory to give it
            tried = "" if "regime" in preset else f" (not even {_lightest(keep or preset)} with CPU offload)"
            raise NothingFits(
                f"nothing fits without NVMe offload{tried}; what would: ZeRO-3 with NVMe offload, given a "
                "directory on a local NVMe drive",
                hint="nothing was written; add `nvme_path: /your/nvme/dir` to an --answers file, or plan for a "
                "larger machine (--system MxNxGPU)",
            ) from None
        system = result.system
        assert system is not None
        for key in result.ignored:
            console.warn(f"answer `{key}` ignored: the question does not apply to these answers")
        answers = validate(result.answers, system)
        reject_contradicted(result, preset, answers)
        generated = generate(answers, system, output=request.output, command=request.command,
                             system_spec=result.system_spec, deepspeed_output=request.deepspeed_output)
        runs = generated.option is None or generated.option.verdict.runs
        options = [] if runs else _fallbacks(result.answers, system, preset, interactive=interactive)
        if not interactive:
            if not runs:
                if not options or applied >= MAX_FALLBACKS:
                    raise _nothing_fits(generated, result.answers, system, fixed=set(preset))
                chosen = options[0]
                console.info(f"chose {chosen.title}: {chosen.reason}")
                keep = {**result.answers, **chosen.changes}
                applied += 1
                continue
            report_diagnostics(generated.diagnostics, console)
            return generated
        if not runs and not options:  # say what would fit; the user may still edit an answer
            console.warn(_nothing_fits(generated, result.answers, system, fixed=set(preset)).message)
        action, detail = review(result, generated, options, console, runs=runs, select=select or _select)
        if action == "write":
            return generated
        keep = dict(result.answers)
        if action == "apply":
            console.info(f"chose {detail.title}: {detail.reason}")
            keep.update(detail.changes)
        elif action == "edit":
            keep.pop(detail, None)
            preset.pop(detail, None)
            remembered[detail] = result.answers.get(detail)


def _fallbacks(answers: dict[str, Any], system: Any, preset: dict[str, Any], *, interactive: bool) -> list[Any]:
    from accelwiz.wizard.costing import fallbacks

    # NVMe needs a path: offered on a terminal (it asks), or when the answers name one
    return fallbacks(answers, system, fixed=frozenset(preset), nvme=interactive or "nvme_path" in preset)


def _nothing_fits(generated: Generated, answers: dict[str, Any], system: Any, *, fixed: set[str]) -> NothingFits:
    """One line: what was planned and which resource is short, that not even QLoRA with offload at the shortest
    sequence fits (when those were free to change), and what would."""
    from accelwiz.wizard.costing import REGIME_NAME, SHORTER_SEQUENCES, what_would_fit

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


def review(result: Any, generated: Generated, fallbacks: list[Any], console: Console, *, runs: bool,
           select: Callable[[str, list[tuple[str, Any]]], Any]) -> tuple[str, Any]:
    """The review screen: every answer as the files spell it, the estimate, what check says; then write, apply a
    fallback that fits, edit one answer, or cancel (KeyboardInterrupt: nothing is written, exit 130). `select`
    shows a menu of (label, value) and returns the value chosen."""
    from accelwiz.rules.report import render_text
    from accelwiz.wizard.prompters import spelled
    from accelwiz.wizard.write import errors_of

    width = max(len(key) for key in result.answers)
    lines = ["", "Review the plan:"]
    lines += [f"  {key:<{width}}  {spelled(value) if value != '' else 'none'}" for key, value in result.answers.items()]
    lines.append(f"  {'estimate':<{width}}  {generated.estimate}")
    console.info("\n".join(lines))
    if worth_showing(generated.diagnostics):
        console.info(render_text(worth_showing(generated.diagnostics)).rstrip("\n"))
    errors = errors_of(generated.diagnostics)
    choices: list[tuple[str, Any]] = []
    if runs and not errors:
        choices.append(("Write the files", ("write", None)))
    for fallback in fallbacks:
        choices.append((f"Apply {fallback.title}: {fallback.reason}", ("apply", fallback)))
    choices.append(("Edit one answer", ("edit", None)))
    choices.append(("Cancel (write nothing)", ("cancel", None)))
    title = "Write these files?" if runs and not errors else "This plan does not pass: what now?"
    action, detail = select(title, choices)
    if action == "cancel":
        raise KeyboardInterrupt
    if action == "edit":
        keys = [(f"{key}: {spelled(value)}", key) for key, value in result.answers.items()]
        detail = select("Which answer? (type to filter)", keys)
    return action, detail


def _select(title: str, choices: list[tuple[str, Any]]) -> Any:
    """A questionary menu; typing filters it (so "micro" finds micro_batch)."""
    import questionary

    items = [questionary.Choice(label, value=value) for label, value in choices]
    prompt = questionary.select(title, choices=items, use_search_filter=True, use_jk_keys=False)
    try:
        return prompt.unsafe_ask()
    except EOFError:
        raise KeyboardInterrupt from None


def _print_or_write(
    files: list[Any], request: InitRequest, console: Console, *, interactive: bool
) -> list[Path]:
    """--dry-run: the files on stdout. Otherwise all of them on disk, or none."""
    from accelwiz.wizard.write import write_files

    if request.dry_run:
        for file in files:
            console.data(f"# ==> {file.path} <==\n{file.text}")
        return []
    same = [f for f in files if _unchanged(f)]
    changed = [f for f in files if f not in same]
    if changed and not request.force and not interactive:
        _refuse_differing(changed, request)
    if same:  # the quickstart pasted twice: what is there is what this init writes, byte for byte
        console.info("unchanged: " + ", ".join(str(f.path) for f in same) + " (identical to what this init writes)")
    if not changed:
        return [f.path for f in files]
    confirm = _confirm_overwrite if interactive else None
    for backup in write_files(changed, force=request.force, confirm_overwrite=confirm):
        console.info(f"kept the previous file as {backup}")
    console.info("wrote " + ", ".join(str(f.path) for f in changed))
    return [f.path for f in files]


def _unchanged(file: Any) -> bool:
    """A regular file (no link: those are write.py's to refuse or replace) whose bytes are the ones init writes."""
    path, data = Path(file.path), file.text.encode("utf-8")  # as atomic_stage.write_all encodes it
    try:
        # the size first: a large file there is not read at all
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def _refuse_differing(changed: list[Any], request: InitRequest) -> None:
    """A second init whose files differ from those there: one line naming them and both ways on."""
    import shlex

    from accelwiz.defaults import DEFAULT_CONFIG
    from accelwiz.document.read import exists

    differ = [str(f.path) for f in changed if exists(f.path)]
    if not differ:
        return
    config = request.output
    command = request.command if "--force" in request.command.split() else f"{request.command} --force"
    run = "accelwiz run" if config == DEFAULT_CONFIG else f"accelwiz run --config {shlex.quote(str(config))}"
    one = len(differ) == 1
    raise UsageError(
        f"{' and '.join(differ)} already {'exists and differs' if one else 'exist and differ'} from what this init "
        "writes; nothing was written",
        hint=f"replace {'it' if one else 'them'} (keeping a .bak copy): `{command}`; or train with the "
        f"file{'' if one else 's'} there: `{run}`",
    )


def worth_showing(diagnostics: list[Any]) -> list[Any]:
    """What `check` says of the files init has just written, less its infos: they are suggestions about
    choices init made on purpose (a DeepSpeed JSON that fixes accumulation and precision so the YAML and the JSON
    agree: AW215, AW403), which `accelwiz check` still shows on request."""
    from accelwiz.rules.diagnostic import Severity

    return [d for d in diagnostics if d.severity is not Severity.INFO]


def report_diagnostics(diagnostics: list[Any], console: Console) -> None:
    """Show what `check` says about the rendered files; errors stop the write."""
    from accelwiz.rules.report import render_text
    from accelwiz.wizard.write import errors_of

    if worth_showing(diagnostics):
        console.info(render_text(worth_showing(diagnostics)).rstrip("\n"))
    errors = errors_of(diagnostics)
    if errors:
        raise ChecksFailed(
            f"the generated configs have {len(errors)} error(s) (shown above); nothing was written",
            hint="change the answers named in the errors and run `accelwiz init` again",
        )


def _confirm_overwrite(path: Path) -> bool:
    return _confirm(f"{path} exists. Replace it (a .bak copy is kept)?", default=False)


def _confirm(prompt: str, *, default: bool) -> bool:
    import questionary

    try:
        return bool(questionary.confirm(prompt, default=default).unsafe_ask())
    except EOFError:
        raise KeyboardInterrupt from None


def copy_template(name: str, request: InitRequest, console: Console) -> list[Path]:
    from accelwiz.wizard.generate import deepspeed_path_for
    from accelwiz.wizard.templates import find_template, template_files

    files = template_files(find_template(name), request.output,
                           deepspeed_path_for(request.output, request.deepspeed_output))
    return _print_or_write(files, request, console, interactive=is_interactive(request))
