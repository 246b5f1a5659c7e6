"""`check --fix`: every fixable rule mends a failing example into the golden file under tests/fix/cases/CODE/expected
(comments, key order, quoting and blank lines intact), `check` then passes, DeepSpeed's `DeepSpeedConfig` and
accelerate's loader accept the fixed pair; `--diff` writes nothing; a second `--fix` changes nothing."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from accelwiz.document import load_document
from accelwiz.fix.table import FIXES
from tests.crosscheck.test_deepspeed_config import deepspeed_config, fill_auto  # noqa: F401  (a fixture)

CASES = Path(__file__).resolve().parent / "cases"


def case_names() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if p.is_dir())


def prepare(name: str, tmp_path: Path, monkeypatch) -> tuple[list[str], list[str]]:
    """The case's input files copied to tmp_path (the working directory): their names and the Trainer argv."""
    shutil.copytree(CASES / name / "input", tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    argv_file = tmp_path / "trainer-args.txt"
    argv = ["--", *shlex.split(argv_file.read_text())] if argv_file.exists() else []
    files = sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".yaml", ".json"))
    return files, argv


def test_every_fixable_rule_has_a_golden_case():
    assert set(case_names()) == set(FIXES)
    assert len(FIXES) >= 24


def test_fix_table_codes_are_rules():
    from accelwiz.rules.registry import load_all_rules

    assert set(FIXES) <= set(load_all_rules())


@pytest.mark.parametrize("name", case_names())
def test_fix_produces_the_golden_file_and_check_passes(name, cli, tmp_path, monkeypatch):
    files, argv = prepare(name, tmp_path, monkeypatch)
    before = cli("check", "--select", name, *files, *argv)
    assert name in before.stdout, f"the example does not fail {name}: {before.stdout}"
    fixed = cli("check", "--fix", "--unsafe-fixes", "--select", name, *files, *argv)
    assert name not in fixed.stdout and f"({name})" in fixed.stderr or f"{name} x" in fixed.stderr, fixed.stderr
    for file in files:
        expected = (CASES / name / "expected" / file).read_text()
        assert (tmp_path / file).read_text() == expected, f"{file} differs from the golden file"
    after = cli("check", *files, *argv)
    assert after.exit_code == 0, after.stdout


@pytest.mark.parametrize("name", case_names())
def test_fixed_pair_is_accepted_by_deepspeed_and_accelerate(name, deepspeed_config):  # noqa: F811
    expected = CASES / name / "expected"
    if (expected / "ds.json").exists():
        data = load_document(expected / "ds.json").data
        parsed = deepspeed_config(fill_auto(data), 2)
        assert not isinstance(parsed, str), parsed
    if (expected / "accelerate.yaml").exists():
        from accelerate.commands.config.config_args import load_config_from_file

        load_config_from_file(str(expected / "accelerate.yaml"))


@pytest.mark.parametrize("name", case_names())
def test_a_second_fix_changes_nothing(name, cli, tmp_path, monkeypatch):
    files, argv = prepare(name, tmp_path, monkeypatch)
    cli("check", "--fix", "--unsafe-fixes", *files, *argv)
    once = {f: (tmp_path / f).read_text() for f in files}
    again = cli("check", "--fix", "--unsafe-fixes", *files, *argv)
    assert {f: (tmp_path / f).read_text() for f in files} == once
    assert "nothing fixed" in again.stderr


def test_diff_writes_nothing_and_says_what_would_change(cli, tmp_path, monkeypatch):
    files, _ = prepare("AW005", tmp_path, monkeypatch)
    original = (tmp_path / "accelerate.yaml").read_text()
    result = cli("check", "--diff", *files)
    assert result.exit_code == 1
    assert "-num_processes: '2'  # quoted" in result.stdout and "+num_processes: 2    # quoted" in result.stdout
    assert (tmp_path / "accelerate.yaml").read_text() == original
    clean = cli("check", "--diff", *files, "--select", "AW1")
    assert clean.exit_code == 0 and not clean.stdout


def test_unsafe_fixes_need_the_flag(cli, tmp_path, monkeypatch):
    files, _ = prepare("AW001", tmp_path, monkeypatch)
    result = cli("check", "--fix", *files)
    assert "zero_stgae: 2  # a typo" in (tmp_path / "accelerate.yaml").read_text()  # the safe AW228 did apply
    assert "AW001 not fixed (unsafe: pass --unsafe-fixes)" in result.stderr
    assert result.exit_code == 1  # the typo remains an error


def test_a_fix_that_would_break_the_pair_is_not_applied(tmp_path, monkeypatch):
    """Renaming `zero_stgae` to `zero_stage` next to a deepspeed_config_file would make the YAML carry an inline
    key the JSON owns (AW201): the rename is refused and both files stay as written."""
    from accelwiz.fix.apply import plan_fixes
    from accelwiz.rules.registry import select_rules

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_text(json.dumps({"train_micro_batch_size_per_gpu": 1,
                                                  "zero_optimization": {"stage": 2}}))
    yaml = tmp_path / "accelerate.yaml"
    yaml.write_text("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
                    "  deepspeed_config_file: ds.json\n  zero_stgae: 3\n")
    report = plan_fixes([yaml], select_rules(["AW001"]), unsafe=True)
    assert not report.changed
    assert any("inconsistent" in note.reason and "AW201" in note.reason for note in report.not_applied)


def test_yaml_that_would_be_reformatted_is_left_alone(tmp_path):
    from accelwiz.fix.apply import plan_fixes
    from accelwiz.rules.registry import select_rules

    yaml = tmp_path / "accelerate.yaml"
    yaml.write_text("distributed_type: MULTI_GPU\nnum_processes: '2'\ndeepspeed_config: { }\n")
    report = plan_fixes([yaml], select_rules(["AW005"]), unsafe=False)
    assert not report.changed and "round trip" in report.not_applied[0].reason


def test_rule_command_shows_fixability(cli):
    assert "Fixable: safe (`check --fix`)" in cli("rule", "AW005").stdout
    assert "Fixable: unsafe (`check --fix --unsafe-fixes`)" in cli("rule", "AW001").stdout
    assert "Fixable: no" in cli("rule", "AW104").stdout
    assert json.loads(cli("rule", "AW009", "--format", "json").stdout)["fixable"] == "safe"


def test_rules_doc_has_a_fixes_section_from_the_table():
    text = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    section = text.split("## Fixes", 1)[1]
    assert all(f"[{code}]" in section for code in FIXES)
