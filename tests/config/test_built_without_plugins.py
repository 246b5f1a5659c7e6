"""accelwiz's config and machine-profile models are built without pydantic's plugin scan, and the switch is left as it was found
(accelwiz.plugin_free.BuiltWithoutPlugins; issue 33)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_PROBE = """
import json, os
import pydantic.plugin._loader as loader
from accelwiz.config.accelerate import AccelerateConfig
import accelwiz.probe.model
AccelerateConfig.model_validate({"distributed_type": "MULTI_GPU", "num_processes": 8})
print(json.dumps({"scanned": loader._plugins is not None, "env": os.environ.get("PYDANTIC_DISABLE_PLUGINS")}))
"""


@pytest.mark.parametrize("preset", [None, "logfire"])
def test_models_skip_the_plugin_scan_and_restore_the_switch(preset: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if preset is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = preset
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, check=True)
    assert json.loads(done.stdout) == {"scanned": False, "env": preset}


def test_other_pydantic_models_still_get_plugins() -> None:
    probe = _PROBE.replace('print(', 'import pydantic\nclass Other(pydantic.BaseModel):\n    x: int = 0\nprint(')
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert json.loads(done.stdout) == {"scanned": True, "env": None}
