"""ZeRO-3's gathered parameters: what DeepSpeed keeps gathered beyond the module in use, from its release rule.

DeepSpeed's `PartitionedParameterCoordinator` (runtime/zero/partitioned_param_coordinator.py, 0.19.8) gathers
each module's parameters before it runs, prefetches up to a bucket ahead, and releases a module's parameters
after it runs unless they are used again within `stage3_max_reuse_distance` elements of its recorded trace.
`zero3_gathered_working_set` replays that rule over the model's module order; memory.py counts the largest
module (buffers.py) and adds what is kept beyond it at the forward→backward turn and during backward.

Prefetching keeps more than the rule alone (`_prefetch_held`): the prefetch cursor runs ahead of the modules
and a parameter it has passed is not released, so the gathered set grows to `stage3_max_live_parameters`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelwiz.vocab import GIB

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload
    from accelwiz.modelspec.spec import ModelSpec
    from accelwiz.modelspec.tensors import Tensor

# DeepSpeed defaults (runtime/zero/config.py, 0.19.8): buckets are element counts.
REDUCE_BUCKET_ELEMENTS = 500_000_000
PREFETCH_BUCKET_ELEMENTS = 50_000_000
PARAM_PERSISTENCE_THRESHOLD = 100_000
MAX_LIVE_PARAMETERS = 1_000_000_000  # stage3_max_live_parameters: bounds what prefetching may gather
MAX_REUSE_DISTANCE = 1_000_000_000  # stage3_max_reuse_distance: keeps a parameter gathered until its reuse
_LAYER_INDEX = re.compile(r"(?:^|\.)(?:layers|layer|h)\.(\d+)\.")



def _bucket(value: int | str | None, default: int, auto: float) -> float:
    """A ZeRO bucket or threshold: as written, "auto" as the HF Trainer and accelerate fill it from the hidden
    size (transformers integrations/deepspeed.py: reduce_bucket_size h², stage3_prefetch_bucket_size 0.9·h²,
    stage3_param_persistence_threshold 10·h), else DeepSpeed's default."""
    if value == "auto":
        return float(int(auto))
    return float(default if value is None else value)


def reduce_bucket_elements(workload: Workload, strategy: Strategy) -> float:
    """ZeRO's reduce bucket: DeepSpeed allocates `reduce_bucket_size` elements whatever the trainable count
    (stage3.py `bucket.buffer = torch.empty(self.reduce_bucket_size, ...)` at init, stage_1_and_2.py
    `setup_buckets` in backward), so LoRA gets the whole bucket too."""
    hidden = workload.model.hidden_size
    return _bucket(strategy.zero_reduce_bucket_size, REDUCE_BUCKET_ELEMENTS, hidden * hidden)


def persistence_threshold(workload: Workload, strategy: Strategy) -> float:
    """stage3_param_persistence_threshold: parameters of at most this many elements stay gathered (persistent)."""
    return _bucket(strategy.zero3_param_persistence_threshold, PARAM_PERSISTENCE_THRESHOLD,
                   10 * workload.model.hidden_size)


def zero3_prefetch_elements(workload: Workload, strategy: Strategy) -> float:
    """What one prefetch may gather: the bucket, bounded by `stage3_max_live_parameters`."""
    hidden = workload.model.hidden_size
    bucket = _bucket(strategy.zero3_prefetch_bucket_size, PREFETCH_BUCKET_ELEMENTS, 0.9 * hidden * hidden)
    limit = strategy.zero3_max_live_parameters
    return float(min(bucket, MAX_LIVE_PARAMETERS if limit is None else limit))


def zero3_gathered_buffer_bytes(workload: Workload, strategy: Strategy) -> float:
    """ZeRO-3's gathering as buffers.py holds it: the largest module's gathered bytes at their most
    (`_largest_module_copies`) and one prefetch bucket. None of it exists in the optimizer step: stage3.py `step`
    starts with `_partition_all_parameters()` (memory.py leaves it out of that phase)."""
    if strategy.kind != "zero3":
        return 0.0
    width = workload.compute_width
    prefetch = 0.0 if _gathers_in_place(strategy) else zero3_prefetch_elements(workload, strategy)
    return _largest_module_copies(workload, strategy) * width * workload.model.largest_layer_parameters + (
        width * prefetch)


def _gathers_in_place(strategy: Strategy) -> bool:
    """One rank with its partitions on the GPU: a gathered parameter is its partition (partition_parameters.py,
    0.19.8: one rank takes `_no_gather_coalesced`, and `NoGatherHandle` sets `param.data =
    ds_tensor.data.to(device)`, which returns the partition itself), so gathering adds no bytes."""
    return strategy.world_size == 1 and strategy.offload_param == "none"


