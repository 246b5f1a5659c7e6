"""Frozen: ljm565/universal-llm-trainer's docs/gpu_test.md, "1. NVIDIA H100" (torch 2.5.1, transformers 4.49.0).

The page's own conditions: batch 2, "Sequnece length: 8,192 (Without padding, fully filled tokens)", the model in
torch.bfloat16, torch.optim.AdamW, gradient checkpointing on, accumulation 1 (full) or 32 (LoRA). Read from the
configs the table links (config/llm_*.yaml at the pinned commit) and the trainer they run: `bit: bfloat16` loads
the weights in bf16 and `amp_training: False` (no autocast): pure bf16, AdamW states in bf16 for the full rows;
`gradient_checkpointing: {activate: True, checkpoint_type: hf_checkpoint}` (transformers'
gradient_checkpointing_enable); `attn_implementation: null` (transformers 4.49's default, sdpa);
`del_logits_after_forward: True` (the logits are dropped after the loss: the estimate's loss transient). The loss
is the trainer's own `nn.CrossEntropyLoss` on the model's logits (no labels reach the model): bf16 for the bf16
rows (`--loss-dtype bf16`), fp32 for QLoRA, whose `bit: 4` loads every non-quantized parameter in fp32. LoRA (config_lora/llm_lora_config.yaml, Phi-3: llm_phi3_lora_config.yaml):
r=8, alpha 16, dropout 0.05 on every block linear (q/k/v/o/gate/up/down; Phi-3's fused qkv_proj and gate_up_proj),
PEFT's default fp32 adapters over the bf16 base. QLoRA: `bit: 4` with config_quant/bnb_4bit.yaml (NF4, double
quantization, bf16 compute), the rest loaded in fp32 (`dtype=... else torch.float32` for an int `bit`), and
peft's prepare_model_for_kbit_training (src/trainer/build.py), no autocast: the argv's `--qlora --precision bf16`.

What the number is: "Peak Mem." in GiB as printed. The trainer's progress bar prints torch.cuda.memory_reserved()
(src/trainer/trainer.py, in 10^9 bytes with a "G"); the page says GiB: read as reserved, in GiB. The cells are
whole GiB (+-0.5 GiB). The "Llama 3 8B" rows repeat the Llama 3.1 8B cells with the same shapes and are left out;
the A100 and RTX Pro 6000 tables of the same page are left out (one table per source; the A100 table repeats the
H100 cells). The four FSDP rows (marked *) run FSDP1 with CPUOffload(offload_params=True) and
MixedPrecision(param_dtype=float16) over a bf16-loaded model: kept, not expressible.
"""

from __future__ import annotations

_URL = ("https://github.com/ljm565/universal-llm-trainer/blob/9efd14b514148b765cf188d301093542307a4827/"
        "docs/gpu_test.md")
