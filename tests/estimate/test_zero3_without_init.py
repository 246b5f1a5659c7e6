"""ZeRO-3 without deepspeed.zero.Init (issue 28, LLaMA-Factory#3035): where the run's stack does not build the model
under zero.Init (a YAML's `zero3_init_flag: false` before accelerate 1.0, or a quantized base), DeepSpeed's engine
casts the whole module to its 16-bit dtype and moves it to the device before ZeRO-3 partitions it.

The engine test builds a real ZeRO-3 engine on this CPU, once from a model built outside zero.Init and once from
one built under it, and records what `module.to(device)` is called with: the estimate's loading phase is that."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from accelwiz.document import parse_text
from accelwiz.effective import resolve
from accelwiz.estimate.configured_strategy import strategy_from_effective, zero_init
from accelwiz.estimate.host import host_ram
from accelwiz.estimate.loading import under_zero_init
from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import resolve_model, spec_from_hf_config
from accelwiz.resolution.stack import Stack
from tests.estimate.deepspeed_engine import engine_lines

_ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, deepspeed
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    for under_init in json.loads(sys.argv[2]):
        ds = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "bf16": {"enabled": True},
              "zero_optimization": {"stage": 3},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}}}
        if under_init:
            with deepspeed.zero.Init(config_dict_or_path=ds):
                model = LlamaForCausalLM(LlamaConfig(**config))
        else:
            model = LlamaForCausalLM(LlamaConfig(**config))  # fp32, as from_pretrained without zero.Init
        seen = []
        move = model.to
        def spy(*args, **kwargs):  # the engine's self.module.to(self.device), before ZeRO-3 partitions
            whole = [p for p in model.parameters() if not hasattr(p, "ds_id")]
            seen.append((sum(p.numel() * p.element_size() for p in whole),
                         ",".join(sorted({str(p.dtype) for p in whole}))))
            return move(*args, **kwargs)
        model.to = spy
        engine, *_ = deepspeed.initialize(model=model, config=ds)
        partitioned = all(hasattr(p, "ds_id") for p in engine.module.parameters())
        moved, dtypes = seen[0] if seen else (0, "-")
        total = sum(p.ds_numel for p in engine.module.parameters())
        print("NOINIT", int(under_init), len(seen), moved, dtypes, int(partitioned), total, flush=True)
        engine.destroy()
    """
)
_TINY_LLAMA = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4}
_YAML = ("distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: bf16\n"
         "deepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: {flag}\n")
_OLD, _NEW = Stack(accelerate=(0, 28, 0)), Stack(accelerate=(1, 0, 0))


@pytest.mark.slow
def test_a_model_not_built_under_zero_init_is_whole_on_the_device_in_16_bits_before_partitioning(tmp_path):
    lines = engine_lines(tmp_path, _ENGINE, _TINY_LLAMA, [False, True], "NOINIT", what="a ZeRO-3 engine")
    measured = {bool(int(under)): rest for under, *rest in lines}
    calls, moved, dtypes, partitioned, total = measured[False]
    # outside zero.Init: one move of every parameter, already cast to bf16, then all of them partitioned
    assert (int(calls), dtypes, int(partitioned)) == (1, "torch.bfloat16", 1)
    assert int(moved) == 2 * int(total)
    # under zero.Init the engine never moves the module (`is_zero_init_model`): nothing whole to place
    assert measured[True][0] == "0" and measured[True][3] == "1"
    spec = spec_from_hf_config(_TINY_LLAMA, name="tiny", source="test")
    assert spec.num_parameters == int(total)
    workload = Workload(spec, precision="mixed")
    loading = dict(estimate_memory(workload, Strategy("zero3", zero_init=False)).phases)["loading"]
    assert loading == int(moved)  # the estimate's loading phase is exactly what the engine moved


def _strategy(flag: str, stack: Stack | None) -> Strategy | None:
    effective = resolve(parse_text(_YAML.format(flag=flag), Path("a.yaml"), kind="accelerate"), None)
    return strategy_from_effective(effective, stack)


def test_the_flag_decides_only_before_accelerate_1_0() -> None:
    assert _strategy("false", _OLD).zero_init is False
    assert _strategy("false", _NEW).zero_init is True  # e9e5a73: the weakref is set whatever the flag
    assert _strategy("false", None).zero_init is True  # an accelerate the stack does not know: today's
    assert _strategy("true", _OLD).zero_init is True
    effective = resolve(parse_text(_YAML.format(flag="false"), Path("a.yaml"), kind="accelerate"), None)
    assert zero_init(effective, _OLD) is False and zero_init(effective, Stack(accelerate=(0, 34, 2))) is False


