"""Frozen: GPU memory measured by users in huggingface/peft's issue tracker (source `peft-issues-memory-reports`).

peft#76 (2023-02-13, "GPU and CPU memory utilization while running the peft_lora_clm_accelerate_ds_zero3_offload.py
script"): PEFT's own example, run for bigscience/bloomz-7b1 on one A100 40GB, prints its TorchTracemalloc lines for
the 15th epoch. The user notes that `is_ds_zero_3` "in line 238 is always False": DeepSpeed was not active (no
Accelerate DeepSpeed config), so the model trained as the script builds it on one GPU.

The code, read at 5733ea9 (PEFT's main on 2023-02-14; `is_ds_zero_3` is set on its line 238):
`AutoModelForCausalLM.from_pretrained("bigscience/bloomz-7b1")` with no dtype (fp32, 7,069,016,064 parameters: the
stand-in's count), `LoraConfig(task_type=CAUSAL_LM, r=8, lora_alpha=32, lora_dropout=0.1)` on PEFT's BLOOM default
target `query_key_value`, `torch.optim.AdamW`, `Accelerator()` with no mixed precision asked, batch_size 8, every
sample left-padded or cut to max_length 64 (`preprocess_function`), ought/raft twitter_complaints (50 training
samples: 7 steps an epoch). What the number is: TorchTracemalloc resets the peak gauge at the epoch's start and
prints `b2mb(peak - begin) + b2mb(begin)` as "GPU Total Peak Memory consumed during the train (max)", b2mb being
`int(x / 2**20)`: the training loop's `torch.cuda.max_memory_allocated()` in MiB (the generation-based evaluation is
measured separately). Its "GPU Memory before entering the train : 27026" is the fp32 model (26,966 MiB of weights)
with the adapters and their AdamW states: the weights were fp32.
"""

from __future__ import annotations

_SOURCE = "peft-issues-memory-reports"
_COMMIT = "5733ea9f643721dc711b21670f624d6b2c8ed088"
_BLOOMZ = "benchmarks/published/models/bloomz-7b1/config.json"

ROWS = [
    {"key": "peft76-bloomz-7b1-lora-r8-fp32-1xa100-40gb", "source": _SOURCE,
     "url": "https://github.com/huggingface/peft/issues/76",
     "code_url": ("https://github.com/huggingface/peft/blob/"
                  f"{_COMMIT}/examples/causal_language_modeling/peft_lora_clm_accelerate_ds_zero3_offload.py"),
     "quote": ("GPU Memory before entering the train : 27026\nGPU Memory consumed at the end of the train "
               "(end-begin): 242\nGPU Peak Memory consumed during the train (max-begin): 5011\nGPU Total Peak "
               "Memory consumed during the train (max): 32037"),
     "printed": "32037", "measured_bytes": 32037 * 2**20, "metric": "allocated",
     "argv": f"estimate --model {_BLOOMZ} --system 1xA100-40GB --strategy single --lora --lora-rank 8 "
             "--lora-target query_key_value --lora-dropout 0.1 --precision fp32 --optimizer adamw --micro-batch 8 "
             "--seq-len 64 --fixed-lengths --attention eager --stack transformers==4.26.1 --format json",
     "assumptions": (
         "peft#76 (2023-02-13): examples/causal_language_modeling/peft_lora_clm_accelerate_ds_zero3_offload.py at "
         "5733ea9 on one A100 40GB without DeepSpeed (is_ds_zero_3 False): bigscience/bloomz-7b1 loaded in fp32, "
         "LoRA r=8 alpha 32 dropout 0.1 on query_key_value, torch AdamW, no mixed precision (Accelerator() with no "
         "config: the 27,026 MiB before training is the fp32 model), batch 8 x 64 tokens (padded to max_length), "
         "no gradient checkpointing; BLOOM's eager ALiBi attention; transformers unpinned (setup.py), 4.26.1 was "
         "current (Feb 2023); the figure: the training loop's max_memory_allocated() in MiB, epoch 15"),
     "unexpressed": [
         "how the user launched it is not stated: `accelerate launch` with a default config asking fp16 or bf16 "
         "would add autocast (the weights stay fp32 either way: the 27,026 MiB before training)",
         "the torch version (setup.py: >= 1.13.0)"]},
]
