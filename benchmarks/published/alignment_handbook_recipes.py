"""Frozen, verdict rows: the alignment-handbook's other full-training recipes (huggingface/alignment-handbook, 2024).

Three recipe READMEs, each a page of its own (the Zephyr-7B-beta recipe is alignment_handbook_zephyr.py's source),
say "You will require 8 GPUs (80GB of VRAM) to train the full model" and launch `accelerate launch --config_file
recipes/accelerate_configs/deepspeed_zero3.yaml scripts/run_sft.py|run_dpo.py <config>`. No peak is printed: each
step is a recipe stated to train on 8 x 80 GB, by the team that published the models it produced.

Read at each README's commit: deepspeed_zero3.yaml is ZeRO-3 without offload, `zero3_init_flag: true`,
`mixed_precision: bf16` (DeepSpeed's bf16 engine: a 16-bit module, fp32 master weights and optimizer states
sharded over the 8 processes); scripts/run_sft.py builds TRL's SFTTrainer with `packing=True` (every sequence
`max_seq_length` tokens) from ModelArguments' `torch_dtype` and `use_flash_attention_2` (False unless the config
says true); scripts/run_dpo.py passes the same model name as the reference (`ref_model = model`: TRL loads it and
prepares it under the same ZeRO-3 config); without `optim` the Trainer's default is torch AdamW (adamw_torch).

* zephyr-7b-gemma (ff618a4, 2024-03-01; setup.py: transformers>=4.38.2 -- released that day --, trl 0.7.10,
  deepspeed 0.12.2, accelerate 0.27.2, torch 2.1.2): SFT of google/gemma-7b in bf16 with flash-attention 2,
  per-device batch 4 x 2,048, accumulation 4, non-reentrant checkpointing; DPO of zephyr-7b-gemma-sft-v0.1 (Gemma
  7B's shapes; the chatml tokenizer reuses Gemma's reserved tokens) in bf16 without flash-attention 2 (sdpa, Gemma's
  default in 4.38), batch 2, max_length 1024, max_prompt_length 512, beta 0.05, adamw_torch, checkpointing.
* starchat2-15b (a9b8a50, 2024-03-12; transformers pinned to commit 831bc25 for StarCoder2, 4.39.0.dev0; trl
  0.7.10): SFT of bigcode/starcoder2-15b in bf16 with flash-attention 2, batch 8 x 2,048, accumulation 2,
  checkpointing; DPO of starchat2-15b-sft-v0.1 in bf16 without flash-attention 2, batch 2, 1024/512, beta 0.05,
  adamw_torch, checkpointing. The stand-in config.json (benchmarks/published/models/starcoder2-15b/) is
  bigcode/starcoder2-15b's (15,957,889,024 parameters, untied embeddings).
* constitutional-ai (8df2271, 2024-02-01; setup.py: transformers 4.36.2, trl 0.7.7, accelerate 0.23.0): SFT of
  mistralai/Mistral-7B-v0.1 in bf16 with flash-attention 2, batch 8 x 2,048, accumulation 4, checkpointing. Its DPO
  step (`optim: rmsprop`) is kept as not expressible: the CLI's optimizers have no RMSprop (one state per parameter).
"""

from __future__ import annotations

_URL = "https://github.com/huggingface/alignment-handbook/blob/{commit}/recipes/{recipe}/README.md"
_GEMMA = ("ff618a4d13a2c77cf97479fac8af2c576619062a", "zephyr-7b-gemma")
_STARCHAT2 = ("a9b8a50a2761bbb2a6a0d24c609cfc17fc26f636", "starchat2-15b")
_CAI = ("8df22713248701df4e5f9609cb5531d774decb97", "constitutional-ai")
_GEMMA_7B = "benchmarks/published/models/gemma-7b/config.json"
_STARCODER2 = "benchmarks/published/models/starcoder2-15b/config.json"
_QUOTE_ALT = ("You will require 8 GPUs (80GB of VRAM) to train the full model - alternatively, you can train on 1 "
              "GPU by adjusting {how} to keep the global batch size constant.")
