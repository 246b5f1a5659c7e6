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
    from accelwiz.probe.model import MachineProfile
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
    command: str = "accelwiz init"


def valid_keys() -> list[str]:
    from accelwiz.wizard.catalog import CATALOG, SYSTEM_QUESTION

    return [SYSTEM_QUESTION.key, *(q.key for q in CATALOG)]


def preset_answers(answers_file: Path | None, options: Mapping[str, Any]) -> dict[str, Any]:
    """Answers from the --answers file, overridden by explicit options; unknown keys are a usage error."""
    preset: dict[str, Any] = {}
    if answers_file is not None:
        preset.update(read_answers_file(answers_file))
    preset.update({key: value for key, value in options.items() if value is not None})
    # Giving the target (or the accumulation steps) also answers "set a target global batch?", so answer
    # files written before that question existed stay complete.
    if "target_global_batch" in preset:
        preset.setdefault("use_global_batch", True)
    elif "gradient_accumulation" in preset:
        preset.setdefault("use_global_batch", False)
    unknown = sorted(set(preset) - set(valid_keys()))
    if unknown:
        raise UsageError(
            f"unknown answer key(s): {', '.join(unknown)}", hint=f"valid keys: {', '.join(valid_keys())}"
        )
    return preset


def read_answers_file(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(
            f"cannot read {path}: {exc.strerror}", hint="pass an existing answers YAML"
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path} is not valid YAML: {exc}", hint="write one `key: value` per line") from None
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


def run_init(request: InitRequest, console: Console) -> list[Path]:
    """Ask, generate, check, then write (or print with --dry-run). Returns the paths written."""
    from accelwiz.probe.profiles import load_system
    from accelwiz.wizard.catalog import SYSTEM_QUESTION
    from accelwiz.wizard.prompters import QuestionaryPrompter

    preset = preset_answers(request.answers_file, request.options)
    prompter = choose_prompter(request)
    # The machine comes first, on its own: every later default and choice is computed from it.
    if SYSTEM_QUESTION.key in preset:
        system_spec = str(preset[SYSTEM_QUESTION.key])
    else:
        system_spec = prompter.ask(SYSTEM_QUESTION, default=SYSTEM_QUESTION.default, choices=(), note=None)
    system = load_system(system_spec or "local")
    interactive = isinstance(prompter, QuestionaryPrompter)
    generated = ask_until_accepted(
        request, system, prompter, preset, console, go_back=_confirm_go_back if interactive else None
    )
    written = _print_or_write(generated.files, request, console, interactive=interactive)
    if written:
        console.info("start training with:\n" + "\n".join(f"  {line}" for line in generated.launch))
    return written


def ask_until_accepted(
    request: InitRequest,
    system: MachineProfile,
    prompter: Any,
    preset: dict[str, Any],
    console: Console,
    *,
    go_back: Callable[[], bool] | None,
) -> Generated:
    """Walk, validate, render and check. When the result is refused and `go_back` says so, walk again with the
    previous answers as the defaults (on a terminal: fix one answer instead of retyping all of them)."""
    from accelwiz.wizard.catalog import CATALOG
    from accelwiz.wizard.flow import reject_contradicted, validate, walk
    from accelwiz.wizard.generate import NOT_FITTING, generate
    from accelwiz.wizard.prompters import RememberingPrompter

    asking = prompter
    while True:
        result = walk(CATALOG, system, asking, preset)
        for key in result.ignored:
            console.warn(f"answer `{key}` ignored: the question does not apply to these answers")
        try:
            answers = validate(result.answers, system)
            reject_contradicted(result, preset, answers)
            generated = generate(answers, system, output=request.output, command=request.command)
            if NOT_FITTING in generated.estimate:
                console.warn(f"by the estimate this will run out of GPU memory: {generated.estimate}")
            report_diagnostics(generated.diagnostics, console)
            return generated
        except (UsageError, ChecksFailed) as exc:
            if go_back is None:
                raise
            console.error(exc.message, hint=exc.hint)
            if not go_back():
                raise
            asking = RememberingPrompter(prompter, result.answers)


def _print_or_write(
    files: list[Any], request: InitRequest, console: Console, *, interactive: bool
) -> list[Path]:
    """--dry-run: the files on stdout. Otherwise all of them on disk, or none."""
    from accelwiz.wizard.write import write_files

    if request.dry_run:
        for file in files:
            console.data(f"# ==> {file.path} <==\n{file.text}")
        return []
    confirm = _confirm_overwrite if interactive else None
    for backup in write_files(files, force=request.force, confirm_overwrite=confirm):
        console.info(f"kept the previous file as {backup}")
    console.info("wrote " + ", ".join(str(f.path) for f in files))
    return [f.path for f in files]


def report_diagnostics(diagnostics: list[Any], console: Console) -> None:
    """Show what `check` says about the rendered files; errors stop the write."""
    from accelwiz.rules.report import render_text
    from accelwiz.wizard.write import errors_of

    if not diagnostics:
        return
    console.info(render_text(diagnostics).rstrip("\n"))
    errors = errors_of(diagnostics)
    if errors:
        raise ChecksFailed(
            f"the generated configs have {len(errors)} error(s) (shown above); nothing was written",
            hint="change the answers named in the errors and run `accelwiz init` again",
        )


def _confirm_overwrite(path: Path) -> bool:
    return _confirm(f"{path} exists. Replace it (a .bak copy is kept)?", default=False)


def _confirm_go_back() -> bool:
    return _confirm("Go back and change answers (your answers so far are the defaults)?", default=True)


def _confirm(prompt: str, *, default: bool) -> bool:
    import questionary

    try:
        return bool(questionary.confirm(prompt, default=default).unsafe_ask())
    except EOFError:
        raise KeyboardInterrupt from None


def copy_template(name: str, request: InitRequest, console: Console) -> list[Path]:
    from accelwiz.wizard.generate import deepspeed_path_for
    from accelwiz.wizard.templates import find_template, template_files

    files = template_files(find_template(name), request.output, deepspeed_path_for(request.output))
    return _print_or_write(files, request, console, interactive=is_interactive(request))
