"""The NVML probe against a pure-Python stand-in with canned machines."""

from __future__ import annotations

import pytest

from accelwiz.probe.nvidia import probe_gpus
from tests.probe.fake_nvml import FakeGpu, FakeNvml, NVMLError, NVMLError_LibraryNotFound, all_pairs, h100s


def probe(nvml: FakeNvml, visible: str | None = None, **environ: str):
    if visible is not None:
        environ["CUDA_VISIBLE_DEVICES"] = visible
    return probe_gpus(nvml, environ)


def test_eight_h100_with_nvswitch_are_nvlink_all_to_all():
    nvml = FakeNvml(h100s(8), links=all_pairs(8))
    result = probe(nvml)
    assert [g.index for g in result.gpus] == list(range(8))
    first = result.gpus[0]
    assert (first.name, first.compute_capability, first.nvlink_links) == ("NVIDIA H100 80GB HBM3", (9, 0), 18)
    assert first.memory_total_bytes == 81559 * 1024**2 and first.memory_free_bytes == 81059 * 1024**2
    assert first.uuid.startswith("GPU-aaaa0000") and first.pci_bus_id == "00000000:10:00.0"
    assert first.native_bf16 and first.fp8 and not first.mig_enabled
    assert result.topology.summary == "NVLink all-to-all"
    assert result.topology.p2p[0] == ["X"] + ["NVLink"] * 7
    assert (result.driver_version, result.cuda_driver_version) == ("550.54.15", "12.4")
    assert result.notes == []
    assert nvml.shutdowns == 1 and not nvml.initialized


def test_four_a100_pcie_without_bridges_are_pcie_only():
    gpus = [FakeGpu("NVIDIA A100-PCIE-40GB", 40960, (8, 0), f"GPU-bbbb{i}") for i in range(4)]
    result = probe(FakeNvml(gpus, pcie_p2p=True))
    assert result.topology.summary == "PCIe only"
    assert {cell for row in result.topology.p2p for cell in row} == {"X", "OK"}
    assert all(g.nvlink_links == 0 for g in result.gpus)


def test_bridged_pairs_and_partial_meshes_are_told_apart():
    gpus = [FakeGpu("NVIDIA RTX A6000", 49140, (8, 6), f"GPU-cccc{i}", nvlinks=4) for i in range(4)]
    pairs = probe(FakeNvml(gpus, links={frozenset({0, 1}), frozenset({2, 3})}, pcie_p2p=False))
    assert pairs.topology.summary == "NVLink pairs"
    assert pairs.topology.p2p[0] == ["X", "NVLink", "no", "no"]
    partial = probe(FakeNvml(gpus, links={frozenset({0, 1}), frozenset({1, 2})}))
    assert partial.topology.summary == "NVLink partial"


def test_two_v100_report_emulated_bf16_and_fall_back_to_the_common_ancestor():
    gpus = [FakeGpu("Tesla V100-PCIE-16GB", 16160, (7, 0), f"GPU-dddd{i}") for i in range(2)]
    behind_one_switch = probe(FakeNvml(gpus, pcie_p2p=None, ancestor=10))  # NVML_TOPOLOGY_SINGLE
    assert behind_one_switch.topology.p2p == [["X", "OK"], ["OK", "X"]]
    across_sockets = probe(FakeNvml(gpus, pcie_p2p=None, ancestor=50))  # NVML_TOPOLOGY_SYSTEM
    assert across_sockets.topology.p2p == [["X", "no"], ["no", "X"]]
    assert across_sockets.topology.summary == "PCIe only"
    assert not any(g.native_bf16 for g in across_sockets.gpus)
    assert all(g.tensor_cores and not g.mig_enabled for g in across_sockets.gpus)  # MIG query NotSupported


def test_mig_enabled_gpu_is_flagged_and_a_mig_uuid_selects_the_instance():
    instance = FakeGpu("NVIDIA A100-SXM4-40GB MIG 3g.20gb", 19968, (8, 0), "MIG-1111-2222")
    gpus = [FakeGpu("NVIDIA A100-SXM4-40GB", 40960, (8, 0), "GPU-eeee0", mig=True, mig_devices=[instance]),
            FakeGpu("NVIDIA A100-SXM4-40GB", 40960, (8, 0), "GPU-eeee1")]
    whole = probe(FakeNvml(gpus))
    assert [g.mig_enabled for g in whole.gpus] == [True, False]
    assert any("MIG enabled" in note for note in whole.notes)
    chosen = probe(FakeNvml(gpus), visible="MIG-1111")
    assert len(chosen.gpus) == 1
    gpu = chosen.gpus[0]
    assert (gpu.name, gpu.uuid, gpu.index, gpu.nvml_index) == (instance.name, "MIG-1111-2222", 0, 0)
    assert gpu.memory_total_bytes == 19968 * 1024**2 and gpu.mig_enabled
    assert chosen.topology.summary == "single GPU" and not any("MIG enabled" in n for n in chosen.notes)


