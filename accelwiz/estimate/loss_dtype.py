"""The dtype the loss runs in: transformers' fp32 upcast, or a loss the script computes on the 16-bit logits.

transformers' causal-LM loss upcasts the logits (5.25 `loss/loss_utils.py` `ForCausalLMLoss`: `logits =
logits.float()`), so log_softmax keeps an fp32 output of batch x tokens x vocabulary: the loss tail the estimate
counts by default (activations.py `logits_bytes`). The HF Trainer and TRL's SFTTrainer take that loss (they pass
labels to the model; TRL 1.16's `compute_loss` calls `Trainer.compute_loss`), and so does accelwiz's own trainer
(trainer/loop.py: `model(input_ids=..., labels=...)`): the resolution has nothing to read there, the loss is fp32.

Scripts that compute the loss themselves on a pure-bf16 model's logits run it in bf16: ljm565/universal-llm-trainer
(`loss = self.criterion(output.logits[:, :-1, :].reshape(-1, output.logits.size(-1)), label[:, 1:].reshape(-1))`,
src/models/llama3.py, with `self.criterion = nn.CrossEntropyLoss(...)` and no labels reaching the model, on
transformers >= 4.46, whose models no longer upcast the logits they return), or a remote-code model's own loss
without `.float()`. `--loss-dtype bf16` says so: the log-softmax the loss keeps and its gradients are 16-bit, half
the bytes (tests/estimate/test_loss_dtype.py counts them on the real loss).

Refused where torch would not run it so: under autocast (`--precision mixed`) cross_entropy and log_softmax are on
autocast's fp32 list, so the loss is fp32 whatever the logits; fp32 training has fp32 logits; `--trace` runs the
model's own loss; DPO and GRPO take TRL's log-probabilities, not this tail.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

LOSS_DTYPES = ("fp32", "bf16")


def with_loss_dtype(workload: Workload, loss_dtype: str | None, *, trace: bool = False,
                    post_training: bool = False) -> Workload:
    """`workload` with the loss in `loss_dtype` (None: as it is, transformers' fp32); UsageError where the run
    cannot compute it so (module docstring)."""
    if loss_dtype is None or loss_dtype == workload.loss_dtype:
        return workload
    if loss_dtype not in LOSS_DTYPES:
        raise UsageError(f"--loss-dtype {loss_dtype}: not one of {', '.join(LOSS_DTYPES)}",
                         hint="fp32: transformers' own loss (the default); bf16: the script's loss on the bf16 logits")
    if loss_dtype == "bf16":
        if workload.precision != "bf16":
            why = ("under autocast torch runs cross_entropy and log_softmax in fp32 whatever the logits' dtype"
                   if workload.precision == "mixed" else "fp32 training has fp32 logits")
            raise UsageError(f"--loss-dtype bf16 with --precision {workload.precision}: {why}",
                             hint="pass --precision bf16 (a bf16 model, no autocast), or drop --loss-dtype")
        if trace:
            raise UsageError("--loss-dtype bf16 with --trace: the trace runs the model's own loss, which upcasts "
                             "the logits to fp32", hint="drop --trace, or --loss-dtype")
        if post_training:
            raise UsageError("--loss-dtype bf16 with --kind dpo/grpo: TRL's trainers compute their own "
                             "log-probabilities, not a cross-entropy on the logits",
                             hint="drop --loss-dtype, or use --kind sft")
    return replace(workload, loss_dtype=loss_dtype)  # type: ignore[arg-type]
