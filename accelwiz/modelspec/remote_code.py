"""Models whose repository ships its own modeling code (`trust_remote_code=True`), sized without running it.

Their config.json names a `model_type` transformers does not know (qwen, chatglm, baichuan, internlm2), so
from_config.py cannot build them. Each family here translates ITS config.json into the config of a
transformers architecture with exactly the same parameter tensors (the "stand-in": qwen2 or llama), which is
built as any other config; the blocks' tensors are then renamed and fused back to the remote code's own
modules (`c_attn`, `query_key_value`, `W_pack`, `wqkv`, ...), so LoRA targets written for the real model
(Qwen's finetune.py: c_attn, c_proj, w1, w2) count the real adapters. Outside the blocks the estimator's
names stay (embed_tokens, norm, lm_head).

What the remote code does differently from the stand-in is carried as ModelSpec features, never as a family
test elsewhere: `loss_upcasts_logits`, `sdpa_refusal` (attention without SDPA), and `activations_note` where
activations.py lacks a term (Baichuan's ALiBi mask). Every translation is proved by the published parameter
count in tests/estimate/test_remote_code.py; the code read is quoted by file and line (HF repositories as of
their last revision, read through GitHub mirrors named in each family's docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from accelwiz.errors import UsageError
from accelwiz.modelspec.spec import ModelSpec
from accelwiz.modelspec.tensors import Tensor

# The real module (inside one block) <- the stand-in's modules it fuses, in the order they are concatenated.
Layout = tuple[tuple[str, tuple[str, ...]], ...]
_QKV = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")
# a block's two RMSNorms: as transformers names them, and as tensors.py names a preset's
_NORM1, _NORM2 = ("input_layernorm", "norm0"), ("post_attention_layernorm", "norm1")


@dataclass(frozen=True)
class RemoteFamily:
    """One remote-code family: how its config.json becomes the stand-in's, and what its code does differently."""

    model_type: str
    what: str  # the code it describes, for the spec's source line
    translate: Callable[[dict[str, Any], str], dict[str, Any]]
    layout: Layout
    loss_upcasts_logits: bool
    sdpa_refusal: Callable[[dict[str, Any]], str]
    activations_note: Callable[[dict[str, Any]], str] = lambda config: ""


def _need(config: dict[str, Any], keys: tuple[str, ...], source: str, family: str) -> list[int]:
    """The values of `keys`, each written in the file as a positive integer (the remote config classes' defaults
    are one model's sizes: a missing size would silently estimate that model)."""
    missing = [key for key in keys if key not in config]
    if missing:
        raise UsageError(f"{source}: missing field(s) {', '.join(missing)} of a {family} config.json",
                         hint="pass the model's published config.json")
    bad = [key for key in keys if type(config[key]) is not int or config[key] < 1]
    if bad:
        raise UsageError(f"{source}: {bad[0]} must be a positive integer (got {config[bad[0]]!r})",
                         hint="pass the model's published config.json")
    return [config[key] for key in keys]


def _refuse(source: str, family: str, why: str) -> UsageError:
    return UsageError(f"{source}: this {family} config has {why}, which no transformers architecture builds "
                      "with the same tensors", hint="pass the parameter count instead, e.g. --params 7e9")


# -- Qwen-1 (QwenLM): Qwen/Qwen-1_8B, -7B, -14B, -72B and their -Chat ------------------------------------------
# modeling_qwen.py (HF Qwen/Qwen-7B d4efd21, mirrored at github.com/zhangningboo/Qwen-7B): c_attn =
# nn.Linear(hidden, 3 * kv_channels * heads) with bias (l.269), c_proj without (l.271, no_bias), QWenMLP w1, w2 of
# width intermediate_size // 2 and c_proj back (l.561-568; forward l.571-574: w1(x) * silu(w2(x))), ln_1/ln_2
# RMSNorms, a separate lm_head (l.980): exactly Qwen2's tensors with head_dim kv_channels, no GQA.
def _qwen(config: dict[str, Any], source: str) -> dict[str, Any]:
    h, layers, heads, width, vocab = _need(
        config, ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"),
        source, "Qwen-1")
    head_dim = config.get("kv_channels", 128)  # QWenConfig's default
    if config.get("no_bias", True) is not True:
        raise _refuse(source, "Qwen-1", "no_bias false (biases on c_proj and the MLP)")
    if head_dim * heads != h or width % 2:
        raise _refuse(source, "Qwen-1", f"kv_channels x heads {head_dim * heads} != hidden_size {h} or an odd "
                                        f"intermediate_size {width}")
    return {"model_type": "qwen2", "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": heads, "head_dim": head_dim, "intermediate_size": width // 2,
            "vocab_size": vocab, "tie_word_embeddings": bool(config.get("tie_word_embeddings", False)),
            "max_position_embeddings": config.get("max_position_embeddings") or config.get("seq_length") or 8192}


