"""Frozen: George Sung's blog post "Fine-tuning OpenLLaMA-7B with QLoRA for instruction following" (July 2023).

Source `georgesung-qlora-openllama-2023`: one engineer's post on his own site (georgesung.github.io/ai/qlora-ift/,
its Jekyll source in georgesung/georgesung.github.io, _posts/2023-07-02-qlora-ift.md, first written at 4fba84e and
last edited in 2023 at 56abd26), which links the code it ran pinned to georgesung/llm_qlora 7cd7ad3 (2023-07-03).

The code, read at 7cd7ad3 (QloraTrainer.py, train.py, configs/open_llama_7b_qlora_uncensored.yaml): OpenLLaMA-7B
(openlm-research/open_llama_7b, LLaMA-7B's shape, 2,048 positions) loaded by LlamaForCausalLM with NF4, double
quantization and a bfloat16 compute dtype on GPU 0; `model.gradient_checkpointing_enable()` then PEFT's
`prepare_model_for_kbit_training` (peft pinned at 86290e9, June 2023: the non-quantized parameters cast to fp32,
checkpointing on); LoraConfig(r=8, alpha 32, q_proj/k_proj/v_proj, dropout 0.05); the HF Trainer with
per_device_train_batch_size 1, gradient_accumulation_steps 4, fp16=True (fp16 autocast), the default optimizer
(adamw_hf in transformers 4.30), DataCollatorForLanguageModeling: each conversation of wizard_vicuna_70k_unfiltered
tokenized on its own and truncated at `model_context_window: 2048`, one per batch (batches of varying length, up to
2,048 tokens over the 18-hour epoch). transformers, torch and bitsandbytes are unpinned in requirements.txt: the
releases of June 2023 (transformers 4.30.2, whose Llama has no SDPA: eager attention; bitsandbytes 0.39, whose 4-bit
matmul keeps its input; torch 2.0.1).

What the number is: "an observed ~14GB GPU memory usage" on the A10G, with no tool named: read as nvidia-smi's
figure for the process, in GiB (as the other sources' 'GB' from a monitor).
"""

from __future__ import annotations

_URL = ("https://github.com/georgesung/georgesung.github.io/blob/56abd2681149b643597e3b3fc8cdf150524de019/"
        "_posts/2023-07-02-qlora-ift.md")
_CODE_URL = "https://github.com/georgesung/llm_qlora/blob/7cd7ad343cf704307ef3661a14823d219f497ed7/QloraTrainer.py"
_QUOTE = ("I fine-tuned OpenLLaMA-7B on a 24GB GPU (NVIDIA A10G) with an observed ~14GB GPU memory usage, so one "
          "could probably use a GPU with less than 24GB memory.")

ROWS = [{
    "key": "georgesung-open-llama-7b-qlora-a10g", "source": "georgesung-qlora-openllama-2023", "url": _URL,
    "code_url": _CODE_URL, "quote": _QUOTE, "printed": "14GB", "measured_bytes": 14 * 2**30, "metric": "nvidia-smi",
    "argv": "estimate --model benchmarks/published/models/open-llama-7b/config.json --system 1xA10G --strategy single "
            "--qlora --lora-rank 8 --lora-target q_proj --lora-target k_proj --lora-target v_proj --lora-dropout 0.05 "
            "--precision mixed --optimizer adamw --micro-batch 1 --gradient-accumulation 4 --seq-len 2048 "
            "--varying-lengths --gradient-checkpointing --attention eager --stack transformers==4.30.2 "
            "--stack bitsandbytes==0.39.1 --stack torch==2.0.1 --format json",
    "assumptions": (
        "George Sung's QLoRA post (July 2023) with llm_qlora 7cd7ad3: OpenLLaMA-7B NF4 with double quantization "
        "(bf16 compute dtype), prepare_model_for_kbit_training, LoRA r=8 alpha 32 dropout 0.05 on q/k/v (fp32 "
        "adapters), the HF Trainer at batch 1 x accumulation 4, fp16 autocast, gradient checkpointing, one "
        "conversation per batch truncated at 2,048 tokens (lengths vary), eager attention (transformers 4.30.2, "
        "unpinned: June 2023's release), bitsandbytes 0.39.1 and torch 2.0.1 likewise; '~14GB' read as nvidia-smi "
        "GiB on one A10G 24GB"),
    "unexpressed": [
        "the Trainer's default adamw_hf (transformers' own AdamW, a per-parameter loop: no foreach temporary; the "
        "LoRA states are 20 MB either way)",
        "the 4-bit layers compute in bfloat16 (bnb_4bit_compute_dtype) under fp16 autocast",
        "the tool that read '~14GB' is not named (nvidia-smi assumed) and the figure is rounded",
    ],
}]
