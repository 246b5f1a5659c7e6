"""accelerate's FSDP path on one GPU, as rank 0 of two: full fine-tuning and LoRA, FSDP1 and FSDP2, measured.

The companion of benchmarks/gpu_fsdp_answerai.py (same fake process group of two, same allocator recording) for
what `accelwiz run` launches through accelerate with `mixed_precision: bf16` and an FSDP plugin:

* the model in fp32 on the CPU (`cpu_ram_efficient_loading`: rank 0 loads, `sync_module_states` broadcasts);
  LoRA: PEFT r=16 on every linear, the frozen base in fp32 beside the fp32 adapters (a unit flattens one
  dtype: accelwiz's trainer, `finetune.lora_base_dtype`);
* FSDP1: `FullyShardedDataParallel` with the decoder layer as the wrap class, `use_orig_params=True`,
  `limit_all_gathers`, MixedPrecision(param bf16, reduce fp32, buffers bf16); FSDP2: `fully_shard` on each
  decoder layer and the root with MixedPrecisionPolicy(param bf16, reduce fp32);
* non-reentrant activation checkpointing of each decoder layer (accelerate's `activation_checkpointing`),
  torch AdamW, `reset_peak_memory_stats` after wrapping, STEPS steps of random tokens.

Prints one JSON line (the peaks, and reserved/allocated after wrapping); `--history` saves the event stream.
`--device cpu --tiny` checks the script without a GPU (FSDP1 only: FSDP2's fake mesh needs CUDA).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path

STEPS = 3
LLAMA32_1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
              "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
              "tie_word_embeddings": True, "head_dim": 64}
LLAMA32_3B = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 28, "num_attention_heads": 24,
              "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
              "tie_word_embeddings": True, "head_dim": 128}
LLAMA2_7B = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
             "tie_word_embeddings": False}
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 4, "vocab_size": 256, "max_position_embeddings": 256, "tie_word_embeddings": False}
MODELS = {"llama-3.2-1b": LLAMA32_1B, "llama-3.2-3b": LLAMA32_3B, "llama-2-7b": LLAMA2_7B, "tiny": TINY}


def build(model: str, regime: str):
    """The fp32 model on the CPU (uninitialised weights: memory does not depend on them), with LoRA if asked."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(**MODELS[model], use_cache=False)
    config._attn_implementation = "sdpa"
    with torch.device("meta"):
        net = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    net = net.to_empty(device="cpu")
    # to_empty replaces each module's parameters from the meta device, which unties a tied embedding and LM head
    # (the Llama-3.2-1B rows recorded before this line trained an untied, 1.50B-parameter model: fsdp_streams.py
    # estimates that one); tie them again
    net.tie_weights()
    if regime == "lora":
        from peft import LoraConfig, get_peft_model

        net = get_peft_model(net, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear"))
    return net, config.vocab_size


def _layer_class():
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    return LlamaDecoderLayer


def wrap(net, version: int, device: str):
    import torch

    if version == 2:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        mesh = init_device_mesh(device, (2,))
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in [m for m in net.modules() if isinstance(m, _layer_class())]:
            fully_shard(layer, mesh=mesh, mp_policy=policy)
        return fully_shard(net, mesh=mesh, mp_policy=policy)
    from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={_layer_class()})
    precision = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
    return FullyShardedDataParallel(net, auto_wrap_policy=policy, mixed_precision=precision, use_orig_params=True,
                                    limit_all_gathers=True, sync_module_states=device == "cuda",
                                    device_id=torch.cuda.current_device() if device == "cuda" else torch.device("cpu"))


def _checkpointing(net) -> None:
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
        CheckpointImpl,
        apply_activation_checkpointing,
        checkpoint_wrapper,
    )

    wrapper = functools.partial(checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT)
    apply_activation_checkpointing(net, checkpoint_wrapper_fn=wrapper, check_fn=lambda m: isinstance(m, _layer_class()))


def measure(model: str, regime: str, version: int, batch: int, seq: int, device: str, history: Path | None) -> dict:
    import torch

    cuda = device == "cuda"
    if cuda and history is not None:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=5_000_000)
    net, vocab = build(model, regime)
    net = wrap(net, version, device)
    result = {}
    if cuda:
        result.update(reserved_after_wrap=torch.cuda.memory_reserved(),
                      allocated_after_wrap=torch.cuda.memory_allocated())
    _checkpointing(net)
    optimizer = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-5)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    tokens = torch.randint(0, vocab, (batch, seq), device=device)
    try:
        for _ in range(STEPS):
            loss = net(input_ids=tokens, labels=tokens).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            loss = None
    except torch.OutOfMemoryError as error:
        result["out_of_memory"] = str(error).splitlines()[0][:200]
    if cuda:
        from benchmarks.gpu_step import gpu_peaks

        result.update(gpu_peaks(history))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("key")
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("regime", choices=("full", "lora"))
    parser.add_argument("fsdp", type=int, choices=(1, 2))
    parser.add_argument("batch", type=int)
    parser.add_argument("seq", type=int)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--history", type=Path)
    args = parser.parse_args()

    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    started = time.perf_counter()
    result = measure(args.model, args.regime, args.fsdp, args.batch, args.seq, args.device, args.history)
    result.update(key=args.key, model=args.model, regime=args.regime, fsdp=args.fsdp, batch=args.batch,
                  seq=args.seq, seconds=round(time.perf_counter() - started, 1))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
