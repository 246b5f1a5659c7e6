"""Frozen, verdict rows: brev.dev's fine-tuning notebooks (brevdev/notebooks, Harper Carroll's QLoRA guides,
Oct-Dec 2023), each stating the GPU it was run on ("The whole thing cost me $1 using a 1xA10G 24GB", "A single A10G
(as linked) with 24GB GPU Memory was enough for me"); no peak is printed. Each row is read in the notebook at the
commit that first carries that sentence beside its code:

* mistral-finetune.ipynb at f4dc9a8 (2023-11-21): Mistral-7B-v0.1 on gem/viggo, LoRA r=8 alpha 16, batch 2 x
  accumulation 4.
* mistral-finetune-own-data.ipynb at 6a41b38 (2023-10-13): Mistral-7B-v0.1 on the author's journal entries, LoRA
  r=32 alpha 64, batch 2 x accumulation 1.
* llama2-finetune-own-data.ipynb at 5440ce6 (2023-12-05): Llama-2-7b-hf, the same recipe as the Mistral own-data
  notebook.

The code, the same in the three: BitsAndBytesConfig(load_in_4bit, nf4, double quantization, compute dtype bfloat16);
`AutoModelForCausalLM.from_pretrained(base_model_id, quantization_config=bnb_config)` with no torch_dtype (the
non-quantized embedding, norms and lm_head load fp32) and no device_map; `model.gradient_checkpointing_enable()` then
`prepare_model_for_kbit_training(model)` (PEFT's k-bit preparation: non-4-bit parameters fp32, checkpointing on);
LoraConfig(dropout 0.05, targets q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj AND lm_head);
`accelerator.prepare_model(model)` of an Accelerator with an FSDP plugin, in a single notebook process (no
distributed launch: nothing is wrapped); transformers.Trainer with bf16=True (autocast), optim "paged_adamw_8bit",
DataCollatorForLanguageModeling; every sample tokenized with `truncation=True, max_length=512,
padding="max_length"`: fixed 512-token batches. Versions: `pip install -U bitsandbytes` and transformers, PEFT and
accelerate from git on the day (Oct 2023: transformers 4.35.0.dev, bitsandbytes 0.41.1; Nov-Dec 2023: transformers
4.36.0.dev, bitsandbytes 0.41.2/0.41.3), read from the commit dates.
"""

from __future__ import annotations

_REPO = "https://github.com/brevdev/notebooks/blob/{commit}/{path}"
_SOURCE = "brevdev-notebooks-2023"
_TARGETS = "".join(f"--lora-target {m} " for m in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                    "down_proj", "lm_head"))
_SETTINGS = (
    "brev.dev notebook {path} at {commit}: {model} in NF4 with double quantization (bf16 compute), loaded without "
    "a torch_dtype (fp32 non-quantized parameters) and prepared by prepare_model_for_kbit_training (checkpointing "
    "on), LoRA r={rank} alpha {alpha} dropout 0.05 on the seven block linears and lm_head, the HF Trainer with bf16 "
    "autocast and paged_adamw_8bit, batch {batch} x accumulation {accum}, every sample padded to 512 tokens, "
    "transformers {transformers} and bitsandbytes {bnb} (the day's releases); one A10G 24GB (AWS g5.xlarge), "
    "stated to have run there (no peak printed)"
)
_UNEXPRESSED = [
    "evaluation every 50 (own-data: 25 or 50) steps at the Trainer's default per_device_eval_batch_size 8 x 512 "
    "tokens under no_grad (a larger batch's logits, no backward): not a training step",
    "transformers, PEFT and accelerate installed from git on the day: the versions are the commit date's",
]


