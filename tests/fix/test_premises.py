"""A safe fix never acts on a premise another finding on the same file calls wrong (issue 29)."""

from __future__ import annotations

from pathlib import Path

from accelwiz.fix.apply import plan_fixes
from accelwiz.rules.registry import select_rules

MISSPELLED_STAGE = ("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
                    "  zero_stgae: 3\n  zero3_init_flag: true\n  gradient_clipping: 1.0\n")


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "accelerate.yaml"
    path.write_text(text)
    return path


def test_zero3_init_flag_is_kept_while_the_stage_key_is_misspelled(tmp_path):
    """`zero_stgae: 3` reads as stage 2 (the default), so AW216 says the flag is for ZeRO-3 only; deleting it
    would act on the misspelling."""
    path = _yaml(tmp_path, MISSPELLED_STAGE)
    report = plan_fixes([path], select_rules(), unsafe=False)
    assert not report.changed
    (note,) = [n for n in report.not_applied if n.code == "AW216"]
    assert note.reason.startswith("it relies on `deepspeed_config.zero_stage`, which AW001 on the same file calls "
                                  "wrong (unknown key `deepspeed_config.zero_stgae`; did you mean `zero_stage`?)")


def test_with_the_stage_mended_the_flag_is_kept_because_it_is_right(tmp_path):
    path = _yaml(tmp_path, MISSPELLED_STAGE)
    report = plan_fixes([path], select_rules(), unsafe=True)
    assert [n.code for n in report.applied] == ["AW001"]
    assert "zero_stage: 3\n  zero3_init_flag: true" in report.fixed[path]


def test_the_same_fix_applies_when_nothing_doubts_its_premise(tmp_path):
    path = _yaml(tmp_path, MISSPELLED_STAGE.replace("zero_stgae: 3", "zero_stage: 2"))
    report = plan_fixes([path], select_rules(), unsafe=False)
    assert [n.code for n in report.applied] == ["AW216"]
    assert "zero3_init_flag" not in report.fixed[path]


def test_a_misspelled_clipping_key_keeps_the_safe_clipping_fix_off(tmp_path):
    """`gradient_cliping: 0.5` is not read, so AW228 finds no clipping; writing 1.0 beside the typo would
    leave the file saying two things."""
    text = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 2\n" \
           "  gradient_cliping: 0.5\n"
    path = _yaml(tmp_path, text)
    report = plan_fixes([path], select_rules(), unsafe=False)
    assert not report.changed
    assert any(n.code == "AW228" and "AW001" in n.reason for n in report.not_applied)
