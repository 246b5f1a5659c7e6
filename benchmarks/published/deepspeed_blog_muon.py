"""Frozen: DeepSpeed's "Using Muon Optimizer with DeepSpeed" blog (deepspeedai/DeepSpeed blogs/muon-optimizer, PR
#7962, May 21 2026; source `deepspeed-blog-muon-2026`), its measured AdamW baseline. Not DeepSpeed's tutorials, threads
or DeepSpeedExamples' pages (deepspeed-tutorials-zero-2020, deepspeed-threads-memory, deepspeedexamples-*).

The blog: "We measured peak GPU memory during finetuning Qwen2.5-3B on tatsu-lab/alpaca using the same 8xA100 (40GB)
configuration described above (batch size 32, ZeRO Stage 2, bf16)": AdamW 34.5 GiB, Muon 31.4 GiB per GPU. Muon is not
an optimizer the CLI can say (one momentum buffer for the 2D hidden weights, Adam for the rest): kept as not
expressible. The AdamW row's run is the blog's own recipe, delock/deepspeed_finetune_demo (its [7]), read at the
stored version of its finetune_llama.py (18f3df1; its DATASET_REGISTRY carries the blog's CodeAlpaca/MetaMathQA/MMLU
sets, so of the blog's time) and finetune.sh (48c46f9):

* `./finetune.sh <NUM_GPUS> <MODEL_NAME> <DS_CONFIG> [BATCH]` runs `deepspeed --num_gpus=$NUM finetune_llama.py
  --batch_size $BATCH --deepspeed_config $CONFIG --eval_steps 100 --wandb_name ...` on tatsu-lab/alpaca (its
  default); finetune_llama.py writes --batch_size into the JSON's train_batch_size, so "batch size 32" on 8 GPUs with
  the JSON's gradient_accumulation_steps 1 is DeepSpeed's micro-batch 4 per GPU.
* The model: `AutoModelForCausalLM.from_pretrained(..., torch_dtype=torch.bfloat16,
  attn_implementation="flash_attention_2")`, `gradient_checkpointing_enable()` (transformers' default kind), trained
  in a plain `deepspeed.initialize` loop (no Trainer): forward, `model_engine.backward(loss)`, `model_engine.step()`;
  the loss is the model's own (transformers' fp32 upcast of the logits).
* The data: alpaca prompts tokenized with `padding="max_length"` to `--max_length` (2048 by default; finetune.sh
  passes none): every micro-batch 4 x 2,048 tokens (--fixed-lengths).
* The JSON: the repository's z2_config.json ("ZeRO Stage 2", README) is not stored; its Muon twin z2_muon.json
  (`"bf16": {"enabled": true}`, `"zero_optimization": {"stage": 2}` with DeepSpeed's defaults, gradient clipping 1.0,
  an optimizer block of lr 2e-5, betas, eps 1e-8, weight decay 0.01) is read with `"type": "AdamW"` for the AdamW run:
  DeepSpeed builds its FusedAdam (adam_w_mode) for it (--optimizer-kernel fused), its bf16 ZeRO-2 optimizer keeps
  fp32 master weights and Adam states partitioned (--precision bf16 under --strategy zero2).
* What the number is: the blog does not say, and the script prints no memory; finetune.sh always passes
  --wandb_name, whose wandb run logs the GPUs' used memory (NVML) as system metrics: read as the device's used
  memory (nvidia-smi's), GiB as the blog writes it. DeepSpeed was 0.19.1's development line (version.txt at the
  blog's commit); torch and transformers are not said (the CLI's installed ones).

Nothing here was scored before this module and its source's registration were committed (issue 28's discipline).
"""

from __future__ import annotations

_COMMIT = "de4730918516d1f27bca1580640bf96836c74273"
_URL = f"https://github.com/deepspeedai/DeepSpeed/blob/{_COMMIT}/blogs/muon-optimizer/README.md"
_CODE = ("https://github.com/delock/deepspeed_finetune_demo/blob/18f3df1d5fb3a53dfc03dde90c8076bec8e8dec3/"
         "finetune_llama.py")
_SOURCE = "deepspeed-blog-muon-2026"
_TABLE = ("| Optimizer | Peak Memory per GPU | Savings vs AdamW |\n|-----------|---------------------|------------------|\n"
          "| AdamW     | 34.5 GiB            | —                |\n| Muon      | 31.4 GiB            | 9%               |")
_SETTINGS = ("DeepSpeed's Muon blog (May 2026), its Qwen2.5-3B measurement on 8 x A100 40GB through "
             "delock/deepspeed_finetune_demo: full fine-tuning of the bf16 model under ZeRO-2 (bf16, fp32 masters and "
             "states partitioned), global batch 32 (micro-batch 4 per GPU, no accumulation), alpaca padded to 2,048 "
             "tokens, flash attention 2, gradient checkpointing, a plain deepspeed.initialize loop")
_UNEXPRESSED = [
    "the repository's z2_config.json is not stored: its optimizer block is read as z2_muon.json's with type AdamW "
    "(DeepSpeed's FusedAdam)",
    "what the 'Peak Memory per GPU' was read from (the script prints none): read as the device's used memory, the "
    "wandb run's NVML system metric",
    "--max_length read as the script's default 2048 (finetune.sh passes none; the blog's other runs passed 512)",
    "the evaluation every 100 steps (batch 4 per rank, no_grad, after torch.cuda.empty_cache())",
    "the torch, transformers and flash-attn versions (not said)",
]

ROWS = [
    {"key": "deepspeed-blog-muon-qwen2.5-3b-adamw-zero2-8xa100-40gb", "source": _SOURCE, "url": _URL, "code_url": _CODE,
     "quote": _TABLE, "printed": "34.5 GiB", "measured_bytes": int(round(34.5 * 2**30)), "metric": "nvidia-smi",
     "argv": "estimate --model qwen2.5-3b --system 8xA100-40GB --strategy zero2 --precision bf16 --optimizer adamw "
             "--optimizer-kernel fused --micro-batch 4 --seq-len 2048 --fixed-lengths --gradient-checkpointing "
             "--attention flash --stack deepspeed==0.19.1 --format json",
     "assumptions": f"{_SETTINGS}; AdamW, the blog's baseline; 'GiB' per GPU read as the device's used memory",
     "unexpressed": list(_UNEXPRESSED)},
    {"key": "deepspeed-blog-muon-qwen2.5-3b-muon-zero2-8xa100-40gb", "source": _SOURCE, "url": _URL, "code_url": _CODE,
     "quote": _TABLE, "printed": "31.4 GiB", "measured_bytes": int(round(31.4 * 2**30)), "metric": "nvidia-smi",
     "argv": None,
     "not_expressible": "DeepSpeed's Muon optimizer (one momentum buffer for the 2D hidden weights, Adam's two for "
                        "the embedding, norms and LM head): no --optimizer says it",
     "assumptions": f"{_SETTINGS}; Muon (z2_muon.json)", "unexpressed": []},
]
