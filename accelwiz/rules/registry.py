"""The rules as the engine and the docs use them: built from the explicit table in `catalog.py`.

A rule is a function listed in the catalog; `@rule` (accelwiz/rules/rule.py) only attaches its metadata.
Importing a rule module registers nothing, so nothing here depends on which modules happen to be imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

from accelwiz.rules.rule import CheckFunction, Rule

# The decorator and the types are in accelwiz/rules/rule.py: a rule module that imported them from here would
# close the cycle registry -> catalog -> rule module -> registry (tests/test_import_graph.py).
__all__ = ["build_rules", "load_all_rules", "select_rules"]


def build_rules(catalog: Mapping[str, CheckFunction]) -> dict[str, Rule]:
    """The rules of a table, sorted by code; refuses an entry whose @rule says another code, or a name used twice."""
    rules: dict[str, Rule] = {}
    names: dict[str, str] = {}
    for code, check in catalog.items():
        entry = Rule.of(check)
        if entry.code != code:
            raise RuntimeError(f"catalog lists {check.__module__}.{check.__name__} as {code}, but its @rule says "
                               f"{entry.code}")
        if entry.name in names:
            raise RuntimeError(f"rule name {entry.name!r} is used by {names[entry.name]} and {code}")
        names[entry.name] = code
        rules[code] = entry
    return dict(sorted(rules.items()))


@cache
def _rules_by_code() -> dict[str, Rule]:
    from accelwiz.rules.catalog import CATALOG

    return build_rules(CATALOG)


def load_all_rules() -> dict[str, Rule]:
    """Every rule in the catalog, by code, sorted."""
    return dict(_rules_by_code())


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """Rules whose code starts with a selected prefix (all when none) and with no ignored prefix."""
    select, ignore = tuple(s.upper() for s in select), tuple(s.upper() for s in ignore)
    return [r for code, r in _rules_by_code().items()
            if (not select or code.startswith(select)) and not (ignore and code.startswith(ignore))]
