"""Named models sized offline from their published config.json, bundled here: the remote-code families
(Qwen-1, ChatGLM2/3, GLM-4, Baichuan2, InternLM2: remote_code.py translates them) and the other releases the
ambiguous alias `qwen-7b` names (Qwen1.5-7B, Qwen2-7B), so `--model Qwen/Qwen-7B` needs no network.

Each entry is the published file's architecture fields (generation and runtime settings left out), with the
file's URL. The spec is derived without torch (tensors.py's layout of the stand-in, renamed by remote_code.py);
tests/estimate/test_remote_code.py builds the same configs on the meta device and pins the published counts.
"""

from __future__ import annotations

from typing import Any

from accelwiz.modelspec.presets import HF
from accelwiz.modelspec.remote_code import as_remote, described, remote_family
from accelwiz.modelspec.spec import ModelSpec


def _qwen1(h: int, width: int, layers: int, heads: int, vocab: int, positions: int) -> dict[str, Any]:
    return {"model_type": "qwen", "hidden_size": h, "intermediate_size": width, "num_hidden_layers": layers,
            "num_attention_heads": heads, "kv_channels": 128, "vocab_size": vocab, "no_bias": True,
            "max_position_embeddings": positions, "tie_word_embeddings": False}


def _glm(layers: int, vocab: int, seq: int) -> dict[str, Any]:
    return {"model_type": "chatglm", "hidden_size": 4096, "num_layers": layers, "num_attention_heads": 32,
            "kv_channels": 128, "ffn_hidden_size": 13696, "padded_vocab_size": vocab, "multi_query_attention": True,
            "multi_query_group_num": 2, "add_qkv_bias": True, "add_bias_linear": False, "rmsnorm": True,
            "post_layer_norm": True, "seq_length": seq, "tie_word_embeddings": False}


def _dense(model_type: str, h: int, width: int, layers: int, heads: int, kv: int, vocab: int,
           positions: int) -> dict[str, Any]:
    return {"model_type": model_type, "hidden_size": h, "intermediate_size": width, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": vocab,
            "max_position_embeddings": positions, "tie_word_embeddings": False}


_BAICHUAN2_13B = {"model_type": "baichuan", "hidden_size": 5120, "intermediate_size": 13696,
                  "num_hidden_layers": 40, "num_attention_heads": 40, "vocab_size": 125696,
                  "model_max_length": 4096, "tie_word_embeddings": False}  # no max_position_embeddings: ALiBi
_BAICHUAN2_7B = {**_BAICHUAN2_13B, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
                 "num_attention_heads": 32, "max_position_embeddings": 4096}  # rotary positions

# (preset name, hub repository, its config.json's architecture fields, aliases)
BUNDLED: tuple[tuple[str, str, dict[str, Any], tuple[str, ...]], ...] = (
    # HF Qwen/Qwen-7B config.json (e7a368b, 2023-11-30): 32768 positions; the others keep QWenConfig's 8192
    ("qwen1-1.8b", "Qwen/Qwen-1_8B", _qwen1(2048, 11008, 24, 16, 151936, 8192), ("qwen-1_8b",)),
    ("qwen1-7b", "Qwen/Qwen-7B", _qwen1(4096, 22016, 32, 32, 151936, 32768), ()),
    ("qwen1-14b", "Qwen/Qwen-14B", _qwen1(5120, 27392, 40, 40, 152064, 8192), ()),
    ("qwen1-72b", "Qwen/Qwen-72B", _qwen1(8192, 49152, 80, 64, 152064, 8192), ()),
    ("qwen1.5-7b", "Qwen/Qwen1.5-7B", _dense("qwen2", 4096, 11008, 32, 32, 32, 151936, 32768), ()),
    ("qwen2-7b", "Qwen/Qwen2-7B", _dense("qwen2", 3584, 18944, 28, 28, 4, 152064, 131072), ()),
    ("chatglm2-6b", "THUDM/chatglm2-6b", _glm(28, 65024, 32768), ()),
    ("chatglm3-6b", "THUDM/chatglm3-6b", _glm(28, 65024, 8192), ()),
    ("glm-4-9b-chat", "THUDM/glm-4-9b-chat", _glm(40, 151552, 131072), ()),
    ("baichuan2-7b", "baichuan-inc/Baichuan2-7B-Base", _BAICHUAN2_7B, ("baichuan2-7b-base",)),
    ("baichuan2-13b", "baichuan-inc/Baichuan2-13B-Base", _BAICHUAN2_13B, ("baichuan2-13b-base",)),
    ("internlm2-7b", "internlm/internlm2-7b", {**_dense("internlm2", 4096, 14336, 32, 32, 8, 92544, 32768),
                                              "bias": False}, ()),
    ("internlm2-20b", "internlm/internlm2-20b", {**_dense("internlm2", 6144, 16384, 48, 48, 8, 92544, 32768),
                                                "bias": False}, ()),
)


def bundled_spec(name: str, repo: str, config: dict[str, Any], aliases: tuple[str, ...] = ()) -> ModelSpec:
    """The spec of a bundled config.json, derived without torch: the stand-in's shape, tensors.py's tensors,
    renamed to the remote code's modules."""
    source = HF.format(repo)
    remote = remote_family(config)
    stand_in = remote.translate(config, source) if remote is not None else config
    heads = stand_in["num_attention_heads"]
    spec = ModelSpec(
        name,
        stand_in["model_type"],
        vocab_size=stand_in["vocab_size"],
        hidden_size=stand_in["hidden_size"],
        intermediate_size=stand_in["intermediate_size"],
        num_layers=stand_in["num_hidden_layers"],
        num_heads=heads,
        num_kv_heads=stand_in.get("num_key_value_heads") or heads,
        head_dim=stand_in.get("head_dim") or stand_in["hidden_size"] // heads,
        tie_word_embeddings=stand_in["tie_word_embeddings"],
        max_position_embeddings=stand_in["max_position_embeddings"],
        attention_bias=stand_in["model_type"] == "qwen2" or bool(stand_in.get("attention_bias")),
        aliases=aliases,
        source=source if remote is None else described(remote, config, source),
    )
    return spec if remote is None else as_remote(spec, remote, config)


BUNDLED_PRESETS: tuple[ModelSpec, ...] = tuple(bundled_spec(*entry) for entry in BUNDLED)
