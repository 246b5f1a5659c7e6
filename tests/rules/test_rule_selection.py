"""The engine's rule selection is declared in the catalog and sound.

Each rule module is a `RuleModule` in accelwiz/rules/catalog.py with the inputs every one of its rules needs; the
engine imports a module only for a unit that has them all. Declared, so it can be wrong: the differential tests
check the whole corpus with the declared selection and with every rule run on every unit (only each rule's own
`needs` applied, as before the declaration), and the findings must be the same. Listing the rules imports none.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.rules.catalog import CATALOG
from accelwiz.rules.engine import check_paths
from accelwiz.rules.registry import load_all_rules, select_rules
from accelwiz.rules.rule import Needs, Rule, RuleRef

SYSTEMS = Path(__file__).resolve().parent.parent / "fixtures" / "systems"


def test_every_entry_names_its_function_without_importing_it():
    imported = sorted(code for code, entry in CATALOG.items() if not isinstance(entry, RuleRef))
    assert not imported, f"list these through their module's RuleModule, not an import: {imported}"


def test_every_declared_module_has_rules():
    """A declaration with no rule behind it would be a stale line."""
    import accelwiz.rules.catalog as catalog

    from accelwiz.rules.rule import RuleModule

    declared = {value.path for value in vars(catalog).values() if isinstance(value, RuleModule)}
    used = {entry.module.path for entry in CATALOG.values()}
    assert declared == used, sorted(declared ^ used)


def _imported_after(code: str) -> dict[str, list[str]]:
    """Run `code` in a fresh interpreter; which declared rule modules it imported."""
    program = (
        "import json, sys\n"
        "from accelwiz.rules.catalog import CATALOG\n"
        f"{code}\n"
        "modules = sorted({e.module.path for e in CATALOG.values()})\n"
        "print(json.dumps({'loaded': [m for m in modules if m in sys.modules],\n"
        "                  'expected': sorted({e.module.path for e in CATALOG.values() if e.module.needs <= WANTED})}))"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_listing_and_selecting_rules_imports_no_rule_module():
    found = _imported_after("from accelwiz.rules.registry import select_rules\n"
                            "rules = select_rules(); assert len(rules) == len(CATALOG)\nWANTED = set()")
    assert found["loaded"] == [], found["loaded"]


def test_a_yaml_only_check_imports_exactly_the_modules_a_yaml_can_select(tmp_path: Path):
    config = tmp_path / "accelerate.yaml"
    config.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\n")
    found = _imported_after(
        "from pathlib import Path\nfrom accelwiz.rules.engine import check_paths\n"
        "from accelwiz.rules.registry import select_rules\nfrom accelwiz.rules.rule import Needs\n"
        f"check_paths([Path({str(config)!r})], select_rules())\nWANTED = {{Needs.ACCELERATE}}")
    assert found["loaded"] == found["expected"]
    assert "accelwiz.rules.trainer_arguments" not in found["loaded"]
    assert "accelwiz.rules.memory" not in found["loaded"]
    assert "accelwiz.rules.schema_rules" in found["loaded"]


def _ungated() -> list[Rule]:
    """Every rule, run on every unit its own `needs` allows: what the engine did before modules declared theirs."""
    return [Rule(code, rule.check) for code, rule in load_all_rules().items()]


def _findings(result) -> list[tuple]:
    return sorted((d.file, d.line, d.column, d.code, d.message) for d in result.diagnostics)


def _facts(which: str) -> dict:
    if which == "system":
        from accelwiz.probe.profiles import load_system

        return {"system": load_system(str(SYSTEMS / "8xH100-80GB.json"))}
    if which == "trainer":  # Trainer arguments but no TRL ones: the TRL modules stay out
        from accelwiz.config.training_args import parse_argv

        return {"training_args": parse_argv(["--bf16", "--per_device_train_batch_size", "4",
                                             "--gradient_accumulation_steps", "8", "--gradient_checkpointing"])}
    return {}


@pytest.mark.parametrize("which", ["files only", "system", "trainer"])
def test_no_module_finds_anything_on_a_unit_without_its_declared_inputs(corpus: Path, which: str):
    paths = sorted([*(corpus / "real").iterdir(), *(corpus / "broken").iterdir()])
    paths = [p for p in paths if p.suffix in (".yaml", ".yml", ".json")]
    facts = _facts(which)
    declared = check_paths(paths, select_rules(), **facts)
    every = check_paths(paths, _ungated(), **facts)
    assert len(every.diagnostics) > 100  # the corpus exercises the rules at all
    assert _findings(declared) == _findings(every)


def test_a_module_needing_more_than_the_unit_has_is_skipped_unloaded():
    from accelwiz.rules.rule import RuleModule

    missing = RuleModule("no_such_module", Needs.SYSTEM)
    lazy = Rule("AW999", missing.some_check, missing.needs)
    assert not lazy.runs_on(frozenset({Needs.ACCELERATE, Needs.WORKLOAD}))  # never loaded: it does not exist
    with pytest.raises(ModuleNotFoundError):
        lazy.runs_on(frozenset({Needs.SYSTEM}))  # selected: now it is loaded (its own `needs` is read)
