"""transformers' `caching_allocator_warmup`: the one block `from_pretrained` reserves before it loads the weights.

Where `from_pretrained` has a device_map on a GPU, `_load_pretrained_model` first calls
`caching_allocator_warmup(model, expanded_device_map, hf_quantizer)`: it sums the bytes of the empty model's
parameters on that GPU, allocates ONE fp16 tensor of that size and drops it at once. The caching allocator keeps the
segment reserved, and the weights are then cut from it. What loading leaves reserved is therefore at least that
block, even where the loaded weights are smaller. bitsandbytes always loads onto a GPU: its quantizer's
`update_device_map` sets `{"": torch.cuda.current_device()}` when the script gives none (4.57.1
quantizer_bnb_4bit.py), so every QLoRA load warms up; a Trainer script that loads a 16-bit model without a
device_map loads it on the CPU and never does (not modelled here: only QLoRA).

By release (each read in its wheel's modeling_utils.py):
* before 4.50: no warmup;
* 4.50: `if device_map is not None and hf_quantizer is None`: never for a quantized model;
* 4.51: `factor=2 if hf_quantizer is None else 4`, `torch.empty(byte_count // factor, dtype=torch.float16)`,
  capped at 95% of the free memory; the empty model's parameters at their element size, where bitsandbytes'
  Linear4bit weights are still 16-bit on the meta device (built while the default dtype is the load dtype), so a
  QLoRA load reserves HALF the 16-bit model, about twice its 4-bit weights;
* 4.52-4.57: `hf_quantizer.get_cuda_warm_up_factor()` (4.56: `get_accelerator_warm_up_factor`), 4 in the base
  quantizer, which bitsandbytes does not override; the cap is the free memory less 1.2 GiB; from 4.56 a tied
  weight is counted once (`_get_tied_weight_keys`), before that under both names (the state dict's keys);
* 5.0 on: `get_total_byte_count` sizes each parameter by `hf_quantizer.param_element_size` (bitsandbytes 4-bit:
  0.5 B per quantized weight) and allocates `byte_count // 2` fp16 elements: the footprint itself, less the
  quantization state, which the loaded weights then exceed (5.25 caps at the total memory less 1.2 GiB).

After loading, PEFT's prepare_model_for_kbit_training casts each 16-bit parameter that is no Params4bit to fp32
(`param.data = param.data.to(torch.float32)`): each fp32 copy is cut from a free piece of what is reserved where
one is large enough, else it takes a segment of its own; its 16-bit original is then freed (TRL's cast back to
bf16, `Workload.trl_bf16_cast_parameters`, the same way). TRL's SFT notebook (Qwen3-8B NF4 in fp16 on an
A100-40GB, transformers 4.57.1) printed 11.959 GiB reserved after SFTTrainer was built: the 7.63 GiB block with a
2.0 GiB free tail, then two 2.32 GiB fp32 casts that do not fit it, 12.27 GiB by this model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelwiz.estimate.frozen_base import QLORA_BYTES_PER_PARAM

if TYPE_CHECKING:
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.workload import Workload

GIB = 2**30
# the caching allocator's small pool: tensors of 1 MiB or less are served from 2 MiB segments of their own
SMALL_POOL_LIMIT = 2**20
# the first releases of each behaviour (module docstring)
FIRST_QUANTIZED_WARMUP = (4, 51)
FIRST_FREE_LESS_1_2_GIB = (4, 52)
FIRST_TIED_ONCE = (4, 56)
FIRST_QUANTIZED_SIZES = (5, 0)
FIRST_TOTAL_LESS_1_2_GIB = (5, 25)
TODAY = (5, 25)  # what a stack that does not name transformers runs: the installed release


def warmup_block(workload: Workload, gpu_bytes: int | None, context: float) -> tuple[float, str | None]:
    """The bytes of transformers' warmup tensor for this workload's load on a GPU of `gpu_bytes` (None: uncapped)
    whose CUDA context takes `context`, and a note naming the function and release; (0, None) where none runs."""
    if workload.regime != "qlora":
        return 0.0, None
    version = workload.stack.transformers or TODAY
    said = ".".join(map(str, version))
    if version < FIRST_QUANTIZED_WARMUP:
        return 0.0, None
    spec = workload.model
    width = _load_width(workload)
    quantized = workload.quantized_parameters
    others = spec.num_parameters - quantized
    if version >= FIRST_QUANTIZED_SIZES:
        byte_count = 0.5 * quantized + width * others  # get_total_byte_count with param_element_size
        how = "get_total_byte_count: 0.5 B per 4-bit weight (param_element_size), byte_count // 2 fp16 elements"
        divide = 1.0
    else:
        tied_twice = spec.tie_word_embeddings and version < FIRST_TIED_ONCE
        byte_count = width * (spec.num_parameters + (_embedding_parameters(workload) if tied_twice else 0))
        how = ("the empty model's Linear4bit weights still 16-bit on meta, byte_count // 4 fp16 elements "
               "(the base quantizer's warm-up factor 4)" + ("; the tied embedding counted twice" if tied_twice else ""))
        divide = 2.0
    if gpu_bytes:
        free = gpu_bytes - context  # mem_get_info's free memory before loading: the GPU less the CUDA context
        cap, rule = ((0.95 * free, "95% of the free memory") if version < FIRST_FREE_LESS_1_2_GIB else
                     (gpu_bytes - 1.2 * GIB, "the total memory less 1.2 GiB")
                     if version >= FIRST_TOTAL_LESS_1_2_GIB else (free - 1.2 * GIB, "the free memory less 1.2 GiB"))
        if cap < byte_count:
            how += f"; byte_count capped at {rule}, {cap / GIB:.2f} GiB of this {gpu_bytes / GIB:.1f} GiB GPU"
        byte_count = max(0.0, min(byte_count, cap))
    block = byte_count / divide
    return block, (f"transformers {said} caching_allocator_warmup: one {block / GIB:.2f} GiB fp16 block reserved "
                   f"before the weights are loaded into it ({how})")


def loading_reserved(workload: Workload, loading: float, gpu_bytes: int | None, context: float,
                     strategy: Strategy | None = None) -> tuple[float, str | None]:
    """What loading leaves reserved: the warmup block, or the weights as loaded where they outgrow it, then the
    segments the k-bit preparation's fp32 casts take beyond its free pieces; never below `loading` (loading's
    allocated peak, loading.py). A note where the block decides it. Single GPU, DDP and DeepSpeed: bitsandbytes
    loads the whole quantized model onto each process's GPU before DeepSpeed shards it. Not FSDP: its measured
    QLoRA runs (Answer.AI's train.py, which quantizes layer by layer without from_pretrained: the H200 streams,
    fsdp_reserve.py) reserve no block, and what transformers' own FSDP path leaves (4.57 moves each quantized
    parameter to the CPU after the block is taken) is not measured."""
    block, note = (0.0, None) if strategy is not None and strategy.is_fsdp else warmup_block(workload, gpu_bytes,
                                                                                              context)
    if not block:
        return loading, None
    arrived = _as_loaded_bytes(workload)
    reserved = max(block, arrived)
    pieces = [block - arrived] if block > arrived else []
    added = 0.0
    # PEFT's fp32 casts, then TRL's casts of the embedding and LM head back to bf16 (after get_peft_model)
    for new, old in _casts(workload):
        added += _cut(pieces, new)
        pieces.append(old)  # the original is freed: a free piece of its size
    total = reserved + added
    if total <= loading:
        return loading, None
    casts = (f"; prepare_model_for_kbit_training's fp32 casts take {added / GIB:.2f} GiB of new segments beyond its "
             "free pieces" if added else "")
    return total, (f"{note}; the weights as loaded {arrived / GIB:.2f} GiB{casts}: loading leaves "
                   f"{total / GIB:.2f} GiB reserved")


def loading_free_bytes(workload: Workload, loading_block: float) -> float:
    """The bytes loading leaves reserved but free, where the warmup block decides what loading reserves
    (`loading_block`, 0 elsewhere): that less the weights as prepared (the NF4 linears, every other parameter as
    cast)."""
    if not loading_block:
        return 0.0
    held = _as_loaded_bytes(workload) + sum(new - old for new, old in _casts(workload))
    return max(0.0, loading_block - held)


def _cut(pieces: list[float], size: float) -> float:
    """Cut `size` from the smallest free piece that holds it (the caching allocator's best fit), or return the new
    segment it takes."""
    fitting = [i for i, piece in enumerate(pieces) if piece >= size]
    if not fitting:
        return size
    best = min(fitting, key=lambda i: pieces[i])
    pieces[best] -= size
    return 0.0


def _load_width(workload: Workload) -> int:
    """Bytes per non-quantized parameter as from_pretrained loads them: the script's dtype, or the built-in
    trainer's fp32 (trainer/models.py `load_pretrained`)."""
    return 2 if workload.base_dtype in ("bf16", "fp16") else 4


def _as_loaded_bytes(workload: Workload) -> float:
    """The weights as from_pretrained leaves them: NF4 block linears with their quantization state, every other
    parameter at the load width."""
    quantized = workload.quantized_parameters
    return QLORA_BYTES_PER_PARAM * quantized + _load_width(workload) * (workload.model.num_parameters - quantized)


def _embedding_parameters(workload: Workload) -> int:
    spec = workload.model
    return spec.scaled(sum(t.numel for t in spec.tensors() if "embed_tokens" in t.module or t.module == "wte"))


def _casts(workload: Workload) -> list[tuple[float, float]]:
    """(bytes allocated, bytes freed) of each cast after a 16-bit load, in order: prepare_model_for_kbit_training
    makes every parameter that is no Params4bit fp32, in module order; TRL's SFTTrainer (0.7.5 to 0.26, with bf16)
    then casts the embedding and LM head back (`Workload.trl_bf16_cast_parameters`). Tensors of the small pool
    (norms, biases: 2 MiB segments of their own) are left out."""
    if not (workload.kbit_prepared and _load_width(workload) == 2):
        return []
    spec = workload.model
    quantized = {id(t) for t in spec.all_block_linears()}
    kept = [t for t in spec.tensors() if id(t) not in quantized and 4 * spec.scaled(t.numel) > SMALL_POOL_LIMIT]
    casts = [(4.0 * spec.scaled(t.numel), 2.0 * spec.scaled(t.numel)) for t in kept]
    if workload.trl_bf16_cast_parameters:
        names = ("lm_head", "embed_tokens", "wte", "wpe")
        casts += [(2.0 * spec.scaled(t.numel), 4.0 * spec.scaled(t.numel)) for t in kept
                  if any(n in t.module for n in names)]
    return casts


def gpu_memory_bytes(gpu: str | None) -> int | None:
    """The memory of the GPU named `gpu` (a --system key or the device's name) from the GPU table; None unknown.
    The data sheet's figure: a Colab T4 reports 14.741 GiB of its 15 GiB (ECC), which the cap then overstates."""
    from accelwiz.probe.gpus import find_gpu

    model = find_gpu(gpu)
    return model.memory_bytes if model else None
