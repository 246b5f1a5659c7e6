"""Run the real engine on inline configs and look at the codes it reports."""

from __future__ import annotations

from pathlib import Path

from accelwiz.rules.engine import check_paths
from accelwiz.rules.registry import select_rules


def diagnostics(*paths: Path, select: tuple[str, ...] = (), **context):
    return check_paths(list(paths), select_rules(select), **context).diagnostics


def codes(*paths: Path, select: tuple[str, ...] = (), **context) -> set[str]:
    return {d.code for d in diagnostics(*paths, select=select, **context)}