def test_no_gpu_is_a_normal_result():
    nvml = FakeNvml([])
    result = probe(nvml)
    assert result.gpus == [] and result.topology.summary == "none"
    assert result.notes == ["NVML found no GPU"]
    assert nvml.shutdowns == 1


def test_missing_nvml_library_is_a_note_not_an_exception():
    nvml = FakeNvml(h100s(2), init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    result = probe(nvml)
    assert result.gpus == [] and result.topology.summary == "none"
    assert "NVML library not found" in result.notes[0]
    assert nvml.shutdowns == 0  # never initialised, so nothing to shut down


def test_an_nvml_failure_mid_probe_still_shuts_nvml_down():
    nvml = FakeNvml(h100s(2))

    def broken(index: int):
        raise NVMLError("GPU is lost")

    nvml.nvmlDeviceGetHandleByIndex = broken
    result = probe(nvml)
    assert result.gpus == [] and result.topology.summary == "unknown"
    assert "GPU is lost" in result.notes[0]
    assert nvml.shutdowns == 1


@pytest.mark.parametrize("visible,expected", [
    ("2,0", [2, 0]),
    (" 3 , 1 ", [3, 1]),
    ("GPU-aaaa0005", [5]),
    ("GPU-aaaa0007-0000-0000-0000-000000000000,GPU-aaaa0001", [7, 1]),
    ("", []),
])
def test_cuda_visible_devices_selects_and_orders(visible, expected):
    result = probe(FakeNvml(h100s(8), links=all_pairs(8)), visible=visible)
    assert [g.nvml_index for g in result.gpus] == expected
    assert [g.index for g in result.gpus] == list(range(len(expected)))


@pytest.mark.parametrize("visible,expected,bad", [
    ("0,9,1", [0], "9"),
    ("1,1", [1], "1"),
    ("-1", [], "-1"),
    ("GPU-aaaa", [], "GPU-aaaa"),  # ambiguous prefix
    ("0,MIG-nope", [0], "MIG-nope"),
    ("0,\uff11", [0], "\uff11"),  # a full-width 1: str.isdigit() and int() accept it, CUDA does not
    ("0,\u00b2", [0], "\u00b2"),  # a superscript 2: isdigit() but int() raised ValueError
])
def test_an_invalid_entry_hides_itself_and_everything_after_it(visible, expected, bad):
    result = probe(FakeNvml(h100s(8)), visible=visible)
    assert [g.nvml_index for g in result.gpus] == expected
    assert any(f"entry `{bad}`" in note for note in result.notes)


def test_empty_cuda_visible_devices_hides_every_gpu():
    result = probe(FakeNvml(h100s(2)), visible="")
    assert result.gpus == [] and result.topology.summary == "none"
    assert "empty value" in result.notes[0]


def test_mixed_models_get_a_device_order_note_unless_pci_bus_order_is_set():
    gpus = [FakeGpu("NVIDIA GeForce RTX 4090", 24564, (8, 9), "GPU-f0"),
            FakeGpu("NVIDIA GeForce RTX 3090", 24576, (8, 6), "GPU-f1")]
    assert any("FASTEST_FIRST" in n for n in probe(FakeNvml(gpus)).notes)
    assert not any("FASTEST_FIRST" in n for n in probe(FakeNvml(gpus), CUDA_DEVICE_ORDER="PCI_BUS_ID").notes)


def test_unreadable_capability_comes_from_the_gpu_table_and_unreadable_memory_is_noted():
    gpus = h100s(1)
    nvml = FakeNvml(gpus)

    def unsupported(handle):
        raise nvml.NVMLError_NotSupported("Not Supported")

    nvml.nvmlDeviceGetCudaComputeCapability = unsupported
    nvml.nvmlDeviceGetMemoryInfo = unsupported
    result = probe(nvml)
    assert result.gpus[0].compute_capability == (9, 0)
    assert result.gpus[0].memory_total_bytes == 0 and result.gpus[0].memory_free_bytes is None
    assert "assuming 9.0" in result.notes[0] and "memory of GPU 0" in result.notes[1]


def test_real_pynvml_on_this_machine_answers_without_raising():
    result = probe_gpus(environ={})
    # On a GPU machine this lists the GPUs; on the CPU-only CI machines it is an empty list with a note.
    assert result.gpus or result.notes
