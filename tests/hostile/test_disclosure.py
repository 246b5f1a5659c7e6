"""Files are read as data, never echoed: a config can name any file in `deepspeed_config_file`, and `check` must
say which file and what is wrong with it, never print its lines (issue 21: /etc/shadow came out as 25 "unknown
key" findings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

SECRET_LINES = ["root:$6$saltsalt$c2VjcmV0aGFzaA:19000:0:99999:7:::", "aws_secret_access_key: AKIAHUNTER2XYZ",
                "password: hunter2-correct-horse"]
FORMATS = ["text", "github", "json"]


def _yaml(ds_file: str) -> str:
    return ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_processes: 2\n"
            f"deepspeed_config:\n  deepspeed_config_file: {json.dumps(ds_file)}\n")


def _leaks(result) -> list[str]:
    shown = result.stdout + result.stderr
    return [fragment for line in SECRET_LINES for fragment in line.replace("$", ":").split(":")
            if len(fragment) > 6 and fragment in shown]


@pytest.fixture()
def secrets(tmp_path: Path) -> Path:
    """A shadow-like file outside the config's folder, and the config folder beside it."""
    (tmp_path / "etc").mkdir()
    secret = tmp_path / "etc" / "shadow"
    secret.write_text("\n".join(SECRET_LINES) + "\n")
    (tmp_path / "project").mkdir()
    return secret


@pytest.mark.parametrize("output_format", FORMATS)
@pytest.mark.parametrize("how", ["absolute", "dotdot"])
def test_a_named_file_that_is_not_a_config_is_named_never_printed(cli, secrets, monkeypatch, output_format, how):
    project = secrets.parent.parent / "project"
    monkeypatch.chdir(project)
    named = str(secrets) if how == "absolute" else "../etc/shadow"
    (project / "accelerate.yaml").write_text(_yaml(named))
    result = cli("check", "accelerate.yaml", "--format", output_format)
    assert result.exit_code == 2
    assert _leaks(result) == []
    assert f"{named}, named by deepspeed_config_file, is not a JSON object" in result.stderr
    assert "its content is not shown" in result.stderr
    assert "outside the config's folder" in result.stderr  # the path leaves the folder: said
    if output_format == "json":
        assert json.loads(result.stdout) == []


def test_the_real_etc_passwd_is_not_echoed(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(_yaml("../" * 12 + "etc/passwd"))
    result = cli("check", "accelerate.yaml")
    assert result.exit_code == 2
    users = [line.split(":")[0] for line in Path("/etc/passwd").read_text().splitlines() if line.count(":") > 4]
    assert not any(f"`{user}" in result.stdout + result.stderr for user in users)


def test_a_json_with_no_deepspeed_key_is_not_listed_key_by_key(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "creds.json").write_text(json.dumps({"AKIAHUNTER2XYZ": "x", "hunter2-correct-horse": 1}))
    (tmp_path / "accelerate.yaml").write_text(_yaml("creds.json"))
    result = cli("check", "accelerate.yaml")
    assert result.exit_code == 2 and _leaks(result) == []
    assert "creds.json, named by deepspeed_config_file, has no key DeepSpeed reads" in result.stderr
    assert "outside the config's folder" not in result.stderr  # inside: nothing to say


def test_the_yaml_naming_itself_is_refused_by_check_and_convert(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(_yaml("accelerate.yaml"))
    for args in (["check", "accelerate.yaml"], ["convert", "accelerate.yaml", "--to", "fsdp"]):
        result = cli(*args)
        assert result.exit_code == 2, args
        assert "accelerate.yaml, named by deepspeed_config_file, is not a JSON object" in result.stderr
    assert not (tmp_path / "accelerate.fsdp.yaml").exists()


def test_an_empty_deepspeed_json_is_still_a_config(cli, tmp_path, monkeypatch):
    """`{}` is a DeepSpeed config with nothing in it: its findings (no zero_optimization, no batch) stay."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_text("{}")
    (tmp_path / "accelerate.yaml").write_text(_yaml("ds.json"))
    result = cli("check", "accelerate.yaml")
    assert result.exit_code == 1 and "AW204" in result.stdout


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_an_unreadable_named_file_is_one_line_for_check_and_convert(cli, tmp_path, monkeypatch):
    """/proc/self/mem is a regular file that no one can read from offset 0 (EIO, or EACCES): an unreadable
    file even for root, for whom mode 000 means nothing."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(_yaml("/proc/self/mem"))
    for args in (["check", "accelerate.yaml"], ["convert", "accelerate.yaml", "--to", "fsdp"]):
        result = cli(*args)
        assert result.exit_code == 2, args
        assert "/proc/self/mem: cannot read" in result.stderr
    assert not (tmp_path / "accelerate.fsdp.yaml").exists()


def test_init_output_name_with_a_newline_stays_in_the_comment(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "out\nevil_key: 1\n\x1b[31m.yaml"
    result = cli("init", "--defaults", "-o", name)
    assert result.exit_code == 0, result.stderr
    written = (tmp_path / name).read_text()
    assert cli("init", "--defaults", "-o", "plain.yaml").exit_code == 0
    assert set(yaml.safe_load(written)) == set(yaml.safe_load((tmp_path / "plain.yaml").read_text()))
    assert all(line.startswith("#") for line in written.splitlines() if "evil_key" in line)
    assert "\x1b" not in written
