"""Precision as the run really trains (issue 28, cause 1 and 3): each way of asking for it reaches the estimator,
and the estimator's weights, gradients and optimizer states equal the bytes of the real objects a one-step run
builds on this CPU (a tiny transformers model loaded in that dtype, torch AdamW, autocast where the run uses it).

`--precision bf16` was estimated as mixed precision (fp32 master weights: 168.5 GiB for Qwen2.5-7B at 512 tokens,
measured in pure bf16 at 73 GiB); a Trainer script on transformers 5 loads the checkpoint's dtype (bf16) while
TRL loads float32 unless told otherwise."""

from __future__ import annotations

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl
from accelwiz.modelspec.lookup import spec_from_hf_config
from accelwiz.estimate.resolved import to_workload
from accelwiz.estimate.states import model_states
from accelwiz.estimate.strategy import Strategy
from accelwiz.resolution.options import flags_from_options
from accelwiz.resolution.workload import resolve_workload

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

_TINY = {"model_type": "llama", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": False}
# --precision: (the dtype the real run loads its weights in, whether it computes under bf16 autocast)
_RUNS = {"fp32": (torch.float32, False), "mixed": (torch.float32, True), "bf16": (torch.bfloat16, False)}


def _real_bytes(dtype: torch.dtype, autocast: bool) -> tuple[int, int, int]:
    """Weights, gradients and AdamW states (exp_avg, exp_avg_sq) of one real training step."""
    config = transformers.LlamaConfig(**{k: v for k, v in _TINY.items() if k != "model_type"})
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).to(dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
    ids = torch.randint(0, _TINY["vocab_size"], (1, 16))
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    gradients = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters())
    optimizer.step()
    size = lambda t: t.numel() * t.element_size()  # noqa: E731
    states = sum(size(state[k]) for state in optimizer.state.values() for k in ("exp_avg", "exp_avg_sq"))
    return sum(size(p) for p in model.parameters()), gradients, states


@pytest.mark.parametrize("precision", sorted(_RUNS))
def test_each_precision_flag_counts_the_real_steps_bytes(precision: str) -> None:
    spec = spec_from_hf_config(_TINY, name="tiny", source="test")
    flags = flags_from_options(micro_batch=1, seq_len=16, precision=precision)
    resolved = resolve_workload(flags=flags)
    workload = to_workload(resolved, spec)
    assert workload.precision == precision  # unchanged: not rewritten to mixed
    assert resolved.weights_dtype.source == "flag" and resolved.weights_dtype.note == f"--precision {precision}"
    states = model_states(workload, Strategy("single"))
    weights, gradients, optimizer = _real_bytes(*_RUNS[precision])
    assert (states.weights - states.autocast_copy, states.gradients, states.optimizer_states) == (
        weights, gradients, optimizer)


def test_no_flag_is_the_built_in_trainers_fp32_load_under_autocast() -> None:
    resolved = resolve_workload(flags={})
    assert (resolved.precision.value, resolved.weights_dtype.value) == ("bf16", "fp32")
    assert "built-in trainer loads fp32" in resolved.weights_dtype.note


def test_a_trainer_script_trains_the_checkpoints_bf16() -> None:
    resolved = resolve_workload(trainer_args=parse_argv(["--bf16"]))
    assert resolved.weights_dtype.value == "bf16" and 'dtype="auto"' in resolved.weights_dtype.note
    spec = spec_from_hf_config(_TINY, name="tiny", source="test")
    assert to_workload(resolved, spec).precision == "bf16"


@pytest.mark.parametrize(("argv", "dtype", "precision"), [
    ([], "fp32", "mixed"),  # TRL's create_model_from_path default: float32 (trl 1.16), bf16 compute by default
    (["--dtype", "bfloat16"], "bf16", "bf16"),
    (["--model_init_kwargs", '{"dtype": "bfloat16"}'], "bf16", "bf16"),
    (["--model_init_kwargs", '{"torch_dtype": "float32"}', "--dtype", "bfloat16"], "fp32", "mixed"),
])
def test_trl_loads_float32_unless_told(argv: list[str], dtype: str, precision: str) -> None:
    args = with_trl(parse_argv(argv), "dpo", None, argv)
    resolved = resolve_workload(trainer_args=args)
    assert resolved.weights_dtype.value == dtype
    spec = spec_from_hf_config(_TINY, name="tiny", source="test")
    assert to_workload(resolved, spec).precision == precision
