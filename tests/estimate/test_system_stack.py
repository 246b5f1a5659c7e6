"""`estimate --system node.json` estimates the stack that machine runs: a profile that lists its packages (a real
`probe --save`) is the workload's stack, as `check --system` resolves it (resolution/stack.py); `--stack` wins."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from accelwiz.cli import app

V100 = Path(__file__).resolve().parent.parent / "fixtures" / "systems" / "8xV100-32GB.json"
ARGV = ["estimate", "--model", "llama-2-7b", "--lora", "--strategy", "single", "--micro-batch", "4", "--seq-len",
        "1024", "--gradient-checkpointing", "--format", "json"]


def _estimate(*extra: str) -> dict:
    result = CliRunner().invoke(app, [*ARGV, *extra])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _node(tmp_path: Path, transformers: str) -> Path:
    data = json.loads(V100.read_text())
    data["packages"] = {**data["packages"], "transformers": transformers}
    path = tmp_path / "node.json"
    path.write_text(json.dumps(data))
    return path


def test_the_profiles_transformers_is_the_one_estimated(tmp_path):
    node = str(_node(tmp_path, "4.46.3"))
    on_node = _estimate("--system", node)
    assert on_node["workload"]["stack"]["transformers"] == "4.46.3"
    # transformers < 4.49 copies the logits for its shifted loss: the same run on the same GPU holds more there
    today = _estimate("--system", node, "--stack", "transformers==4.57.0")
    assert today["workload"]["stack"]["transformers"] == "4.57.0"
    assert on_node["estimate"]["phases"]["forward"] > today["estimate"]["phases"]["forward"]


def test_a_preset_lists_no_packages_and_keeps_the_installed_stack():
    import transformers

    assert _estimate("--system", "1xA100-80GB")["workload"]["stack"]["transformers"] == transformers.__version__
