"""PEFT's LoRA adapters over a bf16 base are fp32 (issue 28): get_peft_model's default autocast_adapter_dtype=True
upcasts them (peft 0.21 tuners_utils.py `cast_adapter_dtype`), so in pure bf16 training their weights, gradients
and torch AdamW states are 4 + 4 + 8 bytes per parameter, not 2 + 2 + 4. A real PEFT model on this CPU, one step,
counted byte for byte against states.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accelwiz.estimate.states import model_states, peft_fp32_adapters
from accelwiz.estimate.step_temporaries import optimizer_step_temporaries
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import spec_from_hf_config

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

_TINY = {"model_type": "llama", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": False}


def _real_lora_bytes(**peft_kwargs: bool) -> tuple[int, int, int, int]:
    """All parameters, the adapters' gradients and AdamW states after one step of a bf16 base with LoRA, and
    the adapters' element size."""
    config = transformers.LlamaConfig(**{k: v for k, v in _TINY.items() if k != "model_type"})
    torch.manual_seed(0)
    base = transformers.LlamaForCausalLM(config).to(torch.bfloat16)  # as from_pretrained(dtype="auto") leaves it
    lora = peft.LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM")
    model = peft.get_peft_model(base, lora, **peft_kwargs)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-4, foreach=False)
    ids = torch.randint(0, _TINY["vocab_size"], (1, 16))
    model(input_ids=ids, labels=ids).loss.backward()
    size = lambda t: t.numel() * t.element_size()  # noqa: E731
    gradients = sum(size(p.grad) for p in trainable)
    optimizer.step()
    states = sum(size(state[k]) for state in optimizer.state.values() for k in ("exp_avg", "exp_avg_sq"))
    return sum(size(p) for p in model.parameters()), gradients, states, trainable[0].element_size()


def test_pure_bf16_lora_counts_peft_s_fp32_adapters() -> None:
    workload = Workload(spec_from_hf_config(_TINY, name="tiny", source="test"), regime="lora", precision="bf16")
    strategy = Strategy("single")
    weights, gradients, optimizer, width = _real_lora_bytes()
    assert width == 4  # PEFT upcast them
    states = model_states(workload, strategy)
    assert (states.weights, states.gradients, states.optimizer_states) == (weights, gradients, optimizer)
    adapters = workload.trainable_parameters
    assert gradients == 4 * adapters and optimizer == 8 * adapters  # not 2 and 4: the estimate before
    assert optimizer_step_temporaries(workload, strategy)[0] == 4 * adapters  # foreach in the states' dtype


def test_bf16_adapters_where_peft_is_told_not_to_upcast_are_deepspeeds_case() -> None:
    # TRL asks get_peft_model for bf16 adapters only under ZeRO-3 (autocast_adapter_dtype=False), where DeepSpeed
    # casts the module to bf16 anyway: the estimate's DeepSpeed path, 2 B adapters beside fp32 masters
    *_, width = _real_lora_bytes(autocast_adapter_dtype=False)
    assert width == 2
    workload = Workload(spec_from_hf_config(_TINY, name="tiny", source="test"), regime="lora", precision="bf16")
    assert not peft_fp32_adapters(workload, Strategy("zero3"))
    assert peft_fp32_adapters(workload, Strategy("single")) and peft_fp32_adapters(workload, Strategy("fsdp_full"))
    full = Workload(workload.model, precision="bf16")
    assert not peft_fp32_adapters(full, Strategy("single"))  # full fine-tuning keeps bf16 parameters
    # TRL's SFTTrainer casts a quantized model's adapters to bf16 (a Trainer/TRL load: kbit_prepared False);
    # the built-in trainer's QLoRA keeps PEFT's fp32; a script that casts them says so (adapter_dtype)
    qlora = Workload(workload.model, regime="qlora", precision="bf16")
    assert peft_fp32_adapters(qlora, Strategy("single"))
    assert not peft_fp32_adapters(replace(qlora, kbit_prepared=False), Strategy("single"))
    assert not peft_fp32_adapters(replace(workload, adapter_dtype="bf16"), Strategy("single"))
