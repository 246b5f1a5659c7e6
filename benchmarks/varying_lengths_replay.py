"""Batches of varying length through the caching-allocator model: what `max_memory_reserved` grows to (no GPU).

A training step's allocation stream is recorded by the fake-tensor trace (accelwiz/estimate/trace.py) of the real
transformers model code at three lengths. Every request of the step is the same operator at every length, so
each request's size is a polynomial in the length (linear; quadratic for a causal mask): fitted on two lengths
and checked exact on the third. That gives the stream of a step at any length; a run is the first step (it
allocates the parameters and optimizer states) followed by one step per batch length, replayed through
accelwiz/estimate/allocator.py (the model of PyTorch's CUDACachingAllocator that replays real H200 streams to
the byte). Lengths are drawn as ms-swift's benchmark data (cls-fudan-news-zh: 3234.4 +- 2547.5 tokens, min 91,
by its Qwen tokenizer; samples longer than max_length dropped), in a fixed order per seed.

    python benchmarks/varying_lengths_replay.py            # Qwen-7B LoRA at 2048 tokens, ms-swift's default row
    python benchmarks/varying_lengths_replay.py --layers 4 --steps 400 --seeds 0,1,2

Writes benchmarks/results/varying_lengths_replay.json: the fixed-length step's allocated and reserved peaks, and
per seed the varying run's, with the excess in loss tails (estimate/activations.logits_bytes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

OUT = REPO / "benchmarks" / "results" / "varying_lengths_replay.json"
SWIFT_DATA = {"mean": 3234.4, "std": 2547.5, "min": 91}  # ms-swift Benchmark.md, "参数设置"


def traced_events(config: dict, settings: object, frozen: bool = False) -> list[tuple]:
    """Two training steps of `config` under fake tensors (as trace.py runs them): every allocation and free.
    `frozen`: the frozen parameters' and buffers' allocations are ("frozen", key, size) events, for a replay that
    loads the model's weights itself (benchmarks/varying_lengths_loading.py)."""
    import torch

    from accelwiz.estimate.trace import _fake_model, _phase_tracker
    from accelwiz.estimate.trace_autocast import cuda_autocast_on_cpu
    from accelwiz.estimate.trace_dropout import cuda_dropout_on_cpu
    from accelwiz.estimate.trace_model import config_from_dict, prepare_config

    hf = config_from_dict(dict(config), source="varying_lengths_replay")
    hf = prepare_config(hf, settings, getattr(hf, "num_hidden_layers"))
    model, fake, storages = _fake_model(hf, settings)  # the trace's own: model on fake tensors, param storages
    with fake:
        tokens = torch.randint(0, int(hf.vocab_size), (settings.micro_batch, settings.seq_len))
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5, foreach=True)
    tracker = _phase_tracker(storages)
    with fake, cuda_autocast_on_cpu(), cuda_dropout_on_cpu(), tracker:
        for _ in range(2):
            tracker.phase = "forward"
            autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if settings.precision == "mixed"
                        else contextlib.nullcontext())
            with autocast:
                loss = model(input_ids=tokens, labels=tokens).loss
            tracker.phase = "backward"
            loss.backward()
            del loss
            tracker.phase = "optimizer"
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            tracker.reset_mod_stats()
    if not frozen:
        return tracker.events
    from torch.distributed._tools.common_utils import get_untyped_storages

    tensors = [*(p for p in model.parameters() if not p.requires_grad), *model.buffers()]
    keys = {id(tracker._WINFO[s][0]) for t in tensors for s in get_untyped_storages(t) if s in tracker._WINFO}
    freed = {e[1] for e in tracker.events if e[0] == "free"}  # a key freed in the stream is some other tensor's
    return [("frozen", *e[1:]) if e[0] == "alloc" and e[1] in keys and e[1] not in freed else e
            for e in tracker.events]


def step_template(config: dict, settings: object, lengths: tuple[int, int, int],
                  frozen: bool = False) -> list[tuple]:
    """The traced stream with each request's size as (a, b, c): a + b*L + c*L^2, fitted on the first two of
    `lengths` (c only where a linear fit misses the third) and exact on all three; a free names the index of
    the allocation it frees. ValueError where the streams differ in operators or a size is no such polynomial."""
    from dataclasses import replace

    streams = [traced_events(config, replace(settings, seq_len=length), frozen) for length in lengths]
    if len({len(s) for s in streams}) != 1:
        raise ValueError(f"the traced streams differ in length: {[len(s) for s in streams]}")
    template: list[tuple] = []
    latest: dict[object, int] = {}
    for index, events in enumerate(zip(*streams)):
        kind = events[0][0]
        if {e[0] for e in events} != {kind}:
            raise ValueError(f"event {index}: {[e[0] for e in events]}")
        if kind in ("alloc", "frozen"):
            template.append((kind, index, *_polynomial(lengths, [e[2] for e in events], index)))
            latest[events[0][1]] = index
        elif kind == "free":
            template.append(("free", latest.get(events[0][1])))
        else:
            template.append(events[0])
    return template


