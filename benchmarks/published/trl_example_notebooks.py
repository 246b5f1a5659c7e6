"""Frozen: TRL's own example notebooks (huggingface/trl examples/notebooks), each run's printed peak and the
per-model figures their authors wrote beside the model list, one source per notebook.

What the number is, in both notebooks: the cell after `trainer.train()` prints
`round(torch.cuda.max_memory_reserved() / 1024 / 1024 / 1024, 3)` as "Peak reserved memory = X GB.": the process's
peak reserved memory in GiB since it started, model loading included (the cell before training prints the same
gauge after loading: "12.074 GB of memory reserved."). The "~X GB VRAM" comments beside the model list ("All of the
options have been tested on free Colab instances") print no code; they are read as the same gauge, in GiB, on the
free Colab T4 (14.741 GiB), at the notebook's settings of the commit that wrote them.

`trl-notebook-sft-lora-qlora-2025`, examples/notebooks/sft_trl_lora_qlora.ipynb: the model loaded by
`AutoModelForCausalLM.from_pretrained(dtype=torch.float16, attn_implementation="sdpa")` with a 4-bit NF4
BitsAndBytesConfig (double quantization, fp16 compute), `LoraConfig(r=32, lora_alpha=32)` on q/k/v/o/gate/up/down
(every block linear), SFTTrainer on HuggingFaceH4/Multilingual-Thinking (1,000 chats), no packing, no padding-free:
each batch padded to its longest chat, cut at SFTConfig's default max_length 1024 (--varying-lengths). TRL 0.24.0
(released Oct 15 2025; both runs are later: trackio run ids 1760607651 and 1761318512, Oct 16 and Oct 24 2025):
SFTConfig's bf16 defaults to True (autocast in bf16 over the fp16 weights; torch reports bf16 supported on a T4,
emulated); prepare_peft_model calls PEFT's prepare_model_for_kbit_training (the fp16 embedding, norms and untied
LM head cast to fp32) with gradient checkpointing, reentrant by default (the run's warning says so). At 28bba8c6b
(Oct 20 2025): batch 2, accumulation 8, `optim="adamw_8bit"`, no Liger, no activation offloading; printed on an
A100-SXM4-40GB for Qwen3-8B. At f6834206a (Oct 30 2025): batch 1, accumulation 4, `paged_adamw_8bit`,
`use_liger_kernel=True` (Liger's fused linear cross-entropy: the Trainer patches the model; SFTTrainer skips the
logits metrics under Liger), `activation_offloading=True`; printed on a Tesla T4 for unsloth/qwen3-14b-unsloth-bnb-4bit
(Qwen3-14B pre-quantized in NF4, embedding and LM head left 16-bit). Transformers 4.57.1 and bitsandbytes 0.48.1
were current (the notebook installs the newest with `pip install -U`).

`trl-notebook-grpo-lora-qlora-2025`, examples/notebooks/grpo_trl_lora_qlora.ipynb at c9a9e25 (Dec 23 2025; its run
is trackio id 1766143600, Dec 19 2025: TRL 0.26.2, transformers 4.57.3): GRPO on AI-MO/NuminaMath-TIR (train[:5%]:
a system prompt and one math problem per prompt), the model loaded as above (fp16, NF4, sdpa), the same LoRA made
by GRPOTrainer itself with get_peft_model (no prepare_model_for_kbit_training: the embedding and head stay fp16; the
adapters cast to bf16),
`per_device_train_batch_size=8`, `num_generations=8` (one prompt's eight completions per step),
`max_completion_length=256`, `paged_adamw_8bit`, `use_liger_kernel=True` (GRPOTrainer then computes its loss with
Liger's LigerFusedLinearGRPOLoss: no logits tensor), gradient checkpointing, generation by transformers (no vLLM),
GRPOConfig's beta 0.0 (no reference model) and bf16 autocast; max_prompt_length is deprecated in 0.26 (None: no
prompt is cut). The notebook's table: the "Best (all optimizations)" row is this configuration; the "Worst (naive
FP16)" row drops LoRA, quantization, Liger and checkpointing, uses AdamW and eager attention, with "the number of
generations and the batch size" unchanged: full fine-tuning of the fp16 weights (AdamW's states in fp16).
"""

from __future__ import annotations

