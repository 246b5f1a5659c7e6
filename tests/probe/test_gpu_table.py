"""The GPU table: every row is complete and cited, finds itself by its device name, composes with --system, and
drives the precision rules; docs/gpus.md is its rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelwiz.errors import UsageError
from accelwiz.probe.gpus import GPU_MODELS, gpu_model, match_gpu_name
from accelwiz.probe.profiles import load_system
from accelwiz.probe.render import gpu_table_markdown
from tests.rules.helpers import codes

DOCS = Path(__file__).resolve().parents[2] / "docs" / "gpus.md"


@pytest.mark.parametrize("model", GPU_MODELS, ids=lambda m: m.key)
def test_every_row_is_cited_and_consistent(model):
    assert model.source.startswith("https://"), model.key
    assert model.memory_mib > 1000 and model.tflops.get("fp32", 1) > 0
    assert match_gpu_name(model.name) is model
    if model.fp8:
        assert model.bf16
    if model.vendor == "amd":
        assert model.arch.startswith("gfx")
    # a 16-bit tensor figure is never below the fp32 vector one where tensor cores exist
    if model.bf16 and "bf16" in model.tflops:
        assert model.tflops["bf16"] >= model.tflops["fp32"]


@pytest.mark.parametrize("key,bf16,fp8", [
    # the GPUs of issue 18's misses: a Turing consumer card, Pascal, Kepler, export variants, Ada workstation, AMD
    ("RTX2080Ti", False, False), ("P100-PCIE-16GB", False, False), ("GTX1080Ti", False, False), ("K80", False, False),
    ("A800-80GB", True, False), ("H800-80GB", True, True), ("H20", True, True), ("L20", True, True),
    ("RTX4090D", True, True), ("RTX6000-Ada", True, True), ("RTX5090", True, True), ("B200", True, True),
    ("MI250X", True, False), ("MI300X", True, True), ("MI325X", True, True),
])
def test_the_gpus_people_train_on_are_there_with_their_precisions(key, bf16, fp8):
    profile = load_system(f"2x{key}")
    assert (profile.native_bf16, profile.fp8) == (bf16, fp8)


@pytest.mark.parametrize("device_name,key", [
    ("NVIDIA GeForce RTX 2080 Ti", "RTX2080Ti"), ("GeForce RTX 2080 Ti", "RTX2080Ti"),
    ("NVIDIA GeForce RTX 4090 D", "RTX4090D"), ("NVIDIA GeForce RTX 4090", "RTX4090"),
    ("NVIDIA H800 PCIe", "H800-PCIE"), ("NVIDIA H800", "H800-80GB"), ("NVIDIA H200 NVL", "H200-NVL"),
    ("NVIDIA A800-SXM4-80GB", "A800-80GB"), ("Tesla V100S-PCIE-32GB", "V100S-32GB"),
    ("AMD Instinct MI300X OAM", "MI300X"), ("AMD Instinct MI250X / MI250", "MI250X"),
])
def test_device_names_find_the_right_row(device_name, key):
    assert match_gpu_name(device_name) is gpu_model(key)


@pytest.mark.parametrize("spec,suggested", [("2xMI300", "`2xMI300X`"), ("4xRTX2080TI-11GB", "`4xRTX2080Ti`"),
                                            ("8xH20X", "`8xH20`")])
def test_an_unknown_gpu_gets_a_did_you_mean_and_the_list_command(spec, suggested):
    with pytest.raises(UsageError) as raised:
        load_system(spec)
    assert suggested in raised.value.hint and "accelwiz probe --list-gpus" in raised.value.hint


def test_bf16_on_a_turing_consumer_card_is_reported(write):
    yaml = write("a.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\n")
    assert "AW604" in codes(yaml, select=("AW604",), system=load_system("2xRTX2080Ti"))
    assert "AW604" not in codes(yaml, select=("AW604",), system=load_system("2xRTX3090"))


def test_fp8_on_an_mi250x_names_its_gfx_target(write):
    from tests.rules.helpers import diagnostics

    yaml = write("a.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp8\n")
    found = [d for d in diagnostics(yaml, select=("AW605",), system=load_system("2xMI250X"))]
    assert found and "gfx90a" in found[0].message
    assert not diagnostics(yaml, select=("AW605",), system=load_system("2xMI300X"))


def test_list_gpus_prints_every_key(cli):
    out = cli("probe", "--list-gpus").stdout
    assert all(model.key in out for model in GPU_MODELS)


def test_docs_gpus_md_is_the_rendered_table():
    assert DOCS.read_text() == gpu_table_markdown(), "regenerate docs/gpus.md from accelwiz.probe.render"
