"""The metaclass for accelwiz's own pydantic models (config files, machine profiles): built without plugins
(issue 33: start-up)."""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel


class BuiltWithoutPlugins(type(BaseModel)):  # type: ignore[misc]
    """Builds accelwiz's own pydantic models without pydantic plugins, as typer builds its parameter adapters.

    pydantic looks for plugins the first time it builds a validator: it imports importlib.metadata and reads the
    entry points of every installed distribution (149 here, with torch's stack installed) on each start, for
    plugins that observe an application's own models; these models only read config files and machine profiles.
    The environment variable is pydantic's own switch, set only while a class is built and restored after, so
    pydantic models of other libraries (and child processes) still get their plugins."""

    def __new__(mcs, *args: Any, **kwargs: Any) -> Any:
        previous = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
        os.environ["PYDANTIC_DISABLE_PLUGINS"] = "1"
        try:
            return super().__new__(mcs, *args, **kwargs)
        finally:
            if previous is None:
                del os.environ["PYDANTIC_DISABLE_PLUGINS"]
            else:
                os.environ["PYDANTIC_DISABLE_PLUGINS"] = previous
