"""Under pytest-xdist (CI runs `-n 2`), the tests that share a module-, class- or package-scoped fixture run on one
worker, so the fixture is built once per run instead of once on each worker that draws one of its tests.

Each xdist worker is a pytest session of its own, so a module-scoped fixture is set up by every worker that runs a
test of the module: with `--dist loadgroup` handing single tests to whichever worker is free, the ZeRO-3 offload
engine of tests/estimate/test_zero3_offload_engine.py, the two `accelerate launch`es of
tests/rules/test_launch_copies.py, the wizard's scenarios ran twice, once on each worker, at the same time.
An `xdist_group` keeps such tests together (xdist's LoadGroupScheduling, xdist/scheduler/loadgroup.py, hands a group
to one worker as one unit, biggest groups first); the tests not sharing such a fixture still go one by one to the
worker that is free. A test that names its own group keeps it (the SLURM cluster, the real-Trainer probe).
Session-scoped fixtures are not grouped: the trainer runs share the one checkpoint and must spread over both
workers; a session fixture worth building once is built once by a lock instead (tests/pretrained.py).
"""

from __future__ import annotations

import pytest

_SHARED_SCOPES = {"class": pytest.Class, "module": pytest.Module, "package": pytest.Package}


def shared_scope_group(item: pytest.Item) -> str | None:
    """The node id of the widest class, module or package whose fixture instance this test shares; None if none."""
    fixtureinfo = getattr(item, "_fixtureinfo", None)  # a pytest.Function's; doctests and other items have none
    if fixtureinfo is None:
        return None
    owners = []
    for definitions in fixtureinfo.name2fixturedefs.values():
        node_type = _SHARED_SCOPES.get(definitions[-1].scope)  # the last one is the definition this test uses
        owner = item.getparent(node_type) if node_type is not None else None
        if owner is not None:
            owners.append(owner.nodeid or owner.name)
    return min(owners, key=len) if owners else None  # a package's id is a prefix of its modules' ids


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook (xdist/remote.py) appends each test's group to its id
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on each worker under --dist loadgroup (xdist/remote.py)
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        group = shared_scope_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(f"shares-{group}"))
