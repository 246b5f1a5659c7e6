"""What PEFT's `lora_dropout` adds to one layer's saved activations (activations.py's `lora dropout` term).

PEFT's LoRA layer (peft/tuners/lora/layer.py `Linear.forward`, bnb.py `Linear4bit.forward`) computes
`result = base_layer(x) + lora_B(lora_A(dropout(x))) * scaling`, where `dropout` is `nn.Dropout(p)` for
`lora_dropout > 0` and `nn.Identity()` for 0 (`LoraLayer.update_layer`). Per adapted linear, per element of
its input, with dropout:

* the mask: CUDA's fused `native_dropout` keeps its boolean mask for backward (1 B; trace_dropout.py);
* the dropped input, which `lora_A` keeps for its weight gradient, where without dropout it keeps `x` itself.
  A frozen base linear keeps nothing of `x` (a matmul saves its input only for the weight's gradient), so with
  dropout `x` lives on only if another op keeps it: the normalised input of the attention and of the MLP
  (a frozen RMSNorm weight keeps only itself) and the MLP's `act(gate) * up` (the product keeps its factors)
  are then freed; the attention output, which SDPA/flash keep for their own backward, is not (eager attention's
  `transpose(1, 2).contiguous()` copy is).
  LoRA under autocast (fp32 adapters over a 16-bit base) already keeps a copy without dropout: PEFT casts `x`
  to the adapter's dtype (`_cast_input_dtype`) and autocast casts it back to 16-bit for `lora_A`; dropout adds
  only the mask there. bitsandbytes' `Linear4bit` skips that cast under autocast, so QLoRA keeps the 16-bit
  dropped copy.

Not counted: the first layer's attention-input masks (its input comes from the frozen embedding and needs no
gradient, so `native_dropout` keeps no mask there; PEFT-adapted embeddings aside), under one layer's q/k/v masks.
Measured against saved tensors of the real PEFT layer (tests/estimate/test_lora_dropout.py) and the fake-tensor
trace (trace_matrix.py's LoRA-dropout rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accelwiz.modelspec.spec import Tensor
    from accelwiz.estimate.workload import Workload

# Linears that read the same input, by the module's last name: with dropout that input is no longer kept once
# every consumer is adapted (a frozen base keeps nothing). Gated decoders only; GPT-2/BERT's inputs are counted
# as kept (an over-estimate of at most the inputs' size).
_SHARED_INPUT = {
    "q_proj": "attention input", "k_proj": "attention input", "v_proj": "attention input",
    "qkv_proj": "attention input",
    "gate_proj": "mlp input", "up_proj": "mlp input", "gate_up_proj": "mlp input", "w1": "mlp input",
    "w3": "mlp input",
    "down_proj": "mlp product", "w2": "mlp product",
    "o_proj": "attention output",
}


def _input_features(workload: Workload, tensor: Tensor) -> int:
    # GPT-2's Conv1D stores its weight (in, out); nn.Linear (out, in)
    return tensor.shape[0] if workload.model.conv1d_weights else tensor.shape[1]


def _adapted(workload: Workload) -> list[Tensor]:
    from accelwiz.estimate.workload import ALL_LINEAR

    everything = workload.lora_targets == ALL_LINEAR
    return [t for t in workload.model.block_linears() if everything or t.kind in workload.lora_targets]


def lora_dropout_bytes(workload: Workload, *, autocast: bool = False) -> int:
    """Bytes one layer keeps for backward because of `lora_dropout > 0` (module docstring); 0 without it."""
    if workload.regime == "full" or workload.lora_dropout <= 0:
        return 0
    spec = workload.model
    tokens = workload.seq_len * workload.micro_batch
    adapted = _adapted(workload)

    def elements(t: Tensor) -> float:  # a routed expert sees experts_per_token / num_experts of the tokens
        share = spec.experts_per_token / max(spec.num_experts, 1) if ".experts." in t.module else 1.0
        return tokens * _input_features(workload, t) * share

    inputs = sum(elements(t) for t in adapted)
    masks = inputs  # 1 B each
    if workload.regime == "lora" and autocast:  # PEFT's fp32 cast already made the copy (module docstring)
        return int(masks)
    width = 4 if workload.precision == "fp32" else 2
    freed: dict[str, float] = {}
    for t in adapted:
        group = _SHARED_INPUT.get(t.kind)  # GPT-2 and BERT names (c_attn, query...) are in no group
        if group == "attention output" and workload.attention != "eager":
            continue  # SDPA/flash keep their output, which o_proj reads
        if group is not None:
            freed[group] = max(freed.get(group, 0.0), elements(t))
    return int(masks + width * (inputs - sum(freed.values())))