_PRINTED = "8 GPUs (80GB of VRAM)"
_HW = ("the page says '8 GPUs (80GB of VRAM)' without naming the card: the argv takes the 8 x A100 80GB preset "
       "(80.0 GiB each; an H100 80GB has 79.6 GiB), as alignment_handbook_zephyr.py's rows do")
_DPO_PAD = "TRL's DPO collator pads each batch to its longest pair (the argv says the 512 + 512 caps)"
_ZERO3 = "--system 8xA100-80GB --strategy zero3 --precision mixed"


def _row(key: str, recipe: tuple[str, str], quote: str, argv: str, assumptions: str, unexpressed: list[str],
         not_expressible: str | None = None) -> dict:
    commit, name = recipe
    row = {"key": key, "source": "alignment-handbook-recipes-2024", "url": _URL.format(commit=commit, recipe=name),
           "quote": quote, "printed": _PRINTED, "measured_bytes": None, "metric": "reserved", "ran": True,
           "assumptions": assumptions, "unexpressed": unexpressed}
    if not_expressible:
        return {**row, "not_expressible": not_expressible}
    return {**row, "argv": argv}


_GEMMA_QUOTE = _QUOTE_ALT.format(how="the micro batch size and gradient accumulation steps")
_STARCHAT2_QUOTE = _QUOTE_ALT.format(how="`per_device_train_batch_size` and `gradient_accumulation_steps`")
_CAI_QUOTE = "You will require 8 GPUs (80GB of VRAM) to train the full model."

