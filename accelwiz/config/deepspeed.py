"""The DeepSpeed JSON config. SKELETON: completed by the schema work."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from accelwiz.config.base import StrictModel


class DeepSpeedConfig(StrictModel):
    model_config = ConfigDict(extra="allow")
    zero_optimization: dict[str, Any] | None = None
