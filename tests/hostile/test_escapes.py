"""Terminal escape sequences from a file are shown, never obeyed: one escaping function (console.printable) for
every renderer (issue 21: an ESC in a JSON key or in main_process_ip was printed raw by `check`)."""

from __future__ import annotations

import json
import unicodedata

import pytest

from accelwiz.console import printable

ESC = "\x1b]0;owned\x07\x1b[2J\x1b[31m"


def _raw_controls(text: str) -> list[str]:
    return [ch for ch in text if ch not in "\n" and unicodedata.category(ch) == "Cc"]


@pytest.mark.parametrize("output_format", ["text", "github", "json"])
def test_escape_in_a_json_key_and_in_main_process_ip(cli, tmp_path, monkeypatch, output_format):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_text(json.dumps({"zero_optimization": {"stage": 3}, f"bad{ESC}key": 1,
                                                  "train_micro_batch_size_per_gpu": 1}))
    (tmp_path / "accelerate.yaml").write_text(
        "distributed_type: DEEPSPEED\nnum_processes: 2\nnum_machines: 2\nmachine_rank: 0\n"
        f"main_process_ip: {json.dumps('10.0.0.1' + ESC)}\nmain_process_port: 29500\n"
        "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    result = cli("check", "accelerate.yaml", "--format", output_format)
    assert result.exit_code == 1
    assert _raw_controls(result.stdout + result.stderr) == []
    shown = result.stdout if output_format != "json" else json.dumps(json.loads(result.stdout))
    assert "bad\\x1b]0;owned\\x07" in shown or "bad\\u001b]0;owned\\u0007" in shown  # the key, escaped


def test_explain_escapes_values(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(
        f"distributed_type: MULTI_GPU\nnum_processes: 2\nmain_process_ip: {json.dumps('h' + ESC)}\n"
        f"{json.dumps('k' + ESC)}: 1\n")
    result = cli("check", "--explain", "accelerate.yaml")
    assert _raw_controls(result.stdout + result.stderr) == []
    assert "\\x1b" in result.stdout


def test_a_file_name_with_an_escape_is_escaped_in_errors(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = f"cfg{ESC}.yaml"
    (tmp_path / name).write_text("a: [\n")
    result = cli("check", name)
    assert result.exit_code == 2 and _raw_controls(result.stderr) == []
    assert "cfg\\x1b]0;owned" in result.stderr


def test_fix_diff_escapes_the_file_text(cli, tmp_path, monkeypatch):
    """YAML refuses control characters (PyYAML's reader, so accelerate's too); DeepSpeed's hjson reads a comment
    with anything in it, and --diff prints the lines around a fix."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_text(f'{{\n  // {ESC}\n  "train_micro_batch_size_per_gpu": "4",\n'
                                      '  "zero_optimization": {"stage": 2}\n}\n')
    result = cli("check", "--diff", "ds.json")
    assert result.exit_code == 1 and '"train_micro_batch_size_per_gpu": 4' in result.stdout
    assert _raw_controls(result.stdout) == [] and "// \\x1b]0;owned" in result.stdout


def test_a_control_character_in_yaml_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(f"# {ESC}\ndistributed_type: MULTI_GPU\n")
    result = cli("check", "accelerate.yaml")
    assert result.exit_code == 2 and "special characters are not allowed" in result.stderr
    assert _raw_controls(result.stderr) == []


@pytest.mark.parametrize("text,shown", [
    ("plain", "plain"),
    ("a\x1b[31mb", "a\\x1b[31mb"),
    ("line\nbreak\r", "line\\nbreak\\r"),
    ("tab\there", "tab\\there"),
    ("rlo\u202eevil", "rlo\\u202eevil"),  # Trojan Source: a bidi override reorders what follows
    ("c1\x9bcsi", "c1\\x9bcsi"),
    ("sep\u2028x", "sep\\u2028x"),
    ("unicode ü 日本 💥", "unicode ü 日本 💥"),  # printable text stays as it is
])
def test_printable(text, shown):
    assert printable(text) == shown


def test_printable_keeps_what_the_console_asks_for():
    assert printable("a\nb\x1b", keep="\n") == "a\nb\\x1b"
