"""Frozen: GPU memory and verdicts from lm-sys/FastChat's issue tracker (source `fastchat-issues-memory`).

Three threads, each read in FastChat's code of its date (the README's "Fine-tuning Vicuna-7B with Local GPUs" command
and fastchat/train/*.py); the README itself is another source (`fastchat-training`), its issue tracker this one.

- #407 (2023-04-13, "out of gpu memory using 4xA100 40G"): the README's command unchanged runs out of memory on 4 x
  A100 40GB (the opener), and at per-device batch 1 too (a second user); a third user's team trained "with default
  settings" on 8 x A100 40GB ("all GPU memories are almost eaten up", then "about 90s/it") and at batch 1 read "about
  30G on each card". The README at 86c3382 (2023-04-15; the command is the same at the opener's date): `torchrun
  --nproc_per_node=4 fastchat/train/train_mem.py --model_name_or_path ~/model_weights/llama-7b --bf16 True
  --per_device_train_batch_size 2 --gradient_accumulation_steps 16 --fsdp "full_shard auto_wrap"
  --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' --tf32 True --model_max_length 2048
  --gradient_checkpointing True --lazy_preprocess True`. train_mem.py monkey-patches LlamaAttention with flash-attn
  (1.x's unpadded kernel), train.py loads `AutoModelForCausalLM.from_pretrained(path)` with no dtype (fp32; the
  Trainer's --bf16 gives FSDP1 a bf16 MixedPrecision over fp32 shards), optim adamw_torch, and tokenizes every
  conversation with `padding="max_length"` to model_max_length (every sequence 2,048 tokens); pad = unk (no embedding
  resize). pyproject: transformers from git main (4.28.0.dev of April 2023: the Trainer's own FSDP wrapping).
- #1781 (2023-06-26): "I followed readme.md ... but it did not work, still out of memory", title "with 4 x A100
  (40GB) or 8 x A100 (40GB)"; the traceback shows torch 2.0.1 and "37.33 GiB already allocated" on GPU 2. README and
  train.py at 6fda9fe (the same command and loading as above); pyproject pins transformers>=4.28.0,<4.29.0.
- #2556 (2023-10-13): QLoRA of Vicuna-7B v1.5 (Llama 2 7B's shapes) on one V100S 32GB with train_lora.py under
  DeepSpeed: "when `model_max_length=2048` it will be OOM, when setting 1024 it won't". The command: `deepspeed
  --include localhost:3 fastchat/train/train_lora.py --lora_r 8 --lora_alpha 16 --lora_dropout 0.05 --fp16 True
  --per_device_train_batch_size 1 --gradient_accumulation_steps 1 --model_max_length 2048 --q_lora True --deepspeed
  playground/deepspeed_config_s2.json`. Read at ff3cb92 (FastChat main that day): LoraArguments' default
  target_modules q_proj and v_proj; q_lora loads with BitsAndBytesConfig(load_in_4bit, double quant, nf4, compute
  dtype fp16) and no torch_dtype, then prepare_model_for_kbit_training(use_gradient_checkpointing=False) (no
  --gradient_checkpointing passed); deepspeed_config_s2.json: ZeRO-2, offload_optimizer cpu, fp16 "auto" (on), so
  DeepSpeed's engine casts the module to fp16 (`module.half()`: the LoRA adapters, the embedding, norms and head the
  kbit preparation had made fp32; the uint8 4-bit weights untouched), fp32 master copies and Adam states on the
  host; optim adamw_torch; the same `padding="max_length"` (every sequence model_max_length tokens); eager
  attention (no --flash_attn; SDPA reached Llama in transformers 4.36).
"""

from __future__ import annotations

_SOURCE = "fastchat-issues-memory"
_REPO = "https://github.com/lm-sys/FastChat"
_C407 = "86c3382946b111105ee2b26d838bcb1f3edaffa1"  # main on 2023-04-15, the day of the thread's figures
_C1781 = "6fda9feb7526516b8fb239201c8020fafa5850d3"  # main on 2023-06-26
_C2556 = "ff3cb92a1c60616cdd192cdb81552c910ffcc031"  # main on 2023-10-13

_Q407_OPEN = ("Hi, I used the training script in the readme, and didn't change the data and parameters, but my gpu "
              "memory still run out.  Have you test it on 4xA100 40Gb?")
_Q407_BS1 = ("yeah, same situation. Even downsize the \n```\n    --per_device_train_batch_size 1  # original 2\n```\n"
             "still OOM")
_Q407_8GPU = ("we have tried to train the 7b model on A100 40G * 8, with default settings. And all GPU memories are "
              "almost eaten up. If set batchsize to 1, the model still consumes about 30G on each card.")
