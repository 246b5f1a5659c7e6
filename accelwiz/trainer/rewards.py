"""`--reward FILE.py:FUNCTION`: a GRPO reward function with TRL's signature, loaded from a file.

TRL calls `reward(prompts=..., completions=..., completion_ids=..., trainer_state=..., **columns)` and expects
one float (or None) per completion (trl/trainer/grpo_trainer.py, `_calculate_rewards`). The function must
accept `completions` and `**kwargs`; anything else is refused here, before a model is loaded.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from accelwiz.errors import InputError, UsageError

_HINT = "pass --reward rewards.py:NAME, NAME a function def NAME(completions, **kwargs) -> list[float]"


def load_reward(spec: str) -> Callable[..., Any]:
    """The function `FILE.py:FUNCTION` names, checked to take TRL's keyword arguments."""
    file, sep, name = spec.rpartition(":")
    if not sep or not file or not name:
        raise UsageError(f"--reward {spec}: expected FILE.py:FUNCTION", hint=_HINT)
    path = Path(file)
    if not path.is_file():
        raise InputError(f"--reward {spec}: no file {file}", hint=_HINT)
    loader = importlib.util.spec_from_file_location(f"accelwiz_reward_{path.stem}", path)
    if loader is None or loader.loader is None:
        raise InputError(f"--reward {spec}: {file} is not a Python file", hint=_HINT)
    module = importlib.util.module_from_spec(loader)
    try:
        loader.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's module: any error is a bad input, in one line
        raise InputError(f"--reward {spec}: importing {file} failed: {type(exc).__name__}: {exc}",
                         hint="fix the module so that `python FILE.py` runs") from None
    function = getattr(module, name, None)
    if not callable(function):
        names = [n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_")]
        raise InputError(f"--reward {spec}: {file} has no function {name}",
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
                         "dataset's other columns); it must accept `completions` and `**kwargs`", hint=_HINT)
