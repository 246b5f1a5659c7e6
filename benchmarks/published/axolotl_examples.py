"""Frozen: axolotl's example READMEs (axolotl-ai-cloud/axolotl examples/*/README.md), each read with the example
config committed beside it: the VRAM its authors saw while training that config.

* examples/llama-2 (dc71d88, 2023-08-03): "The 7b variant fits on any 24GB VRAM GPU and will take up about 17 GB
  of VRAM during training if using qlora and 20 GB if using lora. On a RTX 4090 it trains ...": qlora.yml is
  Llama-2-7B, NF4 (transformers' BitsAndBytesConfig as axolotl built it: double quantization, bf16 compute),
  LoRA r=32 alpha 16 dropout 0.05 on every linear (lora_target_linear), paged_adamw_32bit, bf16 (the Trainer's
  autocast, weights loaded in bf16), gradient checkpointing, xformers attention (axolotl's Llama patch), batch 2 x
  accumulation 4 over samples packed to `max_packed_sequence_len: 4096` (the alpaca_2k_test samples concatenated:
  4,096-token rows); PEFT's prepare_model_for_kbit_training (its fp32 embedding, norms and lm_head kept).
  lora.yml is the same over an 8-bit (LLM.int8) base: kept as not expressible.
* examples/yi-34B-chat (6ef46f8, 2023-12-25): "Tested on an RTX 4090 ... using qlora runs in 47 mins, using 97% of
  available memory": Yi-34B-Chat, NF4, r=32 on every linear, paged_adamw_8bit, batch 1 x accumulation 4,
  sequence_len 1024 without packing or padding (each batch its own length), flash attention 2, transformers
  4.36.2, bitsandbytes >= 0.41.1; models.py there runs prepare_model_for_kbit_training and then casts the norms,
  embedding and lm_head back to bf16 for flash attention (--no-kbit-prepare). 97% of the card is the card full:
  read as a verdict, "ran" (as glm4_finetune.py's full card).
* examples/llama-3 (15f7910, 2024-04-18), "Single GPU @ 48GB VRAM" (fft-8b.yaml), "Single GPU @ 11GB VRAM"
  (lora-8b.yml: an 8-bit Llama-2-7B, not expressible), "Dual GPU @ 21GB VRAM" (qlora-fsdp-70b.yaml): "21GB" is no
  card's size, so each "@ N GB" is read as the memory the run used on its GPU(s). fft-8b: Meta-Llama-3-8B in bf16
  (bf16: auto), paged_adamw_8bit, 8,192-token multipack rows padded to the length (pad_to_sequence_len), batch 1 x
  accumulation 8, flash attention 2, non-reentrant checkpointing. qlora-fsdp-70b: Llama-3-70B, NF4 with bf16 quant
  storage under the Trainer's FSDP1 (full_shard, LlamaDecoderLayer units, offload_params), no k-bit preparation
  (axolotl skips it for QLoRA under FSDP), r=8 dropout 0.05 on every linear, adamw_torch, 512-token rows padded to
  the length, batch 1 x accumulation 4, flash attention 2, reentrant checkpointing. transformers at 43d17c1 (4.40
  development), bitsandbytes 0.43.0, peft 0.10.0, accelerate 0.28.0 (requirements.txt at 15f7910).

What the numbers are: not said; read as the device's used memory (nvidia-smi's), "GB" as GiB (nvidia-smi's MiB /
1024), as hf_blog_personal_copilot.py reads its "GB". Which GPU: the llama-2 and Yi pages name an RTX 4090; the
llama-3 page names none (the argv's GPU is said in each row's assumptions; only the verdict depends on it).
Not used: the code-llama page (its 7B sentence is the llama-2 page's, copied; its 34B config packs to 100,000
tokens), examples added since 2025 (Cut Cross Entropy, which the CLI cannot say, and families without a preset).
"""

from __future__ import annotations

_REPO = "https://github.com/axolotl-ai-cloud/axolotl/blob/{commit}/examples/{page}/README.md"
_LLAMA2 = "dc71d8872a68e978d2ce272ff3e0085b156a1304"
_YI = "6ef46f8dcac84825c39fcea57917260abd33e9ac"
_LLAMA3 = "15f7910d33b41282f8c4fc1c4ca374b1b5965f2b"
_Q_LLAMA2 = ("The 7b variant fits on any 24GB VRAM GPU and will take up about 17 GB of VRAM during training if "
             "using qlora and 20 GB if using lora. On a RTX 4090 it trains 3 epochs of the default dataset in about "
             "15 minutes.")
