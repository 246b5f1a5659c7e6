"""The frozen base as it is loaded (issue 28, cause 4): LoRA and QLoRA bases counted in the dtype the run's loader
leaves them in, proven against the real objects on this CPU (a tiny transformers Llama, PEFT's LoRA, autocast).

TRL loads a named model in float32 unless told otherwise: 4 bytes per frozen parameter, and under bf16 autocast
each frozen matrix's 16-bit copy kept by its matmul for backward; the estimate counted 2 bytes and no copies.
Under QLoRA, PEFT's prepare_model_for_kbit_training (which the built-in trainer calls) casts every non-quantized
parameter to fp32; the estimate counted them at 2 bytes."""

from __future__ import annotations

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl
from accelwiz.modelspec.lookup import spec_from_hf_config
from accelwiz.estimate.resolved import to_workload
from accelwiz.estimate.autocast_copies import frozen_cast_parameters
from accelwiz.estimate.frozen_base import QLORA_BYTES_PER_PARAM, frozen_base_width
from accelwiz.estimate.states import model_states
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.resolution.workload import resolve_workload

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

_TINY = {"model_type": "llama", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": False}
_SPEC = spec_from_hf_config(_TINY, name="tiny", source="test")


def _tiny(dtype: torch.dtype) -> torch.nn.Module:
    config = transformers.LlamaConfig(**{k: v for k, v in _TINY.items() if k != "model_type"})
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).to(dtype)


def _lora(model: torch.nn.Module) -> torch.nn.Module:
    """PEFT's LoRA as the estimator's defaults say it: rank 16 on all-linear, dropout 0 (get_peft_model keeps
    the adapters in fp32: autocast_adapter_dtype=True)."""
    config = peft.LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", lora_dropout=0.0)
    return peft.get_peft_model(model, config)


def _trl_lora(argv: list[str]) -> Workload:
    args = with_trl(parse_argv(argv), "sft", None, argv)
    return to_workload(resolve_workload(trainer_args=args, flags={"method": "lora"}), _SPEC)


def _bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


@pytest.mark.parametrize(("argv", "dtype"), [([], torch.float32), (["--dtype", "bfloat16"], torch.bfloat16)])
def test_a_trl_lora_base_is_counted_in_its_loaded_dtype(argv: list[str], dtype: torch.dtype) -> None:
    workload = _trl_lora(argv)
    assert workload.base_dtype == {torch.float32: "fp32", torch.bfloat16: "bf16"}[dtype]
    model = _lora(_tiny(dtype))
    frozen = [p for p in model.parameters() if not p.requires_grad]
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert sum(p.numel() for p in trainable) == workload.trainable_parameters
    assert frozen_base_width(workload, Strategy("single")) * sum(p.numel() for p in frozen) == _bytes(frozen)
    if dtype == torch.float32:  # fp32 adapters over an fp32 base: the whole model as the estimate has it
        states = model_states(workload, Strategy("single"))
        assert states.weights - states.autocast_copy == _bytes(frozen) + _bytes(trainable)


def _saved_frozen_copies(model: torch.nn.Module, checkpointing: bool) -> int:
    """Bytes of 16-bit copies of frozen weights autograd keeps after forward under bf16 autocast (one storage
    each), found by value among the tensors saved for backward."""
    frozen = [p for p in model.parameters() if not p.requires_grad and p.dim() == 2]
    casts = [p.detach().to(torch.bfloat16) for p in frozen]
    kept: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.dtype == torch.bfloat16:
            for cast in casts:
                if t.numel() == cast.numel() and t.shape in (cast.shape, cast.t().shape) and (
                        torch.equal(t, cast) or torch.equal(t, cast.t())):
                    kept[t.untyped_storage().data_ptr()] = t.numel() * 2
        return t

    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()  # as TRL does for PEFT + checkpointing
    model.train()
    ids = torch.randint(0, _TINY["vocab_size"], (1, 8))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    return sum(kept.values())


@pytest.mark.parametrize("checkpointing", [False, True])
def test_an_fp32_base_under_autocast_keeps_16bit_copies_of_its_frozen_matrices(checkpointing: bool) -> None:
    workload = Workload(model=_SPEC, seq_len=8, regime="lora", precision="mixed", base_dtype="fp32",
                        kbit_prepared=False, gradient_checkpointing=checkpointing)
    real = _saved_frozen_copies(_lora(_tiny(torch.float32)), checkpointing)
    assert real > 0 and 2 * frozen_cast_parameters(workload) == real
    # on top of the adapters' own copies, which the built-in trainer's 16-bit base has alone
    built_in = model_states(Workload(model=_SPEC, seq_len=8, regime="lora", precision="mixed",
                                     gradient_checkpointing=checkpointing), Strategy("single"))
    assert model_states(workload, Strategy("single")).autocast_copy - built_in.autocast_copy == real


@pytest.mark.parametrize("loaded", [torch.bfloat16, torch.float16])
def test_prepare_model_for_kbit_training_casts_the_non_quantized_parameters_to_fp32(loaded: torch.dtype) -> None:
    """bitsandbytes' 4-bit needs a GPU here: the model is loaded unquantized; peft's cast skips only Params4bit,
    so the parameters a 4-bit load leaves in 16 bits (embedding, norms, lm_head) end in fp32 the same way."""
    model = peft.prepare_model_for_kbit_training(_tiny(loaded), use_gradient_checkpointing=False)
    block_linears = {id(m.weight) for name, m in model.named_modules()
                     if isinstance(m, torch.nn.Linear) and ".layers." in name}
    rest = [p for p in model.parameters() if id(p) not in block_linears]
    assert {p.dtype for p in rest} == {torch.float32}
    workload = Workload(model=_SPEC, regime="qlora", precision="mixed")  # the built-in trainer: it calls it
    frozen, quantized = _SPEC.num_parameters, workload.quantized_parameters
    assert frozen - quantized == sum(p.numel() for p in rest)
    width = frozen_base_width(workload, Strategy("single"))
    assert width * (frozen - quantized) == _bytes(rest)
    weights = model_states(workload, Strategy("single"))
    assert weights.weights - weights.autocast_copy - 4 * workload.trainable_parameters == pytest.approx(
        QLORA_BYTES_PER_PARAM * quantized + _bytes(rest))


def test_trl_qlora_keeps_what_it_loaded_and_deepspeed_casts_the_base_to_16_bits() -> None:
    """TRL's SFTTrainer (1.16) does not call prepare_model_for_kbit_training: the non-quantized parameters stay
    in the loaded dtype; DeepSpeed with bf16 casts every floating parameter of the module to bf16."""
    args = with_trl(parse_argv(["--dtype", "bfloat16"]), "sft", None, ["--dtype", "bfloat16"])
    workload = to_workload(resolve_workload(trainer_args=args, flags={"method": "qlora"}), _SPEC)
    assert (workload.base_dtype, workload.kbit_prepared) == ("bf16", False)
    assert frozen_base_width(workload, Strategy("single")) == 2
    fp32_lora = _trl_lora([])
    assert frozen_base_width(fp32_lora, Strategy("single")) == 4
    assert frozen_base_width(fp32_lora, Strategy("zero2", gpus_per_node=2)) == 2
