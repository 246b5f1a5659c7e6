"""Design: ms-swift's LLM "Benchmark" page (swift 1.x, January 2024; A100, CUDA 11.8, torch 2.1.1, flash_attn 2.3.4).

Settings read from ms-swift at 4312aeb28 ("update benchmark", the commit that wrote these numbers):
`swift sft` on the HF Trainer (swift's Seq2SeqTrainer subclass), `dtype AUTO` -> bf16 weights with `bf16=True`
(a full fine-tune trains bf16 parameters with torch AdamW's states in bf16: `--precision bf16`), `optim
adamw_torch`, batch 1, `max_length 2048`, gradient checkpointing and flash-attention on, LoRA rank 8 alpha 32
dropout 0.05 on the model's DEFAULT targets (Qwen: `c_attn`, the fused qkv; Yi, a Llama: q/k/v_proj) through
swift's own LoRA (`tuner_backend swift`), QLoRA through bitsandbytes NF4 with double quantization and bf16
compute. Data: cls-fudan-news-zh, 3234 +- 2547 tokens per sample, samples longer than `max_length` dropped
(`truncation_strategy delete`): the longest kept sample is assumed to reach `max_length`.

What the number is: swift's trainer prints `torch.cuda.max_memory_reserved(i)/1024**3` per GPU after training
("GPU Memory (GiB)"); the "2*A100" cells ("73.71+78.54") are one model split over two GPUs by `device_map`
(naive model parallelism), which no `--strategy` says: those cells are left out (qwen-72b LoRA at 512-8192,
qwen-7b full at 8192, qwen-14b full, yi-34b LoRA at 8192), and so is yi-6b at 8192 tokens (its config.json has
4096 positions; the CLI refuses a longer --seq-len; the run went past them).

Qwen's model code (model_type `qwen`) is not in transformers: the argv names a Qwen2 config.json of the same shapes
(benchmarks/published/models/; the page's own count for qwen-7b-chat, 7721.3245 M parameters, is the config's).
Left out: ChatGLM3, Baichuan2 and OpenBuddy-Zephyr (own architectures; ChatGLM3 is a frozen source's model),
the GPTQ/AWQ/AQLM rows (not bitsandbytes), gradient accumulation (1..64, all 27.73-27.74 GiB: the batch-1 row).
"""

from __future__ import annotations

_URL = ("https://github.com/modelscope/ms-swift/blob/3b909dedfca7e6056968130b12f4b98181dfc1e3/"
        "docs/source_en/LLM/Benchmark.md")
_MODELS = {"qwen-1_8b-chat": "qwen-1.8b", "qwen-7b-chat": "qwen-7b", "qwen-14b-chat": "qwen-14b",
           "qwen-72b-chat": "qwen-72b", "yi-6b-chat": "yi-6b", "yi-34b-chat": "yi-34b"}
_QKV = "--lora-target q_proj --lora-target k_proj --lora-target v_proj"
_SETTINGS = (
    "ms-swift Benchmark, section '{section}', {model} {what}: swift sft (swift 1.x at 4312aeb28) on one A100-80G, "
    "bf16 weights and bf16=True, torch AdamW, batch {batch}, max_length {seq} (samples longer are dropped; the "
    "longest kept assumed to reach it), gradient checkpointing {gc}, flash-attention {flash}; {method}; "
    "'GPU Memory (GiB)' is torch.cuda.max_memory_reserved(0) / 2^30 after training"
)
_QWEN_CODE = ("Qwen's own modeling code (model_type qwen, trust_remote_code): argv names a Qwen2 config.json of its "
              "shapes")
_FUSED = ("LoRA on Qwen's fused c_attn (one adapter of rank r, 4096 -> 12288): the stand-in's q/k/v_proj, three of "
          "rank r")
_SWIFT_LORA = "swift's own LoRA implementation (tuner_backend swift), not PEFT"
# swift/llm/utils/utils.py data_collate_fn at 4312aeb28: padding_to only for longlora, else pad_sequence to the
# batch's longest; the Trainer's RandomSampler (train_sampler_random) shuffles them
# said by the argv (--varying-lengths): batches of varying length (data_collate_fn pads each batch to its own
# longest sample; batch 1: every sample at its own length, 91 tokens up to max_length, in random order), so the
# caching allocator keeps loss-tail blocks of every length (estimate/varying_lengths.py)


def _lora_flags(model: str, rank: int, target: str) -> str:
    targets = "" if target == "ALL" else _QKV + " "  # Qwen's c_attn and Yi's DEFAULT are both q, k and v
    return f"--lora --lora-rank {rank} --lora-dropout 0.05 {targets}"


