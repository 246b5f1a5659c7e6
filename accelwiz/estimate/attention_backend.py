"""Which kernel `torch.nn.functional.scaled_dot_product_attention` runs for `--attention sdpa`, and what its math
fallback keeps for backward (issue 28).

activations.py counts SDPA as a fused kernel (flash or memory-efficient): q, k, v, the output and an fp32
log-sum-exp, no s×s scores. torch picks the kernel per call (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
`select_sdp_backend`: flash, then memory-efficient, then math; cuDNN is tried first only on Hopper/Blackwell with a
recent cuDNN, and takes only what flash takes here, 16-bit). The constraints a training call meets:

* flash: no attn_mask (`check_for_attn_mask`) and 16-bit only. torch 2.0/2.1 (FlashAttention 1): sm75 and later,
  fp16 (bf16 from sm80), head dim <= 128, and on sm86/89 no training with head dim > 64; torch 2.2 on
  (FlashAttention 2): sm80 and later, head dim <= 256, on sm86/89 no training with head dim > 192 (today's source:
  only in (192, 224], or above 224 with dropout). Grouped-query K
  and V (`enable_gqa`) from torch 2.5;
* memory-efficient: sm50 and later, fp32 and fp16, bf16 only from sm80; an attn_mask from torch 2.1 (2.0:
  `check_for_attn_mask` too); no `enable_gqa` (`check_batch_size_and_num_heads_dense<false>`; still so in torch
  2.9.1, measured in Comfy-Org/ComfyUI#15135; pytorch/pytorch#191085 adds it after that, in a release not pinned
  here, so it is not counted);
* math: everything else. So bf16 on a V100 or T4, fp32 with `enable_gqa`, 16-bit `enable_gqa` on a GPU before
  sm80 or with head dim > 256 fall to math.

The math backend (`_scaled_dot_product_attention_math`) is matmul, softmax, matmul: autograd keeps the softmax
output, s×s per head, and the scaled q and k and v it multiplies, with K and V expanded to every head under
`enable_gqa` (`repeat_interleave`). Before torch 2.5 all in the inputs' dtype; from 2.5 (pytorch/pytorch#128922)
it upcasts fp16/bf16 inputs to fp32 first (unless `allow_fp16_bf16_reduction_math_sdp(True)`), so it keeps fp32
q, k, v and fp32 probabilities: 4 bytes a score, where eager attention keeps 6 (layer_terms.py). No log-sum-exp.
Measured on the real op on CPU (tests/estimate/test_attention_backend.py, every saved tensor caught).

The dtype attention runs in: fp32 training fp32; pure 16-bit bf16 (fp16 where the base is loaded in fp16); mixed
precision fp16 before sm80 (the HF Trainer refuses --bf16 there) and bf16 after. A mask is passed where batches are
padded (`varying_lengths`, as activations_gqa.py decides). The GPU's compute capability is the GPU table's (an A10G
is sm86, an A100 sm80); an unknown or AMD GPU keeps the fused count. Gated decoders (the Llama family) only: other
architectures' SDPA terms are not split this way. A remote-code model (ChatGLM2/3, InternLM2) is taken as
transformers' attention, the gap activations_gqa.py names: its own code expands K and V and passes no enable_gqa.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from accelwiz.estimate.workload import Workload

Backend = Literal["flash", "efficient", "math"]
FLASH_2 = (2, 2, 0)  # FlashAttention 2 in SDPA: sm80+, head dim <= 256
EFFICIENT_MASK = (2, 1, 0)  # memory-efficient attention takes an attn_mask
ENABLE_GQA = (2, 5, 0)  # scaled_dot_product_attention(enable_gqa=) (flash only)
MATH_UPCAST = (2, 5, 0)  # the math backend upcasts fp16/bf16 to fp32 (pytorch/pytorch#128922)
# GPU generation -> (major, minor) compute capability, for a GPU the table (accelwiz/probe) does not list; Ampere
# is then taken as the A100's sm80 (an A10 or RTX 30 is sm86, whose flash limit on training head dims is not applied)
_SM = {"pascal": (6, 0), "volta": (7, 0), "turing": (7, 5), "ampere": (8, 0), "ada": (8, 9), "hopper": (9, 0),
       "blackwell": (10, 0)}


@dataclass(frozen=True)
class SdpaChoice:
    backend: Backend
    reason: str


def sdpa_backend(sm: tuple[int, int], dtype: str, *, mask: bool, head_dim: int, gqa: bool,
                 torch: tuple[int, ...] | None) -> SdpaChoice:
    """The kernel SDPA's dispatcher picks for one training call on an sm `major.minor` GPU (torch None: today's)."""
    name = f"sm{sm[0]}{sm[1]}"
    new = torch is None or tuple(torch) >= FLASH_2
    flash_no = _flash_refusal(sm, dtype, mask=mask, head_dim=head_dim, gqa=gqa, torch=torch, new=new)
    if flash_no is None:
        return SdpaChoice("flash", f"flash attention on {name} ({dtype}, head dim {head_dim})")
    efficient_no = None
    if dtype == "bf16" and sm < (8, 0):
        efficient_no = "memory-efficient needs sm80 for bf16"
    elif mask and torch is not None and tuple(torch) < EFFICIENT_MASK:
        efficient_no = "memory-efficient takes no attn_mask before torch 2.1"
    elif gqa:
        efficient_no = "memory-efficient takes no enable_gqa"
    if efficient_no is None:
        return SdpaChoice("efficient", f"memory-efficient attention on {name} ({flash_no})")
    return SdpaChoice("math", f"{flash_no}; {efficient_no}")


def _flash_refusal(sm: tuple[int, int], dtype: str, *, mask: bool, head_dim: int, gqa: bool,
                   torch: tuple[int, ...] | None, new: bool) -> str | None:
    """Why flash attention refuses the call, or None."""
    if mask:
        return "flash takes no attn_mask"
    if dtype == "fp32":
        return "flash takes fp16/bf16 only"
    if sm < ((8, 0) if new or dtype == "bf16" else (7, 5)):
        return f"flash needs sm{'80' if new or dtype == 'bf16' else '75'}"
    limit = 256 if new else 128
    if head_dim > limit:
        return f"flash takes head dim <= {limit}"
    if (8, 6) <= sm <= (8, 9) and _consumer_limit(head_dim, torch, new):
        return f"flash does not train head dim {head_dim} on sm86-89"
    if gqa and torch is not None and tuple(torch) < ENABLE_GQA:
        return "no enable_gqa before torch 2.5"
    return None


def _consumer_limit(head_dim: int, torch: tuple[int, ...] | None, new: bool) -> bool:
    """sm86-89 cannot run flash's backward at this head dim: above 64 with FlashAttention 1, above 192 with
    FlashAttention 2, and today's (torch None) only in (192, 224] without dropout (the release that relaxed it is
    not pinned here, so a pinned torch keeps the older limit)."""
    if not new:
        return head_dim > 64
    return 192 < head_dim <= 224 if torch is None else head_dim > 192


def attention_dtype(workload: Workload, sm: tuple[int, int]) -> str:
    """The dtype SDPA's inputs have: fp32 training fp32; pure 16-bit the base's dtype where it is fp16 (a TRL script's
    fp16 load), else bf16; mixed fp16 before sm80 (the HF Trainer refuses --bf16 there) and bf16 after."""
    if workload.precision == "fp32":
        return "fp32"
    if workload.precision == "bf16":
        return "fp16" if workload.base_dtype == "fp16" else "bf16"
    return "fp16" if sm < (8, 0) else "bf16"


def compute_capability(gpu: str | None) -> tuple[int, int] | None:
    """The GPU's compute capability: the GPU table's row, else its generation's (runtime.generation); None for an
    unknown or non-NVIDIA GPU (ROCm's SDPA has other kernels)."""
    if not gpu:
        return None
    from accelwiz.estimate.runtime import generation
    from accelwiz.probe.gpus import match_gpu_name

    listed = match_gpu_name(gpu)
    if listed is not None:
        return tuple(listed.compute_capability) if listed.vendor == "nvidia" else None  # type: ignore[return-value]
    return _SM.get(generation(gpu) or "")


def sdpa_choice(workload: Workload) -> SdpaChoice | None:
    """The run's SDPA kernel, or None where it is not decided here (not SDPA, GPU unknown, not a gated decoder)."""
    from accelwiz.estimate.activations_gqa import kv_expansion_reason

    spec = workload.model
    sm = compute_capability(workload.attention_gpu)
    if workload.attention != "sdpa" or sm is None or not spec.gated_decoder:
        return None
    gqa = spec.num_kv_heads < spec.num_heads and kv_expansion_reason(workload) is None  # enable_gqa passed
    return sdpa_backend(sm, attention_dtype(workload, sm), mask=workload.varying_lengths, head_dim=spec.head_dim,
                        gqa=gqa, torch=workload.stack.torch)


def output_in_query_layout(workload: Workload) -> bool:
    """Whether the attention output comes back in the query's (B, heads, T, d) layout (eager scores @ v, the math
    backend's matmul, FlashAttention's `empty_like` of the query), so a `transpose(1, 2).reshape` for the output
    projection copies it; memory-efficient attention lays its output out (B, T, heads, d) whatever the query."""
    if workload.attention == "eager":
        return True
    choice = sdpa_choice(workload)
    return choice is None or choice.backend != "efficient"


def math_bytes(workload: Workload) -> tuple[int, int]:
    """Per layer, on the math backend: (the probabilities kept, q/k/v bytes beyond what the fused count has)."""
    from accelwiz.estimate.activations_gqa import kv_expansion_reason

    spec = workload.model
    s, b, a, d = workload.seq_len, workload.micro_batch, spec.num_heads, spec.head_dim
    width = workload.compute_width
    torch = workload.stack.torch
    kept = 4 if width == 4 or torch is None or tuple(torch) >= MATH_UPCAST else 2
    # the fused count (layer_terms + activations_gqa): q at every head, K and V at the KV heads unless expanded
    kv = a if kv_expansion_reason(workload) is not None else spec.num_kv_heads
    counted = width * (a + 2 * kv) * d * s * b
    return kept * a * s * s * b, kept * 3 * a * d * s * b - counted


def math_terms(workload: Workload) -> list[tuple[str, int]] | None:
    """The layer's attention terms where SDPA runs its math backend (replacing the log-sum-exp), else None."""
    choice = sdpa_choice(workload)
    if choice is None or choice.backend != "math":
        return None
    scores, qkv = math_bytes(workload)
    terms = [("attention probabilities (SDPA math backend)", scores)]
    if qkv:
        terms.append(("q, k, v as SDPA's math backend keeps them", qkv))
    return terms


def backend_notes(workload: Workload) -> tuple[str, ...]:
    """The assumption line: which kernel and why (activations.activation_bytes)."""
    if workload.attention != "sdpa" or not workload.model.gated_decoder:
        return ()
    choice = sdpa_choice(workload)
    if choice is None:
        return ("SDPA counted as a fused kernel (no s×s scores): the GPU is unknown, so torch's choice of its "
                "math fallback is not judged",)
    if choice.backend != "math":
        return (f"SDPA runs {choice.reason}",)
    scores, _ = math_bytes(workload)
    return (f"SDPA falls back to its math kernel on the {workload.attention_gpu} ({choice.reason}): it keeps the "
            f"s×s probabilities, {scores / 2**20:.1f} MiB per layer",)


def on_gpu(workload: Workload, gpu: str | None) -> Workload:
    """The workload with the GPU SDPA's choice reads (estimate_memory's GPU name; None: unknown)."""
    return replace(workload, attention_gpu=gpu)