_GEMMA_7B = "benchmarks/published/models/gemma-7b/config.json"
# Stand-ins with the presets' shapes and the positions the runs used: the CLI refuses --seq-len past a model's
# max_position_embeddings, while transformers computes RoPE for any position (Llama-2-13B ran at 8,192 of its 4,096).
_LLAMA2_13B = "benchmarks/published/models/llama-2-13b-8k/config.json"
_PHI3_128K = "benchmarks/published/models/phi-3-mini-128k/config.json"
_STAND_IN = {
    _GEMMA_7B: "Gemma 7B is not a preset: the argv names its config.json (28 layers, hidden 3072, 16 heads of 256, "
               "MLP 24576, vocabulary 256000, tied: 8,537,680,896 parameters)",
    _LLAMA2_13B: "meta-llama/Llama-2-13b-hf has 4,096 positions and the CLI refuses 8,192 for it: the argv names "
                 "a config.json of its shapes (13,015,864,320 parameters) with max_position_embeddings 8192",
    _PHI3_128K: "microsoft/Phi-3-mini-128k-instruct (src/utils/training_utils.py; the preset is the 4k model of the "
                "same shapes): the argv names a config.json of its shapes (3,821,079,552 parameters) and 131,072 "
                "positions, without its LongRoPE factors",
}
_SETTINGS = (
    "universal-llm-trainer docs/gpu_test.md, H100 table, config/{config}.yaml: batch 2, 8,192 tokens per sample "
    "(the page: fully filled, no padding), bf16 weights without autocast, torch AdamW, transformers' gradient "
    "checkpointing, {attention} (attn_implementation null: transformers 4.49's default), {how}, {loss}; 'Peak Mem.' "
    "read as torch.cuda.memory_reserved() in GiB, one H100 80GB"
)
_HOW = {
    "full": "full fine-tuning (AdamW states in bf16)",
    "lora": "LoRA r=8 alpha 16 dropout 0.05 on every block linear, PEFT's fp32 adapters over the bf16 base, "
            "accumulation 32",
    "qlora": "QLoRA: bitsandbytes NF4 with double quantization, bf16 compute, prepare_model_for_kbit_training, "
             "LoRA r=8 alpha 16 dropout 0.05 on every block linear, accumulation 32",
}
# The trainer computes the loss itself on the model's bf16 logits (no labels reach the model, so transformers'
# fp32 upcast never runs; transformers 4.49's LlamaForCausalLM returns the lm_head's dtype): src/models/llama3.py at
# the pinned commit, `loss = self.criterion(output.logits[:, :-1, :].reshape(-1, output.logits.size(-1)),
# label[:, 1:].reshape(-1))` with `self.criterion = nn.CrossEntropyLoss(ignore_index=ignore_index)`, inside
# `torch.autocast(..., enabled=self.amp)` with amp_training False (src/trainer/trainer.py): --loss-dtype bf16.
# QLoRA (`bit: 4`) loads with `dtype=torch.float32` (`instantiate(torch, self.bit) if isinstance(self.bit, str)
# else torch.float32`) and prepare_model_for_kbit_training: fp32 LM head, fp32 logits, the loss in fp32.
_FLAGS = {"full": "--loss-dtype bf16 ",
          "lora": "--lora --lora-rank 8 --lora-dropout 0.05 --loss-dtype bf16 --gradient-accumulation 32 ",
          "qlora": "--qlora --lora-rank 8 --lora-dropout 0.05 --gradient-accumulation 32 "}
_LOSS = {"full": "nn.CrossEntropyLoss on the bf16 logits (the trainer's own loss, no fp32 upcast)",
         "lora": "nn.CrossEntropyLoss on the bf16 logits (the trainer's own loss, no fp32 upcast)",
         "qlora": "nn.CrossEntropyLoss on the fp32 logits of the fp32 LM head (the non-quantized parameters are "
                  "loaded in fp32, dtype=torch.float32 for bit 4)"}


def _row(model: str, regime: str, config: str, gib: int | None, quote: str) -> dict:
    name = model.rsplit("/", 2)[-2] if model.endswith(".json") else model
    # Gemma 2's default is eager (soft-capping: transformers swapped sdpa for eager, and the CLI refuses sdpa)
    attention = "eager" if name.startswith("gemma-2") else "sdpa"
    row = {"key": f"ult-h100-{name}-{regime}", "source": "universal-llm-trainer-gpu-test", "url": _URL,
           "quote": quote, "printed": f"{gib} GiB" if gib else "OOM",
           "measured_bytes": gib * 2**30 if gib else None, "metric": "reserved",
           "argv": f"estimate --model {model} --system 1xH100-80GB --strategy single --precision bf16 "
                   f"{_FLAGS[regime]}--micro-batch 2 --seq-len 8192 --gradient-checkpointing --attention {attention} "
                   "--format json",
           "assumptions": _SETTINGS.format(config=config, how=_HOW[regime], attention=attention, loss=_LOSS[regime]),
           "unexpressed": []}
    if gib is None:
        row["ran"] = False
    if model in _STAND_IN:
        row["unexpressed"].append(_STAND_IN[model])
    return row


def _fsdp(key: str, quote: str, gib: int, what: str) -> dict:
    return {"key": key, "source": "universal-llm-trainer-gpu-test", "url": _URL, "quote": quote,
            "printed": f"{gib} GiB", "measured_bytes": gib * 2**30, "metric": "reserved", "argv": None,
            "not_expressible": "FSDP1 with CPUOffload(offload_params=True) and MixedPrecision(param_dtype="
                               "float16, cast_forward_inputs) over a model loaded in bf16, size-based wrapping "
                               "(min_num_params 10000): fp16 compute over bf16 parameters has no --precision",
            "assumptions": f"{what}, 2 x H100, batch 2, 8,192 tokens, gradient checkpointing, accumulation 32"}


