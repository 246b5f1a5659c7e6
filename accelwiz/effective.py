"""Effective values: what a run will actually use, and where each value comes from. SKELETON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelwiz.document import Document
    from accelwiz.rules.context import CheckContext


@dataclass(frozen=True)
class EffectiveConfig:
    raw: dict[str, Any]


def resolve(accelerate: Document | None, deepspeed: Document | None) -> EffectiveConfig:
    return EffectiveConfig(raw={})


def render_explanation(unit: CheckContext) -> str:
    return ""
