"""The model the built-in trainer trains, and where it comes from.

- a preset (`tiny`, `small`, `medium`) or a config.json: random initialisation, byte tokens, nothing downloaded;
- a pretrained checkpoint directory (weights and its tokenizer): `AutoModelForCausalLM.from_pretrained` and
  `AutoTokenizer.from_pretrained`, exactly what a downloaded checkpoint goes through;
- a hub id (`org/name`): resolved through huggingface_hub's cache to such a directory (`HF_HUB_OFFLINE` honoured).

`locate_model` needs no torch, so `accelwiz run` refuses a bad `--model` before anything is launched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from accelwiz.modelspec.spec import ModelSpec
from accelwiz.modelspec.toy_models import TOY_MODELS

BYTE_VOCAB = 256  # byte tokens: every randomly initialised model needs at least 256 token ids

# accelwiz's toy models, as the estimator knows them (accelwiz.modelspec.toy_models.TOY_MODELS): one definition.
PRESETS: dict[str, ModelSpec] = {spec.name: spec for spec in TOY_MODELS}

# What save_pretrained writes for the weights (single file or sharded), and for a tokenizer.
WEIGHT_FILES = (
    "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json"
)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "spiece.model")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class ModelChoiceError(ValueError):
    """`--model` names nothing the trainer can load; the message is one line, `hint` says what to do."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class ModelRef:
    """A located model: `kind` decides how it is built, `path` is the config.json or checkpoint directory."""

    name: str
    kind: Literal["preset", "config", "checkpoint"]
    path: Path | None = None
    hub_id: str | None = None

    @property
    def pretrained(self) -> bool:
        return self.kind == "checkpoint"


def locate_model(name: str) -> ModelRef:
    """Decide what `name` is, checking that it can be loaded; raises ModelChoiceError with a hint."""
    if name in PRESETS:
        return ModelRef(name, "preset")
    path = Path(name)
    if path.is_file():
        return ModelRef(name, "config", path)
    if path.is_dir():
        return _locate_directory(name, path)
    if _HUB_ID.match(name) and not name.startswith((".", "/")):
        return _locate_hub(name)
    raise ModelChoiceError(
        f"--model {name!r} is not a preset ({', '.join(PRESETS)}), a config.json, a checkpoint directory or a hub id",
        hint="pass a preset name, the directory save_pretrained wrote, or an `org/name` hub id",
    )


def _locate_directory(name: str, path: Path) -> ModelRef:
    """A directory is a checkpoint: its weights, tokenizer and config.json must all be there.

    A directory holding only a config.json is refused too, rather than silently trained from random weights (a
    download or save that stopped early looks exactly like that); a random initialisation is asked for by passing
    the config.json file itself.
    """
    has_tokenizer = any((path / f).is_file() for f in TOKENIZER_FILES)
    has_config = (path / "config.json").is_file()
    missing_shards = _missing_shards(path)
    has_weights = not missing_shards and any((path / f).is_file() for f in WEIGHT_FILES)
    random_init = f"for a random initialisation of its architecture pass {path / 'config.json'} itself"
    if missing_shards:
        raise ModelChoiceError(
            f"checkpoint {path} lists weight shards that are missing: {', '.join(missing_shards[:3])}"
            + (f" and {len(missing_shards) - 3} more" if len(missing_shards) > 3 else ""),
            hint="download or save the checkpoint again (save_pretrained writes every shard)",
        )
    if has_weights and not has_tokenizer:
        raise ModelChoiceError(
            f"checkpoint {path} has weights but no tokenizer ({' or '.join(TOKENIZER_FILES[:2])})",
            hint="save the tokenizer beside the weights with tokenizer.save_pretrained(directory)",
        )
    if has_weights and not has_config:
        raise ModelChoiceError(f"checkpoint {path} has weights but no config.json",
                               hint="save it with model.save_pretrained(directory)")
    if has_weights:
        return ModelRef(name, "checkpoint", path)
    if has_config or has_tokenizer:
        what = "a tokenizer" if has_tokenizer else "a config.json"
        raise ModelChoiceError(
            f"checkpoint {path} has {what} but no weights ({WEIGHT_FILES[0]} or {WEIGHT_FILES[2]})",
            hint=f"save the weights with model.save_pretrained(directory); {random_init}",
        )
    raise ModelChoiceError(f"--model {path} is a directory without config.json or weights",
                           hint="pass the directory save_pretrained wrote, or a config.json for a random init")