_Q_YI = ("Tested on an RTX 4090 with `python -m axolotl.cli.train examples/mistral/qlora.yml`, a single epoch of "
         "finetuning on the alpaca dataset using qlora runs in 47 mins, using 97% of available memory.")
_Q_LLAMA3 = ("[8B Base Model](https://huggingface.co/meta-llama/Meta-Llama-3-8B)\n - [Full Fine Tune](./fft-8b.yaml)"
             "\n   - Single GPU @ 48GB VRAM\n - [LoRA](./lora-8b.yml)\n   - Single GPU @ 11GB VRAM\n\n"
             "[70B Base Model](https://huggingface.co/meta-llama/Meta-Llama-3-70B)\n - [QLORA+FSDP]"
             "(./qlora-fsdp-70b.yaml)\n   - Dual GPU @ 21GB VRAM")
_GIB = ("'GB' read as GiB (nvidia-smi's MiB / 1024); read as 1e9 bytes the figure would be 6.9% smaller; how it "
        "was read (nvidia-smi, a W&B system chart) the page does not say")
_ABOUT = "'about': the figure is rounded to the GB by its authors (+-0.5 GB)"
_XFORMERS = ("axolotl's xformers attention patch for Llama (memory-efficient attention, no score matrix): the argv "
             "says --attention flash, the nearest kind")
_LLAMA3_SHAPES = ("Meta-Llama-3-{size}: the argv names the llama-3.1-{size_l} preset, the same shapes (vocabulary "
                  "128,256); only the rope scaling and the positions differ")
_INT8 = "an 8-bit (LLM.int8, load_in_8bit) base under LoRA: the CLI says 16-bit and NF4 bases only"


def _row(key: str, commit: str, page: str, quote: str, printed: str, argv: str, assumptions: str,
         unexpressed: list[str], ran: bool | None = None) -> dict:
    row = {"key": key, "source": "axolotl-examples", "url": _REPO.format(commit=commit, page=page), "quote": quote,
           "printed": printed, "metric": "nvidia-smi", "argv": f"estimate {argv} --format json",
           "assumptions": f"axolotl examples/{page} at {commit[:7]}: {assumptions}", "unexpressed": unexpressed}
    if ran is None:
        row["measured_bytes"] = int(round(float(printed.split()[0].rstrip("GB")) * 2**30))
    else:
        row["ran"] = ran
    return row


