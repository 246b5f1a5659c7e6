"""`--fix` on corpus configs with typical mistakes put in (a quoted number, a typo'd key, an unquoted NO, a legacy or
duplicated key...): the fixed file never has an error the mutated one did not have, and fixing again changes
nothing. The mistakes are written with the fixers' own editors, which keep the file's layout."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelwiz.fix.apply import plan_fixes
from accelwiz.fix.edits import AddKey, EditError, RenameKey, SetValue
from accelwiz.rules.diagnostic import Severity
from accelwiz.rules.engine import check_paths
from accelwiz.rules.registry import select_rules
from tests.conftest import corpus_dir

CORPUS = corpus_dir()
pytestmark = pytest.mark.skipif(CORPUS is None, reason="corpus not found: set ACCELWIZ_CORPUS")


def _editable(path: Path) -> bool:
    from accelwiz.fix.yaml_edit import _load

    if path.suffix == ".json":
        return True
    try:
        _load(path.read_text())
    except EditError:
        return False
    return True


FILES = sorted(p for p in (CORPUS / "real").iterdir() if p.suffix in (".yaml", ".yml", ".json") and _editable(p)) \
    if CORPUS else []


def _typo(name: str) -> str:
    return name[:1] + name[2] + name[1] + name[3:] if len(name) > 4 and name[1] != name[2] else name + "s"


def mutations(data: dict, syntax: str) -> list:
    """Edits that put one typical mistake into this file (a list: edits applied together)."""
    found = []
    for key, value in data.items():
        if isinstance(value, int) and not isinstance(value, bool):
            found.append(SetValue((key,), str(value), quote="single" if syntax == "yaml" else "plain"))
            found.append(SetValue((key,), float(value)))
            # two mistakes in one key: the typo's fix exposes the quoted number, itself fixable (the fixed point)
            found.append([SetValue((key,), str(value), quote="double" if syntax == "yaml" else "plain"),
                          RenameKey((key,), _typo(str(key)))])
        if isinstance(value, dict):
            for inner, inner_value in value.items():
                found.append(RenameKey((key, inner), _typo(str(inner))))
                if isinstance(inner_value, int) and not isinstance(inner_value, bool):
                    found.append(SetValue((key, inner), str(inner_value)))
    if syntax == "yaml":
        if data.get("distributed_type") == "NO":
            found.append(SetValue(("distributed_type",), "NO", quote="plain"))
        if data.get("mixed_precision") == "no":
            found.append(SetValue(("mixed_precision",), "no", quote="plain"))
        found.append(AddKey((), "rdzv_backend", "c10d"))
    else:
        if isinstance(data.get("zero_optimization"), dict):
            found.append(AddKey(("zero_optimization",), "cpu_offload", False))
            found.append(AddKey(("zero_optimization",), "legacy_stage1", True))
        found.append(AddKey((), "gradient_clipping", "auto"))
    return found


def errors(path: Path) -> Counter:
    result = check_paths([path], select_rules())
    return Counter((d.code, d.path) for d in result.diagnostics if d.severity is Severity.ERROR)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fix_never_makes_a_mutated_corpus_file_worse_and_is_idempotent(data):
    from accelwiz.document import load_document
    from accelwiz.fix.search import _apply

    source = data.draw(st.sampled_from(FILES), label="file")
    document = load_document(source)
    candidates = mutations(document.data, document.syntax)
    edit = data.draw(st.sampled_from(candidates), label="mutation")
    unsafe = data.draw(st.booleans(), label="unsafe")
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / source.name
        try:
            target.write_text(_apply(source.read_text(), document.syntax, edit if isinstance(edit, list) else [edit]))
        except EditError:
            return  # this mutation does not apply to this file
        before = errors(target)
        report = plan_fixes([target], select_rules(), unsafe=unsafe)
        target.write_text(report.fixed.get(target, target.read_text()))
        after = errors(target)
        assert not (after - before), f"{source.name} + {edit}: new errors {after - before}"
        again = plan_fixes([target], select_rules(), unsafe=unsafe)
        assert not again.changed, f"{source.name} + {edit}: a second --fix changed\n{again.diff()}"


JSONS = sorted(p for p in (CORPUS / "real").iterdir() if p.suffix == ".json") if CORPUS else []
PAIR_YAML = ("# through accelerate\ndistributed_type: DEEPSPEED\nnum_processes: 4\nnum_machines: 1\n"
             "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
YAML_MISTAKES = ["mixed_precision: fp16\n", "mixed_precision: no\n", "  gradient_accumulation_steps: 3\n",
                 "  zero_stgae: 2\n", "rdzv_backend: c10d\n", "num_machines: 1.0\n", ""]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fix_on_a_yaml_json_pair_never_makes_the_pair_worse(data):
    """A corpus JSON named by a YAML, a mistake in either file: fixing adds no error to the pair (a fix that would
    is refused) and a second --fix changes nothing."""
    from accelwiz.document import load_document
    from accelwiz.fix.search import _apply

    source = data.draw(st.sampled_from(JSONS), label="json")
    document = load_document(source, kind="deepspeed")
    json_edit = data.draw(st.sampled_from([None, *mutations(document.data, "json")]), label="json mistake")
    yaml_mistake = data.draw(st.sampled_from(YAML_MISTAKES), label="yaml mistake")
    unsafe = data.draw(st.booleans(), label="unsafe")
    yaml_text = PAIR_YAML.replace("deepspeed_config:\n", "deepspeed_config:\n" + yaml_mistake) \
        if yaml_mistake.startswith("  ") else PAIR_YAML.replace("num_machines: 1\n", "") + yaml_mistake \
        if yaml_mistake.startswith("num_machines") else PAIR_YAML + yaml_mistake
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        yaml_path, json_path = folder / "accelerate.yaml", folder / "ds.json"
        yaml_path.write_text(yaml_text)
        try:
            json_edits = json_edit if isinstance(json_edit, list) else [json_edit]
            json_path.write_text(_apply(source.read_text(), "json", json_edits) if json_edit else source.read_text())
        except EditError:
            return
        pair = [yaml_path, json_path]

        def pair_errors() -> Counter:
            result = check_paths(pair, select_rules())
            return Counter((d.code, d.file, d.path) for d in result.diagnostics if d.severity is Severity.ERROR)

        before = pair_errors()
        report = plan_fixes(pair, select_rules(), unsafe=unsafe)
        for path, text in report.fixed.items():
            path.write_text(text)
        after = pair_errors()
        assert not (after - before), f"{source.name} + {json_edit} + {yaml_mistake!r}: new errors {after - before}"
        assert not plan_fixes(pair, select_rules(), unsafe=unsafe).changed
