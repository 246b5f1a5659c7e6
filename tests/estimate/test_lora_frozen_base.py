"""LoRA's frozen base keeps none of its inputs: activations_lora.frozen_base_terms against the real PEFT layer.

A real Llama decoder layer runs forward on this CPU, fully trained and with PEFT LoRA adapters (and bitsandbytes
NF4 QLoRA) on several target subsets: in pure bf16 with 16-bit adapters (`bf16`) and with fp32 ones (`bf16+fp32`,
PEFT's default `autocast_adapter_dtype=True`), under autocast (fp32 adapters over the bf16 base) and in fp32;
every tensor autograd saves is caught with `saved_tensors_hooks` and
counted once per storage. The estimator's layer must equal it to the byte (less each norm's 4-byte rsqrt per
token); the final norm and LM head likewise. Deterministic: tensors' sizes only.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")

from accelwiz.estimate.activations import layer_activations, tail_bytes  # noqa: E402
from accelwiz.estimate.workload import ALL_LINEAR, Workload  # noqa: E402
from accelwiz.modelspec.lookup import spec_from_hf_config  # noqa: E402
from tests.estimate.saved_storages import SavedStorages  # noqa: E402

SEQ, HIDDEN, RANK = 48, 128, 8  # SEQ matches no feature size: activations are the tensors with SEQ


def _config(attention: str) -> object:
    config = transformers.LlamaConfig(vocab_size=512, hidden_size=HIDDEN, intermediate_size=352,
                                      num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=1)
    config._attn_implementation = attention
    return config


def _model(attention: str, regime: str, precision: str, targets: tuple[str, ...]) -> object:
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_config(attention))
    model = model.to(torch.float32 if precision == "fp32" else torch.bfloat16)  # "full": bf16 or fp32 only
    if regime.startswith("qlora"):
        model = _quantized(model)
    if regime == "qlora+kbit":  # as the built-in trainer prepares it: non-quantized parameters in fp32
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    if regime != "full":
        wanted = "all-linear" if targets == ALL_LINEAR else list(targets)
        # PEFT's default upcasts the adapters of a 16-bit base to fp32 (mixed, bf16+fp32); bf16: 16-bit adapters
        model = get_peft_model(model, LoraConfig(r=RANK, target_modules=wanted),
                               autocast_adapter_dtype=precision in ("mixed", "bf16+fp32"))
    return model.train()


def _quantized(model: object) -> object:
    """Every block linear as a bitsandbytes NF4 `Linear4bit`, quantized on this CPU (no kbit preparation)."""
    bnb = pytest.importorskip("bitsandbytes")
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear) and name != "lm_head":
                layer = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=False,
                                          compute_dtype=torch.bfloat16, quant_type="nf4")
                layer.weight = bnb.nn.Params4bit(child.weight.data.to(torch.bfloat16), requires_grad=False,
                                                 quant_type="nf4")._quantize("cpu")
                setattr(module, name, layer)
    model.is_loaded_in_4bit = True  # as from_pretrained marks it: PEFT then wraps them with its bnb LoRA layer
    return model


def _saved(model: object, run, precision: str) -> int:
    """Bytes of the distinct storages autograd keeps for `run`'s backward, parameters excluded."""
    cpu_autocast = torch.is_autocast_enabled
    # PEFT's bitsandbytes LoRA asks `torch.is_autocast_enabled()`, which is CUDA's; on a GPU it is on where the
    # step runs under autocast: answer it with the CPU's state so the CPU run takes the GPU's branch
    torch.is_autocast_enabled = lambda *device: cpu_autocast(*(device or ("cpu",)))
    try:
        return _saved_with(model, run, precision)
    finally:
        torch.is_autocast_enabled = cpu_autocast


def _saved_with(model: object, run, precision: str) -> int:
    with SavedStorages() as saved, torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "mixed"):
        run()
    # autocast's cached 16-bit casts of the fp32 adapters are weights, not activations: no SEQ dimension
    return saved.bytes(model, where=lambda tensor: SEQ in tensor.shape)


def _inner(model: object) -> object:
    return model.base_model.model.model if hasattr(model, "base_model") and hasattr(model, "peft_config") \
        else model.model


def _layer_bytes(attention: str, regime: str, precision: str, targets: tuple[str, ...]) -> int:
    model = _model(attention, regime, precision, targets)
    inner = _inner(model)
    # a layer inside the network; after kbit preparation the fp32 embedding makes the residual stream fp32
    dtype = torch.float32 if precision == "fp32" or regime == "qlora+kbit" else torch.bfloat16
    hidden = torch.randn(1, SEQ, HIDDEN, dtype=dtype, requires_grad=True)
    rotary = inner.rotary_emb(hidden, torch.arange(SEQ)[None])
    return _saved(model, lambda: inner.layers[0](hidden, position_embeddings=rotary), precision)


