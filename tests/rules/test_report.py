from __future__ import annotations

import json

from accelwiz.rules.diagnostic import Diagnostic, Severity
from accelwiz.rules.report import render_github, render_json, render_text, summary

D = Diagnostic(code="AW201", name="param-offload-below-zero3", severity=Severity.ERROR,
               message="parameter offload to `cpu` needs ZeRO stage 3 (zero_stage is 2)", file="a.yaml", line=7,
               column=3, path=("deepspeed_config", "offload_param_device"), fix="Set `zero_stage: 3`")


def test_text_is_file_line_col_code_severity_message_then_help():
    assert render_text([D]) == (
        "a.yaml:7:3: AW201 error parameter offload to `cpu` needs ZeRO stage 3 (zero_stage is 2)\n"
        "  help: Set `zero_stage: 3`  [param-offload-below-zero3]"
    )


def test_json_has_every_field():
    record = json.loads(render_json([D]))[0]
    assert record == {"code": "AW201", "name": "param-offload-below-zero3", "severity": "error",
                      "message": D.message, "file": "a.yaml", "line": 7, "column": 3,
                      "path": ["deepspeed_config", "offload_param_device"], "fix": "Set `zero_stage: 3`"}


def test_github_annotation():
    assert render_github([D]).startswith("::error file=a.yaml,line=7,col=3,title=AW201 param-offload-below-zero3::")


def test_summary_counts():
    warning = Diagnostic(**{**D.__dict__, "severity": Severity.WARNING})
    assert summary([D, D, warning]) == "2 errors, 1 warning."
    assert summary([]) == "No problems found."
