"""Ready configs shipped in `accelwiz.templates`: list them and copy one (with its DeepSpeed JSON) into place.

Each template is a YAML whose first line is `# <name>: <description>`; a DeepSpeed template names its JSON
(`<name>.json`) in `deepspeed_config.deepspeed_config_file`, which the copy rewrites to the new JSON's path.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from accelwiz.errors import UsageError
from accelwiz.resources import templates_dir
from accelwiz.wizard.write import OutputFile

_REFERENCE = re.compile(r"^(\s*deepspeed_config_file:\s*).*$", re.M)
# Templates point at the schema relative to themselves (../schemas/ in a checkout and in the wheel); a copy
# lives elsewhere, where that path leads nowhere and an absolute one is this machine's: it says how to get it.
_SCHEMA_LINE = re.compile(r"^# yaml-language-server: \$schema=.*$", re.M)


@dataclass(frozen=True)
class Template:
    name: str
    description: str
    yaml_path: Path
    json_path: Path | None
    plan_path: Path | None = None  # a multi-node template's plan: which launcher gives each node its address


def list_templates() -> list[Template]:
    found = []
    from accelwiz.defaults import PLAN_SUFFIX, find_plan

    for path in sorted(templates_dir().glob("*.yaml")):
        if path.name.endswith(PLAN_SUFFIX):
            continue  # a template's plan, not a template
        first = path.read_text(encoding="utf-8").splitlines()[0]
        description = first.removeprefix(f"# {path.stem}:").strip()
        companion = path.with_suffix(".json")
        found.append(Template(path.stem, description, path, companion if companion.is_file() else None,
                              find_plan(path)))
    return found


def find_template(name: str) -> Template:
    templates = {t.name: t for t in list_templates()}
    if name in templates:
        return templates[name]
    close = difflib.get_close_matches(name, templates, n=1)
    raise UsageError(
        f"unknown template {name!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
        hint="list them with `accelwiz init --list-templates`",
    )


def template_files(template: Template, output: Path, deepspeed_output: Path) -> list[OutputFile]:
    """The files a copy writes: the YAML (pointing at the copied JSON), and the JSON if there is one."""
    from accelwiz.wizard.render import SCHEMA_FILE, schema_note

    text = template.yaml_path.read_text(encoding="utf-8")
    schema = schema_note("accelerate", SCHEMA_FILE).rstrip("\n")
    text = _SCHEMA_LINE.sub(lambda _: schema, text, count=1)
    plan = [_copied_plan(template.plan_path, output, deepspeed_output if template.json_path else None)] \
        if template.plan_path is not None else []
    if template.json_path is None:
        return [OutputFile(output, text), *plan]
    text = _REFERENCE.sub(lambda m: m.group(1) + _yaml_scalar(str(deepspeed_output)), text, count=1)
    return [
        OutputFile(output, text),
        OutputFile(deepspeed_output, template.json_path.read_text(encoding="utf-8")),
        *plan,
    ]


def _copied_plan(plan_path: Path, output: Path, deepspeed_output: Path | None) -> OutputFile:
    """The template's plan beside the copy, naming the copied files (paths relative to the plan)."""
    import os

    from accelwiz.plan_file import PlanFiles, dump_plan, load_plan, plan_path_for

    files = PlanFiles(accelerate=output.name,
                      deepspeed=os.path.relpath(deepspeed_output, output.parent) if deepspeed_output else None)
    plan = load_plan(plan_path).model_copy(update={"files": files})
    return OutputFile(plan_path_for(output), dump_plan(plan))


def _yaml_scalar(text: str) -> str:
    """The path as YAML: plain when it reads back unchanged, else double-quoted (JSON strings are YAML)."""
    import json

    import yaml

    return text if yaml.safe_load(text) == text else json.dumps(text)
