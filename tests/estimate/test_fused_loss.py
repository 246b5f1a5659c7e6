"""`--loss-kernel liger`: Liger's fused linear cross-entropy keeps no logits; what it keeps and makes is counted.

Liger is Triton and is not installed here, so its forward is re-implemented in torch, line for line with
liger-kernel 0.8.2's `fused_linear_cross_entropy_forward` (the same chunk size, the same tensors allocated, kept
and freed); only the Triton kernel, which overwrites each chunk's logits with their gradient in place, runs here
row by row with one row's fp32 scratch. The run is measured with torch's MemTracker and saved_tensors_hooks, as
tests/estimate/test_loss_dtype.py measures the real loss, and must be what fused_loss.py counts.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from accelwiz.cli import app  # noqa: E402
from accelwiz.estimate.activations import logits_bytes, loss_transient_bytes  # noqa: E402
from accelwiz.estimate.fused_loss import chunk_rows  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from accelwiz.modelspec.lookup import resolve_model  # noqa: E402

BATCH, SEQ, VOCAB, HIDDEN = 2, 256, 3000, 64


def _kernel_in_place(logits: torch.Tensor, target: torch.Tensor, loss: torch.Tensor, n_valid: int) -> None:
    """liger_cross_entropy_kernel's effect (mean reduction): each row's loss, and the row overwritten by the
    loss's gradient, softmax - onehot over the valid rows, computed in fp32 (one row of scratch at a time)."""
    for r in range(logits.shape[0]):
        row = logits[r]
        x = row.float()  # the kernel's fp32 registers: one row
        lse = torch.logsumexp(x, 0)
        if target[r] != -100:
            loss[r] = (lse - x[target[r]]) / n_valid
        x.sub_(lse).exp_()
        if target[r] != -100:
            x[target[r]] -= 1
        row.copy_(x.div_(n_valid) if target[r] != -100 else x.zero_())


