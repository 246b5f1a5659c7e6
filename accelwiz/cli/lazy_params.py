"""Options a run does not give cost nothing to parse (issue 33).

typer 0.29 coerces every parameter's value through a pydantic TypeAdapter, and it builds that adapter for every
parameter of the command on every run, even for an option left at its `None` default, whose coercion returns None
without looking at the adapter. `check` has 24 parameters and a plain `check FILE` gives one: building the other
adapters was about 14 ms of its start-up. `LazyCoercion` (mixed into every command's click class by
accelwiz.cli._register) puts a stand-in in front of each parameter that answers None (or `()` for a repeatable
one) as typer's own coercion does, and builds the real adapter the first time a value arrives.

Only typer's own parameters that keep the lazily built `_runtime_param` are touched (typer >= 0.29); with another
typer the command's parameters are left as they are.
"""

from __future__ import annotations

from typing import Any


class _CoerceWhenGiven:
    """Stands in for a parameter's runtime coercion until a value arrives."""

    def __init__(self, param: Any) -> None:
        self._param = param

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:  # typer's RuntimeParam.coerce: None stays None, () for a repeatable option
            return () if (param.multiple or param.nargs == -1) else None
        from typer._coercion import build_runtime_param

        real = build_runtime_param(self._param.type_descriptor)
        self._param._runtime_param = real  # built once, as typer's get_runtime_param would have
        return real.coerce(value, param=param, ctx=ctx)


class LazyCoercion:
    """Mixed into a typer command class: its parameters build their pydantic adapters only for given values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in getattr(self, "params", []):
            if getattr(param, "_runtime_param", False) is None and hasattr(param, "type_descriptor"):
                param._runtime_param = _CoerceWhenGiven(param)


def lazy(cls: type) -> type:
    """`cls` with LazyCoercion in front (one subclass per class, named after it)."""
    return type(cls.__name__, (LazyCoercion, cls), {"__module__": cls.__module__, "__doc__": cls.__doc__})
