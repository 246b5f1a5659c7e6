"""A Gemma decoder layer after `prepare_model_for_kbit_training`, under bf16 autocast: the estimator's saved
activations against the real layer's (issue 28, the HF Gemma launch post's frozen A10G row).

That post's run (benchmarks/published/hf_blog_launch_trl_qlora.py) is NF4 QLoRA on q/k/v/o, prepared for k-bit
training (fp32 embedding and norms), without checkpointing, under the accelerate config's bf16 autocast. The CLI
reads it at 27.7 GiB on a 22.5 GiB A10G, 13.8 GiB of it the 28 layers' saved activations (about 505 MiB each at
2 x 512 tokens: the MLP stays fp32 because bitsandbytes' Linear4bit returns its fp32 input's dtype under autocast).
Gemma has no term-by-term formula of its own (the CLI calls its activations approximate), so this checks the layer
the verdict rests on: a real transformers Gemma layer (its GeGLU MLP, `1 + weight` RMSNorm and head_dim apart from
hidden/heads) with real PEFT adapters over real bitsandbytes NF4 linears, every tensor autograd saves counted once
per storage (test_lora_frozen_base.py's counting), equals `layer_activations` to the byte, less each RMSNorm's
fp32 rsqrt (4 B per token, not counted beside its 4h input).

Without LoRA dropout only: on the CPU dropout keeps a mask in the input's dtype, on CUDA a boolean one (the
estimator counts CUDA's; trace_dropout.py). The installed bitsandbytes (>= 0.43.2) keeps no 4-bit input; the run's
0.42.0 does, a term tested against 0.41.1's MatMul4Bit elsewhere (resolution/stack).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")
pytest.importorskip("bitsandbytes")

from accelwiz.estimate.activations import layer_activations  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from accelwiz.modelspec.lookup import spec_from_hf_config  # noqa: E402
from tests.estimate.test_lora_frozen_base import RANK, SEQ, _inner, _quantized, _saved  # noqa: E402

HIDDEN, HEAD_DIM = 96, 32  # 4 heads x 32 = 128 q-width apart from the hidden size, as Gemma-7B's 4,096 vs 3,072


def _config() -> object:
    config = transformers.GemmaConfig(vocab_size=512, hidden_size=HIDDEN, intermediate_size=768,
                                      num_attention_heads=4, num_key_value_heads=4, head_dim=HEAD_DIM,
                                      num_hidden_layers=1)
    config._attn_implementation = "sdpa"
    return config


def _measured(targets: tuple[str, ...]) -> int:
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    torch.manual_seed(0)
    model = _quantized(transformers.GemmaForCausalLM(_config()).to(torch.bfloat16))
    # SFTTrainer (TRL a46cd84) passes use_gradient_checkpointing=args.gradient_checkpointing: False in that run
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    model = get_peft_model(model, LoraConfig(r=RANK, target_modules=list(targets))).train()
    inner = _inner(model)
    # a layer inside the network: the fp32 embedding makes the residual stream fp32
    hidden = torch.randn(1, SEQ, HIDDEN, dtype=torch.float32, requires_grad=True)
    rotary = inner.rotary_emb(hidden, torch.arange(SEQ)[None])
    return _saved(model, lambda: inner.layers[0](hidden, position_embeddings=rotary), "mixed")


@pytest.mark.parametrize("targets", [("q_proj", "k_proj", "v_proj", "o_proj"), ("q_proj", "v_proj")])
def test_kbit_prepared_gemma_layer_under_autocast_keeps_what_the_real_layer_keeps(targets: tuple[str, ...]):
    spec = spec_from_hf_config(_config().to_dict(), name="gemma-tiny", source="test")
    workload = Workload(spec, micro_batch=1, seq_len=SEQ, regime="qlora", lora_rank=RANK, lora_targets=targets,
                        precision="mixed", attention="sdpa", kbit_prepared=True)
    estimated = layer_activations(workload, autocast=True)
    rsqrt = 4 * SEQ * 2  # the two RMSNorms' fp32 rsqrt, 4 B per token
    assert estimated.total + rsqrt == _measured(targets)
    # the fp32 MLP is the bulk: gate, up, act(gate) fp32 (the product is read by a frozen down_proj: not kept)
    assert dict(estimated.terms)["kbit-prepared: fp32 MLP activations, cos and sin"] > estimated.total / 3
