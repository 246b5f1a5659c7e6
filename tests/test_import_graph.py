"""The import graph inside accelwiz/ has no cycle.

Every `import` and `from ... import` counts, at module level and inside functions (the lazy imports that keep
start-up fast are still dependencies: a cycle through one only fails later, at the first call). Imports under
`if TYPE_CHECKING:` do not run and are left out. `from package import name` is an edge to `package.name` when
that is a module, else to `package`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import accelwiz

ROOT = Path(accelwiz.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST):
    """Every node except those under `if TYPE_CHECKING:` (its `else:` branch runs and is kept)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def imports_of(name: str) -> set[str]:
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    # `import a.b.c` also runs a and a.b, but those are packages above it, not a dependency between peers
    return {m for m in found if m in MODULES and m != name}




def declared_imports() -> dict[str, set[str]]:
    """Imports by name, which the walk cannot see: the rule modules the catalog declares (`RuleModule`, imported
    by the engine for a unit that can select them) and the commands the console script builds (`COMMANDS`)."""
    from accelwiz.cli import COMMANDS
    from accelwiz.rules.catalog import CATALOG
    from accelwiz.rules.rule import RuleRef

    return {"accelwiz.rules.catalog": {e.module.path for e in CATALOG.values() if isinstance(e, RuleRef)},
            "accelwiz.cli": {f"accelwiz.cli.{module}" for module, _, _ in COMMANDS.values()}}


_DECLARED = declared_imports()
GRAPH = {name: imports_of(name) | _DECLARED.get(name, set()) for name in MODULES}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def a_cycle(graph: dict[str, set[str]], members: list[str]) -> list[str]:
    """One concrete cycle through the component's first module, for the failure message."""
    inside = set(members)
    start = members[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & inside):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return members


def test_the_walk_sees_lazy_imports():
    """The walk must see imports inside functions, or it would miss the cycles that matter here."""
    assert "accelwiz.rules.catalog" in GRAPH["accelwiz.rules.registry"]  # imported inside a function
    assert "accelwiz.launch.shell" in GRAPH["accelwiz.launch.command"]  # `from package import module`
    assert "accelwiz.rules.deepspeed.zero" in GRAPH["accelwiz.rules.catalog"]  # declared in the catalog


def test_the_cycle_finder_finds_a_planted_cycle():
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(planted) == [["a", "b", "c"]]
    assert a_cycle(planted, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_no_import_cycles():
    """The four cycles issue 9 named (effective <-> rules.context, estimate.strategy <-> config_reader,
    wizard.costing <-> suggest, registry -> catalog -> rule modules -> registry), the one that appeared on the
    way (estimate.host <-> estimate.memory), and any new one: none is excused."""
    cycles = [" -> ".join(a_cycle(GRAPH, members)) for members in strongly_connected(GRAPH)]
    assert not cycles, "import cycles inside accelwiz/:\n" + "\n".join(cycles)