def _row(key: str, commit: str, path: str, quote: str, printed: str, model: str, name: str, rank: int, alpha: int,
         batch: int, accum: int, transformers: str, bnb: str) -> dict:
    return {"key": key, "source": _SOURCE, "url": _REPO.format(commit=commit, path=path), "quote": quote,
            "printed": printed, "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": f"estimate --model {model} --system 1xA10G --strategy single --qlora --base-dtype fp32 "
                    f"--lora-rank {rank} {_TARGETS}--lora-dropout 0.05 --precision mixed --optimizer paged-adamw8bit "
                    f"--micro-batch {batch} --gradient-accumulation {accum} --seq-len 512 --fixed-lengths "
                    f"--gradient-checkpointing --stack transformers=={transformers} --stack bitsandbytes=={bnb} "
                    "--format json",
            "assumptions": _SETTINGS.format(path=path, commit=commit[:7], model=name, rank=rank, alpha=alpha,
                                            batch=batch, accum=accum, transformers=transformers, bnb=bnb),
            "unexpressed": list(_UNEXPRESSED)}


_Q_VIGGO = ("I used a GPU and dev environment from [brev.dev](https://brev.dev). The whole thing cost me $1 using a "
            "1xA10G 24GB. Click the badge below to get your preconfigured instance:\n...\nA single A10G (as linked) "
            "or L4 should be enough for this dataset; anything with >= 24GB GPU Memory. You may need more GPUs "
            "and/or Memory if your sequence max_length is larger than 512.")
_Q_MISTRAL_OWN = ("I did this for **$1** on an 1x A10G 24GB from Brev.dev (instructions below).\n...\nIt took about 20 "
                  "minutes on the 1x A10G 24GB.")
_Q_LLAMA_OWN = ("The whole thing cost me $1 using this instance. A single A10G (as linked) or L4 should be enough for "
                "this dataset; anything with >= 24GB GPU Memory. You may need more GPUs and/or Memory if your "
                "sequence max_length is larger than 512.")

ROWS = [
    _row("brev-mistral-7b-qlora-viggo-1xa10g-ran", "f4dc9a88981d66e70d383a93cd0ba64b9e43eb68", "mistral-finetune.ipynb",
         _Q_VIGGO, "1xA10G 24GB", "mistral-7b", "mistralai/Mistral-7B-v0.1", 8, 16, 2, 4, "4.36.0", "0.41.2"),
    _row("brev-mistral-7b-qlora-own-data-1xa10g-ran", "6a41b386da018fc8daec2d7bee2b1740d025fb8e",
         "mistral-finetune-own-data.ipynb", _Q_MISTRAL_OWN, "1x A10G 24GB", "mistral-7b", "mistralai/Mistral-7B-v0.1",
         32, 64, 2, 1, "4.35.0", "0.41.1"),
    _row("brev-llama-2-7b-qlora-own-data-1xa10g-ran", "5440ce61dd9b717580f2f4bdb56bd287c2d8ade1",
         "llama2-finetune-own-data.ipynb", _Q_LLAMA_OWN, "A single A10G (as linked)", "llama-2-7b",
         "meta-llama/Llama-2-7b-hf", 32, 64, 2, 1, "4.36.0", "0.41.3"),
    # Mixtral-8x7B QLoRA on a g4dn.12xlarge, loaded with device_map="auto": the layers split over the four T4s
    # (naive pipeline, one process), which the CLI's strategies (single, DDP, ZeRO, FSDP) do not say.
    {"key": "brev-mixtral-8x7b-qlora-device-map-4xt4-ran", "source": _SOURCE,
     "url": _REPO.format(commit="d7737d5854922a351bb34a66dafab3c0ee8ec71a", path="mixtral-finetune.ipynb"),
     "quote": ("A 4xT4 (as linked) with 16 GPU Memory per GPU was enough for me. At the time of writing this, it costs "
               "$3.91/hour, and it trained for about 2 hours for 100 training steps."),
     "printed": "A 4xT4 (as linked)", "measured_bytes": None, "metric": "reserved", "ran": True, "argv": None,
     "not_expressible": "Mixtral-8x7B in NF4 loaded with device_map='auto' across 4 T4s in one process (the "
                        "layers placed on different GPUs, run in turn): model placement the CLI's strategies do not "
                        "express",
     "assumptions": "brev.dev mixtral-finetune.ipynb at d7737d5: QLoRA r=8 on attention, experts' w1/w2/w3 and "
                    "lm_head, 340-token padded samples, on a g4dn.12xlarge (4 x T4 16GB)"},
]
