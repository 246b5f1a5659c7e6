"""`accelwiz example DIR`: a tiny pretrained checkpoint and sample data for each kind, so every worked example in
README and docs/ runs as written on a fresh machine, with no download.

The checkpoint is laid out as a downloaded one is: a Llama-shaped model saved with `save_pretrained` and a byte-level
BPE tokenizer (trained with the `tokenizers` library on the bundled corpus) with a chat template beside it, so
loading it is exactly the `from_pretrained` path of a real checkpoint. Its weights are a seeded random
initialisation: the examples show the machinery (planning, checking, launching, TRL's trainers), not a useful model.

The folder appears whole or not at all: everything is built in a staging folder beside it and renamed into place.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

CHAT_TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }}\n{% endfor %}"
CHECKPOINT = "ckpt"
COMPLETE = ".accelwiz-example"  # written last inside the staging folder: its presence means the folder is whole

# GRPO's sample reward. It must have room to improve from a random policy: a reward that a random model already
# maximises (e.g. "longer is better, up to 10 characters") gives every completion the same score, so GRPO's group
# advantages are all zero and the loss stays 0.000 from step 1.
REWARD_SOURCE = '''"""GRPO's sample reward: the share of vowels in each completion (a random model writes about one in five)."""


def vowel_share(completions, **kwargs):
    return [sum(ch in "aeiou" for ch in text.lower()) / max(len(text), 1) for text in completions]
'''


@dataclass(frozen=True)
class Example:
    """What `accelwiz example` wrote (or found whole) in a folder."""

    folder: Path
    reused: bool

    @property
    def checkpoint(self) -> Path:
        return self.folder / CHECKPOINT


def make_example(folder: Path) -> Example:
    """The checkpoint and data in `folder`; a folder a previous call completed is reused as it is (a pasted
    quickstart runs twice without a dead end). Anything else already at that path is refused."""
    from accelwiz.errors import UsageError

    folder = Path(folder)
    if (folder / COMPLETE).is_file():
        return Example(folder, reused=True)
    if folder.exists() or folder.is_symlink():
        raise UsageError(f"{folder} already exists and is not an accelwiz example",
                         hint="name a new folder, e.g. `accelwiz example demo`")
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        build_checkpoint(staging / CHECKPOINT)
        _write_data(staging)
        (staging / COMPLETE).write_text("")
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone after the rename; the remains of a failure otherwise
    return Example(folder, reused=False)


def build_checkpoint(directory: Path, *, vocab_size: int = 384, layers: int = 2, hidden: int = 64) -> Path:
    """A small Llama and its tokenizer in `directory`, as `from_pretrained` expects them (seeded: the same bytes
    each time)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from accelwiz.trainer.data import BUNDLED_CORPUS_DIR

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|bos|>", "<|eos|>", "<|pad|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train([str(p) for p in sorted(BUNDLED_CORPUS_DIR.glob("*.txt"))], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<|bos|>", eos_token="<|eos|>",
                                   pad_token="<|pad|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(directory)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=256, bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                         pad_token_id=fast.pad_token_id, tie_word_embeddings=False)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(directory)
    return directory


def _write_data(folder: Path) -> None:
    """DPO's preference pairs (`prompt`, `chosen`, `rejected`), GRPO's prompts and its reward file."""
    pairs = [{"prompt": f"The number {i} is", "chosen": " even and small." if i % 2 == 0 else " odd and small.",
              "rejected": " a cat on a mat."} for i in range(16)]
    prompts = [{"prompt": f"Say a word about the number {i}:"} for i in range(16)]
    (folder / "prefs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    (folder / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    (folder / "rewards.py").write_text(REWARD_SOURCE)
