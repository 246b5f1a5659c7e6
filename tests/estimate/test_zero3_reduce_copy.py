"""ZeRO-3's flattened copy of each gradient bucket it reduce-scatters (zero3_reduce_copy.py), measured on real
DeepSpeed engines on this CPU: one rank and two (gloo), DeepSpeed's default bucket and a small one that flushes
while backward runs. torch's profiler records every allocation of the CPU allocator; the bytes allocated between
entering `reduce_scatter_coalesced` and its collective are the copy (the collective's own buffers are gloo's: NCCL
reduce-scatters in place)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from accelwiz.estimate.memory import estimate_memory
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.estimate.zero3_gathered import zero3_gathered_buffer_bytes, zero3_kept_bytes
from accelwiz.estimate.zero3_reduce_copy import flattened_elements, zero3_reduce_copies
from accelwiz.modelspec.lookup import resolve_model, spec_from_hf_config
from tests.estimate.deepspeed_engine import TINY_LLAMA
from tests.ports import free_port

# One bf16 ZeRO-3 engine per bucket size (null: DeepSpeed's default); one backward profiled. Rank 0 prints
# FLUSH bucket [[gradient numels of one flush, bytes allocated before its collective], ...] in flush order.
_ENGINE = textwrap.dedent(
    """
    import json, os, sys
    import torch, deepspeed
    import deepspeed.runtime.zero.stage3 as stage3
    import deepspeed.runtime.comm.coalesced_collectives as coalesced
    from torch.profiler import ProfilerActivity, profile, record_function
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])
    flushes = []
    scatter, collective = stage3.reduce_scatter_coalesced, coalesced._torch_reduce_scatter_fn
    def marked_scatter(tensors, group=None):
        flushes.append([t.numel() for t in tensors])
        with record_function("FLUSH"):
            return scatter(tensors, group)
    def marked_collective(*args, **kwargs):
        with record_function("COLLECTIVE"):
            return collective(*args, **kwargs)
    stage3.reduce_scatter_coalesced, coalesced._torch_reduce_scatter_fn = marked_scatter, marked_collective
    for bucket in json.loads(sys.argv[2]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(LlamaConfig(**config)).to(torch.bfloat16)
        zero = {"stage": 3, **({"reduce_bucket_size": bucket} if bucket else {})}
        ds = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": zero, "bf16": {"enabled": True},
              "zero_force_ds_cpu_optimizer": False}
        engine, *_ = deepspeed.initialize(model=model, optimizer=torch.optim.AdamW(model.parameters()), config=ds)
        ids = torch.randint(0, config["vocab_size"], (1, 8))
        loss = engine(input_ids=ids, labels=ids).loss
        flushes.clear()
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            engine.backward(loss)
        events = list(prof.profiler.kineto_results.events())
        starts = sorted(e.start_ns() for e in events if e.name() == "FLUSH")
        collectives = sorted(e.start_ns() for e in events if e.name() == "COLLECTIVE")
        memory = [(e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]"]
        live = lambda moment: sum(size for at, size in memory if at < moment)
        copies = [live(c) - live(s) for s, c in zip(starts, collectives)]
        if os.environ["RANK"] == "0":
            print("FLUSH", bucket, json.dumps([[f, c] for f, c in zip(flushes, copies)]), flush=True)
        engine.destroy()
    """
)
_BUCKETS = [None, 300_000]  # DeepSpeed's 5e8: one flush at backward's end; 3e5: flushes while backward runs
# the tiny Llama with biased MLPs 511 wide: odd gradients, padded to the two ranks' multiple
_ODD = {**TINY_LLAMA, "intermediate_size": 511, "mlp_bias": True}


def _flushes(tmp_path: Path, model: dict, world: int) -> dict:
    """Per bucket size: rank 0's flushes, [gradient numels, bytes copied], from `world` real engine processes."""
    pytest.importorskip("deepspeed")
    script = tmp_path / "engine.py"
    script.write_text(_ENGINE)
    config = json.dumps({k: v for k, v in model.items() if k != "model_type"})
    port = str(free_port())
    ranks = [subprocess.Popen(
        [sys.executable, str(script), config, json.dumps(_BUCKETS)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "DS_ACCELERATOR": "cpu", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
                        "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
                        "LOCAL_WORLD_SIZE": str(world)}) for rank in range(world)]
    outputs = [rank.communicate(timeout=900) for rank in ranks]
    lines = [line.split(maxsplit=2) for line in outputs[0][0].splitlines() if line.startswith("FLUSH ")]
    if len(lines) != len(_BUCKETS):
        pytest.skip(f"a ZeRO-3 engine on the CPU did not run here: {(outputs[0][1].strip().splitlines() or ['?'])[-1]}")
    return {bucket: json.loads(flushes) for (_, _, flushes), bucket in zip(lines, _BUCKETS)}


@pytest.mark.slow
@pytest.mark.parametrize(("model", "world"), [(TINY_LLAMA, 1), (TINY_LLAMA, 2), (_ODD, 2)], ids=["1", "2", "2-odd"])
def test_real_engines_copy_each_flushed_bucket_as_counted(tmp_path: Path, model: dict, world: int) -> None:
    measured = _flushes(tmp_path, model, world)
    for bucket, flushes in measured.items():
        for numels, copied in flushes:
            flat = flattened_elements(numels, world)
            padding = flat - sum(numels) if flat else 0  # its `torch.empty` pieces live until the collective too
            assert copied == 2 * (flat + padding), (bucket, numels, copied)
    small = measured[300_000]
    assert len(measured[None]) == 1 and measured[None][0][1] > 0  # the default bucket: one flush, at the end
    assert sum(copied > 0 for _, copied in small) >= 5  # flushes of several gradients while backward runs
    assert any(len(numels) == 1 and not copied for numels, copied in small)  # one gradient the world divides
    if model is _ODD:
        assert any(flattened_elements(numels, world) > sum(numels) for numels, _ in small)  # padded to the world
        return
    # the estimator's replay over the model's tensors (tensors() orders a layer's norms after its linears, backward
    # meets them between: a flush may differ by the norms it holds, two per layer)
    workload = Workload(spec_from_hf_config(model, name="tiny", source="test"), precision="bf16")
    norms = 2 * 2 * model["hidden_size"]
    for bucket, flushes in measured.items():
        copies = zero3_reduce_copies(workload, Strategy("zero3", gpus_per_node=world, zero_reduce_bucket_size=bucket))
        during = max((copied for _, copied in flushes[:-1]), default=0)
        assert abs(copies.during - during) <= norms, (bucket, copies.during, during)
        assert abs(copies.at_end - flushes[-1][1]) <= norms, (bucket, copies.at_end, flushes[-1])


def test_the_default_bucket_copies_almost_a_whole_bucket_during_a_7b_backward() -> None:
    workload = Workload(resolve_model("llama-2-7b"), precision="bf16", gradient_checkpointing=True)
    strategy = Strategy("zero3", gpus_per_node=8)
    copies = zero3_reduce_copies(workload, strategy)
    # 5e8 elements, less at most one Llama-2 MLP matrix (45.1M) left for the next bucket: 0.85 to 0.93 GiB
    assert 2 * (5e8 - 45_088_768) <= copies.during <= 2 * 5e8
    assert 0 < copies.at_end <= 2 * 5e8
    # counted in backward's moments only: a layer's recomputation (beside the gathered parameters at their most)
    # and backward's end; forward and the optimizer step (which releases the gathered module) hold neither
    moments = {label: dict(parts) for label, parts in estimate_memory(workload, strategy).moments}
    turn, most, _ = zero3_kept_bytes(workload, strategy)
    buffers = {label: parts["buffers"] for label, parts in moments.items()}
    assert buffers["backward recompute"] - buffers["backward start"] == pytest.approx(most - turn + copies.during,
                                                                                        abs=2)
    released = zero3_gathered_buffer_bytes(workload, strategy)
    assert buffers["backward end"] - buffers["optimizer"] == pytest.approx(released + copies.at_end, abs=2)
    assert buffers["forward"] == buffers["backward start"]


def test_hf_auto_buckets_hold_one_gradient_at_a_time() -> None:
    """The HF Trainer's "auto" bucket is hidden² elements: each of Llama-2-7B's attention and MLP matrices fills it
    alone and is reduce-scattered without a copy; only the norms between them are flushed together (backward
    meets them one at a time; tensors() orders them after the linears)."""
    workload = Workload(resolve_model("llama-2-7b"), precision="bf16")
    copies = zero3_reduce_copies(workload, Strategy("zero3", gpus_per_node=8, zero_reduce_bucket_size="auto"))
    assert copies.bucket == 4096**2
    assert copies.during <= 2 * 3 * 4096  # three norm vectors at most, not a bucket
