"""Named models: the parameter-relevant fields of each published `config.json`, with its URL.

Each entry's counts are pinned by tests/estimate/test_models.py against the published totals. `head_dim` is
`hidden_size // num_attention_heads` unless the config says otherwise (Gemma-2, Llama-3.2-3B/1B).
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
    _llama(
        "gemma-2-2b",
        "google/gemma-2-2b",
        vocab=256000,
        h=2304,
        f=9216,
        layers=26,
        heads=8,
        kv=4,
        max_pos=8192,
        tie=True,
        head_dim=256,
        family="gemma2",
        aliases=("gemma2-2b",),
    ),
    _llama(
        "gemma-2-9b",
        "google/gemma-2-9b",
        vocab=256000,
        h=3584,
        f=14336,
        layers=42,
        heads=16,
        kv=8,
        max_pos=8192,
        tie=True,
        head_dim=256,
        family="gemma2",
        aliases=("gemma2-9b",),
    ),
    _llama(
        "gemma-2-27b",
        "google/gemma-2-27b",
        vocab=256000,
        h=4608,
        f=36864,
        layers=46,
        heads=32,
        kv=16,
        max_pos=8192,
        tie=True,
        head_dim=128,
        family="gemma2",
        aliases=("gemma2-27b",),
    ),
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
    ModelSpec(
        "bert-base",
        "bert",
        vocab_size=30522,
        hidden_size=768,
        intermediate_size=3072,
        num_layers=12,
        num_heads=12,
        num_kv_heads=12,
        head_dim=64,
        tie_word_embeddings=True,
        max_position_embeddings=512,
        aliases=("bert-base-uncased",),
        source=HF.format("google-bert/bert-base-uncased"),
    ),
    ModelSpec(
        "bert-large",
        "bert",
        vocab_size=30522,
        hidden_size=1024,
        intermediate_size=4096,
        num_layers=24,
        num_heads=16,
        num_kv_heads=16,
        head_dim=64,
        tie_word_embeddings=True,
        max_position_embeddings=512,
        aliases=("bert-large-uncased",),
        source=HF.format("google-bert/bert-large-uncased"),
    ),
)


def _toy(name: str, h: int, f: int, layers: int, heads: int) -> ModelSpec:
    """accelwiz's own toy models (random init, byte tokens), which the built-in trainer builds as LlamaConfig: 256
    positions, so that their default sequence (the positions, when fewer than 2048) trains in seconds on a CPU."""
    return ModelSpec(name, "llama", vocab_size=256, hidden_size=h, intermediate_size=f, num_layers=layers,
                     num_heads=heads, num_kv_heads=heads, head_dim=h // heads, tie_word_embeddings=False,
                     max_position_embeddings=256, source="accelwiz's built-in toy model (random init, byte tokens)")


# Trained only when asked for by name (`--model tiny`): no weights, nothing downloaded. Not in PRESETS, whose
# counts are pinned against published models.
TOY_MODELS: tuple[ModelSpec, ...] = (
    _toy("tiny", 64, 128, 2, 4),
    _toy("small", 256, 688, 4, 4),
    _toy("medium", 768, 2048, 12, 12),
)

# Chat/instruct releases whose config.json has the same architecture fields as the preset's base repo (only
# generation settings such as eos_token_id differ), so the hub id resolves to the preset without a download.
# Not listed: releases that change the shape (Mistral-7B-Instruct-v0.3 has a 32,768 vocabulary).
SAME_ARCHITECTURE_REPOS: dict[str, tuple[str, ...]] = {
    "llama-2-7b": ("meta-llama/Llama-2-7b-chat-hf",),
    "llama-2-13b": ("meta-llama/Llama-2-13b-chat-hf",),
    "llama-2-70b": ("meta-llama/Llama-2-70b-chat-hf",),
    "llama-3.1-8b": ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct"),
    "llama-3.1-70b": ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct"),
    "llama-3.1-405b": ("meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B-Instruct"),
    "llama-3.2-1b": ("meta-llama/Llama-3.2-1B-Instruct",),
    "llama-3.2-3b": ("meta-llama/Llama-3.2-3B-Instruct",),
    "mistral-7b": ("mistralai/Mistral-7B-Instruct-v0.1",),
    "mixtral-8x7b": ("mistralai/Mixtral-8x7B-Instruct-v0.1",),
    "gemma-2-2b": ("google/gemma-2-2b-it",),
    "gemma-2-9b": ("google/gemma-2-9b-it",),
    "gemma-2-27b": ("google/gemma-2-27b-it",),
    **{
        f"qwen2.5-{size.lower()}": (f"Qwen/Qwen2.5-{size}-Instruct",)
        for size in ("0.5B", "1.5B", "3B", "7B", "14B", "32B", "72B")
    },
}


# Short names that more than one released model answers to: refused with the candidates (models.resolve_model),
# never read as one of them. Each candidate is a preset name or a hub id `--model` accepts.
AMBIGUOUS_ALIASES: dict[str, tuple[str, ...]] = {
    "qwen-0.5b": ("qwen2.5-0.5b", "Qwen/Qwen2-0.5B", "Qwen/Qwen1.5-0.5B"),
    "qwen-1.5b": ("qwen2.5-1.5b", "Qwen/Qwen2-1.5B"),
    "qwen-7b": ("qwen2.5-7b", "Qwen/Qwen2-7B", "Qwen/Qwen1.5-7B", "Qwen/Qwen-7B"),
    "qwen-14b": ("qwen2.5-14b", "Qwen/Qwen3-14B", "Qwen/Qwen1.5-14B", "Qwen/Qwen-14B"),
    "qwen-32b": ("qwen2.5-32b", "Qwen/Qwen3-32B", "Qwen/Qwen1.5-32B"),
    "qwen-72b": ("qwen2.5-72b", "Qwen/Qwen2-72B", "Qwen/Qwen1.5-72B", "Qwen/Qwen-72B"),
    "llama-70b": ("llama-3.1-70b", "llama-2-70b", "meta-llama/Llama-3.3-70B-Instruct"),
}
