"""Named models: the parameter-relevant fields of each published `config.json`, with its URL.

Each entry's counts are pinned by tests/estimate/test_models.py against the published totals. `head_dim` is
`hidden_size // num_attention_heads` unless the config says otherwise (Gemma-2, Llama-3.2-3B/1B). accelwiz's own
toy models are in toy_models.py; other names of these models (instruct releases, ambiguous aliases) in
preset_names.py.
"""

from __future__ import annotations

from accelwiz.modelspec.spec import ModelSpec

HF = "https://huggingface.co/{}/blob/main/config.json"


def _gpt2(name: str, repo: str, h: int, layers: int, heads: int, aliases: tuple[str, ...] = ()) -> ModelSpec:
    return ModelSpec(
        name,
        "gpt2",
        vocab_size=50257,
        hidden_size=h,
        intermediate_size=4 * h,
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=heads,
        head_dim=h // heads,
        tie_word_embeddings=True,
        max_position_embeddings=1024,
        aliases=aliases,
        source=HF.format(repo),
    )


def _bert(name: str, repo: str, h: int, layers: int, heads: int, aliases: tuple[str, ...]) -> ModelSpec:
    """BertModel with pooler (the published 110M/340M counts): 4h MLP, 512 positions, the uncased vocabulary."""
    return ModelSpec(
        name,
        "bert",
        vocab_size=30522,
        hidden_size=h,
        intermediate_size=4 * h,
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=heads,
        head_dim=h // heads,
        tie_word_embeddings=True,
        max_position_embeddings=512,
        aliases=aliases,
        source=HF.format(repo),
    )


def _llama(
    name: str,
    repo: str,
    *,
    vocab: int,
    h: int,
    f: int,
    layers: int,
    heads: int,
    kv: int,
    max_pos: int,
    tie: bool = False,
    head_dim: int | None = None,
    family: str = "llama",
    bias: bool = False,
    experts: int = 1,
    top_k: int = 1,
    aliases: tuple[str, ...] = (),
) -> ModelSpec:
    return ModelSpec(
        name,
        family,
        vocab_size=vocab,
        hidden_size=h,
        intermediate_size=f,  # type: ignore[arg-type]
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim or h // heads,
        tie_word_embeddings=tie,
        max_position_embeddings=max_pos,
        num_experts=experts,
        experts_per_token=top_k,
        attention_bias=bias,
        aliases=aliases,
        source=HF.format(repo),
    )


def _qwen(size: str, *, vocab: int, h: int, f: int, layers: int, heads: int, kv: int, tie: bool) -> ModelSpec:
    return _llama(
        f"qwen2.5-{size.lower()}",
        f"Qwen/Qwen2.5-{size}",
        vocab=vocab,
        h=h,
        f=f,
        layers=layers,
        heads=heads,
        kv=kv,
        max_pos=32768 if size in ("0.5B", "1.5B", "3B") else 131072,
        tie=tie,
        family="qwen2",
        bias=True,
        # "qwen-7b" is no alias: Qwen, Qwen1.5, Qwen2 and Qwen2.5 all have a 7B (AMBIGUOUS_ALIASES); only Qwen2.5 has a 3B
        aliases=(f"qwen2.5-{size.lower()}-instruct", *(("qwen-3b",) if size == "3B" else ())),
    )


def _gemma2(size: str, *, h: int, f: int, layers: int, heads: int, kv: int, head_dim: int) -> ModelSpec:
    return _llama(
        f"gemma-2-{size}",
        f"google/gemma-2-{size}",
        vocab=256000,
        h=h,
        f=f,
        layers=layers,
        heads=heads,
        kv=kv,
        max_pos=8192,
        tie=True,
        head_dim=head_dim,
        family="gemma2",
        aliases=(f"gemma2-{size}",),
    )