_TRL = "https://github.com/huggingface/trl/blob/{commit}/examples/notebooks/{notebook}"
_SFT_NB, _GRPO_NB = "sft_trl_lora_qlora.ipynb", "grpo_trl_lora_qlora.ipynb"
_SFT_OCT20, _SFT_OCT30 = "28bba8c6b10b1ee5a447b32d7389a0d98fc150cf", "f6834206a8bd52110c938b67eaf8b53c153f413c"
_GRPO_DEC23 = "c9a9e25721cccbbfaddc797258e8d7faffc5cbc2"
_MODELS = "benchmarks/published/models"
_LORA = ("--qlora --lora-rank 32 --lora-target q_proj --lora-target k_proj --lora-target v_proj --lora-target o_proj "
         "--lora-target gate_proj --lora-target up_proj --lora-target down_proj --base-dtype fp16 --precision mixed "
         "--gradient-checkpointing --attention sdpa")
_LOADING = ("the gauge is the process's peak since it started: what loading left cached (the shards read in fp16 and "
            "quantized, prepare_model_for_kbit_training's fp32 casts) stays reserved, and the printed figure is "
            "the larger of loading's and training's peaks")
_LOADING_GRPO = _LOADING.replace(", prepare_model_for_kbit_training's fp32 casts", "")
# TRL 0.26.2's GRPOTrainer.__init__ (trl/trainer/grpo_trainer.py, lines 316-333 at v0.26.2) calls get_peft_model itself
# and never prepare_peft_model, so nothing is cast to fp32: "if peft_config is not None: model = get_peft_model(model,
# peft_config)" ... "if getattr(model, 'is_loaded_in_4bit', False) ...: for param in model.parameters(): if
# param.requires_grad: param.data = param.data.to(torch.bfloat16)" (--no-kbit-prepare)
_BF16_ADAPTERS = ("TRL 0.26's GRPOTrainer casts the LoRA adapters of a 4-bit model to bf16 (the CLI keeps PEFT's fp32 "
                  "adapters)")
_SFT_DATA = ("how long Multilingual-Thinking's chats are under each tokenizer (cut at 1,024; --seq-len 1024 assumed "
             "reached)")
_SFT_STACK = "--stack transformers==4.57.1 --stack bitsandbytes==0.48.1"
_GRPO_STACK = "--stack transformers==4.57.3"
_PROMPT = ("the prompt's length is the data's: a 62-word system prompt and one NuminaMath-TIR problem in Qwen2's chat "
           "template, not cut (max_prompt_length None in TRL 0.26); --max-prompt-length 256 assumed, the completions "
           "padded to the longest of the eight (256 at most)")


def _row(key: str, source: str, url: str, quote: str, printed: str, settings: str, *, argv: str | None,
         unexpressed: list[str], ran: bool | None = None, why: str | None = None) -> dict:
    # a table cell's printed text may run on into the next cell, to be found once in the quote
    measured = None if ran is not None else int(round(float(printed.split()[0]) * 2**30))
    row = {"key": key, "source": source, "url": url, "quote": quote, "printed": printed, "metric": "reserved",
           "measured_bytes": measured, "argv": argv,
           "assumptions": settings, "unexpressed": unexpressed}
    if ran is not None:
        row["ran"] = ran
    if not argv:
        row["not_expressible"] = why
    return row


def _sft_oct20(key: str, model: str, quote: str, printed: str, system: str, where: str, more=()) -> dict:
    settings = (f"TRL's SFT LoRA/QLoRA notebook at 28bba8c6b (Oct 20 2025), {where}: NF4 QLoRA r=32 on every block "
                "linear over the fp16 weights, bf16 autocast, kbit preparation and checkpointing, batch 2 "
                "(accumulation 8), bitsandbytes' 8-bit AdamW (adamw_8bit), Multilingual-Thinking padded per batch "
                "up to 1,024 tokens, "
                "no Liger; peak max_memory_reserved in GiB")
    return _row(key, "trl-notebook-sft-lora-qlora-2025", _TRL.format(commit=_SFT_OCT20, notebook=_SFT_NB), quote,
                printed, settings,
                argv=f"estimate --model {model} --system {system} --strategy single {_LORA} --optimizer adamw8bit "
                     f"--micro-batch 2 --gradient-accumulation 8 --seq-len 1024 --varying-lengths {_SFT_STACK} "
                     "--format json",
                unexpressed=[_LOADING, _SFT_DATA, "the torch version (Colab's, October 2025)", *more])


_SFT_COMMENT = ("the '~' figure is its authors' note beside the model list; the notebook prints no code for it and "
                "does not say which card or commit's settings gave it: read as the notebook's own gauge on the free "
                "Colab T4 at the settings of the commit that wrote it")