def _row(section: str, model: str, seq: int, gib: str, *, method: str = "lora", batch: int = 1, rank: int = 8,
         target: str = "DEFAULT", flash: bool = True, gc: bool = True) -> dict:
    regime = {"lora": _lora_flags(model, rank, target), "full": "",
              "qlora": _lora_flags(model, rank, target).replace("--lora ", "--qlora ")}[method]
    how = {"lora": f"LoRA r={rank} alpha 32 dropout 0.05 on {target}", "full": "full fine-tuning",
           "qlora": f"LoRA r={rank} on DEFAULT over a bitsandbytes NF4 base (double quantization, bf16 compute)"}
    slug = f"{_MODELS[model]}-{method}-{seq}-b{batch}-r{rank}-{target.lower()}" + \
        ("" if flash else "-noflash") + ("" if gc else "-nogc")
    row = {"key": f"swift-{slug}", "source": "ms-swift-benchmark-2024", "url": _URL, "quote": f"<td>{gib}</td>",
           "printed": gib, "measured_bytes": int(float(gib) * 2**30), "metric": "reserved",
           "argv": f"estimate --model benchmarks/published/models/{_MODELS[model]}/config.json --system 1xA100-80GB "
                   f"--strategy single --precision bf16 {regime}--micro-batch {batch} --seq-len {seq} "
                   f"--{'' if gc else 'no-'}gradient-checkpointing --attention {'flash' if flash else 'eager'} "
                   "--varying-lengths --format json",
           "assumptions": _SETTINGS.format(section=section, model=model, what=f"at {seq} tokens", batch=batch,
                                           seq=seq, gc="on" if gc else "off", flash="on" if flash else "off",
                                           method=how[method]),
           "unexpressed": []}
    if model.startswith("qwen"):
        row["unexpressed"].append(_QWEN_CODE)
        if method != "full" and target == "DEFAULT":
            row["unexpressed"].append(_FUSED)
    if method != "full":
        row["unexpressed"].append(_SWIFT_LORA)
    return row


_LENGTHS = (512, 1024, 2048, 4096, 8192)
_LORA_BY_LENGTH = {
    "qwen-1_8b-chat": ("6.99", "10.71", "16.35", "23.80", "37.03"),
    "qwen-7b-chat": ("18.01", "21.73", "27.74", "35.31", "48.41"),
    "qwen-14b-chat": ("30.14", "34.43", "40.14", "47.95", "60.74"),
    "yi-6b-chat": ("13.72", "15.44", "16.95", "28.25", None),
    "yi-34b-chat": ("66.72", "69.10", "71.34", "78.72", None),
}
_FULL_BY_LENGTH = {
    "qwen-1_8b-chat": ("18.16", "18.62", "35.11", "31.62", "38.93"),
    "qwen-7b-chat": ("73.37", "73.64", "74.26", "78.76", None),
}

ROWS = [
    *(_row("Model Type & Max Length / LoRA", model, seq, gib)
      for model, cells in _LORA_BY_LENGTH.items() for seq, gib in zip(_LENGTHS, cells) if gib),
    *(_row("Model Type & Max Length / Full", model, seq, gib, method="full")
      for model, cells in _FULL_BY_LENGTH.items() for seq, gib in zip(_LENGTHS, cells) if gib),
    *(_row("Batch Size", "qwen-7b-chat", 2048, gib, batch=batch)
      for batch, gib in ((2, "43.11"), (4, "63.81"), (8, "76.14"))),
    _row("Use Flash Attn & Gradient Checkpointing", "qwen-7b-chat", 2048, "37.70", gc=False),
    _row("Use Flash Attn & Gradient Checkpointing", "qwen-7b-chat", 2048, "27.71", flash=False),
    _row("Use Flash Attn & Gradient Checkpointing", "qwen-7b-chat", 2048, "57.67", flash=False, gc=False),
    _row("LoRA Rank & LoRA Target Modules", "qwen-7b-chat", 2048, "27.72", rank=2),
    _row("LoRA Rank & LoRA Target Modules", "qwen-7b-chat", 2048, "27.85", rank=64),
    _row("LoRA Rank & LoRA Target Modules", "qwen-7b-chat", 2048, "27.87", target="ALL"),
    *(_row("Quantization", model, 2048, gib, method="qlora")
      for model, gib in (("qwen-7b-chat", "23.85"), ("qwen-14b-chat", "30.05"), ("qwen-72b-chat", "74.87"))),
]
