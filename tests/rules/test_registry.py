"""Invariants of the rule table (ruff's codes.rs and check_docs_formatted.py, as tests).

Nothing here is kept by hand: the rules come from accelwiz/rules/catalog.py, the decorated functions from walking
the accelwiz.rules package.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import pytest

import accelwiz.rules
from accelwiz.rules.catalog import CATALOG
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.registry import build_rules, load_all_rules, select_rules
from accelwiz.rules.rule import CODE_PATTERN, META_ATTRIBUTE, NAME_PATTERN, Needs, Rule, rule

RULES = load_all_rules()


def _decorated_functions() -> dict[str, object]:
    """Every function in accelwiz.rules.* that carries @rule metadata, by dotted name."""
    found = {}
    for info in pkgutil.walk_packages(accelwiz.rules.__path__, "accelwiz.rules."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if hasattr(value, META_ATTRIBUTE) and getattr(value, "__module__", None) == module.__name__:
                found[f"{module.__name__}.{name}"] = value
    return found


def test_there_are_enough_rules():
    assert len(RULES) >= 45, sorted(RULES)


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_metadata(code):
    rule_ = RULES[code]
    assert CODE_PATTERN.match(rule_.code)
    assert NAME_PATTERN.match(rule_.name), rule_.name
    assert not rule_.name.startswith(("no-", "disallow-", "banned-"))
    assert isinstance(rule_.severity, Severity)
    assert rule_.needs is None or isinstance(rule_.needs, Needs)
    assert rule_.fix and rule_.fix[0].isupper() and not rule_.fix.endswith("."), rule_.fix
    for section in ("## What it does", "## Why is this bad?", "## Example"):
        assert section in rule_.doc, f"{code} lacks {section!r}"


def test_every_decorated_function_is_in_the_catalog():
    """A rule written but not listed would never run: the table is the only way in."""
    listed = {id(entry.check) for entry in build_rules(CATALOG).values()}  # each entry's function, loaded
    missing = sorted(name for name, function in _decorated_functions().items() if id(function) not in listed)
    assert not missing, f"add these to accelwiz/rules/catalog.py: {missing}"


def test_each_module_holds_one_block_of_codes():
    """A code's block (AW0xx schema, AW1xx topology, ...) says what it is about; a module does not mix blocks."""
    blocks = defaultdict(set)
    for code, rule_ in RULES.items():
        blocks[rule_.check.__module__].add(code[:3])
    mixed = {module: sorted(codes) for module, codes in blocks.items() if len(codes) > 1}
    assert not mixed, mixed


def test_names_are_unique():
    names = [r.name for r in RULES.values()]
    assert len(names) == len(set(names))


def _check(ctx):
    yield Finding(None, (), "always")


def test_the_decorator_only_attaches_metadata():
    before = set(load_all_rules())
    decorated = rule("AW999", "test-only-rule", Severity.INFO, fix="Nothing", needs=Needs.SYSTEM)(_check)
    assert decorated is _check
    assert set(load_all_rules()) == before  # decorating registers nothing
    made = Rule.of(decorated)
    assert (made.code, made.name, made.needs, made.check) == ("AW999", "test-only-rule", Needs.SYSTEM, _check)


def test_a_table_entry_under_another_code_is_refused():
    def check(ctx):
        return ()

    rule("AW998", "listed-wrongly", Severity.INFO, fix="Nothing")(check)
    with pytest.raises(RuntimeError, match="as AW997, but its @rule says AW998"):
        build_rules({"AW997": check})
    assert list(build_rules({"AW998": check})) == ["AW998"]


def test_a_function_without_metadata_is_refused():
    def plain(ctx):
        return ()

    with pytest.raises(TypeError, match="no @rule metadata"):
        build_rules({"AW996": plain})


def test_select_and_ignore_by_prefix():
    assert {r.code for r in select_rules(["AW6"])} == {c for c in RULES if c.startswith("AW6")}
    assert not any(r.code.startswith("AW2") for r in select_rules(ignore=["aw2"]))
    assert [r.code for r in select_rules(["AW601"], ["AW6"])] == []
