"""`--base-dtype` is a source of its own for `weights_dtype` (resolution/sourced.py BASE_DTYPE_FLAG), not a FLAG
told apart from `--precision` by the words of its note: both flags set the one field that says the weights' dtype
as loaded, and only the base-dtype flag's value is LoRA's frozen base (`base_as_loaded`) or is refused with full
fine-tuning (estimate/refusals.py `refuse_base_dtype_flag`)."""

from __future__ import annotations

import pytest

from accelwiz.errors import UsageError
from accelwiz.estimate.resolved import to_workload
from accelwiz.modelspec.lookup import spec_from_hf_config
from accelwiz.resolution.options import flags_from_options
from accelwiz.resolution.sourced import BASE_DTYPE_FLAG, FLAG, Sourced
from accelwiz.resolution.workload import resolve_workload

_SPEC = spec_from_hf_config({"model_type": "llama", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
                             "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2},
                            name="tiny", source="test")


def _resolved(**options):
    return resolve_workload(flags=flags_from_options(micro_batch=1, seq_len=16, **options))


@pytest.mark.parametrize("base", ["fp32", "bf16", "fp16"])
def test_the_flag_sets_the_frozen_base_under_its_own_source(base: str) -> None:
    resolved = _resolved(regime="lora", precision="mixed", base_dtype=base)
    assert resolved.weights_dtype.source == BASE_DTYPE_FLAG and resolved.weights_dtype.value == base
    assert resolved.base_as_loaded() == {"base_dtype": base}
    assert to_workload(resolved, _SPEC).base_dtype == base


def test_precision_sets_the_weights_not_the_base() -> None:
    # --precision bf16 loads the whole model in bf16 for the built-in trainer: the estimator's own LoRA base applies
    resolved = _resolved(regime="lora", precision="bf16")
    assert (resolved.weights_dtype.value, resolved.weights_dtype.source) == ("bf16", FLAG)
    assert resolved.base_as_loaded() == {}


@pytest.mark.parametrize("method", ["lora", "full"])
def test_a_note_that_reads_like_the_flag_is_not_the_flag(method: str) -> None:
    # a FLAG value whose note happens to start with "--base-dtype" was taken for the flag: the note is words, the
    # source says where the value came from
    worded = Sourced("fp32", FLAG, f"{BASE_DTYPE_FLAG} is not what set this: --precision mixed")
    resolved = resolve_workload(flags={"method": method, "weights_dtype": worded})
    assert resolved.base_as_loaded() == {}
    assert to_workload(resolved, _SPEC).base_dtype is None  # neither the base's dtype nor refused


def test_full_fine_tuning_refuses_the_flag_by_its_source() -> None:
    with pytest.raises(UsageError, match=r"^--base-dtype bf16 with full fine-tuning"):
        to_workload(_resolved(base_dtype="bf16"), _SPEC)
