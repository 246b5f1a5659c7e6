"""Frozen: TRL's tool-calling SFT notebook (huggingface/trl examples/notebooks/sft_tool_calling.ipynb, PR #5123,
Feb 18 2026; source `trl-notebook-sft-tool-calling-2026`), the peak its two saved runs printed. Not the LoRA/QLoRA or
GRPO notebooks (trl-notebook-sft-lora-qlora-2025, trl-notebook-grpo-lora-qlora-2025: other notebooks, models,
data and settings).

What the number is: the cell after `trainer.train()` prints `round(torch.cuda.max_memory_reserved() / 1024 / 1024 /
1024, 3)` as "Peak reserved memory = X GB.": the process's peak reserve in GiB since it started, loading included
(the cell before training prints the same gauge after loading: 2.633 on the T4, 4.648 on the A100).

Read in the notebook at the two commits whose saved outputs differ, and in TRL v0.28.0 (the newest release on Feb 18
2026, what the notebook's `pip install -Uq "trl[peft]"` installed; transformers 5.2.0 was released the day before,
TRL's #5110 of Feb 17 2026 tests for it):

* The model, both runs: CohereLabs/tiny-aya-global (Cohere2ForCausalLM) loaded by `from_pretrained(dtype=
  torch.float16, attn_implementation="sdpa")` with a 4-bit BitsAndBytesConfig (NF4, double quantization, fp16
  compute). The argv's models/tiny-aya-global/config.json is written from the module tree the notebook prints (36
  Cohere2DecoderLayers, hidden 2,048, q_proj 2,048 and k/v_proj 512 outputs, MLP 11,008, one LayerNorm per block,
  Embedding(262144, 2048)): 3,349,227,520 parameters with the embedding tied (Cohere2Config's default; the model card's
  3.35B), 16 heads of 128 assumed; the rest Cohere2Config's defaults (sliding window 4,096, past these samples).
* LoraConfig(r=32, lora_alpha=32) on q/k/v/o/gate/up/down (dropout PEFT's 0.0). SFTConfig: batch 1, accumulation 4,
  `optim="paged_adamw_8bit"`, max_length 1024, `activation_offloading=True`, no Liger (the A100 run installs
  liger-kernel but does not set use_liger_kernel), no packing, no padding-free; TRL 0.28's defaults:
  gradient_checkpointing True (non-reentrant: transformers 5's default, TRL sets it only before 5.0), bf16 True
  (`self.bf16 = not (self.fp16) if self.bf16 is None`): bf16 autocast over the fp16 weights (--precision mixed
  --base-dtype fp16; torch reports bf16 supported on a T4, emulated, as trl_example_notebooks.py reads it).
* TRL 0.28.0's SFTTrainer (trl/trainer/sft_trainer.py, v0.28.0 lines 723-759) calls `get_peft_model(model,
  peft_config)` itself and never PEFT's prepare_model_for_kbit_training: the fp16 embedding and norms stay fp16
  (--no-kbit-prepare); it then casts the adapters of a 4-bit model to bf16 ("if getattr(model, 'is_loaded_in_4bit',
  False) ...: param.data = param.data.to(torch.bfloat16)"), which the CLI cannot say (it keeps PEFT's fp32 adapters).
* The data: bebechien/SimpleToolCalling's 40 queries split 20/20; 20 training chats of one user query and one tool
  call, each batch of one padded to nothing (--varying-lengths at batch 1), 3 epochs (15 optimizer steps).
  - at 543b835 (14:28, printed on a Tesla T4): "messages" with a system message that lists both tools as indented JSON
    (1,053 characters), rendered by the model's own chat template (TRL's tiny_aya_chat_template.jinja "extends the
    model's default template": the same 1,652-character default preamble, the system message as its developer
    preamble). ~800 tokens estimated at about 4 characters a token of prose and 3.3 of JSON: --seq-len 800 assumed.
    9bec9e0 (14:35) keeps these outputs and drops the explicit `gradient_checkpointing=True` and `use_reentrant:
    False` (TRL's and transformers' defaults already).
  - at 9fc9a7d (the merged PR, printed on an A100-SXM4-40GB): a prompt-completion dataset with a "tools" column,
    rendered by `chat_template_path="tiny_aya_chat_template.jinja"` (the default preamble, the template's 970-character
    tool-use instructions and both tools' schemas as XML, ~475 characters): ~880 tokens by the same count, --seq-len
    896 assumed.

Nothing here was scored before this module and its source's registration were committed (issue 28's discipline).
"""