def _largest_module_copies(workload: Workload, strategy: Strategy) -> int:
    """How many copies of the largest module's bytes its gathering holds at once (DeepSpeed 0.19.8).

    Several ranks: the coalesced all-gather fills one flat buffer and `AllGatherCoalescedHandle.wait` copies each
    parameter out of it (`torch.cat`), two copies at the wait, as many as the gathered parameter and its full
    gradient later in backward. One rank: `NoGatherHandle` copies an offloaded partition to the GPU (one copy)
    and uses a partition already there (none). The full gradient (before the reduce partitions it) exists only in
    full fine-tuning: under LoRA/QLoRA the largest module (the embedding or the LM head) is frozen, and stage3.py
    `create_reduce_and_remove_grad_hooks` hooks only parameters with `requires_grad` (the adapters' gradients
    are the trainable states').
    """
    gradient = 1 if workload.regime == "full" else 0
    if strategy.world_size > 1:
        return 2
    return gradient + (0 if _gathers_in_place(strategy) else 1)


def zero3_kept_bytes(workload: Workload, strategy: Strategy) -> tuple[float, float, str]:
    """ZeRO-3's gathered parameter bytes beyond the largest module (which buffers.py counts): at the
    forward→backward turn, and at their most over the trace (for the backward's recomputation phase).

    Parameters kept for reuse are never released to honour `stage3_max_live_parameters`: DeepSpeed checks that
    limit only before prefetching. Prefetching fills the gathered set up to that limit whatever the reuse
    distance (`_prefetch_held`), so what is kept is the larger of the two.
    """
    if strategy.kind != "zero3" or _gathers_in_place(strategy):  # kept parameters are their partitions
        return 0.0, 0.0, ""
    gathered = zero3_gathered_working_set(workload, strategy)
    held = _prefetch_held(workload, strategy)
    turn = max(0.0, max(gathered.turn, held) - gathered.largest_module)
    most = max(0.0, max(gathered.peak, held) - gathered.largest_module)
    if not (turn or most):
        return 0.0, 0.0, ""
    reuse = strategy.zero3_max_reuse_distance
    live = MAX_LIVE_PARAMETERS if strategy.zero3_max_live_parameters is None else strategy.zero3_max_live_parameters
    return turn, most, (
        f"ZeRO-3 reuse: {max(gathered.turn, held) / GIB:.2f} GiB of parameters stay gathered from the end of forward "
        f"into backward, {max(gathered.peak, held) / GIB:.2f} GiB at most (stage3_max_reuse_distance "
        f"{MAX_REUSE_DISTANCE if reuse is None else reuse:.3g} elements keeps {gathered.turn / GIB:.2f} GiB; "
        f"prefetching holds up to stage3_max_live_parameters {live:.3g} elements, {held / GIB:.2f} GiB)"
    )


def _prefetch_held(workload: Workload, strategy: Strategy) -> float:
    """What ZeRO-3's prefetching keeps gathered once the trace is recorded: the non-persistent parameters up to
    `stage3_max_live_parameters` elements (the whole model where it is smaller); 0 without prefetching.

    DeepSpeed (partitioned_param_coordinator.py `fetch_sub_module`, 0.13.1 to 0.19.8 alike) prefetches at every
    traced module, container modules included, up to a bucket of not-yet-gathered elements, so its cursor in
    the parameter trace runs ahead of the modules; each entry it passes marks the parameter as fetched for that
    later use, and `__params_to_release` keeps a parameter so marked. The only bound is `max_params_to_prefetch
    = min(max_live - available, bucket)`. A real engine with parameter offload on this CPU holds min(limit, model)
    gathered or in flight at the turn, with any reuse distance (tests/estimate/test_zero3_max_live_engine.py).
    """
    if zero3_prefetch_elements(workload, strategy) <= 0:
        return 0.0
    threshold = persistence_threshold(workload, strategy)
    width = float(workload.compute_width)
    numel = size = 0.0
    for t in workload.model.tensors():
        if t.numel > threshold:
            traversed, gathered = _tensor_sizes(workload, t, width)
            numel, size = numel + traversed, size + gathered
    limit = strategy.zero3_max_live_parameters
    limit = MAX_LIVE_PARAMETERS if limit is None else limit
    return size * min(1.0, limit / numel) if numel else 0.0


@dataclass(frozen=True)
class ZeroGathered:
    """ZeRO-3's gathered parameter bytes (16-bit; fp32 in fp32 training), persistent small parameters aside."""

    peak: float  # the most gathered at once over forward and backward (the module in use included)
    largest_module: float  # the largest single module's parameters
    turn: float  # kept gathered between the end of forward and the start of backward


