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

Under DeepSpeed there is no autocast: accelerate 1.16 sets `native_amp` only where `distributed_type` is not
DEEPSPEED (accelerator.py, `Accelerator.__init__`: "elif self.state.mixed_precision == "bf16" and
self.distributed_type not in (DistributedType.DEEPSPEED, ...)"), and DeepSpeed 0.19.8's engine casts the module's
floating parameters to fp16/bf16 itself (engine.py `_configure_distributed_model` -> `_cast_module_mixed_precision`,
which replaced the blanket module.half()/bfloat16()). So `--strategy zero1|zero2|zero3 --precision mixed` has
16-bit logits, and a model whose own loss does not upcast them (Qwen-1's remote code: `CrossEntropyLoss` on
`lm_logits`, no `.float()`) runs a 16-bit loss: `--loss-dtype fp16` (DeepSpeed's fp16) or `bf16`, the same bytes.

Refused where torch would not run it so: under autocast (`--precision mixed` on one GPU, DDP or FSDP) cross_entropy
and log_softmax are on autocast's fp32 list, so the loss is fp32 whatever the logits; with the strategy left to
the recommendation a mixed-precision run may be autocast or DeepSpeed (the strategy must be named); fp32 training
has fp32 logits; pure bf16 has bf16 logits, not fp16; `--trace` runs the model's own loss; DPO and GRPO take TRL's
log-probabilities, not this tail.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

LOSS_DTYPES = ("fp32", "bf16", "fp16")


def refuse_loss_dtype(workload: Workload, strategy: Strategy | None, *, trace: bool = False,
                      post_training: bool = False) -> None:
    """UsageError where the run cannot compute its loss in `workload.loss_dtype` (module docstring); `strategy`
    None: left to the recommendation."""
    dtype = workload.loss_dtype
    if dtype in ("fp32", "logits"):  # "logits": the model's own loss, whatever dtype the engine leaves them in
        return
    flag = f"--loss-dtype {dtype}"
    deepspeed = strategy is not None and strategy.is_deepspeed
    if workload.precision == "fp32":
        raise UsageError(f"{flag} with --precision fp32: fp32 training has fp32 logits",
                         hint="pass --precision bf16 (a bf16 model), or drop --loss-dtype")
    if workload.precision == "mixed" and strategy is None:
        raise UsageError(f"{flag} with --precision mixed and no --strategy: under autocast (one GPU, DDP, FSDP) the "
                         "loss is fp32; only DeepSpeed's 16-bit engine leaves the logits 16-bit",
                         hint="name a DeepSpeed strategy (--strategy zero2), pass --precision bf16, or drop "
                              "--loss-dtype")
    if workload.precision == "mixed" and not deepspeed:
        kind = strategy.kind if strategy is not None else "?"
        raise UsageError(f"{flag} with --precision mixed under {kind}: under autocast torch runs cross_entropy and "
                         "log_softmax in fp32 whatever the logits' dtype",
                         hint="pass --precision bf16 (a bf16 model, no autocast), a DeepSpeed --strategy, or drop "
                              "--loss-dtype")
    if workload.precision == "bf16" and dtype == "fp16":
        raise UsageError(f"{flag} with --precision bf16: a bf16 model's logits are bf16", hint="pass --loss-dtype bf16")
    if trace:
        raise UsageError(f"{flag} with --trace: the trace runs the model's own loss, which upcasts the logits to "
                         "fp32", hint="drop --trace, or --loss-dtype")
    if post_training:
        raise UsageError(f"{flag} with --kind dpo/grpo: TRL's trainers compute their own log-probabilities, not a "
                         "cross-entropy on the logits", hint="drop --loss-dtype, or use --kind sft")


def as_the_model_computes_its_loss(workload: Workload, strategy: Strategy) -> Workload:
    """`workload` with a "logits" loss dtype (the model's own loss, no upcast) made the dtype the logits have
    under `strategy`: 16-bit for a bf16 model, and for mixed precision under DeepSpeed (accelerate does not
    autocast there, and the engine casts the model: the logits come out 16-bit); fp32 under autocast (torch
    runs cross_entropy and log_softmax in fp32 whatever the logits) and in fp32 training."""
    if workload.loss_dtype != "logits":
        return workload
    sixteen = workload.precision == "bf16" or (workload.precision == "mixed" and strategy.is_deepspeed)
    return replace(workload, loss_dtype="bf16" if sixteen else "fp32")
