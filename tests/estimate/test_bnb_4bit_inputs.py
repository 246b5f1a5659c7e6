"""bitsandbytes before 0.43.2 keeps every 4-bit linear's input: activations_lora.kept_4bit_input_terms against real layers.

What a layer keeps for backward is every tensor autograd saves (`saved_tensors_hooks`) and every tensor an
autograd Function keeps on its context: bitsandbytes' MatMul4Bit keeps its tensors as `ctx.tensors`, which the
hooks do not see, so the graph is walked for them too. The installed bitsandbytes (0.50) keeps `(None, B)`: no
input. A reference Function keeping `(A, B)` exactly as 0.41.1 does, put where the installed Linear4bit calls
`bnb.matmul_4bit` (its forward casts the input as 0.41.1's: `set_compute_type`, `x.to(self.compute_dtype)`),
gives the old layer: the estimator's extra term must equal what it adds, to the byte, in the real PEFT layer.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")
bnb = pytest.importorskip("bitsandbytes")

from accelwiz.estimate.activations import activation_bytes, layer_activations, recompute_bytes  # noqa: E402
from accelwiz.estimate.workload import ALL_LINEAR  # noqa: E402
from accelwiz.resolution.stack import installed_stack  # noqa: E402
from tests.estimate.test_lora_frozen_base import HIDDEN, SEQ, _inner, _model, _workload  # noqa: E402
from accelwiz.resolution.stack import Stack


class MatMul4BitV041(torch.autograd.Function):
    """bitsandbytes 0.41.1's MatMul4Bit (bitsandbytes/autograd/_functions.py, lines 494-549; its empty-input branch
    left out), which keeps the input A although backward never reads it:

        output = torch.nn.functional.linear(A, F.dequantize_4bit(B, state).to(A.dtype).t(), bias)
        ctx.state = state
        ctx.dtype_A, ctx.dtype_B, ctx.dtype_bias = A.dtype, B.dtype, None if bias is None else bias.dtype
        if any(ctx.needs_input_grad[:2]):
            ctx.tensors = (A, B)
        else:
            ctx.tensors = (None, None)

    (0.41's B is the transposed weight, hence its `.t()`; today's Linear4bit passes the weight itself.)
    """

    @staticmethod
    def forward(ctx, A, B, out=None, bias=None, state=None):  # noqa: N803 (bitsandbytes' names)
        output = torch.nn.functional.linear(A, bnb.functional.dequantize_4bit(B, state).to(A.dtype), bias)
        ctx.state = state
        ctx.tensors = (A, B) if any(ctx.needs_input_grad[:2]) else (None, None)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        _, B = ctx.tensors  # noqa: N806
        weight = bnb.functional.dequantize_4bit(B, ctx.state).to(grad_output.dtype)
        return grad_output @ weight, None, None, None, None


def _matmul_4bit_v041(A, B, quant_state, out=None, bias=None):  # noqa: N803
    return MatMul4BitV041.apply(A, B, out, bias, quant_state)


def _context_tensors(output) -> list:
    """Every tensor an autograd Function keeps on its context (`ctx.tensors`, ...), walking the graph."""
    found, seen, todo = [], set(), [output.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for value in getattr(node, "__dict__", {}).values():
            found += [t for t in (value if isinstance(value, tuple) else (value,)) if isinstance(t, torch.Tensor)]
        todo += [next_node for next_node, _ in node.next_functions]
    return found


def _kept_bytes(model, run, precision: str) -> int:
    """Bytes of the distinct storages with a SEQ dimension the layer keeps for backward, parameters excluded."""
    saved: list = []
    cpu_autocast = torch.is_autocast_enabled
    # PEFT's bitsandbytes LoRA asks CUDA's `torch.is_autocast_enabled()`: answered with the CPU's state, so the CPU
    # run takes the branch a GPU run under autocast takes (as test_lora_frozen_base.py does)
    torch.is_autocast_enabled = lambda *device: cpu_autocast(*(device or ("cpu",)))
    try:
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t), \
                torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "mixed"):
            output = run()
    finally:
        torch.is_autocast_enabled = cpu_autocast
    output = output[0] if isinstance(output, tuple) else output
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
                for t in saved + _context_tensors(output) if SEQ in t.shape}
    return sum(size for pointer, size in storages.items() if pointer not in parameters)


def _layer_kept(regime: str, precision: str, targets: tuple[str, ...], dropout: float = 0.0,
                release: str = "installed") -> int:
    """`release` "0.41": the reference MatMul4Bit, and Linear4bit's compute dtype taken from its first input
    (0.41-0.47 set `compute_type_is_set = False` whatever compute_dtype says; 0.48 trusts a given one); "0.40":
    no `set_compute_type`, every input cast to the bf16 compute dtype."""
    model = _model("sdpa", regime, precision, targets)
    inner = _inner(model)
    for module in model.modules():
        if dropout and hasattr(module, "lora_dropout"):  # PEFT's dropout, as LoraConfig(lora_dropout=...) builds
            module.lora_dropout["default"] = torch.nn.Dropout(dropout)
        if isinstance(module, bnb.nn.Linear4bit) and release != "installed":
            module.compute_type_is_set = release == "0.40"
    dtype = torch.float32 if regime == "qlora+kbit" else torch.bfloat16
    hidden = torch.randn(1, SEQ, HIDDEN, dtype=dtype, requires_grad=True)
    rotary = inner.rotary_emb(hidden, torch.arange(SEQ)[None])
    torch.manual_seed(0)
    return _kept_bytes(model, lambda: inner.layers[0](hidden, position_embeddings=rotary), precision)


def test_the_installed_bitsandbytes_keeps_no_input_of_a_4bit_linear():
    layer = bnb.nn.Linear4bit(HIDDEN, 64, bias=False, compute_dtype=torch.bfloat16, quant_type="nf4")
    layer.weight = bnb.nn.Params4bit(torch.randn(64, HIDDEN, dtype=torch.bfloat16), requires_grad=False,
                                     quant_type="nf4")._quantize("cpu")
    leaf = torch.randn(SEQ, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
    kept = _kept_bytes(layer, lambda: layer.train()(leaf * 1), "bf16")  # a non-leaf input: only ctx keeps it
    assert kept == 0
    old = _kept_bytes(layer, lambda: MatMul4BitV041.apply(leaf * 1, layer.weight, None, None,
                                                          layer.weight.quant_state), "bf16")
    assert old == 2 * SEQ * HIDDEN  # the walk sees what 0.41.1 keeps on ctx: the bf16 input
    stack = installed_stack()
    assert stack.bitsandbytes is not None and stack.bitsandbytes >= (0, 43, 2)
    today = replace(_workload("sdpa", "qlora", "bf16", ALL_LINEAR), stack=Stack(bitsandbytes=stack.bitsandbytes))
    assert not today.keeps_4bit_inputs
    assert not any(name.startswith("bitsandbytes") for name, _ in layer_activations(today).terms)


@pytest.mark.parametrize(("regime", "precision", "targets", "dropout"), [
    ("qlora", "bf16", ("q_proj", "v_proj"), 0.0),  # frozen MLP: its input and product kept by the 4-bit linears
    ("qlora", "bf16", ALL_LINEAR, 0.0),  # lora_A keeps every input already: nothing more
    ("qlora", "bf16", ALL_LINEAR, 0.1),  # dropout: lora_A keeps the dropped copy, the 4-bit linear the input
    ("qlora", "mixed", ("q_proj", "v_proj"), 0.0),
    ("qlora", "bf16+fp32", ("q_proj", "v_proj"), 0.0),  # PEFT's fp32 casts for the adapters: the input is not one
    ("qlora+kbit", "mixed", ALL_LINEAR, 0.0),  # the built-in trainer's: fp32 inputs under autocast
    ("qlora+kbit", "mixed", ("o_proj", "down_proj"), 0.0),
])
def test_the_old_4bit_linears_keep_what_the_term_adds(regime, precision, targets, dropout, monkeypatch):
    today = _layer_kept(regime, precision, targets, dropout)
    monkeypatch.setattr(bnb, "matmul_4bit", _matmul_4bit_v041)
    old = _layer_kept(regime, precision, targets, dropout, release="0.41")
    workload = replace(_workload("sdpa", regime, precision, targets), lora_dropout=dropout)
    options = {"autocast": precision == "mixed", "fp32_adapters": precision == "bf16+fp32"}
    extra = layer_activations(replace(workload, stack=Stack(bitsandbytes=(0, 41, 1))), **options).total \
        - layer_activations(workload, **options).total
    assert extra == old - today
    assert extra > 0 or targets == ALL_LINEAR and not dropout and precision == "bf16"


def test_bitsandbytes_0_40_keeps_each_linears_own_cast_of_an_fp32_input(monkeypatch):
    """0.40 has no set_compute_type: an fp32 input (k-bit prepared, under autocast) is cast to the bf16 compute
    dtype by every 4-bit linear, and each keeps its own cast."""
    monkeypatch.setattr(bnb, "matmul_4bit", _matmul_4bit_v041)
    v041 = _layer_kept("qlora+kbit", "mixed", ALL_LINEAR, release="0.41")
    v040 = _layer_kept("qlora+kbit", "mixed", ALL_LINEAR, release="0.40")
    workload = _workload("sdpa", "qlora+kbit", "mixed", ALL_LINEAR)

    def total(version):
        return layer_activations(replace(workload, stack=Stack(bitsandbytes=version)), autocast=True).total

    assert total((0, 40, 2)) - total((0, 41, 1)) == v040 - v041 != 0


def test_under_checkpointing_only_the_recomputed_layer_keeps_them():
    """Reentrant checkpointing runs forward under no_grad (MatMul4Bit keeps `(None, None)`): the term is one
    layer's, in the recompute, and not in every layer's kept boundary."""
    from accelwiz.modelspec.lookup import resolve_model

    today = _workload("sdpa", "qlora", "bf16", ("q_proj", "v_proj"))
    today = replace(today, model=resolve_model("llama-2-7b"), seq_len=1024, gradient_checkpointing=True)
    old = replace(today, stack=Stack(bitsandbytes=(0, 41, 1)))
    term = dict(layer_activations(old, fp32_adapters=False).terms)["bitsandbytes 0.41.1: 4-bit linears keep their "
                                                                   "inputs"]
    spec = old.model
    assert term == 2 * 1024 * (spec.hidden_size + spec.intermediate_size)  # the frozen MLP's input and product
    assert activation_bytes(old, fp32_adapters=False)[0] == activation_bytes(today, fp32_adapters=False)[0]
    assert recompute_bytes(old, fp32_adapters=False) - recompute_bytes(today, fp32_adapters=False) == term
