"""Frozen: google-gemini/gemma-cookbook's "Gemma - finetune with Axolotl" notebook (source
`gemma-cookbook-axolotl-2024`), the output it was saved with: Gemma 2B QLoRA through axolotl on a Colab T4, run
2024-06-04, and the memory axolotl logged while it trained. Not the cookbook's LitGPT notebook
(gemma-cookbook-litgpt-2025, another notebook, framework and model), not axolotl's own examples (axolotl-examples).

Read in the notebook (Gemma/[Gemma_2]Finetune_with_Axolotl.ipynb at e26db01; its outputs unchanged since it was
written) and in axolotl at 1f151c0 (2024-06-03, the commit its `pip install -e git+...axolotl` resolved to, its
requirements.txt: transformers 4.41.1, peft 0.11.1, bitsandbytes 0.43.1, accelerate 0.30.1; the notebook installs
torch 2.1.2):

* The notebook's YAML (google/gemma-2b, Gemma 1's 2B: 2,506,172,416 parameters, the argv's models/gemma-2b): QLoRA
  (`load_in_4bit`, adapter qlora) r=4, alpha 4, dropout 0.05 on every linear (`lora_target_linear`: the log's
  "found linear modules" q/k/v/o/gate/up/down), sequence_len 2048 with sample_packing and pad_to_sequence_len (every
  micro-batch one packed row of 2,048 tokens: --fixed-lengths), micro_batch_size 1, accumulation 3, adamw_bnb_8bit,
  gradient checkpointing (use_reentrant true, axolotl's default), no flash, xformers or sdp attention named.
* `bf16: false` with `fp16` left empty: axolotl's normalize_config sets torch_dtype float32 (neither bf16 nor fp16 nor
  8-bit), so the 4-bit compute dtype is fp32, the embedding and norms stay fp32 (the log: "converting modules to
  torch.float32 for flash attention") and the Trainer runs without autocast: --precision fp32. NF4 with double
  quantization (axolotl's bnb_config), PEFT's k-bit preparation (fp32 already).
* No attention implementation named: transformers 4.41.1 picks SDPA for Gemma (torch 2.1.2); Gemma's forward upcasts
  the logits to fp32 before the loss.
* What the number is: axolotl's GPUStatsCallback logs once, at the end of global step 2, "GPU memory usage while
  training: {allocated} (+{reserved - allocated} cache, +{nvidia-smi - reserved} misc)", each torch.cuda counter /
  1024**3 (utils/bench.py): 2.940 + 8.185 = 11.125 GiB reserved. With fixed 2,048-token rows, two optimizer steps
  (six micro-batches) done and nothing freed (no empty_cache, far from the T4's 15 GiB), that is the run's peak
  reserved: metric "reserved".
"""

from __future__ import annotations

_COMMIT = "e26db011fff2cf2fd7be051cb513833d056011cb"
_NOTEBOOK = "Gemma/%5BGemma_2%5DFinetune_with_Axolotl.ipynb"
_AXOLOTL = "1f151c0d52d2d4c78c5e1b1a4ff4fb64cba1f45d"
_SOURCE = "gemma-cookbook-axolotl-2024"
_QUOTE = "GPU memory usage while training: 2.940GB (+8.185GB cache, +0.386GB misc)"

ROWS = [
    {"key": "gemma-cookbook-axolotl-gemma-2b-qlora-r4-fp32-1xt4", "source": _SOURCE,
     "url": f"https://github.com/google-gemini/gemma-cookbook/blob/{_COMMIT}/{_NOTEBOOK}",
     "code_url": f"https://github.com/axolotl-ai-cloud/axolotl/blob/{_AXOLOTL}/src/axolotl/utils/bench.py",
     "quote": _QUOTE, "printed": "2.940GB (+8.185GB cache", "printed_sum": True,
     "measured_bytes": int(round((2.940 + 8.185) * 2**30)), "metric": "reserved",
     "argv": "estimate --model benchmarks/published/models/gemma-2b/config.json --system 1xT4 --strategy single "
             "--qlora --precision fp32 --lora-rank 4 --lora-dropout 0.05 --micro-batch 1 --gradient-accumulation 3 "
             "--seq-len 2048 --fixed-lengths --optimizer adamw8bit --gradient-checkpointing --attention sdpa "
             "--stack transformers==4.41.1 --stack torch==2.1.2 --stack bitsandbytes==0.43.1 "
             "--stack accelerate==0.30.1 --format json",
     "assumptions": "Gemma cookbook's axolotl notebook (e26db01; run 2024-06-04 on a Colab T4, axolotl 1f151c0): "
                    "google/gemma-2b QLoRA (NF4, double quantization, fp32 compute: bf16 false and fp16 unset make "
                    "axolotl's torch_dtype float32, no autocast) r=4 alpha 4 dropout 0.05 on every linear, "
                    "mhenrichsen/alpaca_2k_test packed into 2,048-token rows, micro-batch 1 x accumulation 3, "
                    "adamw_bnb_8bit, gradient checkpointing, SDPA (transformers 4.41.1's default for Gemma); axolotl's "
                    "allocated + cache at the end of global step 2, GiB: torch.cuda.memory_reserved() then",
     "unexpressed": ["sample packing without flash attention: axolotl's collator gives the packed row a 2D mask of "
                     "sample ids that Gemma expands to a 4D causal mask (the log: 'does not handle cross-attention')",
                     "the reserve at the end of step 2 is read as the run's peak reserved (no later step is logged)",
                     "Gemma 1's embedding scaling and tied 256,000-token head are the config.json's; the eval passes "
                     "(evals_per_epoch 4) come after the logged step"]},
]
