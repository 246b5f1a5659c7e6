"""The model the built-in trainer trains: a transformers causal LM built from a preset or a config.json.

Random initialisation from a config only, so nothing is downloaded. The presets are Llama-shaped and sized for a
CPU (`tiny` trains in seconds); a config.json lets a GPU run use a real architecture at real width.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

BYTE_VOCAB = 256  # the trainer tokenizes bytes, so every model needs at least 256 token ids

PRESETS: dict[str, dict[str, int]] = {
    "tiny": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4},
    "small": {"hidden_size": 256, "intermediate_size": 688, "num_hidden_layers": 4, "num_attention_heads": 4},
    "medium": {"hidden_size": 768, "intermediate_size": 2048, "num_hidden_layers": 12, "num_attention_heads": 12},
}


class ModelChoiceError(ValueError):
    """`--model` names neither a preset nor a readable config.json."""


def build_config(name_or_path: str, seq_len: int) -> Any:
    """A transformers config for a preset name or a config.json (file or the directory holding it)."""
    if name_or_path in PRESETS:
        from transformers import LlamaConfig

        return LlamaConfig(
            vocab_size=BYTE_VOCAB,
            max_position_embeddings=max(seq_len, 128),
            num_key_value_heads=PRESETS[name_or_path]["num_attention_heads"],
            tie_word_embeddings=False,
            **PRESETS[name_or_path],
        )
    path = Path(name_or_path)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise ModelChoiceError(
            f"--model {name_or_path!r} is neither a preset ({', '.join(PRESETS)}) nor an existing config.json"
        )
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(path))
    if getattr(config, "vocab_size", 0) < BYTE_VOCAB:
        raise ModelChoiceError(
            f"{path}: vocab_size {config.vocab_size} is below the {BYTE_VOCAB} byte tokens the trainer feeds"
        )
    return config


def build_model(config: Any) -> Any:
    """A randomly initialised causal LM for the config (fp32 weights; the Accelerator applies mixed precision)."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_config(config)
