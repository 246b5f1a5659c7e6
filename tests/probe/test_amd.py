"""The AMD probe (AMD SMI's Python bindings) on fixtures of the bindings' return values, and the probe's fall back
to it when NVML finds no GPU."""

from __future__ import annotations

import pytest

from accelwiz.probe.amd import probe_amd_gpus
from accelwiz.probe.local import probe_local
from accelwiz.vocab import GIB
from tests.probe.fake_amdsmi import FakeAmdSmi
from tests.probe.fake_nvml import FakeNvml


def test_eight_mi300x_are_named_sized_and_have_bf16_and_fp8():
    probe = probe_amd_gpus(FakeAmdSmi("mi300x_x8.json"), environ={})
    assert [g.name for g in probe.gpus] == ["AMD Instinct MI300X"] * 8
    first = probe.gpus[0]
    assert (first.vendor, first.arch, first.compute_capability) == ("amd", "gfx942", (9, 4))
    assert first.memory_total_bytes / GIB == pytest.approx(191.69, abs=0.01)
    assert first.native_bf16 and first.fp8 and not first.tf32
    assert probe.driver_version == "6.10.5" and first.pci_bus_id == "0000:0c:00.0"


def test_an_mi250x_is_two_devices_with_bf16_and_no_fp8():
    probe = probe_amd_gpus(FakeAmdSmi("mi250x_one_module.json"), environ={})
    assert len(probe.gpus) == 2 and all(g.native_bf16 and not g.fp8 for g in probe.gpus)
    assert probe.gpus[0].architecture == "gfx90a"


def test_a_board_without_a_market_name_is_judged_by_its_gfx_target():
    [gpu] = probe_amd_gpus(FakeAmdSmi("unnamed_gfx942.json"), environ={}).gpus
    assert gpu.name == "N/A" and gpu.fp8


@pytest.mark.parametrize("environ,expected", [
    ({"HIP_VISIBLE_DEVICES": "3,1"}, ["0000:3c:00.0", "0000:1c:00.0"]),
    ({"CUDA_VISIBLE_DEVICES": "2"}, ["0000:2c:00.0"]),
    ({"ROCR_VISIBLE_DEVICES": "4,5,6", "HIP_VISIBLE_DEVICES": "1"}, ["0000:5c:00.0"]),  # HIP indexes ROCR's list
])
def test_visibility_variables_pick_and_order_devices(environ, expected):
    probe = probe_amd_gpus(FakeAmdSmi("mi300x_x8.json"), environ=environ)
    assert [g.pci_bus_id for g in probe.gpus] == expected
    assert [g.index for g in probe.gpus] == list(range(len(expected)))


def test_a_failing_library_is_a_note_and_an_unsupported_query_a_gap():
    assert "AMD SMI could not start" in probe_amd_gpus(FakeAmdSmi(None, init_fails=True), environ={}).notes[0]
    [gpu] = probe_amd_gpus(FakeAmdSmi("unnamed_gfx942.json", unsupported=("uuid",)), environ={}).gpus
    assert gpu.uuid is None and gpu.memory_total_bytes > 0


def test_probe_local_falls_back_to_amd_when_nvml_sees_nothing():
    profile = probe_local(None, nvml=FakeNvml([]), amdsmi=FakeAmdSmi("mi300x_x8.json"), environ={})
    assert profile.gpu_count == 8 and profile.native_bf16 and profile.fp8
