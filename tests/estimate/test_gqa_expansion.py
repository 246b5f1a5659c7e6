"""Grouped-query attention's K and V as the kernel keeps them (activations_gqa.py, issue 28).

Three views of the same mechanism:

* real objects: a 2-KV-head and an 8-KV-head Llama (8 query heads) run forward on this CPU in bf16 and fp32, with no
  attention mask, an all-ones mask, a padded batch, and eager attention; every tensor autograd saves is caught
  with `saved_tensors_hooks`, one layer is the 2-layer model less the 1-layer one, and the estimator's layer must
  equal it to the byte (less what the formula leaves out by convention: each RMSNorm's 4-byte rsqrt per token,
  rotary's cos and sin, which the model computes once for every layer, and the mask CPU's SDPA keeps per layer);
* the fake-tensor trace (trace.py) at Llama-3-8B's widths: one layer of SDPA keeps K and V at the KV heads, eager
  at every head, and the formula's layer matches;
* the command line: `--attention eager`, `--varying-lengths` and `--stack transformers==4.53.0` add exactly the
  expanded bytes per layer to the forward phase, with the assumption line saying why; flash and today's unpadded
  SDPA add nothing.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from accelwiz.estimate.activations import layer_activations  # noqa: E402
from accelwiz.estimate.activations_gqa import expanded_kv_bytes, kv_expansion_reason  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from accelwiz.modelspec.lookup import spec_from_hf_config  # noqa: E402
from accelwiz.resolution.stack import Stack  # noqa: E402
from tests.estimate.saved_storages import SavedStorages  # noqa: E402

HEADS, HEAD_DIM, HIDDEN, SEQ, BATCH = 8, 16, 128, 48, 2


def _config(kv: int, attention: str, layers: int) -> object:
    config = transformers.LlamaConfig(vocab_size=256, hidden_size=HIDDEN, intermediate_size=352,
                                      num_attention_heads=HEADS, num_key_value_heads=kv, head_dim=HEAD_DIM,
                                      num_hidden_layers=layers, attention_dropout=0.0)
    config._attn_implementation = attention
    return config


def _saved_bytes(kv: int, attention: str, mask: str, precision: str, layers: int) -> int:
    """Bytes of every storage autograd saves in the decoder's forward (parameters excluded), each counted once."""
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_config(kv, attention, layers))
    model = model.to(torch.float32 if precision == "fp32" else torch.bfloat16).train()
    ids = torch.randint(0, 256, (BATCH, SEQ))
    attention_mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    if mask == "padded":
        attention_mask[0, : SEQ // 4] = 0  # left padding: the first sample is shorter
    with SavedStorages() as saved:
        model.model(input_ids=ids, attention_mask=None if mask == "none" else attention_mask)
    return saved.bytes(model)


def _workload(kv: int, attention: str, mask: str, precision: str) -> Workload:
    spec = spec_from_hf_config(_config(kv, attention, 1).to_dict(), name="llama-gqa-tiny", source="test")
    return Workload(spec, micro_batch=BATCH, seq_len=SEQ, precision=precision,  # type: ignore[arg-type]
                    attention=attention, varying_lengths=mask == "padded")  # type: ignore[arg-type]


@pytest.mark.parametrize(("attention", "mask", "precision"), [
    ("sdpa", "none", "bf16"), ("sdpa", "ones", "bf16"), ("sdpa", "padded", "bf16"), ("eager", "none", "bf16"),
    ("eager", "padded", "bf16"), ("sdpa", "none", "fp32"), ("sdpa", "padded", "fp32"), ("eager", "none", "fp32"),
])
@pytest.mark.parametrize("kv", [2, 8])
def test_the_layer_keeps_what_the_real_llama_layer_keeps(kv: int, attention: str, mask: str, precision: str):
    measured = (_saved_bytes(kv, attention, mask, precision, 2)
                - _saved_bytes(kv, attention, mask, precision, 1))
    workload = _workload(kv, attention, mask, precision)
    terms = dict(layer_activations(workload).terms)
    width = 4 if precision == "fp32" else 2
    rsqrt = 2 * 4 * BATCH * SEQ  # two RMSNorms' fp32 rsqrt per token: not counted beside their 4h inputs
    cpu_mask = width * BATCH * SEQ * SEQ if attention == "sdpa" and mask == "padded" else 0  # see below
    # CPU's SDPA turns the boolean mask into a float one in the query's dtype per call and keeps it; CUDA's kernels
    # take the mask as they are given it (not measured here): not counted
    assert sum(terms.values()) - terms["rotary cos, sin"] + rsqrt + cpu_mask == measured
    expanded = terms.get("K and V expanded to every head", 0)
    if kv < HEADS and (attention == "eager" or mask == "padded"):
        assert expanded == 2 * (HEADS - kv) * HEAD_DIM * SEQ * BATCH * width
    else:
        assert expanded == 0


def test_the_real_layer_keeps_as_much_with_two_kv_heads_as_with_eight_where_it_expands():
    """The mechanism itself, without the formula: the expanded copy replaces the KV-head K and V (nothing keeps
    both), so a 2-KV-head layer keeps what an 8-KV-head one keeps; without a mask it keeps 6 heads' K and V less."""
    def layer(kv: int, attention: str, mask: str) -> int:
        return _saved_bytes(kv, attention, mask, "bf16", 2) - _saved_bytes(kv, attention, mask, "bf16", 1)

    assert layer(2, "sdpa", "padded") == layer(8, "sdpa", "padded")
    assert layer(2, "eager", "none") == layer(8, "eager", "none")
    assert layer(8, "sdpa", "none") - layer(2, "sdpa", "none") == 2 * 6 * HEAD_DIM * SEQ * BATCH * 2


def test_the_fake_trace_keeps_kv_at_the_kv_heads_under_sdpa_and_the_formula_matches():
    """Llama-3-8B's widths (32 heads, 8 KV heads), one layer as the 2-layer trace less the 1-layer one."""
    pytest.importorskip("peft")
    from accelwiz.estimate.trace import TraceSettings, trace_training_step

    fields = {"vocab_size": 1024, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32}

    def traced(kv: int, attention: str) -> tuple[int, int]:
        per = []
        for layers in (1, 2):
            config = transformers.LlamaConfig(num_key_value_heads=kv, num_hidden_layers=layers, **fields)
            settings = TraceSettings(micro_batch=1, seq_len=256, precision="bf16",
                                     attention=attention)  # type: ignore[arg-type]
            per.append(trace_training_step(config, settings).activations)
        spec = spec_from_hf_config(config.to_dict(), name="llama-3-8b-2l", source="test")
        terms = dict(layer_activations(Workload(spec, micro_batch=1, seq_len=256, precision="bf16",
                                                attention=attention)).terms)  # type: ignore[arg-type]
        return per[1] - per[0], sum(terms.values()) - terms["rotary cos, sin"]

    sbh = 256 * 4096
    for attention in ("sdpa", "eager"):
        gqa, mha = traced(8, attention), traced(32, attention)
        for measured, formula in (gqa, mha):
            assert formula == pytest.approx(measured, rel=1e-3)  # the 4-byte rsqrt per token and norm aside
        saving = mha[0] - gqa[0]
        assert saving == (3 * sbh if attention == "sdpa" else 0)  # K and V: 4 sbh at 32 heads, 1 sbh at 8


_ARGV = ["estimate", "--model", "llama-3.1-8b", "--system", "1xA100-80GB", "--strategy", "single",
         "--precision", "bf16", "--seq-len", "1024", "--micro-batch", "2", "--format", "json"]
# Llama-3.1-8B: 32 layers, 32 heads, 8 KV heads of 128; per layer 2 x 24 heads x 128 x 1024 x 2 tokens x 2 bytes
_EXPANDED = 32 * 2 * 24 * 128 * 1024 * 2 * 2


def _estimate(cli, *extra: str) -> dict:
    return json.loads(cli(*_ARGV, *extra).stdout)["estimate"]


def _kv_notes(estimate: dict) -> list[str]:
    return [note for note in estimate["assumptions"] if note.startswith("K and V kept at all")]


@pytest.mark.parametrize(("extra", "why"), [
    (("--varying-lengths",), "padded batches carry an attention mask"),
    (("--stack", "transformers==4.53.0"), "transformers 4.53.0 repeats K and V"),
    (("--stack", "torch==2.4.1"), "torch 2.4.1 has no SDPA enable_gqa"),
])
def test_the_command_line_counts_the_expanded_kv_and_says_why(cli, extra: tuple[str, ...], why: str):
    today, expanded = _estimate(cli), _estimate(cli, *extra)
    assert expanded["phases"]["forward"] - today["phases"]["forward"] == _EXPANDED
    assert not _kv_notes(today)
    (note,) = _kv_notes(expanded)
    assert why in note and "32 heads, not the 8 KV heads: +24.0 MiB per layer" in note


def test_flash_attention_and_unpadded_sdpa_keep_kv_at_the_kv_heads(cli):
    sdpa, flash = _estimate(cli), _estimate(cli, "--attention", "flash", "--varying-lengths")
    assert not _kv_notes(sdpa) and not _kv_notes(flash)
    eager = _estimate(cli, "--attention", "eager")
    assert "eager attention repeats K and V" in _kv_notes(eager)[0]


def test_no_expansion_without_grouped_query_attention_or_beyond_its_head_dim_rule():
    spec = spec_from_hf_config(_config(HEADS, "eager", 1).to_dict(), name="llama-mha-tiny", source="test")
    assert kv_expansion_reason(Workload(spec, attention="eager")) is None  # kv == heads: nothing to expand
    wide = spec_from_hf_config(transformers.LlamaConfig(
        vocab_size=256, hidden_size=1024, intermediate_size=512, num_attention_heads=4, num_key_value_heads=1,
        head_dim=320, num_hidden_layers=1).to_dict(), name="llama-hd320", source="test")
    assert "head dim 320 > 256" in (kv_expansion_reason(Workload(wide)) or "")  # today's transformers
    older = Workload(wide, stack=Stack(transformers=(5, 12, 0)))  # 5.12 passes enable_gqa whatever the head dim
    assert kv_expansion_reason(older) is None and expanded_kv_bytes(older) == 0
