"""The GPU side of benchmarks/estimator_accuracy.py: three real training steps of one setting, measured.

Run in a fresh process per setting (peak statistics, the allocator's cache and process groups start clean). It
returns what the GPU reported:

* `max_allocated` / `max_reserved`: torch.cuda.max_memory_allocated / max_memory_reserved over loading and
  the three steps;
* `runtime`: what the process holds outside the caching allocator (CUDA context, cuBLAS workspaces' driver
  side, NCCL), read from NVML as the device's used memory at the end, less before CUDA started, less
  torch.cuda.memory_reserved() at that moment;
* with `history`, the caching allocator's own event stream (`torch.cuda.memory._record_memory_history`,
  no stacks): every alloc, free and segment_alloc/segment_free with its address, size and stream, saved as
  JSON lines (gzip) so that accelwiz/estimate/allocator.py can replay exactly what the real allocator saw.

The model is built as a user's run builds it: full fine-tuning from fp32 weights on the CPU, moved by
`.cuda()` or by DeepSpeed (which accelerate calls the same way, with the script's torch AdamW); LoRA from a
bf16 base built on the GPU (what from_pretrained(torch_dtype=bfloat16, device_map="cuda") leaves), PEFT's
adapters in fp32, autocast to bf16.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

STEPS = 3
LORA = {"r": 16, "lora_alpha": 32, "lora_dropout": 0.0, "target_modules": "all-linear"}


def device_used_bytes() -> int | None:
    """The GPU's used memory as NVML reports it (None where NVML cannot be read)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        return int(pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0)).used)
    except Exception:  # noqa: BLE001 - the runtime figure is optional; the peaks are not
        return None


def _train_single(model: Any, tokens: Any, *, autocast: bool) -> None:
    import torch

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    for _ in range(STEPS):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def _train_deepspeed(model: Any, tokens: Any, strategy: str, micro_batch: int) -> None:
    import deepspeed
    import torch

    _one_rank_environment()
    stage = 3 if strategy.startswith("zero3") else int(strategy[-1])
    zero: dict = {"stage": stage}
    if strategy == "zero3_offload":
        zero["offload_optimizer"] = {"device": "cpu"}
    config = {
        "train_micro_batch_size_per_gpu": micro_batch,
        "gradient_accumulation_steps": 1,
        "bf16": {"enabled": True},
        "zero_optimization": zero,
        "gradient_clipping": 0.0,
        # the script's torch AdamW, as accelerate hands it over (no JIT-built FusedAdam/CPUAdam)
        "zero_force_ds_cpu_optimizer": False,
    }
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
    for _ in range(STEPS):
        loss = engine(input_ids=tokens, labels=tokens).loss
        engine.backward(loss)
        engine.step()


def _one_rank_environment() -> None:
    """What a launcher sets for one process (DeepSpeed and torch.distributed read it); one setting per process."""
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                       ("MASTER_PORT", "29511")):
        os.environ.setdefault(key, value)


def _process_group(backend: str) -> None:
    import torch.distributed as dist

    _one_rank_environment()
    if not dist.is_initialized():
        dist.init_process_group(backend)


def _blocks(model: Any) -> list[Any]:
    """The transformer blocks FSDP wraps one by one (accelerate's TRANSFORMER_BASED_WRAP of the layer class)."""
    return [m for m in model.modules() if type(m).__name__.endswith(("DecoderLayer", "Block"))]


def wrap_fsdp(model: Any, version: int, device: str) -> Any:
    """Full shard with bf16 compute over fp32 parameters (accelerate's `mixed_precision: bf16`): FSDP2's
    `fully_shard` per block and the root, or FSDP1's wrapper with `use_orig_params` (accelerate's default)."""
    import torch

    _process_group("nccl" if device == "cuda" else "gloo")
    model = model.to(device)
    if version == 2:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for block in _blocks(model):
            fully_shard(block, mp_policy=policy)
        return fully_shard(model, mp_policy=policy)
    from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    precision = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
    return FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy({type(_blocks(model)[0])}),
                                    mixed_precision=precision, use_orig_params=True,
                                    device_id=torch.cuda.current_device() if device == "cuda" else None)


def _lora_model(build: Any) -> Any:
    import torch
    from peft import LoraConfig, get_peft_model

    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = build()
    torch.set_default_dtype(torch.float32)
    return get_peft_model(model, LoraConfig(**LORA))


def measure(setting: Any, build: Any, vocab_size: int, history: Path | None) -> dict:
    """Train `setting` (an estimator_accuracy.Setting) for STEPS steps; `build()` makes the transformers model."""
    import torch

    before = device_used_bytes()
    if history is not None:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=5_000_000)
    torch.manual_seed(0)
    tokens = torch.randint(0, vocab_size, (setting.micro_batch, setting.seq_len), device="cuda")
    model = _lora_model(build) if setting.regime == "lora" else build()
    if setting.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    if setting.strategy == "single":
        _train_single(model.cuda(), tokens, autocast=True)
    elif setting.strategy.startswith("fsdp"):
        _train_single(wrap_fsdp(model, int(setting.strategy[-1]), "cuda"), tokens, autocast=False)
    else:
        _train_deepspeed(model, tokens, setting.strategy, setting.micro_batch)
    result = gpu_peaks(history)
    after = device_used_bytes()
    if before is not None and after is not None:
        result["runtime"] = after - before - torch.cuda.memory_reserved()
    return result


def gpu_peaks(history: Path | None) -> dict:
    """What the GPU reported after the steps: max_memory_allocated / max_memory_reserved, the allocator's
    retries, and with `history` the saved event stream's length (benchmarks/gpu_fsdp_*.py use it too)."""
    import torch

    torch.cuda.synchronize()
    result = {"max_allocated": torch.cuda.max_memory_allocated(), "max_reserved": torch.cuda.max_memory_reserved(),
              "alloc_retries": torch.cuda.memory_stats().get("num_alloc_retries", 0)}
    if history is not None:
        result["history_events"] = _save_history(history)
    return result


def _save_history(path: Path) -> int:
    """The allocator's event stream of device 0, one JSON list per line: [action, addr, size, stream]."""
    import torch

    events = torch.cuda.memory._snapshot()["device_traces"][0]
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as out:
        for event in events:
            out.write(json.dumps([event["action"], event["addr"], event["size"], event["stream"]]) + "\n")
    return len(events)
