"""Other names of the presets: releases with the same architecture (resolved without a download) and short
names several released models answer to (refused with the candidates)."""

from __future__ import annotations

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
    # presets_remote.py's bundled configs: the chat releases share their base's architecture fields
    **{f"qwen1-{size.lower().replace('_', '.')}": (f"Qwen/Qwen-{size}-Chat",) for size in ("1_8B", "7B", "14B", "72B")},
    "qwen1.5-7b": ("Qwen/Qwen1.5-7B-Chat",),
    "baichuan2-7b": ("baichuan-inc/Baichuan2-7B-Chat",),
    "baichuan2-13b": ("baichuan-inc/Baichuan2-13B-Chat",),
    "internlm2-7b": ("internlm/internlm2-chat-7b",),
    "internlm2-20b": ("internlm/internlm2-chat-20b",),
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
