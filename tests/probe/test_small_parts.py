"""Packages from metadata, version comparison, topology summaries."""

from __future__ import annotations

import sys
from importlib import metadata

import pytest

from accelwiz.probe import versions
from accelwiz.probe.packages import TRACKED, installed_packages, torch_is_cuda_build
from accelwiz.probe.topology import linked_matrix, summarize, uniform_matrix


def test_installed_packages_agree_with_metadata_and_import_nothing():
    heavy = ("torch", "deepspeed", "transformers", "accelerate")
    already = {name for name in heavy if name in sys.modules}
    packages = installed_packages()
    assert set(packages) == set(TRACKED)
    assert packages["nvidia-ml-py"] == metadata.version("nvidia-ml-py")
    for name in heavy:
        try:
            assert packages[name] == metadata.version(name)
        except metadata.PackageNotFoundError:
            assert packages[name] is None
    assert {name for name in heavy if name in sys.modules} == already


@pytest.mark.parametrize("version,expected", [
    ("2.5.1+cu124", True), ("2.7.0+cu128", True), ("2.13.0+cpu", False), ("2.4.0+rocm6.1", False),
    (None, None),
])
def test_torch_cuda_build_from_the_local_version(version, expected):
    assert torch_is_cuda_build(version) is expected


def test_torch_without_local_version_is_cuda_when_the_cuda_runtime_wheel_is_installed():
    has_runtime = any(d.metadata["Name"] and d.metadata["Name"].lower().startswith("nvidia-cuda-runtime")
                      for d in metadata.distributions())
    assert torch_is_cuda_build("2.7.1") is has_runtime


@pytest.mark.parametrize("installed,required,expected", [
    ("2.5.1+cu124", "2.6", False), ("2.6.0", "2.6", True), ("2.6.0rc1", "2.6", True), ("2.10.0", "2.6", True),
    ("0.14.4", "0.14.5", False), ("0.14.5", "0.14.5", True), ("0.19.8", "0.14.0", True),
    ("nonsense", "1.0", None),
])
def test_version_at_least(installed, required, expected):
    assert versions.version_at_least(installed, required) is expected


def test_version_fallback_parser_without_packaging(monkeypatch):
    monkeypatch.setitem(sys.modules, "packaging.version", None)  # `from packaging.version import` now fails
    assert versions.version_at_least("2.5.1+cu124", "2.6") is False
    assert versions.version_at_least("2.6", "2.6.0") is True
    assert versions.version_at_least("v0.14.5", "0.14.5") is True
    assert versions.version_at_least("dev", "1") is None


@pytest.mark.parametrize("matrix,summary", [
    ([], "none"),
    ([["X"]], "single GPU"),
    (uniform_matrix(8, "NVLink"), "NVLink all-to-all"),
    (uniform_matrix(4, "OK"), "PCIe only"),
    (uniform_matrix(4, "no"), "PCIe only"),
    (uniform_matrix(2, "?"), "unknown"),
    (linked_matrix(4, {0: {1}, 1: {0}, 2: {3}, 3: {2}}), "NVLink pairs"),
    (linked_matrix(4, {0: {1}, 1: {0}}), "NVLink partial"),  # GPUs 2 and 3 have no partner
    (linked_matrix(3, {0: {1, 2}, 1: {0}, 2: {0}}), "NVLink partial"),
])
def test_topology_summary(matrix, summary):
    assert summarize(matrix) == summary