def _missing_shards(path: Path) -> list[str]:
    """The shard files a sharded checkpoint's index names that are not there (none for a single-file one)."""
    import json

    for index in (path / WEIGHT_FILES[1], path / WEIGHT_FILES[3]):
        if not index.is_file() or (path / index.name.removesuffix(".index.json")).is_file():
            continue
        try:
            shards = set(json.loads(index.read_text()).get("weight_map", {}).values())
        except (OSError, ValueError, AttributeError):
            return [index.name]  # an index that cannot be read names no usable weights
        return sorted(s for s in shards if not (path / s).is_file())
    return []


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def _locate_hub(repo_id: str) -> ModelRef:
    """A hub id through huggingface_hub's cache: offline, only what is cached; online, downloaded once."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError:
        raise ModelChoiceError(f"--model {repo_id!r} looks like a hub id, and huggingface_hub is not installed",
                               hint="pip install 'accelwiz[train]', or pass a local checkpoint directory") from None
    offline = _offline()
    try:
        directory = Path(snapshot_download(repo_id, local_files_only=offline))
    except LocalEntryNotFoundError:
        why = "HF_HUB_OFFLINE is set" if offline else "the hub cannot be reached"
        raise ModelChoiceError(
            f"hub model {repo_id!r} is not in the local huggingface cache and {why}",
            hint=f"download it where the hub is reachable (`hf download {repo_id}`), or pass a checkpoint directory",
        ) from None
    except (HfHubHTTPError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelChoiceError(f"hub model {repo_id!r} could not be fetched: {first}",
                               hint="check the id and your access, or pass a local checkpoint directory") from None
    located = _locate_directory(repo_id, directory)
    return ModelRef(repo_id, located.kind, located.path, hub_id=repo_id)


def build_config(name_or_path: str) -> Any:
    """A transformers config for a preset name or a config.json (file or the directory holding it)."""
    if name_or_path in PRESETS:
        from transformers import LlamaConfig

        toy = PRESETS[name_or_path]
        return LlamaConfig(
            vocab_size=toy.vocab_size, hidden_size=toy.hidden_size, intermediate_size=toy.intermediate_size,
            num_hidden_layers=toy.num_layers, num_attention_heads=toy.num_heads, num_key_value_heads=toy.num_kv_heads,
            max_position_embeddings=toy.max_position_embeddings, tie_word_embeddings=toy.tie_word_embeddings,
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


def load_tokenizer(ref: ModelRef) -> Any:
    """The checkpoint's own tokenizer (None for byte tokens)."""
    if not ref.pretrained:
        return None
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(ref.path))
    except (OSError, ValueError) as exc:
        raise ModelChoiceError(f"cannot load the tokenizer of {ref.path}: {str(exc).splitlines()[0]}",
                               hint="save it with tokenizer.save_pretrained(directory)") from None


def load_pretrained(ref: ModelRef, *, quantization_config: Any = None, dtype: Any = None) -> Any:
    """The checkpoint's weights in fp32 (the Accelerator applies mixed precision) or in `dtype` (LoRA's frozen
    base, finetune.lora_base_dtype), or 4-bit for QLoRA."""
    import torch
    from transformers import AutoModelForCausalLM

    kwargs: dict[str, Any] = {"dtype": dtype or torch.float32}
    if quantization_config is not None:
        kwargs.update(quantization_config=quantization_config, device_map={"": _local_device()})
    try:
        return AutoModelForCausalLM.from_pretrained(str(ref.path), **kwargs)
    except (OSError, ValueError) as exc:
        raise ModelChoiceError(f"cannot load the weights of {ref.path}: {str(exc).splitlines()[0]}",
                               hint="check that the checkpoint is complete (save_pretrained writes it whole)") from None


def _local_device() -> str | int:
    import torch

    return int(os.environ.get("LOCAL_RANK", "0")) if torch.cuda.is_available() else "cpu"
