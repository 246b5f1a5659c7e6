"""The loss tail follows the transformers that trains: before 4.49 a causal LM's fp32 logits were copied for the
shifted loss (huggingface/transformers#35646 removed the copy); the resolution's `stack` gives the version (the
installed one, or `--stack transformers==VERSION`)."""

from __future__ import annotations

from dataclasses import replace
from importlib import metadata

import pytest

from accelwiz.estimate.activations import loss_transient_bytes
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.resolved import workload_from_options

LLAMA = Workload(resolve_model("llama-2-7b"), micro_batch=2, seq_len=1024)
TOKENS = 2 * 1024 * 32000  # batch x seq x vocab


@pytest.mark.parametrize(("version", "copies"), [((4, 37), True), ((4, 48), True), ((4, 49), False),
                                                 ((5, 24), False), (None, False)])
def test_only_transformers_before_4_49_copies_the_shifted_logits(version, copies):
    assert replace(LLAMA, transformers_version=version).copies_shifted_logits is copies


def test_an_encoder_has_no_shifted_loss_to_copy():
    bert = Workload(resolve_model("bert-large"), seq_len=512, transformers_version=(4, 27))
    assert not bert.copies_shifted_logits
    assert loss_transient_bytes(bert) == (0, 0)


@pytest.mark.parametrize(("precision", "forward_extra"), [("mixed", 2), ("fp32", 4)])
def test_the_copy_adds_to_forward_and_backward_by_batch_seq_vocab(precision, forward_extra):
    today = replace(LLAMA, precision=precision)
    old = replace(today, transformers_version=(4, 38))
    (forward, backward), (old_forward, old_backward) = loss_transient_bytes(today), loss_transient_bytes(old)
    assert (old_forward - forward, old_backward - backward) == (forward_extra * TOKENS, 4 * TOKENS)


def test_the_resolved_workload_carries_the_installed_transformers_or_the_flags():
    installed = tuple(int(part) for part in metadata.version("transformers").split("+")[0].split(".")[:3])
    workload = workload_from_options(model="llama-2-7b", micro_batch=1, seq_len=512)
    assert workload.transformers_version == installed
    assert not workload.copies_shifted_logits  # the installed transformers is 5.x
    old = workload_from_options(model="llama-2-7b", micro_batch=1, seq_len=512, stack=["transformers==4.37"])
    assert old.transformers_version == (4, 37, 0) and old.copies_shifted_logits