_QWEN_LAYOUT: Layout = (("attn.c_attn", _QKV), ("attn.c_proj", ("self_attn.o_proj",)),
                        ("ln_1", _NORM1), ("ln_2", _NORM2),
                        ("mlp.w1", ("mlp.up_proj",)), ("mlp.w2", ("mlp.gate_proj",)),
                        ("mlp.c_proj", ("mlp.down_proj",)))


# -- ChatGLM2/3 and GLM-4 (THUDM): chatglm2-6b, chatglm3-6b, glm-4-9b ------------------------------------------
# modeling_chatglm.py (HF THUDM/chatglm3-6b, mirrored at github.com/czk1997/chatglm3-copy 456aa87):
# query_key_value = Linear(hidden, kv_channels * (heads + 2 * multi_query_group_num), bias=add_qkv_bias)
# (l.330-339), dense without bias (l.344), dense_h_to_4h = Linear(hidden, 2 * ffn_hidden_size) split
# silu(x[0]) * x[1] (l.473-486), dense_4h_to_h (l.488), RMSNorms (l.520-530, final l.600), word_embeddings and
# output_layer of padded_vocab_size rows (l.714, l.757): Qwen2's tensors with GQA (llama's without the bias).
def _chatglm(config: dict[str, Any], source: str) -> dict[str, Any]:
    if "ffn_hidden_size" not in config and "inner_hidden_size" in config:
        raise _refuse(source, "ChatGLM", "the first ChatGLM-6B's layout (inner_hidden_size, 2D positions)")
    h, layers, heads, width, vocab = _need(
        config, ("hidden_size", "num_layers", "num_attention_heads", "ffn_hidden_size", "padded_vocab_size"),
        source, "ChatGLM")
    for key, allowed in (("add_bias_linear", False), ("rmsnorm", True), ("post_layer_norm", True)):
        if config.get(key, allowed) is not allowed:
            raise _refuse(source, "ChatGLM", f"{key} {str(not allowed).lower()}")
    if config.get("pre_seq_len"):
        raise _refuse(source, "ChatGLM", f"a P-Tuning v2 prefix encoder (pre_seq_len {config['pre_seq_len']})")
    groups = config.get("multi_query_group_num", 1) if config.get("multi_query_attention") else heads
    if type(groups) is not int or groups < 1 or heads % groups:
        raise _refuse(source, "ChatGLM", f"{heads} heads in {groups!r} multi-query groups")
    return {"model_type": "qwen2" if config.get("add_qkv_bias") else "llama", "hidden_size": h,
            "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": groups,
            "head_dim": config.get("kv_channels") or h // heads, "intermediate_size": width, "vocab_size": vocab,
            "tie_word_embeddings": False,  # output_layer is its own Linear (l.757), never tied
            "max_position_embeddings": config.get("seq_length") or 8192}


_CHATGLM_LAYOUT: Layout = (("self_attention.query_key_value", _QKV), ("self_attention.dense", ("self_attn.o_proj",)),
                           ("mlp.dense_h_to_4h", ("mlp.gate_proj", "mlp.up_proj")),
                           ("mlp.dense_4h_to_h", ("mlp.down_proj",)), ("input_layernorm", _NORM1),
                           ("post_attention_layernorm", _NORM2))


