"""accelwiz.cli.lazy_params: options left out build no pydantic adapter, and every value a command receives is the
one typer's own coercion gives (issue 33)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
import typer
import typer.main
from typer.core import TyperCommand
from typer.testing import CliRunner

from accelwiz.cli import build_app
from accelwiz.cli.lazy_params import _CoerceWhenGiven, lazy

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def _app(cls: type, seen: list[dict]) -> typer.Typer:
    app = typer.Typer()

    @app.command(cls=cls)
    def go(
        files: Annotated[list[Path] | None, typer.Argument()] = None,
        count: Annotated[int | None, typer.Option(min=1)] = None,
        size: Annotated[int, typer.Option()] = 4,
        ratio: Annotated[float | None, typer.Option()] = None,
        select: Annotated[list[str] | None, typer.Option()] = None,
        name: Annotated[str | None, typer.Option()] = None,
        flag: Annotated[bool, typer.Option()] = False,
    ) -> None:
        seen.append({"files": files, "count": count, "size": size, "ratio": ratio, "select": select, "name": name,
                     "flag": flag})

    @app.command()
    def other() -> None:  # two commands, so `go` is a subcommand as in accelwiz
        pass

    return app


@pytest.mark.parametrize("argv", [
    [],
    ["a.yaml", "b.yaml"],
    ["--count", "3", "--size", "8", "--ratio", "0.5", "--select", "X", "--select", "Y", "--name", "n", "--flag"],
    ["--count", "0"],
    ["--size", "x"],
    ["--ratio", "1e400"],
])
def test_same_values_and_errors_as_typers_own_coercion(argv: list[str]) -> None:
    results = []
    for cls in (TyperCommand, lazy(TyperCommand)):
        seen: list[dict] = []
        result = CliRunner().invoke(_app(cls, seen), ["go", *argv])
        results.append((result.exit_code, result.output, seen))
    assert results[0] == results[1]


def test_check_builds_adapters_only_for_what_it_was_given() -> None:
    command = typer.main.get_command(build_app(["check"])).commands["check"]
    command.main(args=[str(TEMPLATES / "ddp.yaml"), "--num-processes", "8"], prog_name="check",
                 standalone_mode=False)
    built = {param.name for param in command.params if not isinstance(param._runtime_param, _CoerceWhenGiven)}
    waiting = {param.name for param in command.params if isinstance(param._runtime_param, _CoerceWhenGiven)}
    assert {"files", "num_processes"} <= built
    assert "model" in waiting and "micro_batch" in waiting  # left out: no adapter
    assert len(waiting) > len(built)
