"""Frozen, verdict rows: allenai/open-instruct's issue tracker (source `open-instruct-issues`).

open-instruct#25 (2023-07-21, "max_seq_length and per_device_train_batch_size"): a user runs the repository's
scripts/finetune_with_accelerate.sh for huggyllama/llama-7b, max_seq_length 2048 and per_device_train_batch_size 2 on
4 x A100 80GB under DeepSpeed, and "constantly meet[s] CUDA OOM error"; the maintainer answers that the script "is
what we used for training the 7B model" and asks whether `--use_flash_attn` was set. Two verdicts: the maintainers'
run (the script as written, flash attention) trained; the user's run out of memory, read as the script without
`--use_flash_attn` (the maintainer's reading of the OOM; the user's own answer is not in the thread).

The code, read at 0d2e152 (open-instruct's main on 2023-07-05, the last commit before the issue):
finetune_with_accelerate.sh launches `accelerate launch --mixed_precision bf16 --num_processes 4 --use_deepspeed
--deepspeed_config_file ds_configs/stage3_no_offloading_accelerate.conf open_instruct/finetune.py` with
BATCH_SIZE_PER_GPU=2, TOTAL_BATCH_SIZE=128 (accumulation 16), --max_seq_length 2048, --use_flash_attn;
the DeepSpeed config: ZeRO-3 without offload, bf16 "auto" (on: DeepSpeed's bf16 engine, fp32 master partitions, no
autocast), stage3_max_live_parameters 1e9. finetune.py: `AutoModelForCausalLM.from_pretrained` with no dtype (fp32
on the host, cast to bf16 by the engine), torch.optim.AdamW (DeepSpeed's ZeRO-3 wraps the client optimizer), no
gradient checkpointing, `DataCollatorForSeq2Seq(padding="longest")` (each batch padded to its own longest
sample, cut at 2,048 tokens), `model(**batch, use_cache=False)`; `--use_flash_attn` monkey-patches LlamaAttention
with flash-attn's kernel (llama_flash_attn_monkey_patch.py). requirements.txt: deepspeed==0.9.1, accelerate at
e06e7b3, transformers>=4.28.1.
"""

from __future__ import annotations

_SOURCE = "open-instruct-issues"
_URL = "https://github.com/allenai/open-instruct/issues/25"
_CODE_URL = ("https://github.com/allenai/open-instruct/blob/0d2e152d7f16f3c3a9d68ffabfb4650977dc6f99/scripts/"
             "finetune_with_accelerate.sh")
_SETTINGS = (
    "open-instruct#25 (2023-07-21): scripts/finetune_with_accelerate.sh at 0d2e152, LLaMA-7B full fine-tuning on 4 x "
    "A100 80GB under DeepSpeed ZeRO-3 (no offload, bf16 engine with fp32 master partitions), torch AdamW, batch 2 "
    "per GPU padded to the longest sample, cut at 2,048 tokens, accumulation 16, no gradient checkpointing, {how}"
)
_UNEXPRESSED = [
    "LLaMA-7B (huggyllama/llama-7b) said as llama-2-7b: the same shapes (4,096 x 32 layers, 11,008, 32,000 "
    "vocabulary), only the 2,048-token position limit differs (rotary: no parameter)",
    "the versions (transformers >= 4.28.1, accelerate e06e7b3, deepspeed 0.9.1, torch unpinned) of July 2023; "
    "the launcher's zero3_init_flag not given (the model loaded whole on the host, then partitioned by the engine)",
    "OASST1's real lengths: the argv says the longest batch, 2 x 2,048 tokens",
]
_ARGV = ("estimate --model llama-2-7b --system 4xA100-80GB --strategy zero3 --precision mixed --optimizer adamw "
         "--micro-batch 2 --gradient-accumulation 16 --seq-len 2048 --attention {attention} --format json")

ROWS = [
    {"key": "openinstruct25-llama-7b-full-zero3-4xa100-80gb-flash-ran", "source": _SOURCE, "url": _URL,
     "code_url": _CODE_URL,
     "quote": ("The script provided  in [finetune_with_accelerate.sh](https://github.com/allenai/open-instruct/blob/"
               "main/scripts/finetune_with_accelerate.sh) is what we used for training the 7B model. Did you also set "
               "`--use_flash_attn`?"),
     "printed": "is what we used for training the 7B model", "measured_bytes": None, "metric": "allocated",
     "ran": True, "argv": _ARGV.format(attention="flash"),
     "assumptions": _SETTINGS.format(how="with --use_flash_attn (the script as written): trained, the maintainers' "
                                         "run"),
     "unexpressed": _UNEXPRESSED},
    {"key": "openinstruct25-llama-7b-full-zero3-4xa100-80gb-eager-oom", "source": _SOURCE, "url": _URL,
     "code_url": _CODE_URL,
     "quote": ("I'm trying to use `max_seq_length=2048` and `per_device_batch_size=2` on 4xA100 80GB gpus with "
               "deepspeed as you provided in `[finetune_with_accelerate.sh](https://github.com/allenai/open-instruct/"
               "blob/main/scripts/finetune_with_accelerate.sh)`.\n\nI constantly meet CUDA OOM error."),
     "printed": "I constantly meet CUDA OOM error", "measured_bytes": None, "metric": "allocated", "ran": False,
     "argv": _ARGV.format(attention="eager"),
     "assumptions": _SETTINGS.format(how="without --use_flash_attn (the maintainer's reading: transformers' eager "
                                         "LlamaAttention of mid-2023, no SDPA for Llama before 4.36): out of "
                                         "memory"),
     "unexpressed": ["whether the user set --use_flash_attn is not stated (the maintainer asks)", *_UNEXPRESSED]},
]
