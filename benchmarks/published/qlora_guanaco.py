"""Frozen, a verdict row: the QLoRA repository's README (artidoro/qlora, Dettmers et al. 2023), "finetune a 65B
parameter model on a single 48GB GPU", with the Guanaco-65B script it ships.

The page (README at 7f4e95a, 2023-07-24, the paper's abstract): "We present QLoRA, an efficient finetuning approach
that reduces memory usage enough to finetune a 65B parameter model on a single 48GB GPU"; "We include scripts to
reproduce the hyperparameters of Guanaco model training for various sizes at ./scripts/finetune_guanaco*.sh". No
peak is printed: the run is a measured "ran" on one 48 GB GPU (the estimate must not say "does not fit").

Read at that commit (scripts/finetune_guanaco_65b.sh, qlora.py; requirements transformers 4.31.0, peft 0.4.0,
bitsandbytes 0.40.0, accelerate 0.21.0): huggyllama/llama-65b in 4 bits (`--bits 4 --quant_type nf4
--double_quant`, bf16 compute dtype), the rest loaded in bf16 (`torch_dtype` bf16 under `--bf16`);
prepare_model_for_kbit_training with gradient checkpointing, then LoRA r=64 alpha 16 dropout 0.05 on every
Linear4bit (find_all_linear_names: q, k, v, o, gate, up and down projections), after which qlora.py casts the LoRA
layers back to bf16, every norm to fp32 and embed_tokens / lm_head back to bf16 (the k-bit preparation's fp32 casts
undone: --no-kbit-prepare); per-device batch 1 (accumulation 16); `source_max_len 16`, `target_max_len 512` (at most
528 tokens), DataCollatorForCausalLM padding each batch to its own longest (`pad_sequence`: --varying-lengths up to
528), `group_by_length`; the Trainer with `--bf16` (autocast); `optim` "paged_adamw_32bit" (qlora.py's default);
LLaMA in transformers 4.31 with eager attention.
"""

from __future__ import annotations

_COMMIT = "7f4e95a68dc076bea9b3a413d2b512eca6d004e5"
_URL = f"https://github.com/artidoro/qlora/blob/{_COMMIT}/README.md"

ROWS = [
    {"key": "qlora-guanaco-llama-65b-nf4-1x48gb-ran", "source": "qlora-guanaco-readme", "url": _URL,
     "quote": "We present QLoRA, an efficient finetuning approach that reduces memory usage enough to finetune a 65B "
              "parameter model on a single 48GB GPU while preserving full 16-bit finetuning task performance.",
     "printed": "a single 48GB GPU", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model benchmarks/published/models/llama-65b/config.json --gpus 1 --gpu-memory 48GB "
             "--strategy single --precision mixed --qlora --no-kbit-prepare --lora-rank 64 --lora-target q_proj "
             "--lora-target k_proj --lora-target v_proj --lora-target o_proj --lora-target gate_proj "
             "--lora-target up_proj --lora-target down_proj --lora-dropout 0.05 --micro-batch 1 "
             "--gradient-accumulation 16 --seq-len 528 "
             "--varying-lengths --gradient-checkpointing --attention eager --optimizer paged-adamw "
             "--stack bitsandbytes==0.40.0 --stack transformers==4.31 --format json",
     "assumptions": (
         f"artidoro/qlora at {_COMMIT[:7]}: scripts/finetune_guanaco_65b.sh (LLaMA-65B, NF4 with double "
         "quantization, bf16 compute, LoRA r=64 alpha 16 dropout 0.05 on every block linear, adapters and "
         "embeddings bf16 and norms fp32 after qlora.py's casts, batch 1, OASST1 cut at 16 + 512 tokens and padded "
         "to each batch's longest, gradient checkpointing, bf16 autocast, paged_adamw_32bit) on one 48 GB GPU "
         "(the page's '48GB', read as 48e9 bytes: which 48 GB card is not named); measured to run (no peak "
         "printed); the stand-in config.json has LLaMA-65B's shapes (8,192 hidden, 22,016 MLP, 80 layers, 64 "
         "heads, 32,000 tokens: 65,285,660,672 parameters)"),
     "unexpressed": [
         "the norms cast to fp32 by qlora.py (161 vectors of 8,192: 5 MB), which make the attention and MLP "
         "inputs fp32: bitsandbytes 0.40.0 (in the argv) then keeps each 4-bit linear's own bf16 cast of them, "
         "where the argv's 16-bit inputs are kept once (two more attention-input and one more MLP-input copy per "
         "layer, in the recomputed layer only)",
         "the padded length of the longest batch (the argv says the 528-token cap) and the MMLU evaluation "
         "(forward only, batch 1, up to 2,048 tokens) between training steps",
     ]},
]
