"""Answer.AI's fsdp_qlora `train.py` on one GPU, as rank 0 of two: the FSDP1 rows of the published benchmark, measured.

The published Answer.AI rows (accelwiz/estimate/published.py, `_answerai`) are rank 0's peak reserved memory of
FSDP1 on 2 x RTX 3090. One GPU can reproduce rank 0 exactly: torch's fake process group
(`torch.testing._internal.distributed.fake_pg`) gives a world of two whose collectives allocate their outputs
and move nothing, so FSDP1 shards, gathers into its unshard stream and reduce-scatters as on two GPUs, and
`torch.cuda.set_per_process_memory_fraction` caps the allocator at a 3090's 24 GiB, where it releases its cache
and retries as the card would.

What it does, as train.py (AnswerDotAI/fsdp_qlora 05ed9f2) does with `--low_memory True` (its default) on rank 0:

* LoRA: the model in bf16 on the CPU; QLoRA: a meta model with bitsandbytes `Linear4bit` (NF4, quant_storage
  bf16) whose weights are quantized one by one on the GPU and moved to the CPU (their quantization state stays
  on the GPU), then `empty_cache`;
* PEFT LoRA r=64, alpha 16, dropout 0.1 on q, k, v, gate, up, down; adapters in bf16;
* FSDP1: the adapters' leaf linears and each decoder layer wrapped (train.py's `get_wrapping_policy`),
  FULL_SHARD (or NO_SHARD for the 'DDP' rows), `use_orig_params=False`, `limit_all_gathers`,
  `sync_module_states`, CPUOffload for the offload rows, no MixedPrecision (everything bf16);
* reentrant activation checkpointing of each decoder layer; torch AdamW; `reset_peak_memory_stats` after
  wrapping, as train.py does, then STEPS steps of random tokens at the row's batch and context length.

The weights are uninitialised (memory does not depend on their values). Prints one JSON line per setting:
reserved/allocated after wrapping, and the peaks; with --history, the allocator's event stream as
benchmarks/gpu_step.py saves it. `--device cpu --model tiny` checks the script on a CPU-only machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

STEPS = 3
TARGETS = ["q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "down_proj"]
LLAMA2_7B = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096}
LLAMA2_70B = {"hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64,
              "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 4096}
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 4, "vocab_size": 256, "max_position_embeddings": 256}
MODELS = {"llama-2-7b": LLAMA2_7B, "llama-2-70b": LLAMA2_70B, "tiny": TINY}


def _config(model: str):
    from transformers import LlamaConfig

    config = LlamaConfig(**MODELS[model], use_cache=False, tie_word_embeddings=False)
    config._attn_implementation = "sdpa"
    return config


def _lora_model(config, device: str):
    """train.py's 'lora' path on rank 0 with low_memory: the bf16 model on the CPU."""
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    return model.to_empty(device="cpu")


def _qlora_model(config, device: str):
    """train.py's 'qlora' path on rank 0: Linear4bit in the layers, each weight quantized on the GPU then moved
    to the CPU (`load_and_quantize(..., to_cpu=True)`), the quantization state left where it was made."""
    import bitsandbytes as bnb
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    for module in list(model.model.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(module, child_name, bnb.nn.Linear4bit(
                    child.in_features, child.out_features, bias=False, compute_dtype=torch.bfloat16,
                    quant_type="nf4", quant_storage=torch.bfloat16, device="meta"))
    for name, param in list(model.named_parameters()):
        owner, _, key = name.rpartition(".")
        module = model.get_submodule(owner)
        if isinstance(param, bnb.nn.Params4bit):  # the 16-bit copy made where train.py moves it (70B: 137 GB)
            value = torch.empty(param.shape, dtype=torch.bfloat16, device=device)
            quantized = type(param)(value.data, **param.__dict__).to(device)
            new = type(param)(quantized.data.to("cpu"), **quantized.__dict__)
        else:
            new = type(param)(torch.empty(param.shape, dtype=torch.bfloat16), requires_grad=param.requires_grad)
        setattr(module, key, new)
    for name, buffer in list(model.named_buffers()):
        owner, _, key = name.rpartition(".")
        model.get_submodule(owner).register_buffer(key, torch.empty(buffer.shape, dtype=buffer.dtype), persistent=False)
    if device == "cuda":
        torch.cuda.empty_cache()
    model.is_loaded_in_4bit = True
    return model


def _peft(model, rank: int, targets: list[str] | str):
    import torch
    from peft import LoraConfig, TaskType, get_peft_model

    config = LoraConfig(task_type=TaskType.CAUSAL_LM, r=rank, lora_alpha=16, lora_dropout=0.1,
                        target_modules=targets)
    model = get_peft_model(model, config)
    for param in model.parameters():  # adapters in the model's bf16 (train.py's precision 'bf16')
        if param.requires_grad:
            param.data = param.data.to(torch.bfloat16)
    return model


def _wrap(model, device: str, *, ddp: bool, offload: bool):
    """train.py's FSDP1 wrapper and wrapping policy (rank 0, low_memory)."""
    import functools

    import torch
    from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel, ShardingStrategy
    from torch.distributed.fsdp.wrap import _or_policy, lambda_auto_wrap_policy, transformer_auto_wrap_policy
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    def trainable_leaf(module):
        return (len(list(module.named_children())) == 0 and getattr(module, "weight", None) is not None
                and module.weight.requires_grad)

    policy = functools.partial(_or_policy, policies=[
        functools.partial(lambda_auto_wrap_policy, lambda_fn=trainable_leaf),
        functools.partial(transformer_auto_wrap_policy, transformer_layer_cls=(LlamaDecoderLayer,))])
    return FullyShardedDataParallel(
        model, sharding_strategy=ShardingStrategy.NO_SHARD if ddp else ShardingStrategy.FULL_SHARD,
        auto_wrap_policy=policy, use_orig_params=False,
        cpu_offload=CPUOffload(offload_params=True) if offload else None, limit_all_gathers=True,
        device_id=torch.cuda.current_device() if device == "cuda" else torch.device("cpu"),
        sync_module_states=device == "cuda")  # FSDP refuses it on the CPU (the smoke check only)


def _checkpointing(model, reentrant: bool) -> None:
    import functools

    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
        CheckpointImpl,
        apply_activation_checkpointing,
        checkpoint_wrapper,
    )
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    impl = CheckpointImpl.REENTRANT if reentrant else CheckpointImpl.NO_REENTRANT
    wrapper = functools.partial(checkpoint_wrapper, checkpoint_impl=impl)
    apply_activation_checkpointing(model, checkpoint_wrapper_fn=wrapper,
                                   check_fn=lambda m: isinstance(m, LlamaDecoderLayer))


