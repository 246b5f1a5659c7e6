"""`estimate --zero3-init/--no-zero3-init` (issue 28): whether ZeRO-3 builds the model under deepspeed.zero.Init,
said by a flag for a script that loads its model before DeepSpeed's config exists (Dolly's train, a plain
`deepspeed.initialize` loop), the YAML's `zero3_init_flag` beneath it. Everything through the argv a user types:
the resolved value and who said it (`estimate.strategy.zero_init`), the loading phase it moves, the YAML it beats,
and the refusals where it would be dropped. DeepSpeed's engine moving exactly the counted bytes is
tests/estimate/test_zero3_without_init.py's (a real ZeRO-3 engine on the CPU)."""

from __future__ import annotations

import json

import pytest

_RUN = ("--model", "llama-2-13b", "--system", "2xRTX4090", "--seq-len", "512", "--gradient-checkpointing")
_YAML = ("distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: bf16\n"
         "deepspeed_config:\n  zero_stage: 3\n  zero3_init_flag: {flag}\n")


def _estimate(cli, *args: str) -> dict:
    result = cli("estimate", *args, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr  # 1: does not fit, still an estimate
    return json.loads(result.stdout)


def _zero_init(data: dict) -> dict:
    return data["estimate"]["strategy"]["zero_init"]


def test_the_flag_is_the_resolved_value_with_its_source(cli):
    default = _estimate(cli, *_RUN, "--strategy", "zero3")
    off = _estimate(cli, *_RUN, "--strategy", "zero3", "--no-zero3-init")
    on = _estimate(cli, *_RUN, "--strategy", "zero3", "--zero3-init")
    assert (_zero_init(default)["value"], _zero_init(default)["source"]) == (True, "default")
    assert _zero_init(off) == {"value": False, "source": "flag", "note": "--no-zero3-init"}
    assert _zero_init(on) == {"value": True, "source": "flag", "note": "--zero3-init"}
    assert off["estimate"]["strategy"]["label"] == "ZeRO-3 without zero.Init"
    # the assumption line names who said it, either way
    assert any("zero.Init, the default: DeepSpeed's config exists before from_pretrained" in line
               for line in default["estimate"]["assumptions"])
    assert any("not built under zero.Init (--no-zero3-init)" in line for line in off["estimate"]["assumptions"])
    # another strategy has no zero.Init to say
    assert _estimate(cli, *_RUN, "--strategy", "zero2")["estimate"]["strategy"]["zero_init"] is None


def test_no_zero3_init_moves_the_loading_phase_to_the_whole_16_bit_model(cli):
    on = _estimate(cli, *_RUN, "--lora", "--strategy", "zero3")
    off = _estimate(cli, *_RUN, "--lora", "--strategy", "zero3", "--no-zero3-init")
    parameters = off["model"]["parameters"]
    loading_on, loading_off = on["estimate"]["phases"]["loading"], off["estimate"]["phases"]["loading"]
    # under zero.Init each GPU holds its half and one gathered module; without it the engine casts the whole model
    # to 16 bits on every GPU first: two bytes a parameter (26 GB for 13B), beyond a 24 GB card
    assert loading_on < 0.55 * 2 * parameters  # half the 2-byte weights, one gathered module, the adapters
    assert 2 * parameters <= loading_off < 2.01 * parameters
    assert off["estimate"]["peak_phase"] == "loading" and off["fits"] is False and on["fits"] is True
    # nothing of the step changes: only the loading phase (and the host RAM every process loads into)
    for phase in ("forward", "backward", "optimizer"):
        assert on["estimate"]["phases"][phase] == off["estimate"]["phases"][phase]
    assert off["estimate"]["host_bytes_per_node"] > on["estimate"]["host_bytes_per_node"]


@pytest.mark.parametrize(("flag", "stack", "yaml_value", "flag_value"), [
    ("false", "accelerate==0.28.0", False, True),   # the YAML's false honoured; --zero3-init wins
    ("false", "accelerate==1.16.0", True, False),   # the YAML's false ignored; --no-zero3-init wins
    ("true", "accelerate==0.28.0", True, False),    # the YAML's true; --no-zero3-init wins
])
def test_a_flag_beats_the_yaml_and_says_which_won(cli, tmp_path, flag, stack, yaml_value, flag_value):
    config = tmp_path / "z3.yaml"
    config.write_text(_YAML.format(flag=flag))
    files = ("--config", str(config), *_RUN, "--lora", "--stack", stack)
    from_yaml = _zero_init(_estimate(cli, *files))
    assert (from_yaml["value"], from_yaml["source"]) == (yaml_value, "yaml")
    assert f"the YAML's zero3_init_flag {flag}" in from_yaml["note"]
    given = "--zero3-init" if flag_value else "--no-zero3-init"
    flagged = _estimate(cli, *files, given)
    assert _zero_init(flagged) == {"value": flag_value, "source": "flag",
                                   "note": f"{given}, which wins over {from_yaml['note']}"}
    assert any(f"({given}, which wins over the YAML's zero3_init_flag {flag}" in line or
               f"zero.Init, {given}, which wins over the YAML's zero3_init_flag {flag}" in line
               for line in flagged["estimate"]["assumptions"])
    # the flag agreeing with what the YAML makes of it: the same estimate, both named
    agreeing = _estimate(cli, *files, "--zero3-init" if yaml_value else "--no-zero3-init")
    assert "agreeing with the YAML's" in _zero_init(agreeing)["note"]
    assert agreeing["estimate"]["phases"] == _estimate(cli, *files)["estimate"]["phases"]


@pytest.mark.parametrize(("args", "said"), [
    (("--strategy", "zero2", "--no-zero3-init"), "--no-zero3-init says whether ZeRO-3 builds the model under "
                                                 "deepspeed.zero.Init; the strategy is ZeRO-2"),
    (("--strategy", "fsdp", "--zero3-init"), "the strategy is FSDP2 full shard"),
    (("--no-zero3-init",), "no strategy is given (the recommendation would pick one)"),
    (("--strategy", "zero3", "--qlora", "--zero3-init"), "transformers never builds a quantized model under "
                                                         "deepspeed.zero.Init"),
])
def test_the_flag_is_refused_where_it_would_be_dropped(cli, args, said):
    result = cli("estimate", *_RUN, *args)
    assert result.exit_code == 2, result.stdout
    assert said in result.stderr and "hint:" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_yaml_below_stage_3_refuses_it_too(cli, tmp_path):
    config = tmp_path / "z2.yaml"
    config.write_text(_YAML.format(flag="false").replace("zero_stage: 3", "zero_stage: 2"))
    result = cli("estimate", "--config", str(config), *_RUN, "--no-zero3-init")
    assert result.exit_code == 2 and "the strategy is ZeRO-2" in result.stderr


def test_the_recommendation_and_compare_load_the_model_as_the_script_does(cli):
    """A script that loads its model first does so under any ZeRO-3 it is offered: the recommendation never says a
    ZeRO-3 fits where the same ZeRO-3, shown, does not."""
    args = (*_RUN, "--lora", "--strategy", "zero3", "--compare")
    off, on = _estimate(cli, *args, "--no-zero3-init"), _estimate(cli, *args)
    assert on["recommendation"]["strategy"].startswith("ZeRO-3")  # with zero.Init a ZeRO-3 fits the 24 GB cards
    assert off["fits"] is False and "ZeRO-3" not in off["recommendation"]["strategy"]
    zero3 = [row for row in off["compare"] if row["strategy"]["kind"] == "zero3"]
    assert len(zero3) >= 3  # plain, optimizer offload, parameter offload...
    for row in zero3:
        assert row["strategy"]["zero_init"] == {"value": False, "source": "flag", "note": "--no-zero3-init"}
        assert row["phases"]["loading"] >= 2 * off["model"]["parameters"]  # the whole 16-bit model, offload or not
    others = {row["strategy"]["label"]: row["per_gpu_bytes"]["total"] for row in off["compare"]
              if row["strategy"]["kind"] != "zero3"}
    assert others == {row["strategy"]["label"]: row["per_gpu_bytes"]["total"] for row in on["compare"]
                      if row["strategy"]["kind"] != "zero3"}