# -- Baichuan / Baichuan2 (baichuan-inc): Baichuan2-7B-Base/-Chat, Baichuan2-13B-Base/-Chat --------------------
# modeling_baichuan.py (HF Baichuan2-13B-Chat c6f8592, mirrored at github.com/jrd77/Baichuan2-13B-Chat): W_pack =
# Linear(hidden, 3 * hidden, bias=False) (l.123), o_proj, gate/up/down_proj, RMSNorms, NormHead lm_head of
# vocab x hidden (l.504-508): Llama's tensors. The 7B uses rotary positions (its config writes
# max_position_embeddings); the 13B uses ALiBi (no max_position_embeddings, only model_max_length).
def _baichuan(config: dict[str, Any], source: str) -> dict[str, Any]:
    h, layers, heads, width, vocab = _need(
        config, ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"),
        source, "Baichuan")
    if h % heads:
        raise _refuse(source, "Baichuan", f"hidden_size {h} not divisible by {heads} heads")
    return {"model_type": "llama", "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": heads, "intermediate_size": width, "vocab_size": vocab,
            "tie_word_embeddings": bool(config.get("tie_word_embeddings", False)),
            "max_position_embeddings": config.get("max_position_embeddings") or config.get("model_max_length")
            or 4096}


def _alibi(config: dict[str, Any]) -> bool:
    return "max_position_embeddings" not in config


_BAICHUAN_LAYOUT: Layout = (("self_attn.W_pack", _QKV), ("input_layernorm", _NORM1),
                            ("post_attention_layernorm", _NORM2))


def _baichuan_attention(config: dict[str, Any]) -> str:
    # the rotary 7B's own modeling_baichuan.py was not available to read: its SDPA default is assumed, unverified
    if not _alibi(config):
        return ""
    return ("Baichuan's ALiBi attention (modeling_baichuan.py l.174-186): without xformers installed it is "
            "its own matmul + softmax over s x s scores (eager); SDPA only when xformers imports")


def _baichuan_note(config: dict[str, Any]) -> str:
    if not _alibi(config):
        return ""
    return ("activations approximate: Baichuan's ALiBi mask, one [batch, heads, s, s] tensor built per forward "
            "(modeling_baichuan.py l.316-333, l.425), is not in the formula (`accelwiz estimate --trace` "
            "does not run remote code either)")


# -- InternLM2 (internlm): internlm2-7b, internlm2-chat-7b, internlm2-20b ---------------------------------------
# modeling_internlm2.py (HF internlm/internlm2-chat-7b 4275caa, mirrored at github.com/NanSang2000/S1mpleAgent):
# wqkv = Linear(hidden, (heads + 2 * kv_heads) * head_dim, bias=config.bias), wo (l.286-292), feed_forward w1
# (gate), w3 (up), w2 (down) without bias (l.241-247), attention_norm/ffn_norm (l.601-602), tok_embeddings and
# output (l.794, l.976): Llama's tensors with GQA.
def _internlm2(config: dict[str, Any], source: str) -> dict[str, Any]:
    h, layers, heads, width, vocab = _need(
        config, ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"),
        source, "InternLM2")
    kv = config.get("num_key_value_heads") or heads
    if type(kv) is not int or h % heads or heads % kv:
        raise _refuse(source, "InternLM2", f"{heads} heads over hidden {h} with {kv!r} key/value heads")
    return {"model_type": "llama", "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv, "intermediate_size": width, "vocab_size": vocab,
            "attention_bias": bool(config.get("bias", True)),  # InternLM2Config's default; released configs: false
            "tie_word_embeddings": bool(config.get("tie_word_embeddings", False)),
            "max_position_embeddings": config.get("max_position_embeddings") or 32768}


_INTERNLM2_LAYOUT: Layout = (("attention.wqkv", _QKV), ("attention.wo", ("self_attn.o_proj",)),
                             ("feed_forward.w1", ("mlp.gate_proj",)), ("feed_forward.w3", ("mlp.up_proj",)),
                             ("feed_forward.w2", ("mlp.down_proj",)), ("attention_norm", _NORM1),
                             ("ffn_norm", _NORM2))


def _internlm2_attention(config: dict[str, Any]) -> str:
    return ("InternLM2's remote code has no SDPA path: INTERNLM2_ATTENTION_CLASSES holds eager and "
            f"flash_attention_2 only (modeling_internlm2.py l.587-590; this config: "
            f"{config.get('attn_implementation') or 'eager'})")


