"""`--loss-dtype bf16`: a loss the script computes on the bf16 logits keeps half of transformers' fp32 loss tail.

The real losses run on this CPU: transformers' `ForCausalLMLoss` (upcasts the logits) and universal-llm-trainer's
`nn.CrossEntropyLoss()(logits[:, :-1, :].reshape(-1, V), label[:, 1:].reshape(-1))` on bf16 logits. What forward
leaves for backward is caught with `saved_tensors_hooks`; the live bytes of the loss's forward and backward
together with torch's MemTracker (which follows every storage the ops create and free). Both must be what
activations.py counts: `logits_bytes` kept, `loss_transient_bytes` on top at the forward and backward peaks.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from accelwiz.cli import app  # noqa: E402
from accelwiz.estimate.activations import logits_bytes, loss_transient_bytes  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from accelwiz.modelspec.lookup import resolve_model  # noqa: E402

BATCH, SEQ, VOCAB = 2, 256, 3000


def _transformers_loss(logits, labels):
    from transformers.loss.loss_utils import ForCausalLMLoss

    return ForCausalLMLoss(logits, labels, VOCAB)


def _scripts_loss(logits, labels):  # universal-llm-trainer src/models/llama3.py, as written
    return torch.nn.CrossEntropyLoss()(logits[:, :-1, :].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


def _measured(loss_fn) -> tuple[int, int]:
    """(bytes the loss keeps for backward, peak live bytes over the loss's forward and backward) on bf16 logits."""
    from torch.distributed._tools.mem_tracker import MemTracker

    torch.manual_seed(0)
    head_output = torch.randn(BATCH, SEQ, VOCAB, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, VOCAB, (BATCH, SEQ))
    saved: list = []
    tracker = MemTracker()
    with tracker:
        logits = head_output * 1  # the LM head's output: a new tensor, freed after the loss (as the script drops it)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            loss = loss_fn(logits, labels)
        del logits
        loss.backward()
    kept = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved if t.numel() > SEQ * BATCH}
    # the leaf's own gradient (2 B per logit: the LM head's backward) comes once the loss tail is freed
    peak = sum(stats["Total"] for stats in tracker.get_tracker_snapshot("peak").values())
    return sum(kept.values()), peak


def _workload(loss_dtype: str) -> Workload:
    spec = replace(resolve_model("llama-3.2-1b"), vocab_size=VOCAB)
    return Workload(spec, micro_batch=BATCH, seq_len=SEQ, precision="bf16", loss_dtype=loss_dtype)  # type: ignore[arg-type]


@pytest.mark.parametrize(("loss_dtype", "loss_fn"), [("fp32", _transformers_loss), ("bf16", _scripts_loss)])
def test_the_loss_tail_is_what_the_real_loss_keeps(loss_dtype, loss_fn) -> None:
    kept, peak = _measured(loss_fn)
    workload = _workload(loss_dtype)
    forward, backward = loss_transient_bytes(workload)
    # the script's shift drops one position of each sample: (SEQ - 1) / SEQ of the logits
    assert kept == pytest.approx(logits_bytes(workload), rel=1 / SEQ)
    assert peak == pytest.approx(logits_bytes(workload) + max(forward, backward), rel=1 / SEQ)


def test_a_bf16_loss_keeps_half_and_peaks_at_half() -> None:
    fp32, bf16 = _measured(_transformers_loss), _measured(_scripts_loss)
    assert bf16[0] < 0.51 * fp32[0] and bf16[1] < 0.51 * fp32[1]
    assert logits_bytes(_workload("bf16")) * 2 == logits_bytes(_workload("fp32"))


def _estimate(*extra: str) -> object:
    return CliRunner().invoke(app, ["estimate", "--model", "llama-3.1-8b", "--system", "1xH100-80GB", "--strategy",
                                    "single", "--lora", "--micro-batch", "2", "--seq-len", "8192",
                                    "--gradient-checkpointing", "--format", "json", *extra])