from __future__ import annotations

_TRL = "https://github.com/huggingface/trl/blob/{commit}/examples/notebooks/sft_tool_calling.ipynb"
_T4_COMMIT = "543b8352425ee392db6fdfb5d0ac9bf78ef710b2"  # PR #5123's first commit (its branch, kept by the PR)
_A100_COMMIT = "9fc9a7dcebe3938a273e18ca3ed5b2cfdb6c0839"  # the PR merged into main
_SOURCE = "trl-notebook-sft-tool-calling-2026"
_MODEL = "benchmarks/published/models/tiny-aya-global/config.json"
_LORA = ("--qlora --lora-rank 32 --lora-target q_proj --lora-target k_proj --lora-target v_proj --lora-target o_proj "
         "--lora-target gate_proj --lora-target up_proj --lora-target down_proj --base-dtype fp16 --precision mixed "
         "--no-kbit-prepare --gradient-checkpointing --attention sdpa --optimizer paged-adamw8bit --micro-batch 1 "
         "--gradient-accumulation 4")
_STACK = "--stack transformers==5.2.0 --stack trl==0.28.0"
_SETTINGS = ("TRL's tool-calling SFT notebook (PR #5123, Feb 18 2026; TRL 0.28.0, transformers 5.2.0): "
             "CohereLabs/tiny-aya-global (3.35B, tied embedding) in NF4 over fp16 weights, LoRA r=32 on every block "
             "linear, bf16 autocast, no k-bit preparation, non-reentrant checkpointing, batch 1 (accumulation 4), "
             "paged 8-bit AdamW, SDPA, 20 short tool-call chats up to max_length 1024, activation offloading; "
             "peak max_memory_reserved in GiB")
_UNEXPRESSED = [
    "activation_offloading=True: TRL moves the tensors saved for backward (under checkpointing, each block's input) "
    "to the CPU",
    "TRL 0.28 casts the 4-bit model's LoRA adapters to bf16 (the CLI keeps PEFT's fp32 adapters)",
    "the gauge is the process's peak since it started: what loading left cached (the fp16 shards read and quantized) "
    "stays reserved, and the printed figure is the larger of loading's and training's peaks",
    "TRL 0.28's compute_loss computes the logits' entropy (in chunks of 128 rows) and token accuracy (argmax over a "
    "contiguous copy of the shifted logits) under no_grad before backward",
    "Cohere2's block (one LayerNorm feeding attention and MLP in parallel): the CLI's activations are approximate for "
    "it (its note says so)",
    "the chats' token lengths are estimated from their characters (the tokenizer is not run here)",
    "the torch and bitsandbytes versions (Colab's, February 2026)",
]


def _row(key: str, commit: str, quote: str, printed: str, system: str, seq_len: int, where: str) -> dict:
    return {"key": key, "source": _SOURCE, "url": _TRL.format(commit=commit), "quote": quote, "printed": printed,
            "measured_bytes": int(round(float(printed) * 2**30)), "metric": "reserved",
            "argv": f"estimate --model {_MODEL} --system {system} --strategy single {_LORA} --seq-len {seq_len} "
                    f"--varying-lengths {_STACK} --format json",
            "assumptions": f"{_SETTINGS}; {where}", "unexpressed": list(_UNEXPRESSED)}


ROWS = [
    _row("trl-nb-tool-calling-tiny-aya-qlora-t4", _T4_COMMIT,
         "GPU = Tesla T4. Max memory = 14.563 GB.\n2.633 GB of memory reserved.\n...\n"
         "Peak reserved memory = 9.174 GB.\nPeak reserved memory for training = 6.541 GB.",
         "9.174", "1xT4", 800,
         "printed on a Tesla T4 at 543b835: chats with a JSON tool list in the system message under the model's own "
         "chat template, ~800 tokens each (estimated)"),
    _row("trl-nb-tool-calling-tiny-aya-qlora-a100-40gb", _A100_COMMIT,
         "GPU = NVIDIA A100-SXM4-40GB. Max memory = 39.494 GB.\n4.648 GB of memory reserved.\n...\n"
         "Peak reserved memory = 11.928 GB.\nPeak reserved memory for training = 7.28 GB.",
         "11.928", "1xA100-40GB", 896,
         "printed on an A100-SXM4-40GB at 9fc9a7d (trackio run 1771428231): prompt-completion chats with a tools "
         "column under TRL's tiny_aya_chat_template.jinja, ~880 tokens each (estimated)"),
]