REMOTE_FAMILIES: dict[str, RemoteFamily] = {
    # Qwen-1's loss: CrossEntropyLoss on lm_logits with no .float() (l.1060-1069). Attention: flash-attn when
    # installed on CUDA in bf16/fp16, else F.scaled_dot_product_attention with an explicit mask (l.492-532).
    "qwen": RemoteFamily("qwen", "Qwen-1 remote code (QwenLM modeling_qwen.py)", _qwen, _QWEN_LAYOUT,
                         loss_upcasts_logits=False, sdpa_refusal=lambda config: ""),
    # ChatGLM's loss: `lm_logits = lm_logits.to(torch.float32)` before CrossEntropyLoss (l.955-963). Attention:
    # F.scaled_dot_product_attention on torch >= 2 (CoreAttention l.222-231).
    "chatglm": RemoteFamily("chatglm", "ChatGLM2/3 and GLM-4 remote code (THUDM modeling_chatglm.py)", _chatglm,
                            _CHATGLM_LAYOUT, loss_upcasts_logits=True, sdpa_refusal=lambda config: ""),
    # Baichuan2's loss: CrossEntropyLoss on the lm_head's 16-bit logits plus a z-loss (l.705-719), no upcast.
    "baichuan": RemoteFamily("baichuan", "Baichuan remote code (baichuan-inc modeling_baichuan.py)", _baichuan,
                             _BAICHUAN_LAYOUT, loss_upcasts_logits=False, sdpa_refusal=_baichuan_attention,
                             activations_note=_baichuan_note),
    # InternLM2's loss: `logits = logits.float()` right after the output layer (l.1060-1061).
    "internlm2": RemoteFamily("internlm2", "InternLM2 remote code (internlm modeling_internlm2.py)", _internlm2,
                              _INTERNLM2_LAYOUT, loss_upcasts_logits=True, sdpa_refusal=_internlm2_attention),
}


def remote_family(config: dict[str, Any]) -> RemoteFamily | None:
    """The remote-code family a parsed config.json belongs to, None for any other model_type."""
    model_type = config.get("model_type")
    return REMOTE_FAMILIES.get(model_type) if isinstance(model_type, str) else None


def described(family: RemoteFamily, config: dict[str, Any], source: str) -> str:
    """The spec's source line: where the config came from, then what was estimated in its place."""
    stand_in = family.translate(config, source)
    return (f"{source}; {family.what}, estimated as the {stand_in['model_type']} tensors it equals, renamed to "
            "its own modules")


def rename_blocks(tensors: tuple[Tensor, ...], layout: Layout) -> tuple[Tensor, ...]:
    """The stand-in's tensors with each block's modules renamed (and fused: q/k/v into one) as the remote code
    names them; fused weights and biases concatenate their rows, as one nn.Linear of the summed width."""
    targets = {old: new for new, olds in layout for old in olds}
    out: list[Tensor] = []
    fused: dict[tuple[str, str], int] = {}  # (module, tensor name) -> its index in `out`
    for t in tensors:
        prefix, sep, inner = _split_block(t.module)
        new = targets.get(inner) if sep else None
        if new is None:
            out.append(t)
            continue
        key = (prefix + new, t.name)
        if key in fused:
            first = out[fused[key]]
            out[fused[key]] = first._replace(shape=(first.shape[0] + t.shape[0], *first.shape[1:]))
        else:
            fused[key] = len(out)
            out.append(t._replace(module=prefix + new))
    return tuple(out)


def _split_block(module: str) -> tuple[str, bool, str]:
    """'layers.3.self_attn.q_proj' -> ('layers.3.', True, 'self_attn.q_proj'); a module outside the blocks -> no."""
    parts = module.split(".", 2)
    if len(parts) == 3 and parts[0] == "layers" and parts[1].isdigit():
        return f"layers.{parts[1]}.", True, parts[2]
    return "", False, module


def as_remote(spec: ModelSpec, family: RemoteFamily, config: dict[str, Any]) -> ModelSpec:
    """The stand-in's spec as the remote model: its own module names, its loss and attention, its notes."""
    note = family.activations_note(config)
    return replace(
        spec,
        built_tensors=rename_blocks(spec.tensors(), family.layout),
        loss_upcasts_logits=family.loss_upcasts_logits,
        sdpa_refusal=family.sdpa_refusal(config),
        analytic_activations=spec.analytic_activations and not note,
        activations_note=note or spec.activations_note,
    )
