"""`lora_dropout`: the bytes activations_lora.py counts against what autograd keeps in the real PEFT layer.

A real Llama decoder layer with PEFT LoRA adapters runs forward on this CPU (real tensors, CUDA's fused dropout
through trace_dropout.py) with `lora_dropout` 0.1 and 0.0; every tensor autograd saves is caught with
`saved_tensors_hooks` and counted once per storage. The difference is what dropout adds, and must equal the
formula to the byte: 16-bit and fp32 models, LoRA under autocast (fp32 adapters), sdpa and eager attention,
all-linear and a subset of targets. Deterministic: tensors' sizes only.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")

from accelwiz.estimate.activations_lora import lora_dropout_bytes  # noqa: E402
from accelwiz.modelspec.lookup import spec_from_hf_config  # noqa: E402
from accelwiz.estimate.resolved import to_workload  # noqa: E402
from accelwiz.estimate.trace_dropout import cuda_dropout_on_cpu  # noqa: E402
from accelwiz.estimate.workload import ALL_LINEAR, Workload  # noqa: E402
from tests.estimate.saved_storages import SavedStorages  # noqa: E402

SEQ, HIDDEN = 64, 128


def _config(attention: str) -> object:
    config = transformers.LlamaConfig(vocab_size=512, hidden_size=HIDDEN, intermediate_size=352,
                                      num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=1)
    config._attn_implementation = attention
    return config


def _saved_bytes(config: object, dropout: float, precision: str, targets: tuple[str, ...]) -> int:
    """Bytes of the distinct storages autograd keeps for one decoder layer's backward (input needing grad)."""
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    dtype = torch.float32 if precision == "fp32" else torch.bfloat16
    model = transformers.LlamaForCausalLM(config).to(dtype)
    wanted = "all-linear" if targets == ALL_LINEAR else list(targets)
    model = get_peft_model(model, LoraConfig(r=8, lora_dropout=dropout, target_modules=wanted),
                           autocast_adapter_dtype=False)
    for parameter in model.parameters():  # mixed: fp32 adapters over the 16-bit base, under autocast
        if parameter.requires_grad and precision == "mixed":
            parameter.data = parameter.data.float()
    model.train()
    inner = model.base_model.model.model
    hidden = torch.randn(1, SEQ, HIDDEN, dtype=dtype, requires_grad=True)  # a layer inside the network
    rotary = inner.rotary_emb(hidden, torch.arange(SEQ)[None])
    with cuda_dropout_on_cpu(), SavedStorages() as saved, \
            torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "mixed"):
        inner.layers[0](hidden, position_embeddings=rotary)
    return saved.bytes(model)


@pytest.mark.parametrize(("precision", "attention", "targets"), [
    ("bf16", "sdpa", ALL_LINEAR),
    ("mixed", "sdpa", ALL_LINEAR),
    ("fp32", "sdpa", ALL_LINEAR),
    ("bf16", "eager", ALL_LINEAR),
    ("bf16", "sdpa", ("q_proj", "v_proj")),
    ("bf16", "sdpa", ("o_proj", "down_proj")),
])
def test_dropout_bytes_equal_what_the_real_peft_layer_keeps(precision: str, attention: str, targets: tuple[str, ...]):
    config = _config(attention)
    measured = _saved_bytes(config, 0.1, precision, targets) - _saved_bytes(config, 0.0, precision, targets)
    spec = spec_from_hf_config(config.to_dict(), name="llama-tiny", source="test")
    workload = Workload(spec, micro_batch=1, seq_len=SEQ, regime="lora", lora_targets=targets, lora_dropout=0.1,
                        precision=precision, attention=attention)  # type: ignore[arg-type]
    assert measured > 0
    assert lora_dropout_bytes(workload, autocast=precision == "mixed") == measured