def _liger_forward(_input: torch.Tensor, weight: torch.Tensor, target: torch.Tensor):
    """fused_linear_cross_entropy_forward, liger-kernel 0.8.2 lines 64-289 (no bias, ce_weight, softcap or
    z-loss; accum_dtype None; the CPU takes the `grad_weight += torch.mm(...).float()` branch, line 257)."""
    BT, H = _input.shape
    V = weight.shape[0]
    chunk_size = chunk_rows(BT, V, H)
    num_chunks = -(-BT // chunk_size)
    grad_input = torch.zeros_like(_input)
    grad_weight = torch.zeros_like(weight) if weight.requires_grad else None
    loss_1d = torch.zeros(BT, dtype=torch.float32)
    target_mask = target != -100
    n_valid = int(target_mask.sum().item())
    for chunk_id in range(num_chunks):
        start, end = chunk_id * chunk_size, min((chunk_id + 1) * chunk_size, BT)
        _input_chunk = _input[start:end]
        logits_chunk = _input_chunk @ weight.t()
        logits_chunk = logits_chunk.contiguous()
        _kernel_in_place(logits_chunk, target[start:end], loss_1d[start:end], n_valid)
        grad_logits_chunk = logits_chunk
        grad_input[start:end] = grad_logits_chunk @ weight
        if grad_weight is not None:
            grad_weight += torch.mm(grad_logits_chunk.t(), _input_chunk).float()
    loss = torch.sum(loss_1d)
    return loss, grad_input, grad_weight


class _FusedLinearCrossEntropy(torch.autograd.Function):
    """LigerFusedLinearCrossEntropyFunction (lines 339-487) for reduction mean: the gradients are made in forward
    and saved; backward scales them in place when the upstream gradient is not 1 and returns them."""

    @staticmethod
    def forward(ctx, _input, weight, target):
        loss, grad_input, grad_weight = _liger_forward(_input, weight, target)
        ctx.save_for_backward(grad_input.detach(), grad_weight.detach() if grad_weight is not None else None)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        grad_input, grad_weight = ctx.saved_tensors
        if not torch.equal(grad_output, torch.tensor(1.0)):
            grad_input.mul_(grad_output)
            if grad_weight is not None:
                grad_weight.mul_(grad_output)
        return grad_input, grad_weight, None


def _measured(dtype: torch.dtype, *, head_trains: bool) -> tuple[int, int, float]:
    """(bytes saved for backward, peak live bytes over forward and backward, the loss) of the fused loss on
    hidden states and an lm_head weight in `dtype`; the labels padded and shifted as LigerForCausalLMLoss does."""
    from torch.distributed._tools.mem_tracker import MemTracker

    torch.manual_seed(0)
    hidden = torch.randn(BATCH, SEQ, HIDDEN, dtype=dtype, requires_grad=True)
    weight = (torch.randn(VOCAB, HIDDEN, dtype=dtype) / 8).requires_grad_(head_trains)
    labels = torch.randint(0, VOCAB, (BATCH, SEQ))
    shift_labels = torch.nn.functional.pad(labels, (0, 1), value=-100)[..., 1:].contiguous().view(-1)
    kept: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:  # a reference held here would make AccumulateGrad copy the gradient
        kept[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    tracker = MemTracker()
    with tracker:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = _FusedLinearCrossEntropy.apply(hidden.view(-1, HIDDEN), weight, shift_labels)
        loss.backward()
    peak = sum(stats["Total"] for stats in tracker.get_tracker_snapshot("peak").values())
    peak -= sum(t.untyped_storage().nbytes() for t in (hidden, weight, shift_labels))  # the inputs the ops read
    reference = torch.nn.functional.cross_entropy((hidden.detach().view(-1, HIDDEN) @ weight.detach().t()).float(),
                                                  shift_labels, ignore_index=-100)
    return sum(kept.values()), peak, float(loss.detach() - reference)


def _workload(precision: str, regime: str) -> Workload:
    spec = replace(resolve_model("llama-3.2-1b"), vocab_size=VOCAB, hidden_size=HIDDEN)
    return Workload(spec, micro_batch=BATCH, seq_len=SEQ, precision=precision, regime=regime,  # type: ignore[arg-type]
                    loss_kernel="liger")


# one row's fp32 scratch of the emulated Triton kernel (x, and logsumexp's own temporaries): not Liger's
_SCRATCH = 4 * 4 * VOCAB


@pytest.mark.parametrize(("dtype", "precision", "regime"), [(torch.bfloat16, "bf16", "full"),
                                                            (torch.float32, "fp32", "full"),
                                                            (torch.bfloat16, "bf16", "lora")])
def test_what_the_fused_loop_keeps_and_peaks_at_is_counted(dtype, precision, regime) -> None:
    kept, peak, error = _measured(dtype, head_trains=regime == "full")
    workload = _workload(precision, regime)
    forward, backward = loss_transient_bytes(workload)
    assert abs(error) < 0.05  # the re-implementation computes the cross-entropy (bf16 logits: ~1e-2)
    # saved for backward: the input gradient (the loss tail) and the lm_head's gradient (backward's transient)
    assert kept == logits_bytes(workload) + backward
    assert 0 <= peak - (logits_bytes(workload) + max(forward, backward)) <= _SCRATCH


def test_the_chunk_is_livers_formula() -> None:
    # next_power_of_2(cdiv(BT, cdiv(V, H))): the comment's own example (lines 62-63), and Qwen2.5-7B at 8192 tokens
    assert chunk_rows(4096 * 4, 32000, 4096) == 2048
    assert chunk_rows(8192, 152_064, 3584) == 256  # 152064 / 3584 -> 43; 8192 / 43 -> 191 -> 256


def _estimate(*extra: str) -> object:
    return CliRunner().invoke(app, ["estimate", "--model", "qwen2.5-7b", "--system", "8xH100-80GB", "--seq-len",
                                    "8192", "--strategy", "zero2", "--gradient-checkpointing", "--format", "json",
                                    *extra])


def test_the_flag_replaces_the_loss_tail_by_the_fused_loss() -> None:
    standard, liger = _estimate(), _estimate("--loss-kernel", "liger")
    assert standard.exit_code == 0 and liger.exit_code == 0, standard.output + liger.output
    before, after = (json.loads(r.stdout)["estimate"] for r in (standard, liger))
    tokens, vocab, hidden = 8192, 152_064, 3584
    assert before["sizes"]["logits"] == 4 * tokens * vocab and after["sizes"]["logits"] == 2 * tokens * hidden
    assert after["peak"]["allocated"] < before["peak"]["allocated"]
    assert any("Liger's fused linear cross-entropy" in a for a in after["assumptions"])


@pytest.mark.parametrize(("extra", "said"), [
    (("--trace",), "--loss-kernel liger with --trace"),
    (("--kind", "dpo"), "--loss-kernel liger with --kind dpo: in TRL 1.16's DPOTrainer Liger's fused loss is off"),
    (("--precision", "bf16", "--loss-dtype", "bf16"), "--loss-kernel liger with --loss-dtype bf16"),
    (("--lora", "--lora-target", "q_proj", "--lora-target", "lm_head"), "with LoRA on lm_head"),
])
def test_what_cannot_run_is_refused_in_one_line(extra, said) -> None:
    args = ["estimate", "--model", "qwen2.5-7b", "--system", "8xH100-80GB", "--seq-len", "1024", "--loss-kernel",
            "liger", *extra]
    if "--strategy" not in extra:
        args += ["--strategy", "zero2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert said in result.output and "Traceback" not in result.output


def test_a_model_liger_has_no_fused_loss_for_is_refused_from_the_flag() -> None:
    result = CliRunner().invoke(app, ["estimate", "--model", "gpt2", "--system", "1xH100-80GB", "--loss-kernel",
                                      "liger"])
    assert result.exit_code == 2 and "Liger has no fused loss for" in result.output and "gpt2" in result.output


def test_check_takes_the_flag() -> None:
    result = CliRunner().invoke(app, ["check", "--model", "qwen2.5-7b", "--loss-kernel", "nope"])
    assert result.exit_code == 2 and "invalid loss_kernel `nope`" in result.output


def test_trls_fused_head_keeps_no_logits_and_one_tile_at_a_time_as_trl_runs_it():
    """TRL 1.16's fused LM head on CPU, patched as its trainers patch it (entropy requested): the forward saves the
    hidden states, the weight and, per scored position, the int64 target and the fp32 log-normaliser and entropy --
    no [tokens x vocab] logits and no vocabulary tile -- which is what the estimate's "trl-fused-head" kernel keeps
    (`fused_head_kept`). On a CPU every position is scored (no Triton: `compact` False), B x (S - 1) of them."""
    import torch
    from trl.kernels.chunked_logprob import ChunkedLogProbFunction  # noqa: F401 (the class the head runs)
    from trl.trainer.utils import add_fused_lm_head

    from accelwiz.estimate.trl_fused_head import FUSED_VOCAB, fused_head_kept

    assert FUSED_VOCAB == __import__("trl.trainer.utils", fromlist=["x"])._CHUNKED_LOGPROB_CHUNK_SIZE
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=40_000, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=4)
    model = LlamaForCausalLM(config)
    add_fused_lm_head(model, outputs=("log_probs", "entropy"))  # SFT, DPO and GRPO all ask for the entropy
    tokens = torch.randint(0, config.vocab_size, (2, 48))
    saved: list[torch.Tensor] = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        out = model(input_ids=tokens, labels=tokens, fused_lm_head=True)
    vocab_wide = [t for t in saved if t.dim() >= 1 and t.shape[-1] in (config.vocab_size, FUSED_VOCAB)]
    assert out.log_probs.shape[0] == 2 and saved and not vocab_wide
    positions = 2 * 47  # the shifted labels: every position but each sequence's last
    per_position = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved
                    if t.dim() == 1 and t.numel() == positions}
    assert sorted(per_position.values()) == [4 * positions, 4 * positions, 8 * positions]  # log_z, entropy, target
    workload = Workload(resolve_model("llama-3.2-1b"), micro_batch=2, seq_len=48, loss_kernel="trl-fused-head",
                        scored_positions_per_sequence=47)
    assert fused_head_kept(workload) == sum(per_position.values())
