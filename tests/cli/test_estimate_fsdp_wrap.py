"""`estimate --fsdp-wrap block|none` and the YAML's fsdp_auto_wrap_policy (issue 28): with the whole model one FSDP
unit (NO_WRAP, accelerate's default where the YAML names no policy), FSDP gathers all of it from forward to the end
of backward and, for full fine-tuning, unshards its whole gradient. `check` warned of it (AW308) while the estimate
counted one unit per block. Everything through the argv a user types, and the library behaviour read off a real
FSDP2 model on the CPU (a one-rank gloo group)."""

from __future__ import annotations

import json

import pytest

_RUN = ("--model", "llama-2-7b", "--system", "2xA100-80GB", "--seq-len", "512", "--gradient-checkpointing")
_YAML = "distributed_type: FSDP\nnum_processes: 2\nmixed_precision: bf16\nfsdp_config:\n  fsdp_version: 2\n{policy}"


def _estimate(cli, *args: str) -> dict:
    result = cli("estimate", *args, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr  # 1: does not fit, still an estimate
    return json.loads(result.stdout)


def _wrap(data: dict) -> dict:
    return data["estimate"]["strategy"]["fsdp_wrap"]


def _config(tmp_path, policy: str) -> str:
    path = tmp_path / "fsdp.yaml"
    path.write_text(_YAML.format(policy=policy))
    return str(path)


def test_fsdp2_on_the_root_alone_keeps_every_parameter_gathered_after_forward(monkeypatch):
    """accelerate's NO_WRAP is `fully_shard(model)` alone (fsdp2_prepare_model): one parameter group, every
    parameter in it, all unsharded after forward, and the whole model's unsharded gradient alive when the group's
    post-backward reduce-scatters it; the estimate's gathered and gradient bytes are exactly those."""
    torch = pytest.importorskip("torch")
    from torch.distributed.fsdp._fully_shard._fsdp_param import ShardedState
    from torch.distributed.fsdp._fully_shard._fsdp_param_group import FSDPParamGroup

    from accelwiz.estimate.fsdp_reserve import fsdp_gathered_bytes, fsdp_root_parameters, fsdp_unit_gradient_bytes
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.modelspec.lookup import spec_from_hf_config
    from tests.estimate.one_rank_fsdp import one_rank_fsdp, tiny_llama

    reduced: list[int] = []  # the unsharded gradient bytes each group's post-backward finds
    post_backward = FSDPParamGroup.post_backward

    def counting(group, *args, **kwargs):
        grads = [p._unsharded_param.grad for p in group.fsdp_params if p._unsharded_param.grad is not None]
        reduced.append(sum(g.numel() * g.element_size() for g in grads))
        return post_backward(group, *args, **kwargs)

    monkeypatch.setattr(FSDPParamGroup, "post_backward", counting)
    with one_rank_fsdp(monkeypatch) as fsdp:
        model = tiny_llama()
        fsdp.fully_shard(model)
        group = model._get_fsdp_state()._fsdp_param_group
        tokens = torch.randint(0, 128, (1, 8))
        loss = model(input_ids=tokens, labels=tokens).loss
        assert len(group.fsdp_params) == len(list(model.parameters()))
        assert all(p.sharded_state == ShardedState.UNSHARDED for p in group.fsdp_params)
        gathered = sum(p._unsharded_param.numel() * p._unsharded_param.element_size() for p in group.fsdp_params)
        loss.backward()
        assert all(p.sharded_state == ShardedState.SHARDED for p in group.fsdp_params)
    spec = spec_from_hf_config(model.config.to_dict(), name="tiny-llama", source="test")
    workload = Workload(spec, precision="fp32", regime="full")
    one_unit = Strategy("fsdp_full", fsdp_wrap="none")
    counted = fsdp_gathered_bytes(workload, one_unit, fsdp_root_parameters(spec))
    assert counted == gathered == 4 * sum(p.numel() for p in model.parameters())
    assert reduced == [fsdp_unit_gradient_bytes(workload, one_unit)] == [gathered]


@pytest.mark.parametrize(("policy", "value", "source", "said"), [
    ("  fsdp_auto_wrap_policy: NO_WRAP\n", "none", "yaml", "the YAML's fsdp_auto_wrap_policy NO_WRAP"),
    ("", "none", "default", "no fsdp_auto_wrap_policy in the YAML: accelerate's default NO_WRAP"),
    ("  fsdp_auto_wrap_policy: size_based_wrap\n  fsdp_min_num_params: 0\n", "none", "yaml",
     "fsdp_min_num_params 0, which accelerate turns into no wrapping"),
    ("  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n", "block", "yaml",
     "the YAML's fsdp_auto_wrap_policy TRANSFORMER_BASED_WRAP"),
])
def test_the_yaml_s_policy_is_the_wrap_accelerate_resolves(cli, tmp_path, policy, value, source, said):
    data = _estimate(cli, "--config", _config(tmp_path, policy), *_RUN, "--lora")
    wrap = _wrap(data)
    assert (wrap["value"], wrap["source"]) == (value, source) and said in wrap["note"]
    assert data["estimate"]["strategy"]["label"].endswith(", one unit") == (value == "none")
    # --compare's candidates wrap each block: the shown one-unit run is told apart in the table
    from accelwiz.estimate.strategy import Strategy

    assert Strategy("fsdp_full", fsdp_wrap=value).short_label == ("FSDP2 full 1-unit" if value == "none" else
                                                                  "FSDP2 full")


def test_one_unit_gathers_the_whole_model_and_unshards_its_whole_gradient(cli):
    """Full fine-tuning in bf16 shards: the buffers grow from two blocks and the root gathered plus one block's
    gradient to the whole model gathered plus its whole gradient, two bytes a parameter each."""
    from accelwiz.modelspec.lookup import resolve_model

    run = (*_RUN, "--strategy", "fsdp", "--fsdp-version", "1", "--no-fsdp-upcast", "--precision", "bf16")
    block, whole = _estimate(cli, *run), _estimate(cli, *run, "--fsdp-wrap", "none")
    spec = resolve_model("llama-2-7b")
    parameters = whole["model"]["parameters"]
    grown = whole["estimate"]["sizes"]["buffers"] - block["estimate"]["sizes"]["buffers"]
    gathered = 2 * (parameters - 2 * spec.layer_parameters - _root(spec))  # the blocks not gathered before
    gradient = 2 * (parameters - spec.layer_parameters)
    assert grown == pytest.approx(gathered + gradient, rel=1e-9)
    assert whole["estimate"]["per_gpu_bytes"]["total"] > block["estimate"]["per_gpu_bytes"]["total"] + grown
    assert any("the whole model one unit (--fsdp-wrap none)" in line for line in whole["estimate"]["assumptions"])
    assert (_wrap(block)["value"], _wrap(block)["source"]) == ("block", "default")
    assert "TRANSFORMER_BASED_WRAP" in _wrap(block)["note"]


def test_the_optimizer_step_holds_none_of_it_and_accumulation_counts_the_gradient_once(cli):
    """Backward's end reshards the one unit and frees its unsharded gradient before the step; under gradient
    accumulation that gradient is the tensor no_sync keeps (accumulation.py), not a second one."""
    run = (*_RUN, "--strategy", "fsdp", "--fsdp-version", "1", "--no-fsdp-upcast", "--precision", "bf16")
    block, whole = _estimate(cli, *run), _estimate(cli, *run, "--fsdp-wrap", "none")
    step = {name: data["estimate"]["phases"]["optimizer"] for name, data in (("block", block), ("none", whole))}
    assert step["none"] == pytest.approx(step["block"] - block["estimate"]["sizes"]["buffers"], rel=1e-9)
    # loading: FSDP1 moves the whole bf16 model to the GPU and flattens it (two copies) before sharding it, where a
    # block-wrapped model has one block unsharded at a time
    from accelwiz.modelspec.lookup import resolve_model

    loading = whole["estimate"]["phases"]["loading"] - block["estimate"]["phases"]["loading"]
    assert loading == pytest.approx(2 * 2 * whole["model"]["parameters"] - 2 * resolve_model("llama-2-7b")
                                    .layer_parameters, rel=1e-9)
    accumulated = _estimate(cli, *run, "--fsdp-wrap", "none", "--gradient-accumulation", "2")
    gradient = 2 * whole["model"]["parameters"]
    assert accumulated["estimate"]["sizes"]["buffers"] == pytest.approx(
        whole["estimate"]["sizes"]["buffers"] - gradient, rel=1e-9)


def _root(spec) -> int:
    from accelwiz.estimate.fsdp_reserve import fsdp_root_parameters

    return fsdp_root_parameters(spec)


@pytest.mark.parametrize(("policy", "given", "verb"), [
    ("  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n", "none", "which wins over"),
    ("", "block", "which wins over"),
    ("  fsdp_auto_wrap_policy: NO_WRAP\n", "none", "agreeing with"),
])
def test_the_flag_beats_the_yaml_and_says_which_won(cli, tmp_path, policy, given, verb):
    files = ("--config", _config(tmp_path, policy), *_RUN, "--lora")
    from_yaml = _wrap(_estimate(cli, *files))
    flagged = _wrap(_estimate(cli, *files, "--fsdp-wrap", given))
    assert flagged == {"value": given, "source": "flag",
                       "note": f"--fsdp-wrap {given}, {verb} {from_yaml['note']}"}


@pytest.mark.parametrize(("args", "said"), [
    (("--strategy", "zero3", "--fsdp-wrap", "none"), "--fsdp-wrap none says how FSDP wraps the model into units; "
                                                     "the strategy is ZeRO-3"),
    (("--fsdp-wrap", "none"), "no strategy is given"),
    (("--strategy", "fsdp", "--fsdp-wrap", "blocks"), "unknown --fsdp-wrap `blocks`"),
])
def test_a_wrap_without_fsdp_or_an_unknown_word_is_refused(cli, args, said):
    result = cli("estimate", *_RUN, "--lora", *args)
    assert result.exit_code == 2 and said in result.stderr and "Traceback" not in result.stderr
