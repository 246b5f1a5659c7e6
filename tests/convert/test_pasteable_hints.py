"""A hint's command can be pasted into a shell as printed (issue 31): `convert -o` and `migrate -o` into a missing
folder whose name has a space say `mkdir -p 'no dir'`, which creates that folder (unquoted it made two)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

YAML = "distributed_type: FSDP\nnum_machines: 1\nnum_processes: 4\nfsdp_config:\n  fsdp_version: 1\n" \
       "  fsdp_sharding_strategy: FULL_SHARD\n"


def hint_command(stderr: str) -> list[str]:
    hint = next(line for line in stderr.splitlines() if line.strip().startswith("hint:"))
    return shlex.split(hint[hint.index("(") + 1: hint.index(")")])


@pytest.mark.parametrize("argv", [["convert", "src.yaml", "--to", "deepspeed"], ["migrate", "src.yaml"]])
def test_the_mkdir_hint_makes_the_missing_folder(cli, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    Path("src.yaml").write_text(YAML)
    result = cli(*argv, "-o", "no dir/out.yaml")
    assert result.exit_code == 2, result.stderr
    command = hint_command(result.stderr)
    assert command == ["mkdir", "-p", "no dir"], result.stderr
    subprocess.run(command, check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["no dir", "src.yaml"]
    again = cli(*argv, "-o", "no dir/out.yaml")
    assert again.exit_code == 0, again.stderr
