"""AW316: fsdp_transformer_layer_cls_to_wrap against the model's classes (built on the meta device)."""

from __future__ import annotations

import pytest

from accelwiz.modelspec.lookup import model_with_count, resolve_model
from accelwiz.estimate.workload import Workload
from tests.rules.helpers import codes, diagnostics

FSDP = ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_auto_wrap_policy: {policy}\n"
        "  fsdp_transformer_layer_cls_to_wrap: {names}\n")


def _check(write, names: str, *, policy: str = "TRANSFORMER_BASED_WRAP", model: str = "llama-3.2-1b"):
    yaml = write("a.yaml", FSDP.format(policy=policy, names=names))
    return diagnostics(yaml, select=("AW316",), workload=Workload(resolve_model(model)))


def test_a_class_of_another_family_is_refused_with_the_models_own(write):
    [found] = _check(write, "BertLayer")
    assert "LlamaDecoderLayer" in found.message and "Could not find the transformer layer class" in found.message


@pytest.mark.parametrize("names,fires", [
    ("LlamaDecoderLayer", False),
    ("LlamaDecoderLayer,LlamaRMSNorm", False),  # any module class of the model may be named
    ("LlamaDecoderLayer, LlamaRMSNorm", True),  # split on "," without stripping: " LlamaRMSNorm"
    ("'[LlamaDecoderLayer]'", True),
])
def test_names_are_looked_up_as_the_plugin_splits_them(write, names, fires):
    assert bool(_check(write, names)) is fires


def test_silent_where_accelerate_does_not_look_the_class_up(write):
    assert not _check(write, "BertLayer", policy="SIZE_BASED_WRAP")
    yaml = write("b.yaml", FSDP.format(policy="TRANSFORMER_BASED_WRAP", names="BertLayer"))
    assert "AW316" not in codes(yaml, select=("AW316",))  # no model: nothing to compare with
    assert "AW316" not in codes(yaml, select=("AW316",), workload=Workload(model_with_count(7 * 10**9)))