def test_loading_holds_the_whole_16_bit_model_on_every_gpu_and_it_stays_reserved() -> None:
    spec = resolve_model("llama-3.1-8b")
    workload = Workload(spec, regime="lora", lora_targets=("q_proj", "v_proj"), gradient_checkpointing=True,
                        seq_len=1024)
    with_init = estimate_memory(workload, Strategy("zero3", gpus_per_node=2))
    without = estimate_memory(workload, Strategy("zero3", gpus_per_node=2, zero_init=False))
    whole = estimate_memory(workload, Strategy("single")).weights  # the 16-bit base + fp32 adapters, unsharded
    adapters = 2 * (workload.trainable_parameters)  # DeepSpeed casts the fp32 adapters to 16 bits as well
    assert dict(without.phases)["loading"] == pytest.approx(whole - adapters, rel=1e-6)
    assert dict(with_init.phases)["loading"] < dict(without.phases)["loading"] / 1.5
    # freed once partitioned, the whole model's blocks stay reserved: the reserve is at least loading's peak
    assert without.reserved >= dict(without.phases)["loading"] > with_init.reserved
    assert any("self.module.to(self.device)" in a for a in without.assumptions)


def test_every_process_loads_the_whole_model_in_host_ram_without_zero_init() -> None:
    workload = Workload(resolve_model("llama-3.1-8b"), regime="lora")
    strategy = Strategy("zero3", gpus_per_node=4, zero_init=False)
    host, _, notes = host_ram(workload, strategy, 0.0)
    init_host, _, init_notes = host_ram(workload, replace(strategy, zero_init=True), 0.0)
    assert "every process materialises the model" in notes[0] and "zero.Init" in init_notes[0]
    assert host - init_host > 3 * workload.model.num_parameters * 4  # four copies instead of one module each


def test_a_quantized_base_is_never_built_under_zero_init() -> None:
    spec = resolve_model("llama-3.1-8b")
    qlora = Workload(spec, regime="qlora")
    assert not under_zero_init(qlora, Strategy("zero3", gpus_per_node=2))
    assert under_zero_init(replace(qlora, regime="lora"), Strategy("zero3", gpus_per_node=2))
    sharded = estimate_memory(qlora, Strategy("zero3", gpus_per_node=4))
    one = estimate_memory(qlora, Strategy("zero3"))  # one rank: its partition is the whole model, as DeepSpeed casts it
    largest = max(t.numel for t in spec.block_linears())
    # bitsandbytes quantizes the whole base onto each GPU (its last linear from 16 bits) before ZeRO-3 shards it:
    # what each of four GPUs holds at loading is what one GPU holds
    assert dict(sharded.phases)["loading"] == dict(one.phases)["loading"] == pytest.approx(one.weights + 2 * largest)
    assert sharded.weights < one.weights / 2


def _estimate(config: Path, *stack: str) -> dict:
    import json

    from typer.testing import CliRunner

    from accelwiz.cli import app

    result = CliRunner().invoke(app, ["estimate", "--config", str(config), "--model", "llama-2-13b", "--lora",
                                      "--system", "2xRTX4090", "--seq-len", "512", "--gradient-checkpointing",
                                      "--format", "json", *stack])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_estimate_config_follows_the_accelerate_of_its_stack(tmp_path) -> None:
    config = tmp_path / "z3.yaml"
    config.write_text(_YAML.format(flag="false"))
    today, old = _estimate(config), _estimate(config, "--stack", "accelerate==0.28.0")
    # on accelerate >= 1.0 the flag is ignored: zero.Init, a 13B LoRA fits two 24 GB cards
    assert today["estimate"]["peak_phase"] != "loading" and today["fits"] is True
    # on 0.28 the whole 16-bit 13B model (26 GB) reaches each card before partitioning: out of memory
    assert old["estimate"]["peak_phase"] == "loading" and old["fits"] is False
    loading = old["estimate"]["phases"]["loading"]
    assert old["estimate"]["peak"]["reserved"] == loading > 2 * 13e9
    assert any("zero3_init_flag false before accelerate 1.0" in a for a in old["estimate"]["assumptions"])
