"""DeepSpeed never trains "pure bf16": a bf16 model under ZeRO still gets an fp32 master copy and fp32 Adam states
(deepspeed 0.19.8, base_optimizer.py `_configure_master_weights`), unless the JSON's bf16 section sets
`bf16_master_weights_and_grads` (and `bf16_optimizer_states`). The engine test reads the master partition and the
optimizer states of a real ZeRO engine on this CPU and compares their bytes with states.py's."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import resolve_model, spec_from_hf_config
from accelwiz.estimate.states import model_states
from accelwiz.estimate.configured_strategy import strategy_from_effective
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from tests.estimate.deepspeed_engine import MASTER_ENGINE, TINY_LLAMA, engine_lines


def _bf16_section(low: bool) -> dict:
    return {"enabled": True, "bf16_master_weights_and_grads": low, "bf16_optimizer_states": low}


# [stage, bf16 section] for deepspeed_engine.MASTER_ENGINE: its fp32 model is cast to bf16 by the engine, as a
# bf16 model would be, so the bf16 section alone decides the master's and the states' dtypes
_SETTINGS = [(2, _bf16_section(False)), (2, _bf16_section(True)), (3, _bf16_section(False))]


@pytest.mark.slow
def test_optimizer_bytes_equal_a_real_bf16_zero_engines(tmp_path):
    lines = engine_lines(tmp_path, MASTER_ENGINE, TINY_LLAMA, _SETTINGS, "MASTER", what="a bf16 ZeRO engine")
    measured = {(stage, section["bf16_master_weights_and_grads"]): int(separate) + int(states)
                for (stage, section), (_, _, _, separate, states) in zip(_SETTINGS, lines)}
    spec = spec_from_hf_config(TINY_LLAMA, name="tiny", source="test")
    workload = Workload(spec, precision="bf16")
    for (stage, low), size in measured.items():
        strategy = Strategy(f"zero{stage}", bf16_master_weights_and_grads=low, bf16_optimizer_states=low)
        assert model_states(workload, strategy).optimizer_states == size, (stage, low)
    assert measured[(2, False)] == 12 * spec.num_parameters  # fp32 master + fp32 m, v: not pure bf16's 4


def test_deepspeed_bf16_is_counted_as_mixed_with_fp32_masters():
    workload = Workload(resolve_model("llama-3.1-8b"), micro_batch=1, seq_len=2048, gradient_checkpointing=True)
    for kind in ("zero1", "zero2", "zero3"):
        strategy = Strategy(kind, gpus_per_node=8)
        bf16 = model_states(replace(workload, precision="bf16"), strategy)
        mixed = model_states(replace(workload, precision="mixed"), strategy)
        assert (bf16.weights, bf16.gradients, bf16.optimizer_states) == (
            mixed.weights, mixed.gradients, mixed.optimizer_states), kind
        assert bf16.optimizer_states == 12 * workload.model.num_parameters / 8
    # torch-native training does keep a pure bf16 model without master weights: 4 B/param of Adam states
    assert model_states(replace(workload, precision="bf16"), Strategy("single")).optimizer_states == (
        4 * workload.model.num_parameters)
    estimate = estimate_memory(replace(workload, precision="bf16"), Strategy("zero2", gpus_per_node=8))
    assert any("fp32 master weights and fp32 optimizer states" in line for line in estimate.assumptions)
    assert not any("no fp32 master copy" in line for line in estimate.assumptions)


def test_the_bf16_section_options_lower_the_master_and_the_states():
    workload = Workload(resolve_model("llama-3.1-8b"), micro_batch=1, seq_len=2048, precision="bf16")
    params = workload.model.num_parameters
    masters = Strategy("zero2", gpus_per_node=8, bf16_master_weights_and_grads=True)
    both = replace(masters, bf16_optimizer_states=True)
    assert model_states(workload, masters).optimizer_states == (2 + 8) * params / 8
    assert model_states(workload, both).optimizer_states == (2 + 4) * params / 8
    text = json.dumps({"zero_optimization": {"stage": 2},
                       "bf16": {"enabled": True, "bf16_master_weights_and_grads": True, "bf16_optimizer_states": True}})
    read = strategy_from_effective(resolve(None, parse_text(text, Path("ds.json"), kind="deepspeed")))
    assert read == Strategy("zero2", bf16_master_weights_and_grads=True, bf16_optimizer_states=True)
    # "mixed" too (fp32 weights loaded, as a --config resolves a script's): DeepSpeed's engine casts them to bf16
    # first (0.19.8 engine.py `_configure_distributed_model`), so its masters follow the options all the same
    assert model_states(replace(workload, precision="mixed"), both).optimizer_states == 6 * params / 8
    # an fp32 model (no bf16 section) keeps fp32 masters whatever they say
    assert model_states(replace(workload, precision="fp32"), both).optimizer_states == 12 * params / 8
