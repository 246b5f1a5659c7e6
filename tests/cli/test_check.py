"""`accelwiz check`, `rule` and `--version` through the real CLI: exit codes, where output goes, formats."""

from __future__ import annotations

import json

from accelwiz import __version__

CLEAN = "distributed_type: MULTI_GPU\nnum_processes: 2\nnum_machines: 1\nmixed_precision: bf16\n"
TYPO = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stgae: 3\n"
WARNING_ONLY = "distributed_type: NO\nnum_processes: 1\n"


def test_version(cli):
    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"accelwiz {__version__}"


def test_clean_config_exits_0_and_prints_summary_on_stderr(cli, write):
    result = cli("check", str(write("a.yaml", CLEAN)))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "No problems found." in result.stderr


def test_error_exits_1_with_location_on_stdout(cli, write):
    path = write("a.yaml", TYPO)
    result = cli("check", str(path))
    assert result.exit_code == 1, result.output
    assert f"{path}:4:3: AW001 error unknown key `deepspeed_config.zero_stgae`" in result.stdout
    assert "help: rename it to `zero_stage`" in result.stdout
    assert any(line.endswith("error.") or " error" in line for line in result.stderr.splitlines())
    assert "hardware rules skipped" in result.stderr


def test_warnings_pass_unless_strict(cli, write):
    path = str(write("a.yaml", WARNING_ONLY))
    assert cli("check", path).exit_code == 0
    assert cli("check", "--strict", path).exit_code == 1


def test_select_and_ignore_take_prefixes(cli, write):
    path = str(write("a.yaml", TYPO))
    assert cli("check", "--ignore", "AW001", path).exit_code == 0
    assert cli("check", "--select", "AW6", path).exit_code == 0
    assert cli("check", "--select", "aw0", path).exit_code == 1


def test_json_format_is_parseable_and_complete(cli, write):
    result = cli("check", "--format", "json", str(write("a.yaml", TYPO)))
    records = json.loads(result.stdout)
    assert [r["code"] for r in records if r["code"] == "AW001"] == ["AW001"]
    assert {"file", "line", "column", "severity", "message", "fix", "name", "path"} <= set(records[0])


def test_github_format(cli, write):
    result = cli("check", "--format", "github", str(write("a.yaml", TYPO)))
    assert any(line.startswith("::error file=") and "title=AW001 unknown-key::" in line
               for line in result.stdout.splitlines())


def test_unreadable_input_exits_2_without_traceback(cli, write, tmp_path):
    for path in (tmp_path / "missing.yaml", tmp_path, write("bad.yaml", "a: b: c\n"), write("e.yaml", "")):
        result = cli("check", str(path))
        assert result.exit_code == 2, (path, result.output)
        assert "Traceback" not in result.output
        assert result.stderr.startswith("error: ")
        assert "No problems found" not in result.stderr


def test_one_bad_file_does_not_hide_the_others(cli, write):
    result = cli("check", str(write("bad.yaml", "- a\n")), str(write("a.yaml", TYPO)))
    assert result.exit_code == 2
    assert "AW001" in result.stdout


def test_rule_docs(cli):
    result = cli("rule", "AW001")
    assert result.exit_code == 0
    assert result.stdout.startswith("# unknown-key (AW001)")
    assert "## Why is this bad?" in result.stdout
    assert cli("rule", "unknown-key").stdout == result.stdout


def test_rule_unknown_code_is_a_usage_error(cli):
    result = cli("rule", "AW999")
    assert result.exit_code == 2 and "accelwiz rule --all" in result.stderr


def test_rule_all_formats(cli):
    table = cli("rule", "--all").stdout
    assert "AW001" in table and "unknown-key" in table
    records = json.loads(cli("rule", "--all", "--format", "json").stdout)
    assert len(records) >= 13 and {"code", "name", "severity", "fix", "summary", "explanation"} <= set(records[0])
    markdown = cli("rule", "--all", "--format", "markdown").stdout
    assert markdown.startswith("# accelwiz rules") and "## AW001" in markdown


def _alias_bomb() -> str:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 10)}]")
    return "\n".join(lines) + "\n"


BAD_INPUTS = {
    "binary": b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)),
    "non-mapping": b"- distributed_type: NO\n",
    "alias-bomb": _alias_bomb().encode(),
    "deep-nesting": ("a: " + "[" * 5000 + "]" * 5000 + "\n").encode(),
    "deep-json": ('{"a": ' + "[" * 5000 + "]" * 5000 + "}").encode(),
    "50MB": b"distributed_type: 'NO'\n" + b"#" * (50 * 2**20),
    "not-utf8": b"distributed_type: \xff\xfe\n",
}


def test_every_kind_of_bad_input_exits_2_with_one_clear_line(cli, tmp_path):
    for name, content in BAD_INPUTS.items():
        path = tmp_path / f"{name}.yaml"
        path.write_bytes(content)
        result = cli("check", str(path))
        assert result.exit_code == 2, (name, result.output)
        assert "Traceback" not in result.output, name
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"error: {path}:"), (name, first)
