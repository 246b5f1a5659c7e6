"""AW617: pinned gpu_ids against the GPUs the environment check runs in allots (no --system)."""

from __future__ import annotations

import pytest

from accelwiz.probe.profiles import load_system
from accelwiz.rules.hardware.visible import visible_here
from tests.rules.helpers import codes

PINNED = "distributed_type: MULTI_GPU\nnum_processes: {n}\ngpu_ids: {ids}\n"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ("CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("environment,ids,fires", [
    ({"CUDA_VISIBLE_DEVICES": "0,1,2"}, "0,1,2,3,4,5,6,7", True),
    ({"CUDA_VISIBLE_DEVICES": "0,1,2"}, "0,1,2", False),
    ({"CUDA_VISIBLE_DEVICES": "4,5,6"}, "0,1,2", True),  # unconfined job: 0-2 are another job's GPUs
    ({"SLURM_STEP_GPUS": "4,5,6", "SLURM_JOB_GPUS": "0,1,2,3,4,5,6,7"}, "0,1,2,3", True),  # the step's 3 count
    ({"SLURM_JOB_GPUS": "4,5,6"}, "0,1,2", False),  # physical ids, renumbered from 0 in a confined job
    ({"CUDA_VISIBLE_DEVICES": "MIG-aaa,MIG-bbb"}, "0,1,2", True),
    ({}, "0,1,2,3,4,5,6,7", False),  # nothing restricts this process: --system local is AW603's
])
def test_pinned_ids_against_the_environment(write, monkeypatch, environment, ids, fires):
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    yaml = write("a.yaml", PINNED.format(n=len(ids.split(",")), ids=ids))
    assert ("AW617" in codes(yaml, select=("AW617",))) is fires


def test_silent_with_a_system_profile_which_aw603_judges(write, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    yaml = write("a.yaml", PINNED.format(n=8, ids="0,1,2,3,4,5,6,7"))
    assert "AW617" not in codes(yaml, select=("AW617",), system=load_system("8xA100-80GB"))


def test_visible_here_reads_cuda_before_slurm():
    here = visible_here({"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_JOB_GPUS": "0,1,2,3"})
    assert (here.ids, here.count) == ([0, 1], 2)
    assert visible_here({"CUDA_VISIBLE_DEVICES": ""}).count == 0
    assert visible_here({}) is None