PRESETS: tuple[ModelSpec, ...] = (
    _gpt2("gpt2", "openai-community/gpt2", 768, 12, 12, ("gpt2-small",)),
    _gpt2("gpt2-medium", "openai-community/gpt2-medium", 1024, 24, 16),
    _gpt2("gpt2-large", "openai-community/gpt2-large", 1280, 36, 20),
    _gpt2("gpt2-xl", "openai-community/gpt2-xl", 1600, 48, 25),
    _llama(
        "llama-2-7b",
        "meta-llama/Llama-2-7b-hf",
        vocab=32000,
        h=4096,
        f=11008,
        layers=32,
        heads=32,
        kv=32,
        max_pos=4096,
        aliases=("llama2-7b",),
    ),
    _llama(
        "llama-2-13b",
        "meta-llama/Llama-2-13b-hf",
        vocab=32000,
        h=5120,
        f=13824,
        layers=40,
        heads=40,
        kv=40,
        max_pos=4096,
        aliases=("llama2-13b",),
    ),
    _llama(
        "llama-2-70b",
        "meta-llama/Llama-2-70b-hf",
        vocab=32000,
        h=8192,
        f=28672,
        layers=80,
        heads=64,
        kv=8,
        max_pos=4096,
        aliases=("llama2-70b",),
    ),
    _llama(
        "llama-3.1-8b",
        "meta-llama/Llama-3.1-8B",
        vocab=128256,
        h=4096,
        f=14336,
        layers=32,
        heads=32,
        kv=8,
        max_pos=131072,
        aliases=("llama-8b", "llama-3-8b", "llama3-8b", "llama3.1-8b", "meta-llama-3-8b"),
    ),
    _llama(
        "llama-3.1-70b",
        "meta-llama/Llama-3.1-70B",
        vocab=128256,
        h=8192,
        f=28672,
        layers=80,
        heads=64,
        kv=8,
        max_pos=131072,
        aliases=("llama-3-70b", "llama3-70b", "llama3.1-70b"),
    ),
    _llama(
        "llama-3.1-405b",
        "meta-llama/Llama-3.1-405B",
        vocab=128256,
        h=16384,
        f=53248,
        layers=126,
        heads=128,
        kv=8,
        max_pos=131072,
        aliases=("llama-405b", "llama3.1-405b"),
    ),
    _llama(
        "llama-3.2-1b",
        "meta-llama/Llama-3.2-1B",
        vocab=128256,
        h=2048,
        f=8192,
        layers=16,
        heads=32,
        kv=8,
        max_pos=131072,
        tie=True,
        head_dim=64,
        aliases=("llama-1b", "llama3.2-1b"),
    ),
    _llama(
        "llama-3.2-3b",
        "meta-llama/Llama-3.2-3B",
        vocab=128256,
        h=3072,
        f=8192,
        layers=28,
        heads=24,
        kv=8,
        max_pos=131072,
        tie=True,
        head_dim=128,
        aliases=("llama-3b", "llama3.2-3b"),
    ),
    _llama(
        "mistral-7b",
        "mistralai/Mistral-7B-v0.1",
        vocab=32000,
        h=4096,
        f=14336,
        layers=32,
        heads=32,
        kv=8,
        max_pos=32768,
        family="mistral",
        aliases=("mistral-7b-v0.1",),
    ),
    _llama(
        "mixtral-8x7b",
        "mistralai/Mixtral-8x7B-v0.1",
        vocab=32000,
        h=4096,
        f=14336,
        layers=32,
        heads=32,
        kv=8,
        max_pos=32768,
        family="mixtral",
        experts=8,
        top_k=2,
        aliases=("mixtral", "mixtral-8x7b-v0.1"),
    ),
    _qwen("0.5B", vocab=151936, h=896, f=4864, layers=24, heads=14, kv=2, tie=True),
    _qwen("1.5B", vocab=151936, h=1536, f=8960, layers=28, heads=12, kv=2, tie=True),
    _qwen("3B", vocab=151936, h=2048, f=11008, layers=36, heads=16, kv=2, tie=True),
    _qwen("7B", vocab=152064, h=3584, f=18944, layers=28, heads=28, kv=4, tie=False),
    _qwen("14B", vocab=152064, h=5120, f=13824, layers=48, heads=40, kv=8, tie=False),
    _qwen("32B", vocab=152064, h=5120, f=27648, layers=64, heads=40, kv=8, tie=False),
    _qwen("72B", vocab=152064, h=8192, f=29568, layers=80, heads=64, kv=8, tie=False),
    _gemma2("2b", h=2304, f=9216, layers=26, heads=8, kv=4, head_dim=256),
    _gemma2("9b", h=3584, f=14336, layers=42, heads=16, kv=8, head_dim=256),
    _gemma2("27b", h=4608, f=36864, layers=46, heads=32, kv=16, head_dim=128),
    _llama(
        "phi-3-mini",
        "microsoft/Phi-3-mini-4k-instruct",
        vocab=32064,
        h=3072,
        f=8192,
        layers=32,
        heads=32,
        kv=32,
        max_pos=4096,
        family="phi3",
        aliases=("phi-3-mini-4k", "phi3-mini"),
    ),
    _bert("bert-base", "google-bert/bert-base-uncased", 768, 12, 12, ("bert-base-uncased",)),
    _bert("bert-large", "google-bert/bert-large-uncased", 1024, 24, 16, ("bert-large-uncased",)),
)
