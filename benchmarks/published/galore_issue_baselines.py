"""Frozen: GaLore's issue #6, LLaMA-Factory's third-party benchmark of GaLore against the standard 8-bit AdamW baseline.

Source `galore-issue6-8bit-adamw-baseline`: jiaweizzhao/GaLore issue #6 ("Third-party benchmark", hiyouga, 2024-03-07):
"We utilized the 8-bit AdamW optimizer and pure bfloat16 training with gradient checkpointing. Galore requires only
28GB of VRAM to train a Llama-2 7B model, while the standard 8-bit AdamW optimizer requires at least 42GB of VRAM",
with the script it names, LLaMA-Factory's examples/extras/galore/galore_adamw_8bit_bf16.sh. The thread's own table
swaps the two columns (it prints "8-bit AdamW | 28GB" beside "GaLore 8-bit AdamW | 42GB"); the sentence, and GaLore's
purpose, say the baseline is the 42 GB one: the row quotes the sentence. Scored: the baseline (the same script
without --use_galore). GaLore's own 28 GB is kept as not expressible.

The run, read at LLaMA-Factory d46c2bb (the last commit of 2024-03-07, the thread's day): src/train_bash.py --stage
sft --finetuning_type full on meta-llama/Llama-2-7b-hf, --pure_bf16 (the model loaded in bf16 and not cast back to
fp32 for full tuning, adapter.py: bf16 weights, gradients and AdamW8bit's bf16 parameter copy, no autocast:
--precision bf16), --optim adamw_8bit (HF Trainer's bitsandbytes AdamW with 8-bit states), --per_device_train_batch_size 1
--gradient_accumulation_steps 8, --cutoff_len 1024 on alpaca_gpt4_en + glaive_toolcall (max_samples 3000), each
batch as long as its one sample (--varying-lengths); gradient checkpointing on by default (patcher.py:
gradient_checkpointing_enable(use_reentrant=True)); flash_attn off, which at that commit sets
attn_implementation="eager" (patcher._configure_attn_implementation). The stack is unpinned (requirements.txt:
transformers>=4.37.2, accelerate>=0.27.2): March 2024's releases assumed.

What the number is: "VRAM" from a screenshot of the GPU (the thread's image), taken as nvidia-smi in GiB; the GPU is
not named: an 80 GB card (42 GB does not fit a 40 GB one), A100 80GB assumed.
"""

from __future__ import annotations

_SOURCE = "galore-issue6-8bit-adamw-baseline"
_URL = "https://github.com/jiaweizzhao/GaLore/issues/6"
_CODE = ("https://github.com/hiyouga/LLaMA-Factory/blob/d46c2bbcba221dcaa3031ae0058a0364252898dc/"
         "examples/extras/galore/galore_adamw_8bit_bf16.sh")
_QUOTE = ("We utilized the 8-bit AdamW optimizer and pure bfloat16 training with gradient checkpointing. Galore "
          "requires only 28GB of VRAM to train a Llama-2 7B model, while the standard 8-bit AdamW optimizer requires "
          "at least 42GB of VRAM.")
_SETTINGS = (
    "GaLore issue #6 (2024-03-07), LLaMA-Factory d46c2bb examples/extras/galore/galore_adamw_8bit_bf16.sh: "
    "Llama-2-7B full SFT in pure bf16 (no fp32 copy, no autocast), {optim}, micro-batch 1, cutoff 1024 on "
    "alpaca_gpt4_en + glaive_toolcall (each batch one sample, up to 1,024 tokens), gradient checkpointing "
    "(LLaMA-Factory's default, reentrant), eager attention (flash_attn off sets attn_implementation='eager'); "
    "assumed: an A100 80GB (the GPU is not named; 42 GB rules out 40 GB cards), March 2024's releases "
    "(transformers 4.38.2, bitsandbytes 0.42.0, accelerate 0.27.2, torch 2.2.1: the stack is unpinned), and the "
    "printed VRAM read as nvidia-smi GiB"
)
_UNEXPRESSED = [
    "'at least 42GB': the figure is a lower bound read off a screenshot, not a logged peak",
    "HF Trainer's evaluation every 100 steps (per_device_eval_batch_size 1, val_size 0.1) is not part of the step",
]

ROWS = [
    {"key": "galore6-llama-2-7b-full-pure-bf16-adamw8bit-b1-1024-gc", "source": _SOURCE, "url": _URL,
     "code_url": _CODE, "quote": _QUOTE, "printed": "42GB", "measured_bytes": 42 * 2**30, "metric": "nvidia-smi",
     "argv": "estimate --model llama-2-7b --system 1xA100-80GB --strategy single --precision bf16 "
             "--optimizer adamw8bit --micro-batch 1 --gradient-accumulation 8 --seq-len 1024 --varying-lengths "
             "--gradient-checkpointing --attention eager --stack transformers==4.38.2 --stack bitsandbytes==0.42.0 "
             "--stack accelerate==0.27.2 --stack torch==2.2.1 --format json",
     "assumptions": _SETTINGS.format(optim="bitsandbytes' AdamW with 8-bit states (--optim adamw_8bit)"),
     "unexpressed": _UNEXPRESSED},
    {"key": "galore6-llama-2-7b-full-pure-bf16-galore-adamw8bit-r32", "source": _SOURCE, "url": _URL,
     "code_url": _CODE, "quote": _QUOTE, "printed": "28GB", "measured_bytes": 28 * 2**30, "metric": "nvidia-smi",
     "argv": None,
     "not_expressible": "GaLore (rank 32 on every mlp and self_attn linear): 8-bit AdamW states of the projected "
                        "gradients plus the projection matrices; the CLI has no gradient-projection optimizer",
     "assumptions": _SETTINGS.format(optim="GaLore's 8-bit AdamW, rank 32 on mlp and self_attn")},
]
