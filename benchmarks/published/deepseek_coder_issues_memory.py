"""Frozen: GPU memory from deepseek-ai/DeepSeek-Coder's issue tracker (source `deepseek-coder-issues-memory-2024`), its
own fine-tuning script, finetune/finetune_deepseekcoder.py.

- #103 (2024-03-26/27, hyperbolic-c): "我微调1.3B是两张显卡都跑到30G了" (fine-tuning the 1.3B, both GPUs reached 30G),
  with "默认的 没动代码" and "就是跑的官方例程" (the defaults, the code untouched, the official example).

Read at fd2db2c (main on 2024-03-26; finetune/ as at d40caed, 2023-11-23): the README's command `deepspeed
finetune_deepseekcoder.py --model_name_or_path $MODEL_PATH --model_max_length 1024 --per_device_train_batch_size 16
--gradient_accumulation_steps 4 ... --gradient_checkpointing True --deepspeed configs/ds_config_zero3.json --bf16
True`. The script parses TrainingArguments (transformers' HfDeepSpeedConfig exists) before
`AutoModelForCausalLM.from_pretrained(..., torch_dtype=torch.bfloat16)`: zero.Init, partitioned as built. Samples are
tokenized with truncation at model_max_length and the collator pads each batch to its longest
(`pad_sequence`): --varying-lengths with the 1,024-token cap. ds_config_zero3.json: ZeRO-3 with offload_param and
offload_optimizer on the CPU (pinned), DeepSpeed's AdamW (DeepSpeedCPUAdam with the offload), bf16 "auto" (on),
stage3_max_live_parameters 1e9, reduce/prefetch buckets and the persistence threshold "auto" (the Trainer fills them
from the hidden size). finetune/requirements.txt: transformers>=4.35.0, torch>=2.0.1.

The model is deepseek-coder-1.3b (base or instruct: the same shapes): the argv names its config.json
(benchmarks/published/models/deepseek-coder-1.3b: Llama, 24 layers, hidden 2048, MLP 5504, 16 heads, vocabulary
32,256, untied head, linear RoPE scaling x4: 1,346,471,936 parameters).

Scored after e8d269b: -25.8 % (22.3 GiB against 30). Read-only diagnosis: 10.7 GiB allocated at the forward's peak
(parameters and optimizer on the host), the rest allocator reserve; varying_lengths.py counts the middle of the
cache the allocator keeps for loss-tail blocks of the lengths it sees (+6.99 GiB of 0 to +13.98), and the estimate's
own long-run bound is 28.4 GiB reserved (29.3 with the runtime, -2 %): '跑到30G' (reached 30G) reads as the run's
high-water mark, the long-run end of that range, not its middle. No bytes found missing in the step itself.
"""

from __future__ import annotations

_SOURCE = "deepseek-coder-issues-memory-2024"
_REPO = "https://github.com/deepseek-ai/DeepSeek-Coder"
_COMMIT = "fd2db2cafe86efe8992fd5fcca460b077f9ebb20"  # main on 2024-03-26
_QUOTE = ("@guoday 你好, 我微调1.3B是两张显卡都跑到30G了, 想微调6.7B的时候显存直接爆了(batch_size=4都不行), 请问为什么消耗"
          "这么高")

ROWS = [
    {"key": "deepseekcoder103-1.3b-full-zero3-offload-2gpu-b16-1024", "source": _SOURCE,
     "url": f"{_REPO}/issues/103", "code_url": f"{_REPO}/blob/{_COMMIT}/finetune/finetune_deepseekcoder.py",
     "quote": _QUOTE, "printed": "30G", "measured_bytes": 30 * 2**30, "metric": "nvidia-smi",
     "argv": ("estimate --model benchmarks/published/models/deepseek-coder-1.3b/config.json --system 2xA100-80GB "
              "--strategy zero3 --offload-param cpu --offload-optimizer cpu --precision bf16 --optimizer adamw "
              "--micro-batch 16 --gradient-accumulation 4 --seq-len 1024 --varying-lengths --gradient-checkpointing "
              "--attention sdpa --stack transformers==4.38.2 --format json"),
     "assumptions": (
         "DeepSeek-Coder#103 (2024-03-26): finetune_deepseekcoder.py at fd2db2c with the README's command on two "
         "GPUs: deepseek-coder-1.3b fully fine-tuned under ZeRO-3 with zero.Init, parameters and optimizer offloaded "
         "to the host (DeepSpeedCPUAdam), the bf16 engine, batch 16 x accumulation 4, samples cut at 1,024 tokens "
         "and padded to each batch's longest, gradient checkpointing; '两张显卡都跑到30G' per GPU read as nvidia-smi "
         "GiB"),
     "unexpressed": [
         "the GPUs are not named (above 30G each): 2 x A100 80GB assumed; the data are the user's own (the README "
         "points at Evol-Instruct-Code-80k's format): their lengths are not known, the argv says the 1,024 cap",
         "transformers is unpinned (>=4.35.0): 4.38.2 (March 2024) assumed, SDPA attention; DeepSpeed and torch "
         "unstated",
         "'跑到30G' (reached 30G) is a reading during the run, its moment not said",
     ]},
]
