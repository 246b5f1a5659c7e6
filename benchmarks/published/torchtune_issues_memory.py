"""Frozen: torchtune maintainers' runs in pytorch/torchtune's tracker (source `torchtune-issues-2024`), not the PR
threads of torchtune-memory-prs (#389, #527) nor its tutorials (other sources).

- #979 (2024-05-14, ebsmothers, a maintainer): `tune run lora_finetune_single_device --config
  llama3/8B_lora_single_device dataset=torchtune.datasets.slimorca_dataset dataset.max_seq_len=8192` "I am able to
  fit pretty comfortably into a single A100 80GB". The config at f3611e5 (main that day): Meta-Llama-3-8B-Instruct,
  LoRA rank 8 alpha 16 on q_proj and v_proj (no MLP, no output), dtype bf16 (weights, adapters, gradients, AdamW
  states), activation checkpointing, torch AdamW, batch 2 x accumulation 64, torch.nn.CrossEntropyLoss; the recipe's
  padded_collate pads each batch to its longest sample, SlimOrca cut at 8,192 tokens (--varying-lengths, the cap as
  --seq-len).
- PR #961 (2024-05-10): `tune run full_finetune_single_device --config recipes/configs/llama2/7B_full_low_memory.yaml
  batch_size=4` with every input forced to 2,048 tokens: "20.2 peak memory allocated" (rohan-varma) and "On my A100,
  I'm getting 22.3" (kartikayk). The config runs PagedAdamW with `optimizer_in_bwd: True` (the optimizer stepped in
  backward, gradients freed as they are applied): not expressible, kept with the reason.
"""

from __future__ import annotations

_SOURCE = "torchtune-issues-2024"
_REPO = "https://github.com/pytorch/torchtune"
_C979 = "f3611e505dfb3a7fd1bf81181ea250e63d854e0e"  # main on 2024-05-14
_Q979 = ("I am able to fit pretty comfortably into a single A100 80GB.")
_Q961 = ("Can't reproduce 24.1GB on a single device full finetune and instead seeing 20.2 peak memory allocated (and "
         "similar for reserved), so updating this table.")
_Q961_A100 = "On my A100, I'm getting 22.3, which is still higher than the number you're seeing."
_OPT_IN_BWD = ("7B_full_low_memory runs bitsandbytes' PagedAdamW with optimizer_in_bwd True (a hook per parameter "
               "steps the optimizer and frees the gradient during backward): the CLI has no word for gradients that "
               "never coexist")
_961_SETTINGS = ("torchtune#961 (2024-05-10): full_finetune_single_device with llama2/7B_full_low_memory at batch 4, "
                 "every input forced to 2,048 tokens, Llama-2-7B in bf16, activation checkpointing, PagedAdamW stepped "
                 "in backward; torchtune's memory log prints bytes / 1e9 as GB; {who}")

ROWS = [
    {"key": "torchtune979-llama3-8b-lora-r8-qv-slimorca-8192-1xa100-80gb-ran", "source": _SOURCE,
     "url": f"{_REPO}/issues/979",
     "code_url": f"{_REPO}/blob/{_C979}/recipes/configs/llama3/8B_lora_single_device.yaml",
     "quote": _Q979, "printed": "fit pretty comfortably", "measured_bytes": None, "metric": "allocated", "ran": True,
     "argv": ("estimate --model llama-3.1-8b --system 1xA100-80GB --strategy single --precision bf16 --lora "
              "--lora-rank 8 --lora-dropout 0.0 --lora-target q_proj --lora-target v_proj --micro-batch 2 "
              "--gradient-accumulation 64 --seq-len 8192 --varying-lengths --gradient-checkpointing "
              "--attention sdpa --format json"),
     "assumptions": (
         "torchtune#979 (2024-05-14): lora_finetune_single_device with llama3/8B_lora_single_device at f3611e5 and "
         "SlimOrca cut at 8,192 tokens: Llama3-8B in bf16 (adapters too), LoRA rank 8 alpha 16 on q_proj and "
         "v_proj, activation checkpointing, torch AdamW, batch 2 x accumulation 64, batches padded to their longest; "
         "trained on one A100 80GB ('fit pretty comfortably')"),
     "unexpressed": [
         "torchtune's own Llama3 module and LoRALinear (adapters in bf16), its SDPA attention and a bf16 "
         "nn.CrossEntropyLoss on the bf16 logits: the argv describes transformers' Llama with PEFT",
         "SlimOrca's samples are mostly far shorter than the 8,192-token cap: the argv says the cap",
         "Meta-Llama-3-8B-Instruct (the argv names the Llama 3.1 8B preset: the same shapes and vocabulary)",
     ]},
    {"key": "torchtune961-llama2-7b-full-bf16-pagedadamw-optim-in-bwd-b4-2048", "source": _SOURCE,
     "url": f"{_REPO}/pull/961", "code_url": f"{_REPO}/blob/{_C979}/recipes/configs/llama2/7B_full_low_memory.yaml",
     "quote": _Q961, "printed": "20.2", "measured_bytes": int(20.2e9), "metric": "allocated", "argv": None,
     "not_expressible": _OPT_IN_BWD,
     "assumptions": _961_SETTINGS.format(who="the author's GPU not named")},
    {"key": "torchtune961-llama2-7b-full-bf16-pagedadamw-optim-in-bwd-b4-2048-a100", "source": _SOURCE,
     "url": f"{_REPO}/pull/961", "code_url": f"{_REPO}/blob/{_C979}/recipes/configs/llama2/7B_full_low_memory.yaml",
     "quote": _Q961_A100, "printed": "22.3", "measured_bytes": int(22.3e9), "metric": "allocated", "argv": None,
     "not_expressible": _OPT_IN_BWD,
     "assumptions": _961_SETTINGS.format(who="a reviewer's A100")},
]