_GRPO_COMMENT = _SFT_COMMENT.replace("free Colab T4", "free Colab T4 (the notebook's run on the T4 printed 8.832 "
                                     "for its default model, the table 9.2)")

_SFT_ROWS = [
    _sft_oct20("trl-nb-sft-qwen3-8b-qlora-a100-40gb", f"{_MODELS}/qwen3-8b/config.json",
               "GPU = NVIDIA A100-SXM4-40GB. Max memory = 39.557 GB.\n11.959 GB of memory reserved.\n...\n"
               "Peak reserved memory = 13.615 GB.\nPeak reserved memory for training = 1.656 GB.",
               "13.615", "1xA100-40GB", "printed for Qwen/Qwen3-8B on an A100-SXM4-40GB (trackio run 1760607651)"),
    _sft_oct20("trl-nb-sft-qwen3-8b-qlora-t4-approx", f"{_MODELS}/qwen3-8b/config.json",
               'model_id, output_dir = "Qwen/Qwen3-8B", "Qwen3-8B-SFT"                                '
               '# ⚠️ ~12.8 GB VRAM',
               "12.8", "1xT4", "Qwen/Qwen3-8B on the free Colab T4 (the authors' note)", [_SFT_COMMENT]),
    _sft_oct20("trl-nb-sft-qwen2.5-7b-qlora-t4-approx", "qwen2.5-7b",
               '# model_id, output_dir = "Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct"            '
               '# ✅ ~10.8 GB VRAM',
               "10.8", "1xT4", "Qwen/Qwen2.5-7B-Instruct on the free Colab T4 (the authors' note)", [_SFT_COMMENT]),
    _sft_oct20("trl-nb-sft-llama-3.2-3b-qlora-t4-approx", "llama-3.2-3b",
               '# model_id, output_dir = "meta-llama/Llama-3.2-3B-Instruct", "Llama-3.2-3B-Instruct"  '
               '# ✅ ~4.7 GB VRAM',
               "4.7", "1xT4", "meta-llama/Llama-3.2-3B-Instruct on the free Colab T4 (the authors' note; tied "
               "embedding, which prepare_model_for_kbit_training casts to fp32 once)", [_SFT_COMMENT]),
    _sft_oct20("trl-nb-sft-llama-3.1-8b-qlora-t4-approx", "llama-3.1-8b",
               '# model_id, output_dir = "meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruct"  '
               '# ⚠️ ~10.9 GB VRAM',
               "10.9", "1xT4", "meta-llama/Llama-3.1-8B-Instruct on the free Colab T4 (the authors' note)",
               [_SFT_COMMENT]),
    _row("trl-nb-sft-qwen3-14b-bnb4bit-t4", "trl-notebook-sft-lora-qlora-2025",
         _TRL.format(commit=_SFT_OCT30, notebook=_SFT_NB),
         "GPU = Tesla T4. Max memory = 14.741 GB.\n12.074 GB of memory reserved.\n...\n"
         "Peak reserved memory = 14.041 GB.\nPeak reserved memory for training = 1.967 GB.", "14.041",
         "TRL's SFT LoRA/QLoRA notebook at f6834206a (Oct 30 2025), printed on a Tesla T4 (trackio run 1761318512): "
         "unsloth/qwen3-14b-unsloth-bnb-4bit (Qwen3-14B in NF4, double quantization; embedding and LM head 16-bit, "
         "cast to fp32 by kbit preparation), loaded in fp16, LoRA r=32 on every block linear, bf16 autocast, "
         "checkpointing, batch 1 (accumulation 4), paged 8-bit AdamW, Liger's fused linear cross-entropy, "
         "Multilingual-Thinking padded per batch up to 1,024 tokens; peak max_memory_reserved in GiB",
         argv=f"estimate --model {_MODELS}/qwen3-14b/config.json --system 1xT4 --strategy single {_LORA} "
              "--optimizer paged-adamw8bit --loss-kernel liger --micro-batch 1 --gradient-accumulation 4 "
              f"--seq-len 1024 --varying-lengths {_SFT_STACK} --format json",
         unexpressed=["activation_offloading=True: TRL moves the tensors saved for backward (under checkpointing, "
                      "each block's input) to the CPU", _LOADING, _SFT_DATA,
                      "the pre-quantized checkpoint is loaded as saved (no fp16 shards quantized on the GPU)",
                      "the torch version (Colab's, October 2025)"]),
]


