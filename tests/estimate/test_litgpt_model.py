"""LitGPT's own GPT (`--stack litgpt==VERSION`, estimate/litgpt_model.py) against transformers' Llama, on real ops.

litgpt is not installed here (its package imports Lightning), so its block and its loss are transcribed below from
the PyPI wheels, line for line where memory is concerned: model.py `Block`, `CausalSelfAttention.forward` (0.2.0-0.5.4:
`k.expand(...)` before `reshape`), `apply_rope`, `LLaMAMLP`, `RMSNorm.forward` (0.2.0-0.4.5 and 0.4.6 on), utils.py
`chunked_cross_entropy` (0.5.3) and Lightning Fabric's `_FabricModule.forward` output cast (`convert_output`: every
floating tensor to torch's default dtype). The same transcription was checked against the unzipped 0.2.0 and 0.5.3
wheels' own GPT on this CPU (equal saved bytes).

* One layer (the 2-layer model less the 1-layer one): every storage autograd saves, caught with
  `saved_tensors_hooks`, in LitGPT's block less in transformers' LlamaForCausalLM at the same widths must be what
  the estimator's LitGPT layer adds to transformers' (K and V at every head, the attention output's copy for proj,
  0.4.6's fp32 normalised tensor).
* The loss tail: two training steps of LitGPT's loops (one head call as pretrain.py/finetune/full.py, the head in
  128-token chunks as finetune/lora.py), the logits cast by Fabric and held by the loop; torch's MemTracker's peak
  must be `loss_tail`'s kept bytes plus its larger transient.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from accelwiz.errors import UsageError  # noqa: E402
from accelwiz.estimate.activations import layer_activations, logits_bytes, loss_transient_bytes  # noqa: E402
from accelwiz.estimate.litgpt_model import loss_tail  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from accelwiz.modelspec.lookup import resolve_model, spec_from_hf_config  # noqa: E402
from accelwiz.resolution.stack import Stack, stack_from_flags  # noqa: E402
from tests.estimate.saved_storages import SavedStorages  # noqa: E402

F = torch.nn.functional
HIDDEN, HEADS, GROUPS, HEAD_DIM, MLP, VOCAB, BATCH, SEQ = 256, 8, 2, 32, 688, 1024, 2, 64


class _RMSNorm(torch.nn.Module):
    def __init__(self, size: int, fp32_product: bool) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(size))
        self.eps, self.fp32_product = 1e-5, fp32_product

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        norm_x = torch.mean(x * x, dim=-1, keepdim=True)
        x_normed = x * torch.rsqrt(norm_x + self.eps)
        if self.fp32_product:  # 0.4.6 on
            return (x_normed * self.weight.float()).to(dtype=dtype)
        x_normed = x_normed.to(dtype=dtype)  # 0.2.0-0.4.5
        return x_normed * self.weight


def _apply_rope(x, cos, sin):
    head_size = x.size(-1)
    x1 = x[..., : head_size // 2]
    x2 = x[..., head_size // 2:]
    rotated = torch.cat((-x2, x1), dim=-1)
    roped = (x * cos) + (rotated * sin)
    return roped.to(dtype=x.dtype)


class _Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = torch.nn.Linear(HIDDEN, (HEADS + 2 * GROUPS) * HEAD_DIM, bias=False)
        self.proj = torch.nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.size()
        qkv = self.attn(x)
        q_per_kv = HEADS // GROUPS
        qkv = qkv.view(B, T, GROUPS, q_per_kv + 2, HEAD_DIM).permute(0, 2, 3, 1, 4)
        q, k, v = qkv.split((q_per_kv, 1, 1), dim=2)
        k = k.expand(B, GROUPS, q_per_kv, T, HEAD_DIM)
        v = v.expand(B, GROUPS, q_per_kv, T, HEAD_DIM)
        q = q.reshape(B, -1, T, HEAD_DIM)
        k = k.reshape(B, -1, T, HEAD_DIM)
        v = v.reshape(B, -1, T, HEAD_DIM)
        q = torch.cat((_apply_rope(q[..., :HEAD_DIM], cos, sin), q[..., HEAD_DIM:]), dim=-1)
        k = torch.cat((_apply_rope(k[..., :HEAD_DIM], cos, sin), k[..., HEAD_DIM:]), dim=-1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, scale=1.0 / math.sqrt(HEAD_DIM),
                                           is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, HEAD_DIM * HEADS))


class _Block(torch.nn.Module):
    def __init__(self, fp32_product: bool) -> None:
        super().__init__()
        self.norm_1, self.norm_2 = _RMSNorm(HIDDEN, fp32_product), _RMSNorm(HIDDEN, fp32_product)
        self.attn = _Attention()
        self.fc_1 = torch.nn.Linear(HIDDEN, MLP, bias=False)
        self.fc_2 = torch.nn.Linear(HIDDEN, MLP, bias=False)
        self.proj = torch.nn.Linear(MLP, HIDDEN, bias=False)

    def forward(self, x, cos, sin):
        x = self.attn(self.norm_1(x), cos, sin) + x
        n_2 = self.norm_2(x)
        return self.proj(F.silu(self.fc_1(n_2)) * self.fc_2(n_2)) + x


class _GPT(torch.nn.Module):
    def __init__(self, layers: int, fp32_product: bool) -> None:
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, HIDDEN)
        self.h = torch.nn.ModuleList(_Block(fp32_product) for _ in range(layers))
        self.ln_f = _RMSNorm(HIDDEN, fp32_product)
        self.lm_head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)
        theta = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
        angles = torch.outer(torch.arange(SEQ).float(), theta).repeat(1, 2)
        self.register_buffer("cos", torch.cos(angles), persistent=False)
        self.register_buffer("sin", torch.sin(angles), persistent=False)

    def forward(self, idx):
        x = self.wte(idx)
        for block in self.h:
            x = block(x, self.cos, self.sin)
        return self.lm_head(self.ln_f(x))


def _hf(layers: int):
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=MLP,
                                      num_attention_heads=HEADS, num_key_value_heads=GROUPS, head_dim=HEAD_DIM,
                                      num_hidden_layers=layers, max_position_embeddings=SEQ)
    config._attn_implementation = "sdpa"
    return transformers.LlamaForCausalLM(config)


def _saved_bytes(model) -> int:
    """Bytes of every storage autograd saves in forward (parameters excluded), each counted once; bf16 as Fabric's
    bf16-true leaves the module (`module.to(torch.bfloat16)`, buffers included)."""
    torch.manual_seed(0)
    model = model.to(torch.bfloat16).train()
    with SavedStorages() as saved:
        model(torch.randint(0, VOCAB, (BATCH, SEQ)))
    return saved.bytes(model)


def _workload(litgpt: str | None) -> Workload:
    spec = spec_from_hf_config(_hf(1).config.to_dict(), name="tiny-llama", source="test")
    stack = stack_from_flags([f"litgpt=={litgpt}"]) if litgpt else Stack(torch=(2, 13, 0), transformers=(5, 25, 0))
    return Workload(spec, micro_batch=BATCH, seq_len=SEQ, precision="bf16", regime="full", stack=stack)


@pytest.mark.parametrize(("version", "fp32_product"), [("0.4.5", False), ("0.5.3", True)])
def test_a_litgpt_layer_keeps_what_the_estimate_adds_to_transformers(version: str, fp32_product: bool) -> None:
    litgpt = _saved_bytes(_GPT(2, fp32_product)) - _saved_bytes(_GPT(1, fp32_product))
    hf = _saved_bytes(_hf(2)) - _saved_bytes(_hf(1))
    added = layer_activations(_workload(version)).total - layer_activations(_workload(None)).total
    # each norm's `weight.float()` (4 B per weight element) is kept too: not per token, not counted
    assert litgpt - hf == pytest.approx(added, abs=2 * 4 * HIDDEN)
    sbh = BATCH * SEQ * HIDDEN
    # K and V at 8 heads, not 2 (3 sbh), the attention output's copy (2 sbh), 0.4.6's fp32 products (2 x 2 sbh)
    assert added == (5 + (4 if fp32_product else 0)) * sbh


def _fabric(output):
    """Lightning Fabric's `_FabricModule.forward`: `precision.convert_output(output)`, floating tensors to fp32."""
    if isinstance(output, list):
        return [tensor.to(torch.get_default_dtype()) for tensor in output]
    return output.to(torch.get_default_dtype())