def _polynomial(lengths: tuple[int, ...], sizes: list[int], index: int) -> tuple[float, float, float]:
    (l0, l1, l2), (s0, s1, s2) = lengths, sizes
    b = (s1 - s0) / (l1 - l0)
    a, c = s0 - b * l0, 0.0
    if abs(a + b * l2 - s2) > 0.5:  # quadratic through the three
        c = ((s2 - s0) / (l2 - l0) - b) / (l2 - l1)
        b -= c * (l0 + l1)
        a = s0 - b * l0 - c * l0 * l0
    if any(abs(a + b * n + c * n * n - s) > 0.5 for n, s in zip(lengths, sizes)):
        raise ValueError(f"request {index}: sizes {sizes} at {lengths} are no polynomial of degree 2")
    return a, b, c


def run_events(template: list[tuple], lengths: list[int], loaded: bool = False) -> list[tuple]:
    """The first step at lengths[0] (parameters, optimizer states), then the second step's requests at each
    following length. The trace's teardown (frees of the first step's tensors) is dropped; a request of a step
    the trace never frees (MemTracker loses a few) is freed at the step's end. `loaded`: the frozen base's
    allocations are left out (a loading stream before the run holds the weights)."""
    starts = [i for i, e in enumerate(template) if e[:2] == ("phase", "forward")]
    first, step = template[:starts[1]], template[starts[1]:]
    own = {e[1] for e in step if e[0] == "alloc"}
    freed = {e[1] for e in step if e[0] == "free"}
    events: list[tuple] = []
    for tag, part, length in [(None, first, lengths[0]), *((k, step, n) for k, n in enumerate(lengths[1:]))]:
        for event in part:
            if event[0] == "frozen" and loaded:
                continue
            if event[0] in ("alloc", "frozen"):
                a, b, c = event[2:]
                key = (tag, event[1]) if event[1] in own else event[1]
                events.append(("alloc", key, max(0, round(a + b * length + c * length * length))))
            elif event[0] == "free" and event[1] is not None:
                if tag is not None and event[1] not in own:
                    continue  # teardown
                events.append(("free", (tag, event[1]) if event[1] in own else event[1]))
            elif event[0] == "phase":
                events.append(event)
        if tag is not None:
            events.extend(("free", (tag, i)) for i in own - freed)
    return events


def data_lengths(count: int, cap: int, seed: int, data: dict = SWIFT_DATA) -> list[int]:
    """`count` sample lengths of at most `cap`: a log-normal of the data's mean and deviation, longer ones
    dropped (ms-swift's truncation_strategy 'delete'), in a fixed order per seed."""
    rng = random.Random(seed)
    var = math.log(1 + (data["std"] / data["mean"]) ** 2)
    mu, sigma = math.log(data["mean"]) - var / 2, math.sqrt(var)
    lengths: list[int] = []
    while len(lengths) < count:
        length = int(rng.lognormvariate(mu, sigma))
        if data["min"] <= length <= cap:
            lengths.append(length)
    return lengths


def main() -> None:
    from accelwiz.estimate.allocator import replay
    from accelwiz.estimate.trace import TraceSettings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="benchmarks/published/models/qwen-7b/config.json")
    parser.add_argument("--seq-len", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=None, help="trace this many layers (default: all)")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--seeds", default="0,1")
    args = parser.parse_args()
    config = json.loads((REPO / args.config).read_text())
    if args.layers:
        config["num_hidden_layers"] = args.layers
    # ms-swift's default row: LoRA r=8 dropout 0.05 on q/k/v, bf16 base under autocast, checkpointing, flash
    settings = TraceSettings(micro_batch=1, seq_len=args.seq_len, precision="mixed", attention="sdpa",
                             gradient_checkpointing=True, lora_rank=8, lora_targets=("q_proj", "k_proj", "v_proj"),
                             lora_dropout=0.05)
    started = time.perf_counter()
    cap = args.seq_len
    template = step_template(config, settings, (cap // 2, 3 * cap // 4, cap))
    tail = 4 * cap * config["vocab_size"]  # activations.logits_bytes at batch 1
    fixed = replay(run_events(template, [cap] * 3))
    runs = []
    for seed in (int(s) for s in args.seeds.split(",")):
        lengths = data_lengths(args.steps, cap, seed)
        varying = replay(run_events(template, lengths))
        runs.append({"seed": seed, "steps": args.steps, "longest": max(lengths),
                     "allocated": varying.peak_allocated, "reserved": varying.peak_reserved,
                     "excess_loss_tails": round((varying.peak_reserved - fixed.peak_reserved) / tail, 2)})
        print(f"seed {seed}: reserved {varying.peak_reserved / 2**30:.2f} GiB "
              f"(fixed {fixed.peak_reserved / 2**30:.2f}), {runs[-1]['excess_loss_tails']} loss tails", flush=True)
    result = {"config": args.config, "layers": config["num_hidden_layers"], "seq_len": cap,
              "settings": "LoRA r=8 q/k/v dropout 0.05, bf16 base under autocast, checkpointing, sdpa (flash)",
              "data": SWIFT_DATA, "loss_tail": tail,
              "fixed": {"allocated": fixed.peak_allocated, "reserved": fixed.peak_reserved},
              "varying": runs,
              "median_excess_loss_tails": statistics.median(r["excess_loss_tails"] for r in runs),
              "seconds": round(time.perf_counter() - started, 1)}
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "varying"}))


if __name__ == "__main__":
    main()