ROWS = [
    _row("llama-3.1-8b", "full", "llm_llama3.1_full", 78,
         "| [Llama 3.1 8B](../config//llm_llama3.1_full.yaml)                 | Full   | H100 x 1  "
         "| 78 GiB (16 GiB)       | 4.7    |"),
    _row("llama-3.1-8b", "lora", "llm_llama3.1_lora", 36,
         "| [Llama 3.1 8B](../config//llm_llama3.1_lora.yaml)                 | LoRA   | H100 x 1  "
         "| 36 GiB (16 GiB)       | 6.4    |"),
    _row("llama-3.1-8b", "qlora", "llm_llama3.1_qlora", 48,
         "| [Llama 3.1 8B](../config//llm_llama3.1_qlora.yaml) **             | QLoRA  | H100 x 1  "
         "| 48 GiB (8.0 GiB)      | 26.1   |"),
    _row(_LLAMA2_13B, "lora", "llm_llama2_lora", 43,
         "| [Llama 2 13B](../config//llm_llama2_lora.yaml)                    | LoRA   | H100 x 1  "
         "| 43 GiB (25.5 GiB)     | 9.8    |"),
    _row(_LLAMA2_13B, "qlora", "llm_llama2_qlora", 38,
         "| [Llama 2 13B](../config//llm_llama2_qlora.yaml) **                | QLoRA  | H100 x 1  "
         "| 38 GiB (8.3 GiB)      | 43.0   |"),
    _row("gemma-2-9b", "lora", "llm_gemma2_lora", 60,
         "| [Gemma 2 9B](../config//llm_gemma2_lora.yaml)                     | LoRA   | H100 x 1  "
         "| 60 GiB (18 GiB)       | 12.9   |"),
    _row("gemma-2-9b", "qlora", "llm_gemma2_qlora", None,
         "| [Gemma 2 9B](../config//llm_gemma2_qlora.yaml) **                 | QLoRA  | H100 x 1  "
         "| OOM (8.4 GiB)         | OOM    |"),
    _row(_GEMMA_7B, "lora", "llm_gemma_lora", 51,
         "| [Gemma 7B](../config//llm_gemma_lora.yaml)                        | LoRA   | H100 x 1  "
         "| 51 GiB (17 GiB)       | 9.5    |"),
    _row(_GEMMA_7B, "qlora", "llm_gemma_qlora", 70,
         "| [Gemma 7B](../config//llm_gemma_qlora.yaml) **                    | QLoRA  | H100 x 1  "
         "| 70 GiB (7.5 GiB)      | 27.4   |"),
    _row(_PHI3_128K, "full", "llm_phi3_full", 40,
         "| [Phi3-mini (3.8B)](../config//llm_phi3_full.yaml)                 | Full   | H100 x 1  "
         "| 40 GiB (8 GiB)        | 4.0    |"),
    _row(_PHI3_128K, "lora", "llm_phi3_lora", 17,
         "| [Phi3-mini (3.8B)](../config//llm_phi3_lora.yaml)                 | LoRA   | H100 x 1  "
         "| 17 GiB (8 GiB)        | 5.0    |"),
    _row(_PHI3_128K, "qlora", "llm_phi3_qlora", 21,
         "| [Phi3-mini (3.8B)](../config//llm_phi3_qlora.yaml) **             | QLoRA  | H100 x 1  "
         "| 21 GiB (3.2 GiB)      | 17.6   |"),
    _fsdp("ult-h100x2-llama-3.1-70b-lora-fsdp-offload",
          "| [Llama 3.1 70B](../config//llm_llama3.1_70B_lora_fsdp.yaml) *     | LoRA   | H100 x 2  "
          "| 66 GiB (CPU Offload)  | 40.2   |", 66, "Llama 3.1 70B LoRA"),
    _fsdp("ult-h100x2-llama-2-13b-full-fsdp-offload",
          "| [Llama 2 13B](../config//llm_llama2_full_fsdp.yaml) *             | Full   | H100 x 2  "
          "| 31 GiB (CPU Offload)  | 9.5    |", 31, "Llama 2 13B full fine-tuning"),
    _fsdp("ult-h100x2-gemma-2-9b-full-fsdp-offload",
          "| [Gemma 2 9B](../config//llm_gemma2_full_fsdp.yaml) *              | Full   | H100 x 2  "
          "| 59 GiB (CPU Offload)  | 12.6   |", 59, "Gemma 2 9B full fine-tuning"),
    _fsdp("ult-h100x2-gemma-7b-full-fsdp-offload",
          "| [Gemma 7B](../config//llm_gemma_full_fsdp.yaml) *                 | Full   | H100 x 2  "
          "| 48 GiB (CPU Offload)  | 8.7    |", 48, "Gemma 7B full fine-tuning"),
]
