"""The DPO estimate against a trace of TRL's real DPOTrainer: its `compute_loss` (policy forward, reference forward
through the fused LM head) and backward on one real batch, every storage counted by category with the same
MemTracker as `estimate --trace` (accelwiz/estimate/trace.py). The model is small enough to run for real on CPU
(4 layers, hidden 256), so the tensors are real rather than fake; the categories and phases are the same.

What it checks is what estimate/posttraining.py claims: the reference is a whole second copy at the policy's
dtype, the step holds chosen and rejected together (2 × per_device_train_batch_size sequences), and the loss
tail is the fused head's tile buffer (CPU scores every position: `compact=False`)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest


def _traced_dpo_step(checkpoint: Path, tmp_path: Path) -> tuple[dict, dict, tuple[int, int], int]:
    import torch
    from datasets import Dataset
    from torch.distributed._tools.common_utils import get_untyped_storages
    from torch.utils.weak import WeakIdKeyDictionary
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM
    from trl import DPOConfig, DPOTrainer

    from accelwiz.estimate.trace import _phase_tracker

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=256, intermediate_size=512, num_hidden_layers=4,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(tmp_path / "policy")
    tokenizer.save_pretrained(tmp_path / "policy")
    text = " ".join(["word"] * 12)
    data = Dataset.from_list([{"prompt": text, "chosen": text, "rejected": text}] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = DPOConfig(output_dir=str(tmp_path / "out"), report_to="none", use_cpu=True, bf16=False,
                         per_device_train_batch_size=2, max_length=256, gradient_checkpointing=False)
        trainer = DPOTrainer(model=str(tmp_path / "policy"), args=args, train_dataset=data)
    batch = next(iter(trainer.get_train_dataloader()))
    storages = WeakIdKeyDictionary()
    for model in (trainer.model, trainer.ref_model):
        for parameter in model.parameters():
            for storage in get_untyped_storages(parameter):
                storages[storage] = True
    tracker = _phase_tracker(storages)
    with tracker:
        tracker.phase = "forward"
        loss = trainer.compute_loss(trainer.model, batch)
        tracker.phase = "backward"
        loss.backward()
    peaks = {phase: snapshot for phase, (_, snapshot) in tracker.peaks.items()}
    prompt = int((batch["completion_mask"][0] == 0).sum())
    return peaks["forward"], peaks["backward"], (prompt, batch["input_ids"].shape[1] - prompt), \
        batch["input_ids"].shape[0]


@pytest.mark.slow
def test_the_dpo_estimate_matches_a_trace_of_trls_dpo_step(checkpoint: Path, tmp_path: Path) -> None:
    from accelwiz.estimate.models import resolve_model
    from accelwiz.estimate.posttraining import PostTraining, estimate_posttraining
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

    forward, backward, (prompt, completion), sequences = _traced_dpo_step(checkpoint, tmp_path)
    assert sequences == 4  # 2 pairs: chosen and rejected concatenated into one batch
    spec = resolve_model(str(tmp_path / "policy"))
    workload = Workload(spec, micro_batch=2, seq_len=prompt + completion, precision="fp32")
    post = PostTraining("dpo", max_prompt_length=prompt, max_completion_length=completion)
    estimate = estimate_posttraining(workload, Strategy("single"), post, compact=False)
    training = estimate.training
    # the reference: a whole fp32 copy beside the policy, as the trace's parameters show
    assert forward["parameters"] == training.weights + estimate.reference_bytes == 2 * 4 * spec.num_parameters
    # forward: what it keeps and its peak transient (the reference forward's tile buffer), states aside
    states = training.weights + training.optimizer_states + estimate.reference_bytes
    estimated = dict(estimate.combined.phases)["forward"] - states
    traced = forward["activations"] + forward["temporaries"]
    print(f"forward beyond the states: estimated {estimated:,} B, traced {traced:,} B")
    assert estimated == pytest.approx(traced, rel=0.10), (estimated, traced)
    # the SFT loss tail (estimate_memory alone) misses what the fused head allocates: the test can tell them apart
    assert training.logits > 0 and dict(training.phases)["forward"] - states != pytest.approx(traced, rel=0.10)
