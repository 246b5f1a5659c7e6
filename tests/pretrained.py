"""The session's one small pretrained checkpoint (the `checkpoint` fixture, a plugin of tests/conftest.py, shared by
tests/trainer and tests/posttraining), made the way a downloaded one is laid out: a Llama-shaped model saved with
save_pretrained, and a byte-level BPE tokenizer trained with the `tokenizers` library on the bundled corpus,
saved beside it with a chat template. Loading it is exactly the `from_pretrained` path of a real checkpoint."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from accelwiz.trainer.data import BUNDLED_CORPUS_DIR

CHAT_TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }}\n{% endfor %}"


def build_checkpoint(directory: Path, *, vocab_size: int = 384, layers: int = 2, hidden: int = 64) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

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


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory) -> Path:
    """Read-only for every test. Under pytest-xdist (CI runs `-n 2`) each worker is a session of its own: the first
    worker to ask builds the one checkpoint in the run's shared temporary folder, under a lock, and the others wait
    and read that one (pytest-xdist's recipe: getbasetemp().parent is the folder all workers' temp folders share)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return build_checkpoint(tmp_path_factory.mktemp("checkpoint") / "llama-tiny")
    shared = tmp_path_factory.getbasetemp().parent / "checkpoint"
    shared.mkdir(exist_ok=True)
    ready = shared / "ready"
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the build raises
        if not ready.is_dir():
            building = shared / f"building-{worker}"
            shutil.rmtree(building, ignore_errors=True)
            build_checkpoint(building / "llama-tiny")
            building.rename(ready)  # whole or absent: a failed build leaves nothing another worker would read
    return ready / "llama-tiny"
