"""A fix that exposes another fixable finding is judged at the fixed point: renaming the typo'd `num_proccesses`
shows that its value is a quoted number (AW005); AW005 is fixable, so the rename is kept and both are applied,
`--diff` shows the whole result. Refused when the exposed finding is not fixable under the options (--select,
no --unsafe-fixes), or when the followers' fixes would undo the fix itself."""

from __future__ import annotations

import json

TYPO_AND_QUOTED = 'distributed_type: MULTI_GPU\nnum_proccesses: "8"\n'
FIXED = "distributed_type: MULTI_GPU\nnum_processes: 8\n"  # the golden result


def test_rename_that_exposes_a_quoted_number_is_fixed_to_the_fixed_point(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(TYPO_AND_QUOTED)
    preview = cli("check", "t.yaml", "--fix", "--unsafe-fixes", "--diff")
    assert preview.exit_code == 1, preview.stderr
    assert '-num_proccesses: "8"\n+num_processes: 8' in preview.stdout  # the whole fixed-point diff
    assert "would fix 2 findings (AW001, AW005)" in preview.stderr
    assert (tmp_path / "t.yaml").read_text() == TYPO_AND_QUOTED  # --diff writes nothing

    fixed = cli("check", "t.yaml", "--fix", "--unsafe-fixes")
    assert (tmp_path / "t.yaml").read_text() == FIXED
    assert "fixed 2 findings (AW001, AW005)" in fixed.stderr and "not fixed" not in fixed.stderr
    assert fixed.exit_code == 0, fixed.stdout
    again = cli("check", "t.yaml", "--fix", "--unsafe-fixes")
    assert (tmp_path / "t.yaml").read_text() == FIXED and "nothing fixed" in again.stderr


def test_without_unsafe_fixes_the_rename_is_not_applied(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(TYPO_AND_QUOTED)
    result = cli("check", "t.yaml", "--fix")
    assert "AW001 not fixed (unsafe: pass --unsafe-fixes)" in result.stderr
    assert (tmp_path / "t.yaml").read_text() == TYPO_AND_QUOTED and result.exit_code == 1


def test_exposed_finding_outside_the_selection_refuses_the_fix(tmp_path):
    from accelwiz.fix.apply import plan_fixes
    from accelwiz.rules.registry import select_rules

    (tmp_path / "t.yaml").write_text(TYPO_AND_QUOTED)
    report = plan_fixes([tmp_path / "t.yaml"], select_rules(["AW001"]), unsafe=True)
    assert not report.changed
    assert any(n.code == "AW001" and "AW005 not fixable with these options" in n.reason for n in report.not_applied)


def test_followers_that_would_undo_the_fix_refuse_it(tmp_path):
    """Renaming `zero_stgae` next to a deepspeed_config_file makes an inline key the JSON owns (AW201), whose unsafe
    fix deletes it: the typo would vanish with the 3 the user wrote. The rename is refused; the YAML stays."""
    from accelwiz.fix.apply import plan_fixes
    from accelwiz.rules.registry import select_rules

    (tmp_path / "ds.json").write_text(json.dumps({"train_micro_batch_size_per_gpu": 1,
                                                  "zero_optimization": {"stage": 2}}))
    yaml = tmp_path / "accelerate.yaml"
    text = ("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
            "  deepspeed_config_file: ds.json\n  zero_stgae: 3\n")
    yaml.write_text(text)
    report = plan_fixes([yaml], select_rules(), unsafe=True)
    assert report.fixed[yaml] == text
    assert "AW001" not in {n.code for n in report.applied}
    assert any(n.code == "AW001" and "would undo it (AW201)" in n.reason for n in report.not_applied)