def _head_bytes(regime: str, precision: str) -> int:
    model = _model("sdpa", regime, precision, ALL_LINEAR)
    inner = _inner(model)
    dtype = torch.float32 if precision == "fp32" else torch.bfloat16
    hidden = torch.randn(1, SEQ, HIDDEN, dtype=dtype, requires_grad=True)  # the last layer's output
    head = model.get_output_embeddings()
    return _saved(model, lambda: head(inner.norm(hidden)), precision)


def _workload(attention: str, regime: str, precision: str, targets: tuple[str, ...]) -> Workload:
    spec = spec_from_hf_config(_config(attention).to_dict(), name="llama-tiny", source="test")
    return Workload(spec, micro_batch=1, seq_len=SEQ, regime=regime.split("+")[0],  # type: ignore[arg-type]
                    lora_rank=RANK, lora_targets=targets, precision=precision.split("+")[0],  # type: ignore[arg-type]
                    attention=attention, kbit_prepared=regime == "qlora+kbit")  # type: ignore[arg-type]


@pytest.mark.parametrize(("regime", "precision", "attention", "targets"), [
    ("qlora", "mixed", "sdpa", ("q_proj", "v_proj")),
    ("qlora", "mixed", "sdpa", ALL_LINEAR),
    ("qlora", "bf16", "eager", ("o_proj", "down_proj")),
    ("qlora", "bf16+fp32", "sdpa", ("q_proj", "v_proj")),
    ("qlora+kbit", "mixed", "sdpa", ALL_LINEAR),  # the built-in trainer's QLoRA
    ("qlora+kbit", "mixed", "sdpa", ("o_proj", "down_proj")),
    ("lora", "bf16+fp32", "sdpa", ("q_proj", "v_proj")),  # PEFT's MetaMathQA benchmark: use_amp false
    ("lora", "bf16+fp32", "sdpa", ALL_LINEAR),
    ("lora", "bf16+fp32", "eager", ("o_proj", "down_proj")),
    ("lora", "bf16", "sdpa", ("q_proj", "v_proj")),  # PEFT's default targets for Llama
    ("lora", "bf16", "sdpa", ALL_LINEAR),
    ("lora", "bf16", "sdpa", ("o_proj", "down_proj")),
    ("lora", "bf16", "sdpa", ("gate_proj", "up_proj")),
    ("lora", "bf16", "eager", ("q_proj", "v_proj")),
    ("lora", "bf16", "eager", ("o_proj",)),
    ("lora", "mixed", "sdpa", ("q_proj", "v_proj")),
    ("lora", "mixed", "sdpa", ALL_LINEAR),
    ("lora", "mixed", "eager", ("o_proj", "down_proj")),
    ("lora", "fp32", "sdpa", ("q_proj", "v_proj")),
    ("lora", "fp32", "sdpa", ALL_LINEAR),
])
def test_lora_layer_keeps_what_the_real_peft_layer_keeps(regime: str, precision: str, attention: str,
                                                         targets: tuple[str, ...]):
    measured = _layer_bytes(attention, regime, precision, targets)
    lora = _workload(attention, regime, precision, targets)
    estimated = layer_activations(lora, autocast=precision == "mixed", fp32_adapters=precision == "bf16+fp32")
    rsqrt = 4 * SEQ * 2  # each RMSNorm's fp32 rsqrt, 4 B per token: not counted beside its 4h input
    assert estimated.total + rsqrt == measured
    full = _layer_bytes(attention, "full", "fp32" if precision == "fp32" else "bf16", targets)
    assert measured < full or precision != "bf16"  # a frozen base keeps less (the adapters' casts may add)


@pytest.mark.parametrize("precision", ["bf16", "mixed", "fp32"])
def test_lora_final_norm_and_head_keep_only_the_norms_fp32_input(precision: str):
    measured = _head_bytes("lora", precision)
    lora = tail_bytes(_workload("sdpa", "lora", precision, ALL_LINEAR), autocast=precision == "mixed")
    full = tail_bytes(_workload("sdpa", "full", "fp32" if precision == "fp32" else "bf16", ALL_LINEAR))
    assert lora < full
    assert lora + 4 * SEQ == measured  # + the fp32 rsqrt, 4 B per token (not counted beside 4h)


def test_lora_keeps_less_than_full_fine_tuning_on_a_real_size_model():
    from accelwiz.modelspec.lookup import resolve_model

    spec = resolve_model("llama-3.2-3b")
    full = layer_activations(Workload(spec, seq_len=768, micro_batch=4, precision="bf16")).total
    qv = layer_activations(Workload(spec, seq_len=768, micro_batch=4, precision="bf16", regime="lora",
                                    lora_targets=("q_proj", "v_proj")), fp32_adapters=False).total
    every = layer_activations(Workload(spec, seq_len=768, micro_batch=4, precision="bf16", regime="lora"),
                              fp32_adapters=False).total
    tokens, h, f = 768 * 4, spec.hidden_size, spec.intermediate_size
    # both normalised tensors, the MLP input and its product not kept; two lora_A outputs (r=16) added (SDPA's
    # output, K and V at the KV heads, and rotary's cos and sin are kept by both)
    assert full - qv == 2 * tokens * (2 * h + h + f) - 2 * 16 * tokens * 2
    assert qv < every < full