def _chunked_cross_entropy(logits, targets, chunk_size: int = 128):  # utils.py, litgpt 0.5.3
    if isinstance(logits, list):
        logit_chunks = [chunk.reshape(-1, chunk.size(-1)) for chunk in logits]
        target_chunks = [chunk.reshape(-1) for chunk in targets.split(logits[0].size(1), dim=1)]
    else:
        logit_chunks = logits.reshape(-1, logits.size(-1)).split(chunk_size)
        target_chunks = targets.reshape(-1).split(chunk_size)
    losses = [F.cross_entropy(chunk, target, ignore_index=-100, reduction="none")
              for chunk, target in zip(logit_chunks, target_chunks)]
    non_masked = (targets != -100).sum()
    return torch.cat(losses).sum() / non_masked.maximum(torch.ones_like(non_masked))


TAIL_BATCH, TAIL_SEQ, TAIL_VOCAB, TAIL_WIDTH = 2, 512, 3000, 16


def _tail_peak(loop: str) -> int:
    """The peak of two steps of LitGPT's loop over a frozen bf16 head (its input a leaf, as the last norm's output)."""
    from torch.distributed._tools.mem_tracker import MemTracker

    torch.manual_seed(0)
    weight = torch.randn(TAIL_VOCAB, TAIL_WIDTH, dtype=torch.bfloat16)  # frozen (LoRA's head)

    def head(x):  # the LM head's nn.Linear (a module call would have MemTracker hook a frozen output)
        return F.linear(x, weight)

    targets = torch.randint(0, TAIL_VOCAB, (TAIL_BATCH, TAIL_SEQ))
    tracker = MemTracker()
    with tracker:
        for _ in range(2):
            x = torch.randn(TAIL_BATCH, TAIL_SEQ, TAIL_WIDTH, dtype=torch.bfloat16).requires_grad_()
            if loop == "lora":  # finetune/lora.py: the head in 128-token chunks, the last one shifted
                logits = _fabric([head(chunk) for chunk in x.split(128, dim=1)])
                logits[-1] = logits[-1][..., :-1, :]
                loss = _chunked_cross_entropy(logits, targets[..., 1:])
            elif loop == "full":  # finetune/full.py
                logits = _fabric(head(x))
                loss = _chunked_cross_entropy(logits[..., :-1, :], targets[..., 1:])
            else:  # pretrain.py
                logits = _fabric(head(x))
                loss = _chunked_cross_entropy(logits, targets)
            loss.backward()
    return sum(stats["Total"] for stats in tracker.get_tracker_snapshot("peak").values())


