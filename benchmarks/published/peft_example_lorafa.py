"""Frozen: PEFT's LoRA-FA example README (huggingface/peft examples/lorafa_finetune/README.md, added with LoRA-FA in
PR #2468, 0c2bdbb, Apr 10 2025; source `peft-example-lorafa-2025`), its LoRA-against-LoRA-FA verdicts. Not PEFT's
README table, its DeepSpeed/FSDP guides, its issue threads or its MetaMathQA method comparison (peft-readme,
peft-sft-guides, peft-issues-memory-reports, peft-metamathqa).

The README: "when fine-tuning Llama-2-7b-chat-hf with a batch size of 8 and a sequence length of 1024, LoRA-FA requires
36GB of memory to store activations. This allows it to run successfully on an 80GB GPU. In contrast, LoRA requires at
least 60GB of memory for activations, leading to an Out of Memory (OOM) error." Two verdicts: plain LoRA out of memory
on one 80GB GPU, LoRA-FA (adapter A frozen, its input not kept) trained there. LoRA-FA's optimizer
(peft.optimizers.create_lorafa_optimizer: A frozen, B's gradient projected) is no method the CLI can say: that row is
kept as not expressible. Its "36GB"/"60GB" are activations only, no peak: not scored as figures.

The run is read as the example's own script beside the README, examples/lorafa_finetune/lorafa_finetuning.py at the
same commit, with --base_model_name_or_path meta-llama/Llama-2-7b-chat-hf --batch_size 8 and its defaults
(--cutoff_len 1024, LoRA r=16 alpha 32 dropout 0.05, no --quantize):

* `AutoModelForCausalLM.from_pretrained(..., torch_dtype=compute_dtype, device_map="cuda")` with compute_dtype bf16 on
  a GPU that supports it: the frozen base in bf16, `TrainingArguments(bf16=True)`: bf16 autocast over PEFT's fp32
  adapters (--precision mixed --base-dtype bf16); no gradient checkpointing (the unquantized path never enables it,
  TrainingArguments' default is off).
* LoraConfig on q/k/v/o/gate/up/down (the script's default list), `get_peft_model`.
* The data: MetaMathQA-40K tokenized with `padding="max_length", truncation=True, max_length=cutoff_len`: every
  sample 1,024 tokens (--fixed-lengths); DataCollatorForLanguageModeling; per-device batch 8, no accumulation.
* The optimizer for plain LoRA: the Trainer's default, adamw_torch (transformers 4.51, the release of that week:
  foreach AdamW; adamw_torch_fused became the default only in 4.54); SDPA attention (Llama's default).
* The GPU: "an 80GB GPU", read as an A100 80GB.

Nothing here was scored before this module and its source's registration were committed (issue 28's discipline).
"""

from __future__ import annotations

_COMMIT = "0c2bdbb11ab74cf061d6772320ea93873033df92"
_URL = f"https://github.com/huggingface/peft/blob/{_COMMIT}/examples/lorafa_finetune/README.md"
_CODE = f"https://github.com/huggingface/peft/blob/{_COMMIT}/examples/lorafa_finetune/lorafa_finetuning.py"
_SOURCE = "peft-example-lorafa-2025"
_QUOTE = ("when fine-tuning Llama-2-7b-chat-hf with a batch size of 8 and a sequence length of 1024, LoRA-FA requires "
          "36GB of memory to store activations. This allows it to run successfully on an 80GB GPU. In contrast, LoRA "
          "requires at least 60GB of memory for activations, leading to an Out of Memory (OOM) error.")
_SETTINGS = ("PEFT's LoRA-FA example (0c2bdbb, Apr 2025), its lorafa_finetuning.py at its defaults with "
             "Llama-2-7b-chat-hf and batch 8: the base in bf16 with bf16 autocast, LoRA r=16 alpha 32 dropout 0.05 "
             "on every block linear, no gradient checkpointing, MetaMathQA padded to 1,024 tokens, the Trainer's "
             "AdamW, SDPA, one 80GB GPU (an A100 80GB assumed)")
_UNEXPRESSED = [
    "the README does not say which code measured it: read as the example's own script at its defaults",
    "which 80GB GPU (an A100 80GB assumed; an H100's 79.6 GiB would not change the verdict's side by much)",
    "the transformers/torch versions of the run (not said; transformers 4.51 assumed, that week's release)",
]

ROWS = [
    {"key": "peft-lorafa-readme-llama-2-7b-chat-lora-r16-b8-1024-1x80gb-oom", "source": _SOURCE, "url": _URL,
     "code_url": _CODE, "quote": _QUOTE, "printed": "LoRA requires at least 60GB of memory for activations, leading to "
     "an Out of Memory (OOM) error", "measured_bytes": None, "metric": "nvidia-smi", "ran": False,
     "argv": "estimate --model llama-2-7b --system 1xA100-80GB --strategy single --lora --lora-rank 16 "
             "--lora-dropout 0.05 --precision mixed --base-dtype bf16 --no-gradient-checkpointing --attention sdpa "
             "--optimizer adamw --micro-batch 8 --gradient-accumulation 1 --seq-len 1024 --fixed-lengths "
             "--stack transformers==4.51.1 --format json",
     "assumptions": f"{_SETTINGS}; plain LoRA: out of memory (the README)", "unexpressed": list(_UNEXPRESSED)},
    {"key": "peft-lorafa-readme-llama-2-7b-chat-lorafa-r16-b8-1024-1x80gb-ran", "source": _SOURCE, "url": _URL,
     "code_url": _CODE, "quote": _QUOTE, "printed": "This allows it to run successfully on an 80GB GPU",
     "measured_bytes": None, "metric": "nvidia-smi", "ran": True, "argv": None,
     "not_expressible": "LoRA-FA (create_lorafa_optimizer --lorafa: adapter A frozen, only B trained, A's input not "
                        "kept for backward): no --method says it",
     "assumptions": f"{_SETTINGS}; --lorafa: ran (the README)", "unexpressed": []},
]