ROWS = [
    _row("axolotl-llama-2-7b-qlora-rtx4090", _LLAMA2, "llama-2", _Q_LLAMA2, "17 GB",
         "--model llama-2-7b --system 1xRTX4090 --strategy single --qlora --precision mixed --lora-rank 32 "
         "--lora-dropout 0.05 --optimizer paged-adamw --gradient-checkpointing --micro-batch 2 "
         "--gradient-accumulation 4 --seq-len 4096 --fixed-lengths --attention flash --stack transformers==4.32 "
         "--stack bitsandbytes==0.41.1",
         "qlora.yml: Llama-2-7B NF4, r=32 on every linear, dropout 0.05, paged_adamw_32bit, bf16 autocast, "
         "prepare_model_for_kbit_training, gradient checkpointing, batch 2 x accumulation 4 of 4,096-token packed "
         "rows (max_packed_sequence_len), one RTX 4090 (the page's); transformers and peft from their main "
         "branches in August 2023 (4.32 development: --stack transformers==4.32), bitsandbytes >= 0.39.0 (0.41.1 "
         "was August 2023's)",
         [_ABOUT, _GIB, _XFORMERS, "the packed rows assumed full (4,096 tokens): alpaca_2k_test's samples are "
          "concatenated up to the length, the last row of an epoch shorter"]),
    _row("axolotl-yi-34b-chat-qlora-rtx4090-ran", _YI, "yi-34B-chat", _Q_YI, "97%",
         "--model benchmarks/published/models/yi-34b/config.json --system 1xRTX4090 --strategy single --qlora "
         "--precision mixed --no-kbit-prepare --lora-rank 32 --lora-dropout 0.05 --optimizer paged-adamw8bit "
         "--gradient-checkpointing --micro-batch 1 --gradient-accumulation 4 --seq-len 1024 --varying-lengths "
         "--attention flash --stack transformers==4.36.2 --stack bitsandbytes==0.41.3",
         "qlora.yml: Yi-34B-Chat NF4, r=32 on every linear, dropout 0.05, paged_adamw_8bit, bf16 autocast, norms, "
         "embedding and lm_head cast back to bf16 after k-bit preparation, batch 1 x accumulation 4, sequence_len "
         "1024 without packing (each batch padded to its own longest), flash attention 2, one RTX 4090; "
         "transformers 4.36.2, bitsandbytes >= 0.41.1 (0.41.3 was December 2023's); a verdict row: it trained, the "
         "card 97% full",
         ["the page names examples/mistral/qlora.yml in its command (a slip: the page is the Yi config's README, "
          "added with it in one commit)", "the longest alpaca_2k_test sample assumed to reach the 1,024-token cap "
          "(Yi's tokenizer; not checked against the data)"], ran=True),
    _row("axolotl-llama-3-8b-fft-1gpu", _LLAMA3, "llama-3", _Q_LLAMA3, "48GB",
         "--model llama-3.1-8b --system 1xA100-80GB --strategy single --precision bf16 --optimizer paged-adamw8bit "
         "--gradient-checkpointing --micro-batch 1 --gradient-accumulation 8 --seq-len 8192 --fixed-lengths "
         "--attention flash --stack transformers==4.40 --stack bitsandbytes==0.43.0",
         "fft-8b.yaml: Meta-Llama-3-8B loaded in bf16 and trained in bf16 (bf16: auto), paged_adamw_8bit, "
         "non-reentrant checkpointing, batch 1 x accumulation 8 of 8,192-token multipack rows padded to the length, "
         "flash attention 2; transformers at 43d17c1 (4.40 development), bitsandbytes 0.43.0; the GPU is not named "
         "(the argv says an A100 80GB: only the verdict and the CUDA context depend on it)",
         [_LLAMA3_SHAPES.format(size="8B", size_l="8b"), _GIB,
          "'Single GPU @ 48GB VRAM' read as the memory the run used; read as the card it ran on (a 48 GB GPU) it "
          "would be a verdict row"]),
    _row("axolotl-llama-3-70b-qlora-fsdp1-offload-2gpu", _LLAMA3, "llama-3", _Q_LLAMA3, "21GB",
         "--model llama-3.1-70b --system 2xRTX4090 --strategy fsdp_full --fsdp-version 1 --offload-param cpu "
         "--qlora --precision mixed --no-kbit-prepare --lora-rank 8 --lora-dropout 0.05 --optimizer adamw "
         "--gradient-checkpointing --micro-batch 1 --gradient-accumulation 4 --seq-len 512 --fixed-lengths "
         "--attention flash --stack transformers==4.40 --stack bitsandbytes==0.43.0",
         "qlora-fsdp-70b.yaml: Llama-3-70B NF4 (bf16 quant storage) under the Trainer's FSDP1 full_shard with "
         "LlamaDecoderLayer units and offload_params, no k-bit preparation (skipped for QLoRA under FSDP), r=8 on "
         "every linear, dropout 0.05, adamw_torch, bf16 autocast, reentrant checkpointing, batch 1 x accumulation 4 "
         "of 512-token rows padded to the length, flash attention 2; transformers at 43d17c1 (4.40 development), "
         "bitsandbytes 0.43.0; the GPUs are not named (the argv says two RTX 4090s: the 70B QLoRA-on-two-24GB-GPUs "
         "recipe; only the verdict and the CUDA context depend on it)",
         [_LLAMA3_SHAPES.format(size="70B", size_l="70b"), _GIB,
          "which of the two GPUs: the page prints one figure for 'Dual GPU' (read as each GPU's)"]),
]

# LoRA over an 8-bit base: printed, kept, not scored.
for _key, _commit, _page, _quote, _printed, _what in (
        ("axolotl-llama-2-7b-lora-int8-rtx4090", _LLAMA2, "llama-2", _Q_LLAMA2, "20 GB",
         "lora.yml: Llama-2-7B in 8-bit, r=32 on every linear, adamw_bnb_8bit, batch 2 x 4, 4,096-token packed rows"),
        ("axolotl-llama-2-7b-lora-int8-llama3-page", _LLAMA3, "llama-3", _Q_LLAMA3, "11GB",
         "lora-8b.yml (despite its name: NousResearch/Llama-2-7b-hf in 8-bit), r=32 on every linear, "
         "adamw_bnb_8bit, batch 2 x 4, 4,096-token multipack rows")):
    ROWS.append({"key": _key, "source": "axolotl-examples", "url": _REPO.format(commit=_commit, page=_page),
                 "quote": _quote, "printed": _printed, "metric": "nvidia-smi", "argv": None,
                 "not_expressible": _INT8, "measured_bytes": int(round(float(_printed.split()[0].rstrip("GB"))
                                                                       * 2**30)),
                 "assumptions": f"axolotl examples/{_page} at {_commit[:7]}: {_what}"})