@pytest.mark.parametrize(("loop", "regime"), [("pretrain", "full"), ("full", "full"), ("lora", "lora")])
def test_fabrics_fp32_logits_and_the_chunked_loss_peak_as_counted(loop: str, regime: str) -> None:
    spec = replace(resolve_model("llama-3.2-1b"), vocab_size=TAIL_VOCAB)
    workload = Workload(spec, micro_batch=TAIL_BATCH, seq_len=TAIL_SEQ, precision="bf16", regime=regime,
                        stack=stack_from_flags(["litgpt==0.5.3"]))
    kept, forward, backward = loss_tail(workload)
    assert logits_bytes(workload) == kept and loss_transient_bytes(workload) == (forward, backward)
    tokens = TAIL_BATCH * TAIL_SEQ * TAIL_VOCAB
    # beside it the head's inputs and their gradients (16 wide) and one chunk's loss temporaries: 0.1 B a logit
    assert _tail_peak(loop) == pytest.approx(kept + max(forward, backward), abs=0.1 * tokens)
    # pretrain.py's loop would have no shifted copy: its peak is backward's, which full fine-tuning shares
    assert kept == 8 * tokens and max(forward, backward) == (2 if regime == "lora" else 4) * tokens


def test_litgpt_is_said_not_installed_and_refuses_a_malformed_version() -> None:
    assert Stack().litgpt is None and stack_from_flags([]).litgpt is None
    assert stack_from_flags(["litgpt==0.5.3"]).litgpt == (0, 5, 3)
    with pytest.raises(UsageError, match="not a version") as refused:
        stack_from_flags(["litgpt==latest"])
    assert "litgpt==0.5.3" in refused.value.hint