def _grpo(key: str, quote: str, printed: str, what: str, system: str, *, model: str = "qwen2-7b",
          ran: bool | None = None, url_commit: str = _GRPO_DEC23, more=()) -> dict:
    settings = (f"TRL's GRPO LoRA/QLoRA notebook at c9a9e25 (Dec 23 2025), {what}: NF4 QLoRA r=32 on every block "
                "linear over the fp16 weights (no kbit preparation in TRL 0.26's GRPOTrainer), bf16 autocast, "
                "checkpointing, 8 completions of one "
                "prompt per step (batch 8, num_generations 8), completions up to 256 tokens generated by transformers, "
                "paged 8-bit AdamW, Liger's fused GRPO loss, beta 0 (no reference model); peak max_memory_reserved "
                "in GiB")
    return _row(key, "trl-notebook-grpo-lora-qlora-2025", _TRL.format(commit=url_commit, notebook=_GRPO_NB), quote,
                printed, settings, ran=ran,
                argv=f"estimate --model {model} --system {system} --strategy single --kind grpo {_LORA} "
                     "--no-kbit-prepare "
                     "--optimizer paged-adamw8bit --micro-batch 8 --num-generations 8 "
                     "--max-prompt-length 256 --max-completion-length 256 --generation hf "
                     f"--loss-kernel liger {_GRPO_STACK} --stack trl==0.26.2 --format json",
                unexpressed=[_LOADING_GRPO, _PROMPT, _BF16_ADAPTERS,
                             "the torch and bitsandbytes versions (Colab's, December 2025)", *more])


# use_liger_kernel=True: TRL 0.26 computes the GRPO loss with Liger's LigerFusedLinearGRPOLoss, said since 6ca7a67 with
# --loss-kernel liger --stack trl==0.26.2 (estimate/liger_grpo.py); it was unexpressed while this source was frozen
_TABLE = ("| Configuration | LoRA | Quant | Liger | Optimizer | Grad. Ckpt | attn_impl  | VRAM (T4) GB | "
          "VRAM (A100-40GB)| VRAM (A100-80GB) | Tokens/s (T4) | Tokens/s (A100-40GB) | Tokens/s (A100-80GB) | "
          "Status (T4) |\n")
_WORST = "| **Worst (naive FP16)** | ❌ | ❌ | ❌ | AdamW | ❌  | eager | OOM | OOM | 62 GB | - | - | 0.06 it/s | ❌ |"
_BEST = ("| **Best (all optimizations)** | ✅ | ✅ | ✅ | paged_adamw_8bit | ✅ | sdpa  | 9.2 GB | 9.6 GB | 9.6 GB | "
         "0.01 it/s | 0.03 it/s | 0.04 it/s | ✅ |")
_TABLE_NOTE = ("the table's cells are rounded to 0.1 GB and print no code; read as the notebook's gauge (GiB) for its "
               "default model, Qwen/Qwen2-7B-Instruct ('fine-tune a 7B model on a free T4')")
_NAIVE = ("TRL's GRPO LoRA/QLoRA notebook at c9a9e25 (Dec 23 2025), its table's 'Worst (naive FP16)' row: "
          "Qwen/Qwen2-7B-Instruct fully fine-tuned in its fp16 weights (AdamW, states in fp16; bf16 autocast), no "
          "LoRA, no quantization, no Liger, no checkpointing, eager attention, 8 completions of one prompt per step up "
          "to 256 tokens, generated by transformers, beta 0")
_NAIVE_UNEXPRESSED = [_TABLE_NOTE, _PROMPT,
                      "TRL 0.26's GRPOTrainer without Liger computes the completion's logits in full (logits_to_keep) "
                      "and their log-softmax; the CLI's --kind grpo is TRL 1.16's, whose fused LM head makes none",
                      "which AdamW: the table says 'AdamW'; transformers 4.57 with torch >= 2.8 defaults to "
                      "adamw_torch_fused (--optimizer-kernel fused assumed)",
                      "fp16 weights with bf16 autocast are said as --precision bf16 (16-bit weights and states: the "
                      "same bytes)"]


def _naive(key: str, printed: str, system: str, *, ran: bool | None) -> dict:
    return _row(key, "trl-notebook-grpo-lora-qlora-2025", _TRL.format(commit=_GRPO_DEC23, notebook=_GRPO_NB),
                _TABLE + _WORST, printed, _NAIVE, ran=ran,
                argv=f"estimate --model qwen2-7b --system {system} --strategy single --kind grpo --method full "
                     "--precision bf16 --optimizer adamw --optimizer-kernel fused --no-gradient-checkpointing "
                     "--attention eager --micro-batch 8 --num-generations 8 --max-prompt-length 256 "
                     f"--max-completion-length 256 --generation hf {_GRPO_STACK} --format json",
                unexpressed=_NAIVE_UNEXPRESSED)


