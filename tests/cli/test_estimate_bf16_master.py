"""`estimate --bf16-master-weights-and-grads --bf16-optimizer-states` (issue 28): DeepSpeed's bf16 section said on
the command line, where `--precision bf16` alone is DeepSpeed's fp32 masters and states. Through the argv a user
types: the resolved values and who said them, the bytes they move, the JSON they beat, and the refusals with
DeepSpeed's reasons. The engine keeping exactly the counted bytes is tests/estimate/test_deepspeed_bf16_master.py's
(real ZeRO-1/2/3 engines on the CPU)."""

from __future__ import annotations

import json

import pytest

_RUN = ("--model", "llama-2-7b", "--system", "4xH100-80GB", "--seq-len", "512", "--gradient-checkpointing")
_BOTH = ("--bf16-master-weights-and-grads", "--bf16-optimizer-states")
_JSON = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3},
         "bf16": {"enabled": True, "bf16_master_weights_and_grads": True, "bf16_optimizer_states": True}}
_YAML = "distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"


def _estimate(cli, *args: str) -> dict:
    result = cli("estimate", *args, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def _said(data: dict) -> dict:
    strategy = data["estimate"]["strategy"]
    return {"master_weights_and_grads": strategy["bf16_master_weights_and_grads"],
            "optimizer_states": strategy["bf16_optimizer_states"], "note": strategy["bf16_master_note"]}


def test_the_flags_keep_the_master_and_states_in_bf16_and_say_so(cli):
    fp32 = _estimate(cli, *_RUN, "--strategy", "zero3", "--precision", "bf16")
    low = _estimate(cli, *_RUN, "--strategy", "zero3", "--precision", "bf16", *_BOTH)
    assert _said(fp32) == {"master_weights_and_grads": False, "optimizer_states": False, "note": ""}
    assert _said(low) == {"master_weights_and_grads": True, "optimizer_states": True, "note": "; ".join(_BOTH)}
    # fp32 master 4 + Adam m, v 8 -> bf16 master 2 + m, v 4, over 4 GPUs
    parameters = low["model"]["parameters"]
    assert fp32["estimate"]["sizes"]["optimizer_states"] == pytest.approx(12 * parameters / 4, rel=1e-3)
    assert low["estimate"]["sizes"]["optimizer_states"] == pytest.approx(6 * parameters / 4, rel=1e-3)
    assert any("bf16 master weights and bf16 optimizer states in its ZeRO optimizer (not pure bf16: "
               "--bf16-master-weights-and-grads; --bf16-optimizer-states)" in line
               for line in low["estimate"]["assumptions"])
    # no other strategy has them to say
    assert _estimate(cli, *_RUN, "--strategy", "fsdp", "--precision", "bf16")["estimate"]["strategy"][
        "bf16_master_weights_and_grads"] is None


def test_bf16_masters_beside_fp32_states_run_under_optimizer_offload(cli):
    data = _estimate(cli, *_RUN, "--strategy", "zero3", "--precision", "bf16", "--offload-optimizer", "cpu",
                     "--bf16-master-weights-and-grads")
    assert _said(data)["master_weights_and_grads"] is True and _said(data)["optimizer_states"] is False
    assert any("bf16 master weights and fp32 optimizer states" in line for line in data["estimate"]["assumptions"])


def test_a_flag_beats_the_json_and_says_which_won(cli, tmp_path):
    (tmp_path / "ds.json").write_text(json.dumps(_JSON))
    config = tmp_path / "acc.yaml"
    config.write_text(_YAML)
    files = ("--config", str(config), "--model", "llama-2-7b", "--precision", "bf16")
    from_json = _estimate(cli, *files)
    assert _said(from_json) == {"master_weights_and_grads": True, "optimizer_states": True,
                                "note": "the JSON's bf16 section"}
    off = _estimate(cli, *files, "--no-bf16-master-weights-and-grads", "--no-bf16-optimizer-states")
    assert _said(off) == {
        "master_weights_and_grads": False, "optimizer_states": False,
        "note": "--no-bf16-master-weights-and-grads, which wins over the JSON's bf16 section; "
                "--no-bf16-optimizer-states, which wins over the JSON's bf16 section"}
    assert off["estimate"]["sizes"]["optimizer_states"] == pytest.approx(
        2 * from_json["estimate"]["sizes"]["optimizer_states"], rel=1e-3)
    agreeing = _estimate(cli, *files, "--bf16-optimizer-states")
    assert _said(agreeing)["note"] == "--bf16-optimizer-states, agreeing with the JSON's bf16 section"
    assert agreeing["estimate"]["phases"] == from_json["estimate"]["phases"]
    # the files alone resolve "mixed" (a script loading fp32 weights, which the engine casts to bf16): the JSON's
    # options hold there too, as the assumption line says
    mixed = _estimate(cli, *files[:-2])
    assert mixed["workload"]["precision"] == "mixed" and _said(mixed)["master_weights_and_grads"] is True
    assert mixed["estimate"]["sizes"]["optimizer_states"] == from_json["estimate"]["sizes"]["optimizer_states"]
    assert any("bf16 master weights and bf16 optimizer states in its ZeRO optimizer (not pure bf16: the JSON's bf16 "
               "section)" in line for line in mixed["estimate"]["assumptions"])
    # turning the masters off leaves the JSON's bf16 states without them: DeepSpeed refuses that
    result = cli("estimate", *files, "--no-bf16-master-weights-and-grads")
    assert result.exit_code == 2 and "bf16_optimizer_states requires bf16_master_weights_and_grads" in result.stderr


@pytest.mark.parametrize(("args", "said"), [
    ((*_BOTH,), "no strategy is given (the recommendation would pick one)"),
    (("--strategy", "fsdp", *_BOTH), "DeepSpeed's bf16 options for its ZeRO optimizer (stage 1, 2 or 3 only); "
                                     "the strategy is FSDP2 full shard"),
    (("--strategy", "ddp", *_BOTH), "the strategy is DDP"),
    (("--strategy", "zero3", "--precision", "mixed", *_BOTH), "--bf16-master-weights-and-grads with --precision "
                                                              "mixed: DeepSpeed's bf16 section"),
    (("--strategy", "zero2", "--precision", "bf16", "--bf16-optimizer-states"),
     "bf16_optimizer_states requires bf16_master_weights_and_grads"),
    (("--strategy", "zero3", "--precision", "bf16", "--bf16-master-weights-and-grads"),
     "DeepSpeed keeps fp32 optimizer states beside bf16 masters only under ZeRO-Offload with DeepSpeedCPUAdam"),
    (("--strategy", "zero3", "--precision", "bf16", *_BOTH, "--stack", "deepspeed==0.18.2"),
     "on DeepSpeed 0.18.2: its bf16 section has no such key before 0.18.3"),
    (("--strategy", "zero3", "--precision", "bf16", *_BOTH, "--offload-optimizer", "cpu", "--stack",
      "deepspeed==0.19.0"), "before 0.19.1 (deepspeedai/DeepSpeed#8010) its DeepSpeedCPUAdam keeps the moments"),
])
def test_what_deepspeed_refuses_is_refused_with_its_reason(cli, args, said):
    result = cli("estimate", *_RUN, *args)
    assert result.exit_code == 2, result.stdout
    assert said in result.stderr and "hint:" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_deepspeed_that_has_them_runs_them(cli):
    on_0_18_3 = _estimate(cli, *_RUN, "--strategy", "zero3", "--precision", "bf16", *_BOTH,
                          "--stack", "deepspeed==0.18.3")
    assert _said(on_0_18_3)["master_weights_and_grads"] is True
    offloaded = _estimate(cli, *_RUN, "--strategy", "zero3", "--precision", "bf16", *_BOTH,
                          "--offload-optimizer", "cpu", "--stack", "deepspeed==0.19.1")
    assert _said(offloaded)["optimizer_states"] is True


def test_the_recommendation_and_compare_keep_the_runs_bf16_masters(cli):
    """The run's JSON says its bf16 options whatever ZeRO stage it is offered: each ZeRO row keeps them where
    DeepSpeed runs them (bf16 states under optimizer offload from 0.19.1), the others stay as they run."""
    args = (*_RUN, "--strategy", "zero3", "--precision", "bf16", *_BOTH, "--compare")
    rows = {row["strategy"]["label"]: row["strategy"] for row in _estimate(cli, *args)["compare"]}
    zero = [s for s in rows.values() if s["kind"] in ("zero1", "zero2", "zero3")]
    assert len(zero) >= 4 and all(s["bf16_master_weights_and_grads"] and s["bf16_optimizer_states"] for s in zero)
    assert all(s["bf16_master_weights_and_grads"] is None for s in rows.values() if s["kind"].startswith("fsdp"))
    old = {row["strategy"]["label"]: row["strategy"]
           for row in _estimate(cli, *args, "--stack", "deepspeed==0.19.0")["compare"]}
    for label, strategy in old.items():  # before 0.19.1 bf16 states under offload would be fp32: offered without
        if strategy["kind"].startswith("zero"):
            assert strategy["bf16_optimizer_states"] is (strategy["offload_optimizer"] == "none"), label