def test_no_dropout_and_full_training_add_nothing():
    spec = spec_from_hf_config(_config("sdpa").to_dict(), name="llama-tiny", source="test")
    assert lora_dropout_bytes(Workload(spec, regime="lora")) == 0
    assert lora_dropout_bytes(Workload(spec, regime="full", lora_dropout=0.1)) == 0
    with_dropout = Workload(spec, regime="qlora", lora_dropout=0.05, precision="mixed")
    assert lora_dropout_bytes(with_dropout, autocast=True) > lora_dropout_bytes(
        Workload(spec, regime="lora", lora_dropout=0.05, precision="mixed"), autocast=True)


# -- one value from the plan, the flags and the trainer's command line to PEFT's LoraConfig -------------------


def test_the_plan_and_the_flags_resolve_lora_dropout_with_its_source():
    from accelwiz.plan_file import PlanFineTuning
    from accelwiz.resolution.workload import resolve_workload

    assert resolve_workload().lora_dropout.value == 0.0  # PEFT's default, from DEFAULTS
    with pytest.raises(ValueError, match="lora_dropout"):
        PlanFineTuning(method="full", lora_dropout=0.1)
    with pytest.raises(ValueError):
        PlanFineTuning(method="lora", lora_dropout=1.0)

    class Plan:  # the two sections plan_layer reads, as PlanFile has them
        fine_tuning = PlanFineTuning(method="lora", lora_dropout=0.05)

        class training:  # noqa: N801
            micro_batch, gradient_accumulation, sequence_length, precision = 1, 1, 512, "bf16"
            optimizer, gradient_checkpointing, attention = "adamw", False, "sdpa"

    planned = resolve_workload(plan=Plan())  # type: ignore[arg-type]
    assert (planned.lora_dropout.value, planned.lora_dropout.source) == (0.05, "plan")
    flagged = resolve_workload(plan=Plan(), flags={"lora_dropout": 0.1})  # type: ignore[arg-type]
    assert (flagged.lora_dropout.value, flagged.lora_dropout.source) == (0.1, "flag")
    spec = spec_from_hf_config(_config("sdpa").to_dict(), name="llama-tiny", source="test")
    assert to_workload(flagged, spec).lora_dropout == 0.1


def test_estimate_counts_lora_dropout_and_refuses_a_probability_of_one(cli):
    import json

    def activations(*more: str) -> int:
        result = cli("estimate", "--model", "llama-2-7b", "--lora", "--seq-len", "1024", "--format", "json", *more)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)["estimate"]["sizes"]["activations"]

    from accelwiz.modelspec.lookup import resolve_model

    workload = Workload(resolve_model("llama-2-7b"), seq_len=1024, regime="lora", lora_dropout=0.1)
    added = 32 * lora_dropout_bytes(workload, autocast=True)  # 32 layers; one GPU, mixed: autocast
    assert activations("--lora-dropout", "0.1") - activations() == added
    refused = cli("estimate", "--model", "llama-2-7b", "--lora", "--lora-dropout", "1")
    assert refused.exit_code == 2 and "below 1" in refused.stderr


def test_the_trainer_flag_reaches_peft_lora_config():
    from accelwiz.trainer.finetune import apply_method
    from accelwiz.trainer.options import parse_args
    from accelwiz.trainer.settings import trainer_flags

    opts = parse_args(["--method", "lora", "--lora-dropout", "0.1"])
    assert trainer_flags(opts)["lora_dropout"] == 0.1
    with pytest.raises(SystemExit):
        parse_args(["--lora-dropout", "1.5"])
    model = transformers.LlamaForCausalLM(_config("sdpa"))
    model = apply_method(model, "lora", 8, 16, ["q_proj"], False, 0.1)
    dropouts = {type(m.lora_dropout["default"]).__name__: m.lora_dropout["default"]
                for m in model.modules() if hasattr(m, "lora_dropout")}
    assert list(dropouts) == ["Dropout"] and dropouts["Dropout"].p == 0.1
