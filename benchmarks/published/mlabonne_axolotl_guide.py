"""Frozen: Maxime Labonne's blog post "A Beginner's Guide to LLM Fine-Tuning" (2023-08-27), a verdict row.

Source `mlabonne-axolotl-guide-2023`: one engineer's post on his own blog (mlabonne.github.io/blog; its Quarto
source, posts/A_Beginners_Guide_to_LLM_Finetuning.ipynb in mlabonne/blog at f9a7d36, dated 2023-08-27 in its front
matter). The post prints its whole axolotl config (the gist EvolCodeLlama-7b.yaml it downloads) and runs `accelerate
launch scripts/finetune.py` from a fresh clone of axolotl on one RunPod RTX 3090 (24 GB): "it took me 1h 11m 44s. If
you check the GPU memory used, you'll see almost 100% with this config". The card full is the verdict "ran"; no
figure is scored (nvidia-smi near 24 GB says only that the allocator grew to what the card had).

The config: codellama/CodeLlama-7b-hf, load_in_4bit with adapter qlora (NF4, double quantization, bf16 compute dtype),
lora_r 32, alpha 16, dropout 0.05, lora_target_linear (every Linear4bit but lm_head: q/k/v/o/gate/up/down),
sequence_len 2048 with sample_packing, micro_batch_size 10, gradient_accumulation_steps 1, paged_adamw_32bit, bf16
(autocast), gradient_checkpointing, flash_attention.

The code it ran, axolotl main on the post's date (868530c, 2023-08-26): src/axolotl/utils/models.py patches Llama's
attention with flash-attn (`replace_llama_attn_with_flash_attn(packed=True)`), runs prepare_model_for_kbit_training
and then, for flash attention on a llama-derived model, casts the norms, embed_tokens and lm_head back to bf16 (the
model is not left fp32-prepared: --no-kbit-prepare, checkpointing on); trainer.py's MultipackDistributedDataloader
packs samples into bins of sequence_len x micro_batch_size = 20,480 tokens, one bin per step, with per-sample
position ids (attention within each sample, at most 2,048 tokens): the argv says 10 x 2,048 packed tokens
(--fixed-lengths). requirements.txt there: bitsandbytes>=0.41.1 (0.41.1, August 2023's release), transformers and
peft from git main (4.33.0.dev0: the CLI takes 4.33.0, the shift copy of the loss before 4.49 either way); the RunPod
image winglian/axolotl-runpod:main-py3.10-cu118-2.0.1 (torch 2.0.1).
"""

from __future__ import annotations

_URL = ("https://github.com/mlabonne/blog/blob/f9a7d369cd1268d042e1c2d299dceb4339f5cce8/posts/"
        "A_Beginners_Guide_to_LLM_Finetuning.ipynb")
_CODE_URL = ("https://github.com/axolotl-ai-cloud/axolotl/blob/868530c39c2d2a5ddcce1483bd73951fb376e18b/src/axolotl/"
             "utils/models.py")
_QUOTE = ("If everything is configured correctly, you should be able to train the model in a little more than **one "
          "hour** (it took me 1h 11m 44s). If you check the GPU memory used, you'll see almost 100% with this config, "
          "which means we're optimizing it pretty nicely.")
_TARGETS = "".join(f"--lora-target {m} " for m in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                    "down_proj"))

ROWS = [{
    "key": "mlabonne-codellama-7b-qlora-axolotl-rtx3090", "source": "mlabonne-axolotl-guide-2023", "url": _URL,
    "code_url": _CODE_URL, "quote": _QUOTE, "printed": "almost 100%", "ran": True, "metric": "nvidia-smi",
    "argv": "estimate --model benchmarks/published/models/codellama-7b/config.json --system 1xRTX3090 "
            f"--strategy single --qlora --no-kbit-prepare --lora-rank 32 {_TARGETS}--lora-dropout 0.05 "
            "--precision mixed --optimizer paged-adamw --micro-batch 10 --seq-len 2048 --fixed-lengths "
            "--gradient-checkpointing --attention flash --stack transformers==4.33.0 --stack bitsandbytes==0.41.1 "
            "--stack torch==2.0.1 --format json",
    "assumptions": (
        "Labonne's axolotl guide (2023-08-27) with axolotl 868530c: CodeLlama-7B NF4 QLoRA r=32 alpha 16 dropout 0.05 "
        "on every block linear, norms/embeddings/head cast back to bf16 for flash attention, sample packing into "
        "20,480-token bins (micro_batch_size 10 x sequence_len 2048), accumulation 1, paged_adamw_32bit, bf16 "
        "autocast, gradient checkpointing, flash-attn 2 patched attention; transformers 4.33.0.dev0, bitsandbytes "
        "0.41.1, torch 2.0.1; one RTX 3090 24GB, trained in 1h 11m 44s with the card 'almost 100%' used (ran)"),
    "unexpressed": [
        "each step's 10 samples are one packed row of up to 20,480 tokens with per-sample position ids (flash-attn's "
        "varlen path): the argv's 10 x 2,048 holds the same tokens",
        "eval every 1% of the steps on 2% of the data (no multipack for eval: batches of 10 padded, no_grad)",
        "'almost 100%' of the card: a verdict, not a figure (the allocator fills what the card has)",
    ],
}]
