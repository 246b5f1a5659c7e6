"""`--reward FILE.py:FUNCTION`: a GRPO reward function with TRL's signature, loaded from a file.

TRL calls `reward(prompts=..., completions=..., completion_ids=..., trainer_state=..., **columns)` and expects
one float (or None) per completion (trl/trainer/grpo_trainer.py, `_calculate_rewards`). The function must
accept `completions` and `**kwargs`.

One reader of reward specs for every command (`find_reward`): `init --reward`, the plan's `training.reward`,
`run`'s preflight and `run --dry-run` read the file as data (bounded, a regular file, parsed with `ast`), never
import it: no code of the user's runs before the launch. Only the workers, after the launch, import it
(`load_reward`), and they check the same spec first. The forms, decided once:
- FILE must be a `.py` file (the import needs Python's source loader; a `.txt` is refused by both);
- `~/` is expanded, as a shell would (both);
- a `def` nested under `if`/`try`/`with` at the module's top level counts (the import would define it when the
  branch runs; the workers' import confirms);
- a class is refused: calling a class makes an instance, not the list of floats TRL expects.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelwiz.errors import InputError, UsageError

HINT = "pass --reward rewards.py:NAME, NAME a function def NAME(completions, **kwargs) -> list[float]"
MAX_REWARD_BYTES = 4 * 1024 * 1024  # a reward module is a few KB; a bound, so a 7 GiB file is never read whole


@dataclass(frozen=True)
class RewardSpec:
    path: Path  # `~` expanded
    name: str


def split_spec(spec: str, *, hint: str = HINT) -> RewardSpec:
    """FILE.py:FUNCTION as a path and a name; a UsageError for any other shape."""
    file, sep, name = spec.rpartition(":")
    if not sep or not file or not name:
        raise UsageError(f"--reward {spec!r}: expected FILE.py:FUNCTION", hint=hint)
    path = Path(file).expanduser()
    if path.suffix != ".py":
        raise UsageError(f"--reward {spec}: {file} is not a .py file; the workers import the function from it",
                         hint=hint)
    if not name.isidentifier():
        raise UsageError(f"--reward {spec}: {name!r} is not a Python function name", hint=hint)
    return RewardSpec(path, name)


def find_reward(spec: str, *, hint: str = HINT) -> RewardSpec:
    """The spec checked without running any of its code: the file read as bounded data and parsed, the function
    defined at its top level (or under a top-level if/try/with) taking `completions` and `**kwargs`."""
    from accelwiz.document.read import exists, read_text

    reward = split_spec(spec, hint=hint)
    if not exists(reward.path):
        raise UsageError(f"--reward {spec}: no file {spec.rpartition(':')[0]}", hint=hint)
    try:
        source = read_text(reward.path, what="a Python file with the reward function", max_bytes=MAX_REWARD_BYTES)
    except InputError as exc:  # a FIFO, a device, too large, not UTF-8: one line, as every other refusal here
        raise UsageError(f"--reward {spec}: {exc.message}", hint=exc.hint or hint) from None
    tree = parse_source(source, spec, hint=hint)
    found = {node.name: node for node in _top_level(tree.body)}
    node = found.get(reward.name)
    if isinstance(node, ast.ClassDef):
        raise UsageError(f"--reward {spec}: {reward.name} is a class; TRL calls the reward and expects one float "
                         "per completion, and calling a class makes an instance", hint=hint)
    if node is None:
        functions = [n for n, v in found.items() if not isinstance(v, ast.ClassDef)]
        raise UsageError(f"--reward {spec}: {reward.path} defines no function {reward.name}",
                         hint=f"functions there: {', '.join(functions) or 'none'}")
    arguments = node.args
    names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    if arguments.kwarg is None or "completions" not in names:
        raise UsageError(f"--reward {spec}: TRL calls it with keyword arguments (prompts, completions, and the "
                         "dataset's other columns); it must accept `completions` and `**kwargs`", hint=hint)
    return reward


def parse_source(source: str, spec: str, *, hint: str = HINT) -> ast.Module:
    """`ast.parse`, every failure one line: a syntax error, a NUL byte, an expression nested deeper than the
    parser's stack (200,000 unary minus signs: MemoryError) or Python's recursion limit."""
    try:
        return ast.parse(source, filename=spec.rpartition(":")[0])
    except SyntaxError as exc:
        raise UsageError(f"--reward {spec}: does not parse as Python: line {exc.lineno}: {exc.msg}",
                         hint=hint) from None
    except ValueError as exc:  # source code string cannot contain null bytes
        raise UsageError(f"--reward {spec}: does not parse as Python: {exc}", hint=hint) from None
    except (MemoryError, RecursionError):
        raise UsageError(f"--reward {spec}: nested too deeply for Python's parser", hint=hint) from None


def _top_level(body: list[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """The definitions an import of the module makes: top-level ones, and those in top-level if/try/with
    blocks (a branch the import may take); never those inside a function or a class. Later ones win."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node
        elif isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _top_level(block)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            yield from _top_level(node.body)


def load_reward(spec: str) -> Callable[..., Any]:
    """The function `FILE.py:FUNCTION` names, imported: in the workers, after the launch only (the spec is
    checked by `find_reward` first, as the preflight checked it)."""
    reward = find_reward(spec)
    path, name = reward.path, reward.name
    loader = importlib.util.spec_from_file_location(f"accelwiz_reward_{path.stem}", path)
    if loader is None or loader.loader is None:
        raise InputError(f"--reward {spec}: {path} is not a Python file", hint=HINT)
    module = importlib.util.module_from_spec(loader)
    try:
        loader.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's module: any error is a bad input, in one line
        raise InputError(f"--reward {spec}: importing {path} failed: {type(exc).__name__}: {exc}",
                         hint="fix the module so that `python FILE.py` runs") from None
    function = getattr(module, name, None)
    if not callable(function) or inspect.isclass(function):
        names = [n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_")]
        raise InputError(f"--reward {spec}: {path} has no function {name} once imported",
                         hint=f"functions there: {', '.join(names) or 'none'}")
    _check_signature(function, spec)
    return function


def _check_signature(function: Callable[..., Any], spec: str) -> None:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return  # a builtin or C function: TRL will call it as it is
    kinds = {p.kind for p in parameters}
    names = {p.name for p in parameters}
    if inspect.Parameter.VAR_KEYWORD not in kinds or "completions" not in names:
        raise UsageError(f"--reward {spec}: TRL calls it with keyword arguments (prompts, completions, and the "
                         "dataset's other columns); it must accept `completions` and `**kwargs`", hint=HINT)
