"""The loss tail follows the transformers that trains: before 4.49 a causal LM's fp32 logits were copied for the
shifted loss (huggingface/transformers#35646 removed the copy); the resolution's `stack` gives the version (the
installed one, or `--stack transformers==VERSION`)."""

from __future__ import annotations

from dataclasses import replace
import weakref
from importlib import metadata

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from accelwiz.estimate.activations import loss_transient_bytes
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.resolved import workload_from_options
from accelwiz.resolution.stack import Stack

LLAMA = Workload(resolve_model("llama-2-7b"), micro_batch=2, seq_len=1024)
TOKENS = 2 * 1024 * 32000  # batch x seq x vocab


@pytest.mark.parametrize(("version", "copies"), [((4, 37), True), ((4, 48), True), ((4, 49), False),
                                                 ((5, 24), False), (None, False)])
def test_only_transformers_before_4_49_copies_the_shifted_logits(version, copies):
    assert replace(LLAMA, stack=Stack(transformers=version)).copies_shifted_logits is copies


def test_an_encoder_has_no_shifted_loss_to_copy():
    bert = Workload(resolve_model("bert-large"), seq_len=512, stack=Stack(transformers=(4, 27)))
    assert not bert.copies_shifted_logits
    assert loss_transient_bytes(bert) == (0, 0)


@pytest.mark.parametrize(("precision", "forward_extra"), [("mixed", 2), ("fp32", 4)])
def test_the_copy_adds_to_forward_only(precision, forward_extra):
    today = replace(LLAMA, precision=precision)
    old = replace(today, stack=Stack(transformers=(4, 38)))
    (forward, backward), (old_forward, old_backward) = loss_transient_bytes(today), loss_transient_bytes(old)
    assert (old_forward - forward, old_backward - backward) == (forward_extra * TOKENS, 0)


def _loss_4_43(logits, labels, vocab):
    """transformers 4.43's LlamaForCausalLM.forward after the head, quoted: `logits = logits.float()`, then
    `shift_logits = logits[..., :-1, :].contiguous()`, `shift_labels = labels[..., 1:].contiguous()`,
    CrossEntropyLoss on their views."""
    logits = logits.float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    return torch.nn.CrossEntropyLoss()(shift_logits.view(-1, vocab), shift_labels.view(-1))


class _LiveBytes(TorchDispatchMode):
    """Bytes of the storages the ops make, alive now and at most since `mark()` (freed when torch frees them)."""

    def __init__(self) -> None:
        super().__init__()
        self.live = self.peak = 0
        self._seen: set[int] = set()

    def existing(self, *tensors: torch.Tensor) -> None:
        self._seen |= {t.untyped_storage().data_ptr() for t in tensors}

    def mark(self) -> None:
        self.peak = self.live

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_flatten(out)[0]:
            if isinstance(tensor, torch.Tensor) and tensor.untyped_storage().data_ptr() not in self._seen:
                storage = tensor.untyped_storage()
                key, size = storage.data_ptr(), storage.nbytes()
                self._seen.add(key)
                self.live += size
                self.peak = max(self.peak, self.live)
                weakref.finalize(storage, self._free, key, size)
        return out

    def _free(self, key: int, size: int) -> None:
        self.live -= size
        self._seen.discard(key)


def _measured(loss_of) -> tuple[float, float, float]:
    """(forward peak, kept after forward, backward peak) of the loss on a bf16 head's output, in bsV bytes:
    the Trainer's way, the model's output dropped before backward."""
    batch, seq, hidden, vocab = 2, 512, 32, 2000  # long enough that the shift's one position is 0.2%
    torch.manual_seed(0)
    head = torch.nn.Linear(hidden, vocab, bias=False).to(torch.bfloat16)
    hidden_states = torch.randn(batch, seq, hidden, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, vocab, (batch, seq))
    live = _LiveBytes()
    live.existing(head.weight, hidden_states, labels)  # views of these allocate nothing
    with live:
        loss = loss_of(head(hidden_states), labels, vocab)
        forward, kept = live.peak, live.live
        live.mark()
        loss.backward()
    unit = batch * seq * vocab
    return forward / unit, kept / unit, live.peak / unit


def test_the_transient_bytes_are_what_the_real_loss_allocates():
    """Old and today's loss on real tensors: forward holds 2bsV more before 4.49 (the fp32 logits beside their
    shifted copy, where today's holds the 16-bit logits beside one fp32 copy); backward the same 8bsV over the
    kept log-softmax (the slice's full-size gradient comes after the loss's gradient is freed)."""
    from transformers.loss.loss_utils import ForCausalLMLoss

    old = _measured(_loss_4_43)
    today = _measured(lambda logits, labels, vocab: ForCausalLMLoss(logits, labels, vocab))
    (forward, backward), (old_forward, old_backward) = (
        loss_transient_bytes(replace(LLAMA, precision="bf16")),
        loss_transient_bytes(replace(LLAMA, precision="bf16", stack=Stack(transformers=(4, 43)))))
    kept = 4  # the fp32 log-softmax both keep for backward (logits_bytes)
    assert old[1] == pytest.approx(kept, abs=0.05) and today[1] == pytest.approx(kept, abs=0.05)
    assert old[0] - kept == pytest.approx(old_forward / TOKENS, abs=0.05)  # 8: fp32 logits + shifted copy
    assert today[0] - kept == pytest.approx(forward / TOKENS, abs=0.05)  # 6: 16-bit logits + fp32 copy
    assert old[2] - kept == pytest.approx(old_backward / TOKENS, abs=0.05)
    assert today[2] - kept == pytest.approx(backward / TOKENS, abs=0.05)


def test_the_resolved_workload_carries_the_installed_transformers_or_the_flags():
    installed = tuple(int(part) for part in metadata.version("transformers").split("+")[0].split(".")[:3])
    workload = workload_from_options(model="llama-2-7b", micro_batch=1, seq_len=512)
    assert workload.stack.transformers == installed
    assert not workload.copies_shifted_logits  # the installed transformers is 5.x
    old = workload_from_options(model="llama-2-7b", micro_batch=1, seq_len=512, stack=["transformers==4.37"])
    assert old.stack.transformers == (4, 37, 0) and old.copies_shifted_logits