def zero3_gathered_working_set(workload: Workload, strategy: Strategy) -> ZeroGathered:
    """ZeRO-3's gathered parameter bytes over forward and backward, from DeepSpeed's release rule
    (partitioned_param_coordinator.py, 0.19.8).

    After a module runs, `__params_to_release` keeps each of its parameters gathered when the same parameter
    is used again within `stage3_max_reuse_distance` elements of the recorded module trace (the numel of the
    modules in between, 1e9 by default). The trace is forward, then backward in reverse (with gradient
    checkpointing each layer's forward again before its backward): at the forward→backward turn the last
    modules of forward are reused within a short distance, so the trailing ~distance/2 elements (a tied LM
    head at once) stay gathered across the turn. Small parameters (≤ stage3_param_persistence_threshold) are
    persistent and counted apart. Prefetching adds at most `stage3_prefetch_bucket_size` elements while fewer
    than `stage3_max_live_parameters` are gathered (counted by the caller).
    """
    reuse = strategy.zero3_max_reuse_distance if strategy.zero3_max_reuse_distance is not None else MAX_REUSE_DISTANCE
    modules = _modules(workload, strategy)
    forward = _forward_order(workload.model, modules)
    trace = forward + _backward_order(forward, modules, workload.gradient_checkpointing)
    peak, turn = _replay(trace, modules, reuse, len(forward))
    return ZeroGathered(peak, max(size for _, size in modules.values()), turn)


def _modules(workload: Workload, strategy: Strategy) -> dict[str, list[float]]:
    """Per module, in forward order: [numel DeepSpeed traverses, gathered bytes of its non-persistent params]."""
    threshold = persistence_threshold(workload, strategy)
    width = float(workload.compute_width)
    modules: dict[str, list[float]] = {}
    for t in workload.model.tensors():
        numel, size = _tensor_sizes(workload, t, width)
        entry = modules.setdefault(t.module, [0.0, 0.0])
        entry[0] += numel
        if t.numel > threshold:
            entry[1] += size
    return modules


def _tensor_sizes(workload: Workload, tensor: Tensor, width: float) -> tuple[float, float]:
    """A parameter's numel as DeepSpeed traverses it and its gathered bytes (`--params` scaling applied)."""
    scale = workload.model.override_scale
    if workload.regime == "qlora" and tensor.linear and _LAYER_INDEX.search(tensor.module):
        from accelwiz.estimate.frozen_base import QLORA_BYTES_PER_PARAM

        size = tensor.numel * scale * QLORA_BYTES_PER_PARAM  # NF4 packed in 16-bit quant storage
        return size / 2, size
    return tensor.numel * scale, tensor.numel * scale * width


def _forward_order(spec: ModelSpec, modules: dict[str, list[float]]) -> list[str]:
    """The modules as forward runs them; a tied LM head is the embedding's parameter used again at the end."""
    forward = list(modules)
    names = {t.module for t in spec.tensors()}
    if spec.tie_word_embeddings and "lm_head" not in names:
        embedding = next((t.module for t in spec.tensors() if t.shape and t.shape[0] == spec.vocab_size), None)
        if embedding is not None:
            forward.append(embedding)
    return forward


def _backward_order(forward: list[str], modules: dict[str, list[float]], checkpointing: bool) -> list[str]:
    """The modules as backward runs them: forward reversed, each checkpointed layer recomputed first."""
    layer_of = {name: found.group(1) for name in modules if (found := _LAYER_INDEX.search(name))}
    groups: dict[str, list[str]] = {}
    for name in forward:
        if name in layer_of:
            groups.setdefault(layer_of[name], []).append(name)
    backward: list[str] = []
    recomputed: set[str] = set()
    for name in reversed(forward):
        layer = layer_of.get(name)
        if not (checkpointing and layer is not None):
            backward.append(name)
        elif layer not in recomputed:
            # a checkpointed layer, as DeepSpeed records it (0.19.8, HF non-reentrant checkpointing): the
            # backward hook of its last module fires as the gradient arrives, then the whole layer runs
            # forward again, then backward through the rest in reverse (the last module's norm weights are
            # persistent and ordered apart in `tensors()`: the last module is the last with gathered bytes)
            recomputed.add(layer)
            group = groups[layer]
            last = next((m for m in reversed(group) if modules[m][1]), group[-1])
            backward += [last, *group, *(m for m in reversed(group) if m != last)]
    return backward


def _replay(trace: list[str], modules: dict[str, list[float]], reuse: float, forward_steps: int
            ) -> tuple[float, float]:
    """The release rule over the trace: (the most gathered at once, what is kept from forward into backward)."""
    prefix = [0.0]
    for name in trace:
        prefix.append(prefix[-1] + modules[name][0])
    held = [0.0] * (len(trace) + 1)  # difference array of gathered bytes per step
    last_use: dict[str, int] = {}
    turn = 0.0  # kept from a use in forward to a use in backward: gathered between loss and backward
    for step, name in enumerate(trace):
        previous = last_use.get(name)
        start = step
        if previous is not None and prefix[step] - prefix[previous + 1] < reuse:
            start = previous + 1  # kept gathered since its previous use
            if previous < forward_steps <= step:
                turn += modules[name][1]
        held[start] += modules[name][1]
        held[step + 1] -= modules[name][1]
        last_use[name] = step
    live, peak = 0.0, 0.0
    for value in held[:-1]:
        live += value
        peak = max(peak, live)
    return peak, turn
