"""`estimate` under ZeRO-1/2: the loading phase counts DeepSpeed's flat 16-bit copy where the release and the GPU put
it (estimate/zero_flatten.py), and the figure the JSON reports is the one the verdict judges, its words the same
decision. 01-ai/Yi#249's 34B on 4 x 80 GB was reported at a 128.1 GiB loading peak (the copy on the GPU) beside a
verdict that said the CPU."""

from __future__ import annotations

import json

import pytest

GIB = 2**30
_RUN = ("--model", "llama-2-13b", "--strategy", "zero2", "--offload-optimizer", "cpu", "--precision", "mixed",
        "--seq-len", "512", "--gradient-checkpointing")
_ROOM = "DeepSpeed flattens ZeRO's 16-bit parameter buffer on the CPU"  # the verdict's words


def _estimate(cli, *args: str) -> dict:
    result = cli("estimate", *_RUN, *args, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def _loading_note(data: dict) -> str:
    notes = [line for line in data["estimate"]["assumptions"] if line.startswith("loading:") and "DeepSpeed" in line]
    assert len(notes) == 1, data["estimate"]["assumptions"]
    return notes[0]


def _agrees(data: dict) -> None:
    """The reported peak is the judged need, and the verdict names a CPU flatten for want of room exactly where
    the loading note says DeepSpeed's free-memory check failed."""
    assert data["estimate"]["peak"]["total"] == data["gpu_need_bytes"]
    assert ("flatten_on_accelerator false" in _loading_note(data)) == (_ROOM in data["verdict"])


@pytest.mark.parametrize("system", ["8xA100-80GB", "8xA100-40GB"])
def test_before_0_18_7_the_flat_copy_is_made_on_the_cpu_whatever_the_gpu(cli, system):
    data = _estimate(cli, "--system", system, "--stack", "deepspeed==0.12.6")
    weights = data["estimate"]["sizes"]["weights"]
    assert data["estimate"]["phases"]["loading"] == pytest.approx(weights, rel=1e-6)  # one copy
    assert data["estimate"]["peak_phase"] != "loading"
    assert "DeepSpeed 0.12.6 flattens" in _loading_note(data) and "before 0.18.7" in _loading_note(data)
    assert _ROOM not in data["verdict"]
    _agrees(data)


def test_from_0_18_7_on_the_gpu_where_it_fits(cli):
    data = _estimate(cli, "--system", "8xA100-80GB", "--stack", "deepspeed==0.19.8")
    weights = data["estimate"]["sizes"]["weights"]
    assert data["estimate"]["phases"]["loading"] == pytest.approx(2 * weights, rel=1e-6)  # beside the parameters
    assert data["estimate"]["peak_phase"] == "loading"
    assert "on the GPU beside them" in _loading_note(data) and "it fits" in _loading_note(data)
    _agrees(data)


@pytest.mark.parametrize("target", [("--system", "8xA100-40GB"), ("--gpus", "8", "--gpu-memory", "39.4GiB")])
def test_from_0_18_7_on_the_cpu_where_it_does_not_and_the_peak_and_verdict_say_so(cli, target):
    """A GPU named or only sized: the estimate is made for the capacity the verdict judges."""
    data = _estimate(cli, *target, "--stack", "deepspeed==0.19.8")
    weights = data["estimate"]["sizes"]["weights"]
    assert data["estimate"]["phases"]["loading"] == pytest.approx(weights, rel=1e-6)
    assert data["estimate"]["peak_phase"] != "loading"
    assert "flatten_on_accelerator false" in _loading_note(data) and _ROOM in data["verdict"]
    _agrees(data)
    assert data["estimate"]["peak"]["total"] < 30 * GIB  # 13B's 24.2 GiB once, not twice