_Q1781 = ("out of memory when finetune Vicuna-7B with 4 x A100 (40GB) or 8 x A100 (40GB)\n\nI followed readme.md "
          "https://github.com/lm-sys/FastChat#fine-tuning-vicuna-7b-with-local-gpus, but it did not work, still out "
          "of memory.")
_Q1781_OOM = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 98.00 MiB (GPU 2; 39.59 GiB total capacity; "
              "37.33 GiB already allocated; 16.19 MiB free; 37.68 GiB reserved in total by PyTorch)")
_Q2556 = ("Here is my Lora fine-tuning script, when `model_max_length=2048` it will be OOM, when setting 1024 it "
          "won't, what's the reason for this")

_FULL = ("estimate --model llama-2-7b --system {system} --strategy fsdp_full --fsdp-version 1 --precision mixed "
         "--micro-batch {mb} --gradient-accumulation 16 --seq-len 2048 --fixed-lengths --gradient-checkpointing "
         "--attention flash --optimizer adamw --stack transformers=={tf} --format json")
_FULL_SETTINGS = (
    "FastChat#{issue} ({date}): the README's Vicuna-7B command at {commit} (train_mem.py), LLaMA-7B full "
    "fine-tuning, fp32 parameters under the Trainer's FSDP1 full_shard (auto_wrap on LlamaDecoderLayer) with bf16 "
    "MixedPrecision, per-device batch {mb}, accumulation 16, every sequence padded to 2,048 tokens, gradient "
    "checkpointing, flash-attn through FastChat's monkey patch, torch AdamW, on {hw}; {verdict}"
)
_LLAMA1 = ("LLaMA-7B has Llama 2 7B's shapes and parameter count (2,048 positions instead of 4,096, rotary: no "
           "parameter); the argv names the Llama 2 preset")
_FLASH1 = "FastChat's flash-attn 1.x monkey patch (unpadded qkv-packed kernel) said as --attention flash"


def _full(key: str, issue: int, commit: str, hw: str, system: str, mb: int, quote: str, printed: str,
          verdict: str, stack: str, extra: list[str]) -> dict:
    row = {"key": key, "source": _SOURCE, "url": f"{_REPO}/issues/{issue}",
           "code_url": f"{_REPO}/blob/{commit}/fastchat/train/train.py", "quote": quote, "printed": printed,
           "argv": _FULL.format(system=system, mb=mb, tf=stack[0]),
           "assumptions": _FULL_SETTINGS.format(issue=issue, date=stack[1], commit=commit[:7], mb=mb, hw=hw,
                                                verdict=verdict),
           "unexpressed": [_LLAMA1, _FLASH1, stack[2], *extra]}
    return row


_APRIL = ("4.28", "2023-04-13/15", "transformers from git main of April 2023 (4.28.0.dev: the Trainer's own FSDP "
          "wrapping) and the users' torch (not stated); the CLI estimates the installed torch")
_JUNE = ("4.28.1", "2023-06-26", "torch 2.0.1 (the traceback) and transformers 4.28.x (pyproject < 4.29); the CLI "
         "estimates the installed torch")
_1781_8GPU = _full("fastchat1781-llama-7b-fsdp-full-b2-8xa100-40gb-oom", 1781, _C1781, "8 x A100 40GB", "8xA100-40GB",
                   2, _Q1781 + "\n\n" + _Q1781_OOM, "still out of memory", "out of memory (the title's 8 x A100 "
                   "40GB: the README's command with 8 processes)", _JUNE,
                   ["the thread does not show the 8-GPU command: 8 processes with the README's other flags assumed; "
                    "#407's 8-GPU run at batch 2 (April, another stack) trained"])
# A misreading, corrected after it was scored (620fbce, fd202ff): the thread shows one run, and it is not 8 GPUs'
_1781_8GPU_MISREAD = (
    "no 8-GPU run in the thread: the opener 'followed readme.md', whose command at 6fda9fe is `torchrun "
    "--nproc_per_node=4` ('train Vicuna-7B with 4 x A100 (40GB)'), and its one traceback's '37.33 GiB already "
    "allocated' is that 4-process run's size (accelwiz: 35.96 GiB allocated at 4 processes, 26.55 at 8, where FSDP "
    "halves the fp32 parameter, gradient and AdamW shards); the title's 'or 8 x A100 (40GB)' names no command, "
    "batch or trace, and #407's 8-GPU run of the same command at batch 2 trained. The 4-GPU row scores this thread")
