"""What CUDA lets torch allocate (probe/cuda_totals.py): the table's figures are the doc's, the live probe reads the
driver's reserve, and every verdict judges against the CUDA total, not NVML's."""

from __future__ import annotations

import json
import re
from pathlib import Path

from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.resolved import workload_from_options
from accelwiz.estimate.strategy import strategy_from_options
from accelwiz.estimate.target import select_target
from accelwiz.estimate.verdict import memory_verdict
from accelwiz.probe.cuda_readings import PRE_R510_KEYS, READINGS
from accelwiz.probe.cuda_totals import cuda_total_bytes
from accelwiz.probe.gpus import GPU_MODELS, gpu_model
from accelwiz.probe.model import GpuInfo
from accelwiz.probe.nvidia import probe_gpus
from accelwiz.probe.presets import find_preset, preset_profile
from tests.probe.fake_nvml import FakeGpu, FakeNvml

MIB = 2**20
DOC = Path(__file__).resolve().parents[2] / "docs" / "gpu-cuda-totals.md"


def built_table() -> dict[str, tuple[int, int, str]]:
    """The doc's "What was built" table: key -> (NVML MiB, CUDA total MiB, how)."""
    section = DOC.read_text().split("## What was built", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \| (\d+) \| (reading|rule)", section, re.MULTILINE)
    return {key: (int(nvml), int(cuda), how) for key, nvml, cuda, how in rows}


def test_the_docs_table_round_trips_to_the_gpu_table():
    table = built_table()
    assert {key for key, (_, _, how) in table.items() if how == "reading"} == set(READINGS)
    for key, (nvml, cuda, _) in table.items():
        model = gpu_model(key)
        assert (model.memory_mib, model.cuda_total_mib) == (nvml, cuda), key


def test_every_board_has_a_cuda_total_below_its_nvml_total():
    for model in GPU_MODELS:
        reserve = model.memory_mib - model.cuda_total_mib
        assert 0 < reserve < 1024, model.key  # a few hundred MiB (ECC is already out of NVML's total)
        if model.key in PRE_R510_KEYS:  # an old driver's total already left the reserve out
            assert reserve <= 32, model.key


def test_an_nvml_total_without_the_drivers_reserve_takes_the_tables_or_the_familys():
    a100 = gpu_model("A100-40GB")
    assert cuda_total_bytes(a100.name, a100.memory_bytes) == 40339 * MIB  # the table's own total: its reading
    # a current driver's 32768 MiB for a V100 whose row holds the pre-R510 32510: Volta's reserve (266 MiB)
    assert cuda_total_bytes("Tesla V100-SXM2-32GB", 32768 * MIB) == 32502 * MIB
    # a board the table does not know: its family's reserve, by compute capability (Hopper: 616 MiB)
    assert cuda_total_bytes("NVIDIA H999", 100_000 * MIB, capability=(9, 0)) == (100_000 - 616) * MIB
    info = GpuInfo(index=0, name="NVIDIA L40S", memory_total_bytes=46068 * MIB, compute_capability=(8, 9))
    assert info.capacity_bytes == 45372 * MIB  # an old saved profile (no cuda_total_bytes) still gets it
    mig = info.model_copy(update={"name": "NVIDIA L40S MIG", "mig_enabled": True, "memory_total_bytes": 9 * 2**30})
    assert mig.capacity_bytes == 9 * 2**30  # no reading of an instance's reserve: its NVML total


def test_the_live_probe_takes_total_less_the_drivers_reserved():
    # nvidia-smi -q of an H100 SXM (R565): Total 81559 MiB, Reserved 454 MiB; deviceQuery there reads 81105.7 MiB
    gpu = FakeGpu("NVIDIA H100 80GB HBM3", 81559, (9, 0), "GPU-aaaa0", reserved_mib=454)
    probed = probe_gpus(FakeNvml([gpu]), {})
    assert probed.gpus[0].cuda_total_bytes == probed.gpus[0].capacity_bytes == 81105 * MIB
    assert probed.gpus[0].memory_total_bytes == 81559 * MIB  # shown as nvidia-smi shows it


def test_a_pre_r510_driver_s_total_is_already_the_cuda_total_and_no_v2_falls_back_to_the_table():
    old = FakeGpu("NVIDIA A100-SXM4-40GB", 40536, (8, 0), "GPU-bbbb0")  # "0MiB / 40536MiB" on R470
    assert probe_gpus(FakeNvml([old], driver="470.82.01"), {}).gpus[0].capacity_bytes == 40536 * MIB
    current = FakeGpu("NVIDIA A100-SXM4-40GB", 40960, (8, 0), "GPU-bbbb1")  # v2 not answered
    probed = probe_gpus(FakeNvml([current], driver="535.104.05"), {}).gpus[0]
    assert probed.cuda_total_bytes is None and probed.capacity_bytes == 40339 * MIB


def test_presets_carry_the_cuda_total_and_the_target_judges_it():
    profile = preset_profile(find_preset("1xA100-40GB"))
    assert profile.gpus[0].cuda_total_bytes == profile.gpu_capacity_bytes == 40339 * MIB
    assert profile.min_gpu_memory_bytes == 40960 * MIB
    choice = select_target("1xA100-40GB", None, None, None)
    assert choice.target.gpu_bytes == 40339 * MIB
    assert "39.4 GiB CUDA can allocate; nvidia-smi: 40.0 GiB" in choice.target.description
    given = select_target(None, "40960MiB", None, None)  # the user's number is judged as given
    assert given.target.gpu_bytes == 40960 * MIB


A100 = "NVIDIA A100-SXM4-40GB"


def boundary_case() -> tuple[int, int]:
    """A llama-3.2-1b sequence whose single-GPU run is "does not fit" on the A100-40GB's CUDA total (40339 MiB) and
    "tight" on its NVML total (40960 MiB): a run the old verdict passed while CUDA runs out. Its estimate's bytes."""
    strategy = strategy_from_options("single", gpus_per_node=1, nodes=1)
    for seq_len in range(8192, 32768, 16):
        workload = workload_from_options(model="llama-3.2-1b", micro_batch=1, seq_len=seq_len,
                                         gradient_checkpointing=True)
        estimate = estimate_memory(workload, strategy, A100)
        cuda, nvml = (memory_verdict(estimate, mib * MIB).verdict for mib in (40339, 40960))
        if (cuda, nvml) == ("does not fit", "tight"):
            return seq_len, int(estimate.per_gpu_total)
    raise AssertionError("no sequence length lands between the two totals")


def test_a_preset_verdict_flips_at_the_cuda_boundary(cli):
    seq_len, total = boundary_case()
    argv = ("estimate", "--model", "llama-3.2-1b", "--strategy", "single", "--gradient-checkpointing",
            "--seq-len", str(seq_len), "--system", "1xA100-40GB")
    report = json.loads(cli(*argv, "--format", "json").stdout)
    assert report["estimate"]["per_gpu_bytes"]["total"] == total  # the run judged above
    assert report["verdicts"]["gpu_memory"] == "does not fit"
    assert report["target"]["gpu_memory_bytes"] == 40339 * MIB
    text = cli(*argv).stdout
    assert "\ndoes not fit: GPU memory" in text and "of 39.4 GiB per GPU" in text
    assert f"on {A100} (39.4 GiB CUDA can allocate; nvidia-smi: 40.0 GiB)" in text


def test_a_system_key_and_the_devices_name_give_one_capacity():
    """A plan or an estimate names its GPU by a --system key ("H100-80GB") or by the device's name; both are the
    same board, so the same CUDA total (a key once fell through to the family rule: 80,678 MiB, not 81,079)."""
    from accelwiz.plan_file import PlanSystem
    from accelwiz.probe.cuda_totals import capacity_of

    for key in ("H100-80GB", "A100-80GB", "V100-32GB", "A10G"):
        model = gpu_model(key)
        assert capacity_of(key) == capacity_of(model.name) == model.cuda_total_bytes, key
        plan = PlanSystem(name="plan", gpu=key, gpu_memory_bytes=model.memory_bytes)
        assert plan.gpu_capacity_bytes == model.cuda_total_bytes, key