ROWS = [
    _row("alignment-handbook-zephyr-7b-gemma-sft-full-zero3-8x80gb-ran", _GEMMA, _GEMMA_QUOTE,
         f"estimate --model {_GEMMA_7B} {_ZERO3} --micro-batch 4 --gradient-accumulation 4 "
         "--seq-len 2048 --fixed-lengths --gradient-checkpointing --attention flash --optimizer adamw "
         "--stack transformers==4.38 --format json",
         "alignment-handbook at ff618a4: Zephyr-7B-Gemma SFT, google/gemma-7b in bf16 under DeepSpeed ZeRO-3 (bf16 "
         "engine, fp32 master weights and torch AdamW states sharded over 8 GPUs), per-device batch 4 of packed "
         "2,048-token sequences, flash-attention 2, non-reentrant checkpointing, transformers 4.38.2; stated to "
         "train on 8 x 80 GB (no peak printed)",
         [_HW, "TRL 0.7.10, DeepSpeed 0.12.2, accelerate 0.27.2 and torch 2.1.2 (the CLI estimates the installed "
               "ones; transformers is in the argv)"]),
    _row("alignment-handbook-zephyr-7b-gemma-dpo-full-zero3-8x80gb-ran", _GEMMA, _GEMMA_QUOTE,
         f"estimate --model {_GEMMA_7B} {_ZERO3} --kind dpo --micro-batch 2 --max-prompt-length 512 "
         "--max-completion-length 512 --beta 0.05 --gradient-checkpointing --attention sdpa --optimizer adamw "
         "--stack transformers==4.38 --format json",
         "alignment-handbook at ff618a4: Zephyr-7B-Gemma DPO, zephyr-7b-gemma-sft-v0.1 (Gemma 7B's shapes) in bf16 "
         "under DeepSpeed ZeRO-3's bf16 engine with a ZeRO-3 reference model, per-device batch 2, prompts cut at "
         "512 and prompt + completion at 1,024 tokens, beta 0.05, adamw_torch, checkpointing, sdpa (no flash "
         "attention asked for); stated to train on 8 x 80 GB (no peak printed)",
         [_HW, "TRL 0.7.10, DeepSpeed 0.12.2, accelerate 0.27.2 and torch 2.1.2 (the CLI estimates the installed "
               "ones)", _DPO_PAD]),
    _row("alignment-handbook-starchat2-15b-sft-full-zero3-8x80gb-ran", _STARCHAT2, _STARCHAT2_QUOTE,
         f"estimate --model {_STARCODER2} {_ZERO3} --micro-batch 8 --gradient-accumulation 2 "
         "--seq-len 2048 --fixed-lengths --gradient-checkpointing --attention flash --optimizer adamw "
         "--stack transformers==4.39 --format json",
         "alignment-handbook at a9b8a50: StarChat2 SFT, bigcode/starcoder2-15b in bf16 under DeepSpeed ZeRO-3 (bf16 "
         "engine, fp32 master weights and torch AdamW states sharded over 8 GPUs), per-device batch 8 of packed "
         "2,048-token sequences, flash-attention 2, non-reentrant checkpointing; stated to train on 8 x 80 GB (no "
         "peak printed)",
         [_HW, "transformers at commit 831bc25 (4.39.0.dev0) as --stack transformers==4.39; TRL 0.7.10, DeepSpeed "
               "0.12.2, accelerate 0.27.2, torch 2.1.2 (the CLI estimates the installed ones)"]),
    _row("alignment-handbook-starchat2-15b-dpo-full-zero3-8x80gb-ran", _STARCHAT2, _STARCHAT2_QUOTE,
         f"estimate --model {_STARCODER2} {_ZERO3} --kind dpo --micro-batch 2 --max-prompt-length 512 "
         "--max-completion-length 512 --beta 0.05 --gradient-checkpointing --attention sdpa --optimizer adamw "
         "--stack transformers==4.39 --format json",
         "alignment-handbook at a9b8a50: StarChat2 DPO, starchat2-15b-sft-v0.1 (StarCoder2-15B's shapes) in bf16 "
         "under DeepSpeed ZeRO-3's bf16 engine with a ZeRO-3 reference model, per-device batch 2, 512 + 512 tokens, "
         "beta 0.05, adamw_torch, checkpointing; attention sdpa (no flash attention asked for; assumed, not read: "
         "transformers 831bc25's default for Starcoder2); stated to train on 8 x 80 GB (no peak printed)",
         [_HW, "transformers at commit 831bc25 (4.39.0.dev0) as --stack transformers==4.39; TRL 0.7.10, DeepSpeed "
               "0.12.2, accelerate 0.27.2, torch 2.1.2 (the CLI estimates the installed ones)", _DPO_PAD]),
    _row("alignment-handbook-constitutional-ai-mistral-7b-sft-full-zero3-8x80gb-ran", _CAI, _CAI_QUOTE,
         f"estimate --model mistral-7b {_ZERO3} --micro-batch 8 --gradient-accumulation 4 "
         "--seq-len 2048 --fixed-lengths --gradient-checkpointing --attention flash --optimizer adamw "
         "--stack transformers==4.36.2 --format json",
         "alignment-handbook at 8df2271: Constitutional AI SFT (mistral-7b-anthropic), Mistral-7B-v0.1 in bf16 "
         "under DeepSpeed ZeRO-3 (bf16 engine, fp32 master weights and torch AdamW states sharded over 8 GPUs), "
         "per-device batch 8 of packed 2,048-token sequences, flash-attention 2, non-reentrant checkpointing; "
         "stated to train on 8 x 80 GB (no peak printed)",
         [_HW, "TRL 0.7.7, DeepSpeed 0.12.2, accelerate 0.23.0 and torch 2.1.2 (the CLI estimates the installed "
               "ones; transformers 4.36.2 is in the argv)"]),
    _row("alignment-handbook-constitutional-ai-mistral-7b-dpo-full-zero3-8x80gb-ran", _CAI, _CAI_QUOTE, "",
         "alignment-handbook at 8df2271: Constitutional AI DPO, mistral-7b-sft-constitutional-ai under DeepSpeed "
         "ZeRO-3 with a ZeRO-3 reference model, per-device batch 2, 512 + 512 tokens, beta 0.1, optim rmsprop, "
         "checkpointing; stated to train on 8 x 80 GB (no peak printed)",
         [_HW],
         not_expressible="the config's `optim: rmsprop` (torch RMSprop: one fp32 state per parameter, no "
                         "momentum); the CLI's --optimizer has adamw, adamw8bit, sgd, adafactor and the paged "
                         "AdamWs, none of them RMSprop's state"),
]