def test_the_flag_lowers_the_peak_by_the_loss_tail_it_halves() -> None:
    import json

    fp32, bf16 = _estimate("--precision", "bf16"), _estimate("--precision", "bf16", "--loss-dtype", "bf16")
    assert fp32.exit_code == 0 and bf16.exit_code == 0, fp32.output + bf16.output
    before, after = (json.loads(r.stdout)["estimate"]["peak"]["allocated"] for r in (fp32, bf16))
    tokens = 2 * 8192 * 128_256
    assert before - after == (4 + 8 - 2 - 4) * tokens  # the backward peak: kept + gradients, fp32 vs bf16
    assert "bf16 (a loss on the bf16 logits" in bf16.stdout


def _deepspeed(*extra: str) -> object:
    return CliRunner().invoke(app, ["estimate", "--model", "llama-3.1-8b", "--system", "1xH100-80GB", "--qlora",
                                    "--precision", "mixed", "--micro-batch", "2", "--seq-len", "8192",
                                    "--gradient-checkpointing", "--format", "json", *extra])


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_deepspeeds_16_bit_engine_runs_a_16_bit_loss_under_mixed(dtype) -> None:
    """No autocast under DeepSpeed (loss_dtype.py): --precision mixed with a ZeRO strategy takes a 16-bit loss,
    the same bytes for fp16 and bf16; the same loss on one GPU (autocast) or with the strategy left open is
    refused."""
    import json

    fp32, sixteen = _deepspeed("--strategy", "zero2"), _deepspeed("--strategy", "zero2", "--loss-dtype", dtype)
    assert fp32.exit_code in (0, 1) and sixteen.exit_code in (0, 1), fp32.output + sixteen.output
    before, after = (json.loads(r.stdout)["estimate"]["peak"]["allocated"] for r in (fp32, sixteen))
    assert before - after == (4 + 8 - 2 - 4) * 2 * 8192 * 128_256
    for refused, said in ((("--strategy", "single"), "under single"), ((), "no --strategy")):
        result = _deepspeed(*refused, "--loss-dtype", dtype)
        assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("extra", "said"), [
    (("--precision", "mixed"), "autocast"),
    (("--precision", "fp32"), "fp32 logits"),
    (("--precision", "bf16", "--trace"), "model's own loss"),
    (("--precision", "bf16", "--kind", "dpo"), "TRL"),
    (("--precision", "bf16", "--loss-dtype", "fp16"), "a bf16 model's logits are bf16"),
    (("--precision", "bf16", "--loss-dtype", "fp8"), "invalid loss_dtype `fp8`"),
])
def test_what_torch_would_not_run_is_refused_in_one_line(extra, said) -> None:
    dtype = () if "--loss-dtype" in extra else ("--loss-dtype", "bf16")
    result = _estimate(*extra, *dtype)
    assert result.exit_code == 2, result.output
    assert said in result.output and "Traceback" not in result.output


def _loss_tail(cli, *flags: str) -> int:
    result = cli("estimate", "--model", "Qwen/Qwen-1_8B", "--system", "1xA100-80GB", "--qlora", "--micro-batch", "1",
                 "--seq-len", "4096", "--gradient-checkpointing", *flags, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["estimate"]["per_gpu_bytes"]["logits"]


def test_a_model_whose_own_loss_does_not_upcast_computes_it_in_the_logits_dtype(cli):
    """Qwen-1's remote code (ModelSpec.loss_upcasts_logits False) takes CrossEntropyLoss on lm_logits as they are:
    16-bit under DeepSpeed's 16-bit engine (no autocast), fp32 under autocast; a --loss-dtype given wins."""
    zero2 = _loss_tail(cli, "--strategy", "zero2", "--precision", "mixed")
    assert zero2 * 2 == _loss_tail(cli, "--strategy", "zero2", "--precision", "mixed", "--loss-dtype", "fp32")
    assert _loss_tail(cli, "--strategy", "single", "--precision", "mixed") == 2 * zero2
    assert _loss_tail(cli, "--strategy", "single", "--precision", "bf16") == zero2
