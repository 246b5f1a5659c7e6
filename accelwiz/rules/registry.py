"""The rules as the engine and the docs use them: built from the explicit table in `catalog.py`.

A rule is a function listed in the catalog; `@rule` (accelwiz/rules/rule.py) only attaches its metadata.
Importing a rule module registers nothing, so nothing here depends on which modules happen to be imported.
`select_rules` (the engine's) imports no rule module: each is imported when a unit has the inputs its catalog
declaration names. `load_all_rules` (the docs', `accelwiz rule`'s) imports them all and checks every entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

from accelwiz.rules.rule import CheckFunction, Rule, RuleRef

# The decorator and the types are in accelwiz/rules/rule.py: a rule module that imported them from here would
# close the cycle registry -> catalog -> rule module -> registry (tests/test_import_graph.py).
__all__ = ["build_rules", "lazy_rules", "load_all_rules", "select_rules"]


def lazy_rules(catalog: Mapping[str, CheckFunction | RuleRef]) -> dict[str, Rule]:
    """The rules of a table, sorted by code, none of their modules imported: a `RuleRef` entry is loaded (and its
    @rule checked against its code) when the engine first runs it; a function entry runs on every unit."""
    return {code: Rule(code, entry, entry.module.needs) if isinstance(entry, RuleRef) else Rule(code, entry)
            for code, entry in sorted(catalog.items())}


def build_rules(catalog: Mapping[str, CheckFunction | RuleRef]) -> dict[str, Rule]:
    """The rules of a table, sorted by code, every module imported; refuses an entry whose @rule says another
    code, a function without @rule, or a name used twice."""
    rules = lazy_rules(catalog)
    names: dict[str, str] = {}
    for code, entry in rules.items():
        if entry.name in names:  # loads the entry: its @rule, checked against its code
            raise RuntimeError(f"rule name {entry.name!r} is used by {names[entry.name]} and {code}")
        names[entry.name] = code
    return rules


@cache
def _catalog() -> dict[str, CheckFunction | RuleRef]:
    from accelwiz.rules.catalog import CATALOG

    return CATALOG


@cache
def _rules_by_code() -> dict[str, Rule]:
    """The engine's rules: built once, each loaded on first use (the checks of a unit share them)."""
    return lazy_rules(_catalog())


@cache
def _all_rules() -> dict[str, Rule]:
    return build_rules(_catalog())


def load_all_rules() -> dict[str, Rule]:
    """Every rule in the catalog, by code, sorted, all loaded and checked (`build_rules`)."""
    return dict(_all_rules())


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """Rules whose code starts with a selected prefix (all when none) and with no ignored prefix; no rule module
    is imported until the engine runs its rules on a unit that has the inputs they need."""
    select, ignore = tuple(s.upper() for s in select), tuple(s.upper() for s in ignore)
    return [r for code, r in _rules_by_code().items()
            if (not select or code.startswith(select)) and not (ignore and code.startswith(ignore))]
