"""QLoRA after `prepare_model_for_kbit_training`, without autocast: every activation is fp32.

PEFT 0.21 casts every parameter that is no `Params4bit` to fp32 (the embedding, the norms, the LM head); without
autocast the embedding's fp32 output is the residual stream, the fp32 norms keep it fp32, and bitsandbytes'
`Linear4bit` computes in bf16 but returns its input's dtype. A real prepared bitsandbytes NF4 Llama runs on this
CPU (test_lora_frozen_base.py's model and saved-tensor count): its embedding output and logits are fp32, one
decoder layer keeps exactly what fp32 LoRA's layer keeps, and the estimator's layer equals it to the byte.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("bitsandbytes")

from accelwiz.estimate.activations import (  # noqa: E402
    boundary_bytes,
    kbit_fp32_stream,
    layer_activations,
    recompute_bytes,
)
from accelwiz.estimate.workload import ALL_LINEAR  # noqa: E402
from tests.estimate.test_lora_frozen_base import SEQ, _inner, _layer_bytes, _model, _workload  # noqa: E402

RSQRT = 4 * SEQ * 2  # each RMSNorm's fp32 rsqrt per token, not counted beside its 4h input


def test_the_prepared_models_stream_and_logits_are_fp32() -> None:
    model = _model("sdpa", "qlora+kbit", "bf16+fp32", ALL_LINEAR)
    ids = torch.randint(0, 512, (1, SEQ))
    assert _inner(model).embed_tokens(ids).dtype == torch.float32
    assert model(input_ids=ids).logits.dtype == torch.float32


@pytest.mark.parametrize("targets", [ALL_LINEAR, ("q_proj", "v_proj"), ("o_proj", "down_proj")])
def test_a_prepared_qlora_layer_keeps_fp32_loras_tensors(targets) -> None:
    measured = _layer_bytes("sdpa", "qlora+kbit", "bf16+fp32", targets)  # PEFT's fp32 adapters, no autocast
    assert measured == _layer_bytes("sdpa", "lora", "fp32", targets)
    qlora = _workload("sdpa", "qlora+kbit", "bf16", targets)
    assert kbit_fp32_stream(qlora, fp32_adapters=True)
    assert layer_activations(qlora, fp32_adapters=True).total + RSQRT == measured


def test_checkpointed_inputs_and_recompute_are_fp32_too() -> None:
    qlora = _workload("sdpa", "qlora+kbit", "bf16", ALL_LINEAR)
    checkpointed = replace(qlora, gradient_checkpointing=True)
    assert recompute_bytes(checkpointed, fp32_adapters=True) == layer_activations(qlora, fp32_adapters=True).total
    from accelwiz.estimate.activations import activation_bytes

    total, notes = activation_bytes(checkpointed, fp32_adapters=True)
    fp32_input = 4 * SEQ * qlora.model.hidden_size
    assert boundary_bytes(qlora) == fp32_input // 2  # the unconverted workload reads 16-bit
    assert total == (qlora.model.num_layers + 1) * fp32_input  # fp32 inputs; the final norm's fp32 input
    assert any("prepare_model_for_kbit_training without autocast" in n for n in notes)


def test_under_autocast_the_prepared_stream_stays_fp32_between_layers() -> None:
    """Autocast casts what a matmul reads, not the stream: the prepared fp32 embedding's output, a layer's fp32 +
    16-bit adds and the fp32 final norm stay fp32 (the logits are autocast's 16-bit), so a checkpointed layer keeps
    an fp32 input; without the preparation the embedding and the stream are 16-bit."""
    model = _model("sdpa", "qlora+kbit", "mixed", ALL_LINEAR)
    inner, ids = _inner(model), torch.randint(0, 512, (1, SEQ))
    cpu_autocast = torch.is_autocast_enabled
    torch.is_autocast_enabled = lambda *device: cpu_autocast(*(device or ("cpu",)))  # PEFT asks CUDA's
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            stream = inner.embed_tokens(ids)
            rotary = inner.rotary_emb(stream, torch.arange(SEQ)[None])
            out = inner.layers[0](stream, position_embeddings=rotary)
            out = out[0] if isinstance(out, tuple) else out
            assert (stream.dtype, out.dtype, inner.norm(out).dtype) == (torch.float32,) * 3
            assert model(input_ids=ids).logits.dtype == torch.bfloat16
            plain = _inner(_model("sdpa", "qlora", "mixed", ALL_LINEAR)).embed_tokens(ids)
            assert plain.dtype == torch.bfloat16
    finally:
        torch.is_autocast_enabled = cpu_autocast
    qlora = _workload("sdpa", "qlora+kbit", "mixed", ALL_LINEAR)
    assert boundary_bytes(qlora, autocast=True) == 4 * SEQ * qlora.model.hidden_size
    assert boundary_bytes(replace(qlora, kbit_prepared=False), autocast=True) == 2 * SEQ * qlora.model.hidden_size


def test_the_cli_counts_fp32_checkpoints_for_prepared_qlora_under_autocast() -> None:
    (_, prepared), (_, kept) = (_allocated("--qlora", "--precision", "mixed"),
                                _allocated("--qlora", "--precision", "mixed", "--no-kbit-prepare"))
    assert prepared - kept == 32 * 2 * (2 * 512) * 4096  # 32 checkpointed layer inputs, fp32 against bf16


@pytest.mark.parametrize(("autocast", "fp32_adapters", "kbit"), [(True, True, True), (False, False, True),
                                                                  (False, True, False)])
def test_not_where_autocast_deepspeed_or_no_preparation_leaves_16_bits(autocast, fp32_adapters, kbit) -> None:
    qlora = _workload("sdpa", "qlora+kbit" if kbit else "qlora", "bf16", ALL_LINEAR)
    assert not kbit_fp32_stream(qlora, autocast=autocast, fp32_adapters=fp32_adapters)


def _allocated(*extra: str) -> tuple[int, float]:
    import json

    from typer.testing import CliRunner

    from accelwiz.cli import app

    result = CliRunner().invoke(app, ["estimate", "--model", "llama-2-7b", "--system", "1xA100-80GB", "--strategy",
                                      "single", "--precision", "bf16", "--micro-batch", "2", "--seq-len", "512",
                                      "--gradient-checkpointing", "--format", "json", *extra])
    if result.exit_code == 2:
        return 2, 0.0
    return result.exit_code, json.loads(result.stdout)["estimate"]["per_gpu_bytes"]["activations"]


def test_no_kbit_prepare_keeps_the_16_bit_stream_and_is_refused_without_qlora() -> None:
    (_, prepared), (_, kept) = _allocated("--qlora"), _allocated("--qlora", "--no-kbit-prepare")
    assert prepared - kept == 32 * 2 * (2 * 512) * 4096  # 32 checkpointed layer inputs, fp32 against bf16
    assert _allocated("--lora", "--no-kbit-prepare")[0] == 2


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_deepspeeds_module_cast_undoes_the_preparation_and_leaves_the_4_bit_storage(dtype) -> None:
    """DeepSpeed 0.19.8's engine casts the module it is given (engine.py `_configure_distributed_model` ->
    `_cast_module_mixed_precision`: every parameter of a CASTABLE_DTYPES float dtype to the engine's 16-bit
    dtype). Run on a prepared NF4 model, it turns PEFT's fp32 embedding, norms, LM head and adapters back to 16
    bits and leaves bitsandbytes' uint8 storage as it is: the stream and logits are 16-bit, so the estimate
    counts no fp32 stream and 2 B per frozen parameter under ZeRO (the same loss may then run in 16 bits)."""
    from types import SimpleNamespace

    engine = pytest.importorskip("deepspeed.runtime.engine")
    bnb = pytest.importorskip("bitsandbytes")
    from accelwiz.estimate.frozen_base import frozen_base_width
    from accelwiz.estimate.strategy import strategy_from_options

    model = _model("sdpa", "qlora+kbit", "bf16+fp32", ALL_LINEAR)
    packed = {id(p): (p.dtype, p.data_ptr()) for p in model.parameters() if isinstance(p, bnb.nn.Params4bit)}
    assert packed and any(p.dtype == torch.float32 for p in model.parameters())  # prepared: fp32 beside NF4
    wanted = getattr(torch, dtype)
    engine.DeepSpeedEngine._cast_module_mixed_precision(SimpleNamespace(module=model), wanted, None, False)
    for parameter in model.parameters():
        if id(parameter) in packed:
            assert (parameter.dtype, parameter.data_ptr()) == packed[id(parameter)] == (torch.uint8,
                                                                                       packed[id(parameter)][1])
        else:
            assert parameter.dtype == wanted
    ids = torch.randint(0, 512, (1, SEQ))
    assert _inner(model).embed_tokens(ids).dtype == wanted
    assert model(input_ids=ids).logits.dtype == wanted
    qlora = _workload("sdpa", "qlora+kbit", "bf16", ALL_LINEAR)
    zero2 = strategy_from_options("zero2", gpus_per_node=1, nodes=1)
    assert not kbit_fp32_stream(qlora, fp32_adapters=False, strategy=zero2)
    assert frozen_base_width(replace(qlora, precision="mixed"), zero2) == 2