ROWS = [
    {**_full("fastchat407-llama-7b-fsdp-full-b1-8xa100-40gb", 407, _C407, "8 x A100 40GB", "8xA100-40GB", 1,
             _Q407_8GPU, "30G", "'about 30G on each card' at batch 1, read as GiB of nvidia-smi (a "
             "per-card monitor; the thread names none)", _APRIL,
             ["'default settings' read as the README's command with 8 processes; the accumulation (16) is not "
              "restated at batch 1"]),
     "measured_bytes": 30 * 2**30, "metric": "nvidia-smi"},
    {**_full("fastchat407-llama-7b-fsdp-full-b2-8xa100-40gb-ran", 407, _C407, "8 x A100 40GB", "8xA100-40GB", 2,
             _Q407_8GPU, "all GPU memories are almost eaten up", "trained at the README's batch 2 (the same user "
             "then gives its speed, 'about 90s/it')", _APRIL, []),
     "measured_bytes": None, "metric": "nvidia-smi", "ran": True},
    {**_full("fastchat407-llama-7b-fsdp-full-b2-4xa100-40gb-oom", 407, _C407, "4 x A100 40GB", "4xA100-40GB", 2,
             _Q407_OPEN, "my gpu memory still run out", "out of memory (the README's command unchanged)", _APRIL,
             []),
     "measured_bytes": None, "metric": "reserved", "ran": False},
    {**_full("fastchat407-llama-7b-fsdp-full-b1-4xa100-40gb-oom", 407, _C407, "4 x A100 40GB", "4xA100-40GB", 1,
             _Q407_BS1, "still OOM", "out of memory at per-device batch 1 (a second user)", _APRIL, []),
     "measured_bytes": None, "metric": "reserved", "ran": False},
    {**_full("fastchat1781-llama-7b-fsdp-full-b2-4xa100-40gb-oom", 1781, _C1781, "4 x A100 40GB", "4xA100-40GB", 2,
             _Q1781, "still out of memory", "out of memory (the README's command, followed)", _JUNE, []),
     "measured_bytes": None, "metric": "reserved", "ran": False},
    {**{key: value for key, value in _1781_8GPU.items() if key != "argv"}, "not_expressible": _1781_8GPU_MISREAD,
     "measured_bytes": None, "metric": "reserved", "ran": False},
]

_QLORA = ("estimate --model llama-2-7b --system 1xV100-32GB --strategy zero2 --offload-optimizer cpu --qlora "
          "--lora-rank 8 --lora-target q_proj --lora-target v_proj --lora-dropout 0.05 --precision mixed "
          "--no-kbit-prepare --micro-batch 1 --seq-len {seq} --fixed-lengths --no-gradient-checkpointing "
          "--attention eager --optimizer adamw --stack transformers==4.34.0 --stack bitsandbytes==0.41.1 "
          "--format json")
_QLORA_SETTINGS = (
    "FastChat#2556 (2023-10-13): fastchat/train/train_lora.py at ff3cb92 on one V100S 32GB (`deepspeed --include "
    "localhost:3`, one process), Vicuna-7B v1.5 QLoRA: bitsandbytes NF4 with double quantization, compute dtype fp16, "
    "LoRA r=8 alpha 16 dropout 0.05 on q_proj and v_proj, DeepSpeed ZeRO-2 with the optimizer offloaded to the host "
    "and the fp16 engine (module.half(): adapters, embedding, norms and head in fp16, so --no-kbit-prepare), torch "
    "AdamW wrapped by DeepSpeed, batch 1, every sequence padded to {seq} tokens, no gradient checkpointing, eager "
    "attention; {verdict}"
)
_QLORA_UNEXPRESSED = [
    "the versions of October 2023 are not in the thread: transformers 4.34.0, bitsandbytes 0.41.1 assumed (the "
    "month's releases), DeepSpeed and torch unstated",
    "V100S-PCIE 32GB (32,768 MiB) said as the 1xV100-32GB preset",
]
for _seq, _ran, _printed, _verdict in ((2048, False, "when `model_max_length=2048` it will be OOM",
                                        "out of memory at model_max_length 2048"),
                                       (1024, True, "when setting 1024 it won't", "trained at model_max_length 1024")):
    ROWS.append({"key": f"fastchat2556-vicuna-7b-qlora-r8-zero2-offload-{_seq}-1xv100-32gb-"
                        f"{'ran' if _ran else 'oom'}", "source": _SOURCE, "url": f"{_REPO}/issues/2556",
                 "code_url": f"{_REPO}/blob/{_C2556}/fastchat/train/train_lora.py", "quote": _Q2556,
                 "printed": _printed, "measured_bytes": None, "metric": "reserved", "ran": _ran,
                 "argv": _QLORA.format(seq=_seq), "assumptions": _QLORA_SETTINGS.format(seq=_seq, verdict=_verdict),
                 "unexpressed": _QLORA_UNEXPRESSED})
