"""The house has declared layers, and nothing imports upward.

    base -> documents -> effective file values -> resolution -> domain (rules, estimate, launch, trainer, ...)
    -> commands (cli)

A module may import its own layer and the layers below it. Every runtime import counts: module level and inside
functions (a lazy import runs at the first call, so it is a dependency all the same); imports under
`if TYPE_CHECKING:` do not run and are left out (the walk is tests/test_import_graph.py's). Inside one layer, two
packages may not import each other either: one of them is the lower one, and the names the other needs belong in it.

`LAYERS` is the one table (docs/architecture.md shows it). `EXCUSED` lists the upward imports and `EXCUSED_PAIRS`
the package pairs still in the house, each with why it is still there; an excused one that disappears fails the
test too, so both lists only shrink.
"""

from __future__ import annotations

from tests.test_import_graph import GRAPH, MODULES

LAYERS: dict[str, tuple[str, ...]] = {
    # what every layer may use: no accelwiz import beyond this layer, no pydantic models
    "base": ("accelwiz", "accelwiz.errors", "accelwiz.vocab", "accelwiz.console", "accelwiz.coerce",
             "accelwiz.resources"),
    # what is read from disk and from the machine, as written: files with positions, their shapes (pydantic),
    # the plan, the machine's profile, and the one atomic writer
    "documents": ("accelwiz.document", "accelwiz.modelspec", "accelwiz.config", "accelwiz.defaults", "accelwiz.atomic",
                  "accelwiz.atomic_stage", "accelwiz.atomic_update", "accelwiz.plan_file", "accelwiz.probe",
                  "accelwiz.rank_status"),
    # what the files say a run will use, each value with its source
    "effective": ("accelwiz.effective", "accelwiz.effective_value", "accelwiz.effective_reader",
                  "accelwiz.effective_settings", "accelwiz.effective_deepspeed", "accelwiz.effective_fsdp",
                  "accelwiz.effective_flags", "accelwiz.effective_launch", "accelwiz.effective_plan",
                  "accelwiz.deepspeed_file"),
    # files + plan + flags + Trainer arguments -> one resolved run
    "resolution": ("accelwiz.resolution",),
    # what is done with a resolved run: judged, estimated, launched, trained, fixed, converted, asked for
    "domain": ("accelwiz.rules", "accelwiz.estimate", "accelwiz.launch", "accelwiz.trainer", "accelwiz.doctor",
               "accelwiz.fix", "accelwiz.migrate", "accelwiz.convert", "accelwiz.wizard", "accelwiz.samples"),
    # the typer commands: parse, call, render
    "commands": ("accelwiz.cli", "accelwiz.__main__"),
}
ORDER = list(LAYERS)

EXCUSED: dict[tuple[str, str], str] = {
    # none left: the last ones (config.trl_arguments -> resolution.*) moved to resolution/planned_trl.py
}
EXCUSED_PAIRS: dict[tuple[str, str], str] = {
    # pairs inside one layer (an upward pair is excused by its upward imports above)
}


def layer_of(module: str) -> str:
    """The layer of the longest prefix of `module` in the table."""
    best = max((prefix for prefixes in LAYERS.values() for prefix in prefixes
                if module == prefix or module.startswith(prefix + ".")), key=len, default=None)
    assert best is not None, f"{module} is in no layer: add it (or its package) to LAYERS in tests/test_layers.py"
    return next(layer for layer, prefixes in LAYERS.items() if best in prefixes)


def package_of(module: str) -> str:
    """The unit the pair rule speaks of: accelwiz.<package> (a top-level module is its own package)."""
    return ".".join(module.split(".")[:2])


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(importer, imported) for importer, targets in graph.items() for imported in targets
            if ORDER.index(layer_of(imported)) > ORDER.index(layer_of(importer))}


def mutual_pairs(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Package pairs that import each other, with the module edges of both directions."""
    edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for importer, targets in graph.items():
        for imported in targets:
            pair = (package_of(importer), package_of(imported))
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append((importer, imported))
    return {(a, b): sorted(edges[a, b] + edges[b, a]) for a, b in edges if a < b and (b, a) in edges}


def test_every_module_has_a_layer():
    unplaced = []
    for module in MODULES:
        try:
            layer_of(module)
        except AssertionError:
            unplaced.append(module)
    assert not unplaced, f"modules in no layer of tests/test_layers.py: {unplaced}"


def test_the_checks_catch_planted_back_edges():
    planted = {"accelwiz.errors": {"accelwiz.cli.check"}, "accelwiz.cli.check": {"accelwiz.errors"},
               "accelwiz.rules.engine": {"accelwiz.fix.table"}, "accelwiz.fix.apply": {"accelwiz.rules.engine"}}
    assert upward_imports(planted) == {("accelwiz.errors", "accelwiz.cli.check")}
    assert set(mutual_pairs(planted)) == {("accelwiz.cli", "accelwiz.errors"), ("accelwiz.fix", "accelwiz.rules")}
    assert layer_of("accelwiz.effective_flags") == "effective"  # not "accelwiz.effective" + anything
    assert layer_of("accelwiz.probe.versions") == "documents"


def test_nothing_imports_upward():
    found = upward_imports(GRAPH)
    new = sorted(found - set(EXCUSED))
    assert not new, "upward imports (a lower layer may not use a higher one; move the name down):\n" + "\n".join(
        f"  {a} ({layer_of(a)}) -> {b} ({layer_of(b)})" for a, b in new)
    gone = sorted(set(EXCUSED) - found)
    assert not gone, f"excused imports that are gone: remove them from EXCUSED: {gone}"


def test_no_two_packages_import_each_other():
    pairs = mutual_pairs(GRAPH)
    excused = {tuple(sorted((package_of(a), package_of(b)))) for a, b in EXCUSED} | set(EXCUSED_PAIRS)
    left = {pair: edges for pair, edges in pairs.items() if pair not in excused}
    assert not left, "package pairs that import each other:\n" + "\n".join(
        f"  {a} <-> {b}: " + ", ".join(f"{x} -> {y}" for x, y in edges) for (a, b), edges in sorted(left.items()))
    gone = sorted(set(EXCUSED_PAIRS) - set(pairs))
    assert not gone, f"excused pairs that no longer import each other: remove them from EXCUSED_PAIRS: {gone}"