def measure(regime: str, batch: int, seq: int, *, ddp: bool, offload: bool, device: str, model_name: str,
            capacity_gib: float, history: Path | None, reentrant: bool = True, fsdp: bool = True,
            rank: int = 64, targets: list[str] | str = TARGETS) -> dict:
    import torch

    cuda = device == "cuda"
    if cuda:
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(capacity_gib * 2**30 / total)
        if history is not None:
            torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python",
                                                     max_entries=5_000_000)
    config = _config(model_name)
    model = (_qlora_model if regime == "qlora" else _lora_model)(config, device)
    model = _peft(model, rank, targets)
    model.enable_input_require_grads()
    model = _wrap(model, device, ddp=ddp, offload=offload) if fsdp else model.to(device)
    result = {}
    if cuda:
        result.update(reserved_after_wrap=torch.cuda.memory_reserved(),
                      allocated_after_wrap=torch.cuda.memory_allocated())
    _checkpointing(model, reentrant)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.0)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    tokens = torch.randint(0, config.vocab_size, (batch, seq), device=device)
    try:
        for _ in range(STEPS):
            loss = model(tokens, labels=tokens, attention_mask=None).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            loss = None
    except torch.OutOfMemoryError as error:  # the 24 GiB card would not have held it: a result too
        result["out_of_memory"] = str(error).splitlines()[0][:200]
    if cuda:
        from benchmarks.gpu_step import gpu_peaks

        result.update(gpu_peaks(history))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("key", help="the published row's key (for the record)")
    parser.add_argument("regime", choices=("lora", "qlora"))
    parser.add_argument("batch", type=int)
    parser.add_argument("seq", type=int)
    parser.add_argument("--ddp", action="store_true", help="NO_SHARD (train.py's sharding_strategy 'ddp')")
    parser.add_argument("--offload", action="store_true", help="FSDP1 CPUOffload(offload_params=True)")
    parser.add_argument("--non-reentrant", action="store_true", help="non-reentrant activation checkpointing")
    parser.add_argument("--single", action="store_true", help="no FSDP: the model moved to the GPU whole")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--model", default="llama-2-7b", choices=sorted(MODELS), help="'tiny' checks the script "
                        "on a CPU")
    parser.add_argument("--rank", type=int, default=64, help="LoRA rank (train.py's 64; PEFT's guides use 8)")
    parser.add_argument("--all-linear", action="store_true", help="LoRA on every linear of the layers, o_proj "
                        "included (PEFT's 'all-linear'), not train.py's six")
    parser.add_argument("--capacity-gib", type=float, default=23.6, help="the allocator's cap: an RTX 3090's "
                        "24 GiB less its CUDA context")
    parser.add_argument("--history", type=Path, help="save the allocator's event stream here (.jsonl.gz)")
    args = parser.parse_args()

    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    started = time.perf_counter()
    result = measure(args.regime, args.batch, args.seq, ddp=args.ddp, offload=args.offload, device=args.device,
                     model_name=args.model, capacity_gib=args.capacity_gib, history=args.history,
                     reentrant=not args.non_reentrant, fsdp=not args.single, rank=args.rank,
                     targets="all-linear" if args.all_linear else TARGETS)
    result.update(key=args.key, model=args.model, lora_rank=args.rank, all_linear=args.all_linear,
                  regime=args.regime, batch=args.batch, seq=args.seq, ddp=args.ddp,
                  offload=args.offload, reentrant=not args.non_reentrant, fsdp=not args.single,
                  seconds=round(time.perf_counter() - started, 1))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
