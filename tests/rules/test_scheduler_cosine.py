"""AW706 and DeepSpeed's WarmupCosineLR beside --lr_scheduler_type cosine (issue 29, DeepSeek-Coder@d26a44f):
silent when the block runs transformers' `cosine` (linear warm-up from 0 over the Trainer's warm-up steps, then a
half-cosine decay), told apart otherwise; the two real schedulers compared step by step on CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DEEPSEEK_CODER = Path(__file__).parents[1] / "corpus" / "threads" / "deepseek-ai-DeepSeek-Coder__d26a44f.json"
BASE = {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
        "zero_optimization": {"stage": 2}}


def aw706(cli, json_path: Path, *trainer: str) -> list[str]:
    result = cli("check", "--format", "json", str(json_path), "--", "--deepspeed", str(json_path), *trainer)
    return [d["message"] for d in json.loads(result.stdout or "[]") if d["code"] == "AW706"]


def test_the_frozen_case_is_silent(cli):
    assert aw706(cli, DEEPSEEK_CODER, "--lr_scheduler_type", "cosine", "--warmup_steps", "10") == []


@pytest.mark.parametrize("params,says", [
    ({"warmup_type": "linear"}, None),
    ({}, "rises logarithmically (warmup_type log, DeepSpeed default), not linearly"),
    ({"warmup_type": "linear", "warmup_min_ratio": 0.1}, "starts at warmup_min_ratio 0.1, not 0"),
    ({"warmup_type": "linear", "cos_min_ratio": 0.1}, "decays to cos_min_ratio 0.1 of the peak, not 0"),
    ({"warmup_type": "linear", "cos_min_ratio": 0.0}, None)])
def test_warmup_cosine_against_cosine(cli, tmp_path, params, says):
    block = {"type": "WarmupCosineLR", "params": {"total_num_steps": "auto", "warmup_num_steps": "auto", **params}}
    (tmp_path / "ds.json").write_text(json.dumps({**BASE, "scheduler": block}))
    messages = aw706(cli, tmp_path / "ds.json", "--lr_scheduler_type", "cosine", "--warmup_steps", "10")
    assert [says in m for m in messages] == ([] if says is None else [True])
    # any other Trainer schedule beside WarmupCosineLR is still replaced
    other = aw706(cli, tmp_path / "ds.json", "--lr_scheduler_type", "linear", "--warmup_steps", "10")
    assert len(other) == 1 and "WarmupCosineLR: warm-up, then a cosine decay" in other[0]


def test_the_real_schedulers_agree_after_the_warmup():
    lr_schedules = pytest.importorskip("deepspeed.runtime.lr_schedules")
    import torch
    from transformers import get_cosine_schedule_with_warmup

    total, warmup, peak = 100, 10, 2e-5

    def rates(make) -> list[float]:  # the rate each optimizer step uses, as the Trainer/engine step them
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)
        scheduler, used = make(optimizer), []
        for _ in range(total):
            used.append(optimizer.param_groups[0]["lr"] / peak)
            optimizer.step()
            scheduler.step()
        return used

    hf = rates(lambda o: get_cosine_schedule_with_warmup(o, warmup, total))
    ds = rates(lambda o: lr_schedules.WarmupCosineLR(o, total_num_steps=total, warmup_num_steps=warmup,
                                                    warmup_type="linear"))
    # the same linear ramp from 0, DeepSpeed's one step later, then the same cosine to (nearly) 0
    assert ds[1:warmup + 1] == pytest.approx(hf[:warmup], abs=1e-12) and ds[0] == 0
    assert max(abs(a - b) for a, b in zip(hf[warmup + 1:], ds[warmup + 1:])) < 1e-3
    assert hf[-1] < 1e-3 and ds[-1] < 1e-3
