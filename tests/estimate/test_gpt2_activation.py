"""GPT-2's MLP activation is the config's `activation_function`, not the family's (issue 28: a frozen row's GPT
model ran `nn.GELU(approximate="tanh")`): `gelu_new`, transformers' NewGELUActivation written out in Python, keeps
its pow/tanh chain for backward; `gelu_pytorch_tanh` and `gelu` are one fused kernel that keeps only its input.
Proved against the fake-tensor trace of the real GPT2 code, as the trace matrix proves the rest."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from accelwiz.estimate import trace_matrix  # noqa: E402
from accelwiz.estimate.trace_matrix import TOLERANCE, Setting, run  # noqa: E402
from accelwiz.modelspec.lookup import spec_from_hf_config  # noqa: E402


@pytest.mark.parametrize("activation", ["gelu_new", "gelu_pytorch_tanh", "gelu"])
@pytest.mark.parametrize("precision", ["fp32", "bf16", "mixed"])
def test_the_activation_the_config_names_is_what_the_layer_keeps(activation, precision, monkeypatch) -> None:
    arch = f"gpt2-{activation}"
    monkeypatch.setitem(trace_matrix.ARCHITECTURES, arch, ("GPT2Config", {"n_layer": trace_matrix.LAYERS,
                                                                          "activation_function": activation}))
    row = run(Setting(arch, 2, 256, precision, "eager"))
    assert abs(row["error"]["activations"]) <= TOLERANCE, row
    assert abs(row["error"]["peak"]) <= TOLERANCE, row


def test_the_feature_follows_the_config() -> None:
    def spec(activation: str | None):
        config = {"model_type": "gpt2", "n_layer": 2, "n_embd": 768, "n_head": 12, "vocab_size": 50257,
                  "n_positions": 1024, **({"activation_function": activation} if activation else {})}
        return spec_from_hf_config(config, name="gpt", source="test")

    assert spec("gelu_new").gelu_new_mlp and spec(None).gelu_new_mlp  # GPT2Config's default is gelu_new
    assert not spec("gelu_pytorch_tanh").gelu_new_mlp and not spec("gelu").gelu_new_mlp