_GRPO_ROWS = [
    _grpo("trl-nb-grpo-qwen2-7b-qlora-t4",
          "GPU = Tesla T4. Max memory = 14.741 GB.\n6.773 GB of memory reserved.\n...\n"
          "Peak reserved memory = 8.832 GB.\nPeak reserved memory for training = 2.059 GB.", "8.832",
          "printed for Qwen/Qwen2-7B-Instruct on a Tesla T4 (trackio run 1766143600, 500 steps)", "1xT4"),
    _grpo("trl-nb-grpo-qwen2-7b-qlora-t4-table", _TABLE + _BEST, "9.2",
          "its table's 'Best (all optimizations)' row, T4 column", "1xT4", more=[_TABLE_NOTE]),
    _grpo("trl-nb-grpo-qwen2-7b-qlora-a100-40gb-table", _TABLE + _BEST, "9.6",
          "its table's 'Best (all optimizations)' row, A100-40GB column", "1xA100-40GB", more=[_TABLE_NOTE]),
    _grpo("trl-nb-grpo-qwen2-7b-qlora-a100-80gb-table", _TABLE + _BEST, "9.6 GB | 0.01",
          "its table's 'Best (all optimizations)' row, A100-80GB column", "1xA100-80GB", more=[_TABLE_NOTE]),
    _naive("trl-nb-grpo-qwen2-7b-full-fp16-t4-oom", "OOM | OOM", "1xT4", ran=False),
    _naive("trl-nb-grpo-qwen2-7b-full-fp16-a100-40gb-oom", "OOM | 62", "1xA100-40GB", ran=False),
    _naive("trl-nb-grpo-qwen2-7b-full-fp16-a100-80gb", "62", "1xA100-80GB", ran=None),
    _grpo("trl-nb-grpo-qwen3-8b-qlora-t4-approx",
          '# model_id, output_dir = "Qwen/Qwen3-8B", "Qwen3-8B-GRPO"                                                '
          '# ✅ ~9.9GB VRAM', "9.9", "Qwen/Qwen3-8B on the free Colab T4 (the authors' note)", "1xT4",
          model=f"{_MODELS}/qwen3-8b/config.json", more=[_GRPO_COMMENT]),
    _grpo("trl-nb-grpo-qwen2.5-7b-qlora-t4-approx",
          '# model_id, output_dir = "Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct-GRPO"                          '
          '# ✅ ~9.2GB VRAM', "9.2", "Qwen/Qwen2.5-7B-Instruct on the free Colab T4 (the authors' note)", "1xT4",
          model="qwen2.5-7b", more=[_GRPO_COMMENT]),
    _grpo("trl-nb-grpo-llama-3.2-3b-qlora-t4-approx",
          '# model_id, output_dir = "meta-llama/Llama-3.2-3B-Instruct", "Llama-3.2-3B-Instruct-GRPO"             '
          '# ✅ ~5.7GB VRAM', "5.7", "meta-llama/Llama-3.2-3B-Instruct on the free Colab T4 (the authors' note)",
          "1xT4", model="llama-3.2-3b", more=[_GRPO_COMMENT]),
    _grpo("trl-nb-grpo-llama-3.1-8b-qlora-t4-approx",
          '# model_id, output_dir = "meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruct-GRPO"             '
          '# ✅ ~9.5GB VRAM', "9.5", "meta-llama/Llama-3.1-8B-Instruct on the free Colab T4 (the authors' note)",
          "1xT4", model="llama-3.1-8b", more=[_GRPO_COMMENT]),
    _grpo("trl-nb-grpo-qwen3-14b-bnb4bit-t4-oom",
          '# model_id, output_dir = "unsloth/qwen3-14b-unsloth-bnb-4bit", "qwen3-14b-unsloth-bnb-4bit-GRPO"         '
          '# ⚠️ OOM with this config; fits if GRPO params are reduced', "OOM with this config",
          "unsloth/qwen3-14b-unsloth-bnb-4bit (Qwen3-14B pre-quantized in NF4) on the free Colab T4: out of memory "
          "(the authors' note)", "1xT4", model=f"{_MODELS}/qwen3-14b/config.json", ran=False, more=[_GRPO_COMMENT]),
]

ROWS = [*_SFT_ROWS, *_GRPO_ROWS]
