"""init's "start training with" lines are the one pasteable form (launch/copyable.launch_lines): a file name with a
space is one shell word, so the line pasted as is runs the file init wrote."""

from __future__ import annotations

import shlex
from pathlib import Path


def test_init_prints_launch_lines_that_name_the_written_file(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = cli("init", "--model", "tiny", "--defaults", "-o", "my cfg.yaml")
    assert made.exit_code == 0, made.output
    lines = [line for line in made.output.splitlines() if "accelwiz run --config" in line]
    assert lines, made.output
    for line in lines:
        words = shlex.split(line.split("#")[0].strip().removeprefix("$ "))
        assert Path(words[words.index("--config") + 1]) == Path("my cfg.yaml"), line
    header = Path("my cfg.yaml").read_text()
    assert "accelwiz run --config 'my cfg.yaml'" in header
