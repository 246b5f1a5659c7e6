"""accelwiz's own toy models: trained only when asked for by name (`--model tiny`), with no weights and nothing
downloaded. Not among the presets, whose counts are pinned against published models."""

from __future__ import annotations

from accelwiz.modelspec.spec import ModelSpec


def _toy(name: str, h: int, f: int, layers: int, heads: int) -> ModelSpec:
    """accelwiz's own toy models (random init, byte tokens), which the built-in trainer builds as LlamaConfig: 256
    positions, so that their default sequence (the positions, when fewer than 2048) trains in seconds on a CPU."""
    return ModelSpec(name, "llama", vocab_size=256, hidden_size=h, intermediate_size=f, num_layers=layers,
                     num_heads=heads, num_kv_heads=heads, head_dim=h // heads, tie_word_embeddings=False,
                     max_position_embeddings=256, source="accelwiz's built-in toy model (random init, byte tokens)")


TOY_MODELS: tuple[ModelSpec, ...] = (
    _toy("tiny", 64, 128, 2, 4),
    _toy("small", 256, 688, 4, 4),
    _toy("medium", 768, 2048, 12, 12),
)
