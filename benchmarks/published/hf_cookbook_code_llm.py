"""Frozen, a verdict row: the Hugging Face cookbook notebook "Fine-tuning a Code LLM on Custom Code on a single GPU".

The page (huggingface/cookbook notebooks/en/fine_tuning_code_llm_on_single_gpu.ipynb, written January 2024 by Maria
Khalusova, first committed 4dba433 on 2024-01-17) says "By employing parameter-efficient training techniques, we can
run this notebook on a single A100 High-RAM GPU" (Colab's A100, 40 GB) and keeps the training cell's printed output,
`TrainOutput(global_step=2000, training_loss=4.885598585128784, metrics={'train_runtime': 15380.3075, ...})`: the
2,000 steps ran there. No peak is printed: a measured "ran".

The notebook's code: bigcode/starcoderbase-1b (GPTBigCode with multi-query attention; the stand-in config.json
under benchmarks/published/models/starcoderbase-1b/ gives 1,137,207,296 parameters, the printed "all params:
1,142,761,472" less the printed "trainable params: 5,554,176") loaded with BitsAndBytesConfig(load_in_4bit, nf4,
compute dtype bfloat16, double quantization), `use_flash_attention_2=True`, `use_cache=False` and no torch_dtype
(transformers then loads a bitsandbytes model's other weights in float16); `prepare_model_for_kbit_training`
(every non-4-bit parameter to fp32); LoraConfig(r=8, alpha 32, dropout 0.0, target_modules c_proj, c_attn,
q_attn, c_fc: every block linear, q_attn being cross-attention's); a ConstantLengthDataset of 2,048-token
sequences; TrainingArguments(per_device_train_batch_size=16, gradient_accumulation_steps=1,
gradient_checkpointing=True, bf16=True, no `optim`: adamw_torch, evaluation every 100 steps at batch 16).
Installed unpinned (`pip install -q transformers datasets peft bitsandbytes flash-attn`) on 2024-01-17:
transformers 4.36.2 (4.37.0 came on 01-22) and bitsandbytes 0.42.0 (01-08), torch 2.1 (the checkpoint warning's
line number in the first commit's outputs).
"""

from __future__ import annotations

_URL = ("https://github.com/huggingface/cookbook/blob/ed2c6467015cee5bd962606a5caa0ece10483982/"
        "notebooks/en/fine_tuning_code_llm_on_single_gpu.ipynb")
_MODEL = "benchmarks/published/models/starcoderbase-1b/config.json"

ROWS = [
    {"key": "hf-cookbook-starcoderbase-1b-qlora-1xa100-40gb-ran", "source": "hf-cookbook-code-llm-single-gpu",
     "url": _URL,
     "quote": "By employing parameter-efficient training techniques, we can run this notebook on a single A100 "
              "High-RAM GPU. [...] TrainOutput(global_step=2000, training_loss=4.885598585128784, "
              "metrics={'train_runtime': 15380.3075, 'train_samples_per_second': 2.081, ...})",
     "printed": "TrainOutput(global_step=2000", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": f"estimate --model {_MODEL} --system 1xA100-40GB --strategy single --qlora --lora-rank 8 "
             "--lora-target c_attn --lora-target c_proj --lora-target c_fc --micro-batch 16 --seq-len 2048 "
             "--gradient-checkpointing --attention flash --precision mixed --stack transformers==4.36 "
             "--stack bitsandbytes==0.42.0 --format json",
     "assumptions": (
         "HF cookbook 'Fine-tuning a Code LLM on Custom Code on a single GPU' (Jan 2024): bigcode/starcoderbase-1b "
         "in NF4 with double quantization, bf16 compute, prepare_model_for_kbit_training (fp32 embedding, norms and "
         "tied LM head), LoRA r=8 alpha 32 dropout 0 on every block linear (5,554,176 trainable, printed), batch 16 "
         "x 2,048 constant-length tokens, gradient checkpointing, flash-attention 2, the Trainer's bf16 autocast "
         "and adamw_torch, Colab's A100 40 GB; 2,000 steps printed as run (no peak printed); transformers 4.36.2 "
         "and bitsandbytes 0.42.0, the releases of the notebook's day"),
     "unexpressed": [
         "the evaluation pass every 100 steps (batch 16, no gradients: below the training step's peak)",
     ]},
]
