"""Frozen: ljm565/universal-llm-trainer's docs/gpu_test.md, "1. NVIDIA H100" (torch 2.5.1, transformers 4.49.0).

The page's own conditions: batch 2, "Sequnece length: 8,192 (Without padding, fully filled tokens)", the model in
torch.bfloat16, torch.optim.AdamW, gradient checkpointing on, accumulation 1 (full) or 32 (LoRA). Read from the
configs the table links (config/llm_*.yaml at the pinned commit) and the trainer they run: `bit: bfloat16` loads
the weights in bf16 and `amp_training: False` (no autocast): pure bf16, AdamW states in bf16 for the full rows;
`gradient_checkpointing: {activate: True, checkpoint_type: hf_checkpoint}` (transformers'
gradient_checkpointing_enable); `attn_implementation: null` (transformers 4.49's default, sdpa);
`del_logits_after_forward: True`. LoRA (config_lora/llm_lora_config.yaml, Phi-3: llm_phi3_lora_config.yaml):
r=8, alpha 16, dropout 0.05 on every block linear (q/k/v/o/gate/up/down; Phi-3's fused qkv_proj and gate_up_proj),
PEFT's default fp32 adapters over the bf16 base. QLoRA: `bit: 4` with config_quant/bnb_4bit.yaml (NF4, double
quantization, bf16 compute) and peft's prepare_model_for_kbit_training (src/trainer/build.py).

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
_SETTINGS = (
    "universal-llm-trainer docs/gpu_test.md, H100 table, config/{config}.yaml: batch 2, 8,192 tokens per sample "
    "(the page: fully filled, no padding), bf16 weights without autocast, torch AdamW, transformers' gradient "
    "checkpointing, sdpa (attn_implementation null on transformers 4.49), {how}; 'Peak Mem.' read as "
    "torch.cuda.memory_reserved() in GiB, one H100 80GB"
)
_HOW = {
    "full": "full fine-tuning (AdamW states in bf16)",
    "lora": "LoRA r=8 alpha 16 dropout 0.05 on every block linear, PEFT's fp32 adapters over the bf16 base, "
            "accumulation 32",
    "qlora": "QLoRA: bitsandbytes NF4 with double quantization, bf16 compute, prepare_model_for_kbit_training, "
             "LoRA r=8 alpha 16 dropout 0.05 on every block linear, accumulation 32",
}
_FLAGS = {"full": "", "lora": "--lora --lora-rank 8 --lora-dropout 0.05 ",
          "qlora": "--qlora --lora-rank 8 --lora-dropout 0.05 "}
_LOGITS = ("del_logits_after_forward: True (the trainer drops the logits after the loss; the argv counts "
           "transformers' own lifetime of them)")


def _row(model: str, regime: str, config: str, gib: int | None, quote: str) -> dict:
    name = model.rsplit("/", 2)[-2] if model.endswith(".json") else model
    row = {"key": f"ult-h100-{name}-{regime}", "source": "universal-llm-trainer-gpu-test", "url": _URL,
           "quote": quote, "printed": f"{gib} GiB" if gib else "OOM",
           "measured_bytes": gib * 2**30 if gib else None, "metric": "reserved",
           "argv": f"estimate --model {model} --system 1xH100-80GB --strategy single --precision bf16 "
                   f"{_FLAGS[regime]}--micro-batch 2 --seq-len 8192 --gradient-checkpointing --attention sdpa "
                   "--format json",
           "assumptions": _SETTINGS.format(config=config, how=_HOW[regime]), "unexpressed": [_LOGITS]}
    if gib is None:
        row["ran"] = False
    if model.endswith(".json"):
        row["unexpressed"].append("Gemma 7B is not a preset: the argv names its config.json (28 layers, hidden "
                                  "3072, 16 heads of 256, MLP 24576, vocabulary 256000, tied: 8,537,680,896 "
                                  "parameters)")
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
    _row("llama-2-13b", "lora", "llm_llama2_lora", 43,
         "| [Llama 2 13B](../config//llm_llama2_lora.yaml)                    | LoRA   | H100 x 1  "
         "| 43 GiB (25.5 GiB)     | 9.8    |"),
    _row("llama-2-13b", "qlora", "llm_llama2_qlora", 38,
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
    _row("phi-3-mini", "full", "llm_phi3_full", 40,
         "| [Phi3-mini (3.8B)](../config//llm_phi3_full.yaml)                 | Full   | H100 x 1  "
         "| 40 GiB (8 GiB)        | 4.0    |"),
    _row("phi-3-mini", "lora", "llm_phi3_lora", 17,
         "| [Phi3-mini (3.8B)](../config//llm_phi3_lora.yaml)                 | LoRA   | H100 x 1  "
         "| 17 GiB (8 GiB)        | 5.0    |"),
    _row("phi-3-mini", "qlora", "llm_phi3_qlora", 21,
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
