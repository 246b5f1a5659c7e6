"""Frozen, verdict rows: OpenRLHF/OpenRLHF's issue tracker (source `openrlhf-issues-memory-reports`).

OpenRLHF#698 (2025-01-29, "OOM on Llama 8B"): the README's SFT command (`deepspeed --num_gpus 1 --module
openrlhf.cli.train_sft`, Meta-Llama-3-8B, --zero_stage 2, --bf16, --flash_attn, --gradient_checkpointing,
--packing_samples, max_len 128, micro and global batch 1) on one A100 80GB ran out of memory in the optimizer step
("after the prepare call, the script takes ~46 GB, after backward pass happens it's at 61 GB and during the step
function it goes out of memory"); the maintainer answered "use --adam_offload", and the user: "Thanks that worked!".

The code, read at 707b970 (OpenRLHF's main on 2025-01-28): the actor is loaded in bf16 (`--bf16`), DeepSpeed's
bf16 engine keeps fp32 master partitions (get_train_ds_config: bf16 enabled, the given stage, offload_optimizer
"cpu" with --adam_offload, pinned), the optimizer is DeepSpeed's FusedAdam, or DeepSpeedCPUAdam with --adam_offload
(deepspeed.py: `AdamOptimizer = DeepSpeedCPUAdam if self.adam_offload else FusedAdam`); one GPU, so ZeRO-2 shards
nothing. --packing_samples packs samples into the 128-token micro-batch (fixed length).
"""

from __future__ import annotations

_URL = "https://github.com/OpenRLHF/OpenRLHF/issues/698"
_CODE_URL = ("https://github.com/OpenRLHF/OpenRLHF/blob/707b970e992154952a91607ca5491cc49b8665c3/openrlhf/utils/"
             "deepspeed/deepspeed_utils.py")
_SETTINGS = (
    "OpenRLHF#698 (2025-01-29): deepspeed --num_gpus 1 --module openrlhf.cli.train_sft, Meta-Llama-3-8B full SFT, "
    "ZeRO-2 on one A100 80GB, bf16 module with fp32 master partitions, {optimizer}, FlashAttention-2, gradient "
    "checkpointing, packed 128-token micro-batches of 1 (OpenRLHF 707b970); {what}"
)
_UNEXPRESSED = ["OpenRLHF's own loss (GPTLMLoss on the logits its Actor returns) and packing's flash-attn varlen "
                "path: 128 tokens, negligible beside the states",
                "the DeepSpeed and OpenRLHF versions are not printed (OpenRLHF main of Jan 2025 assumed)"]
_ARGV = ("estimate --model llama-3-8b --system 1xA100-80GB --strategy zero2 --precision mixed --optimizer adamw "
         "{offload}--micro-batch 1 --seq-len 128 --fixed-lengths --gradient-checkpointing --attention flash "
         "--format json")

ROWS = [
    {"key": "openrlhf698-llama3-8b-full-zero2-1xa100-80gb-oom", "source": "openrlhf-issues-memory-reports",
     "url": _URL, "code_url": _CODE_URL,
     "quote": ("I'm running out of memory on an 80 GB A100, even with a batch size of 1 and training sequence "
               "length of 128."), "printed": "80 GB A100", "measured_bytes": None, "metric": "reserved", "ran": False,
     "argv": _ARGV.format(offload=""),
     "assumptions": _SETTINGS.format(optimizer="FusedAdam on the GPU",
                                     what="out of memory in the optimizer step (61 GB after backward, printed)"),
     "unexpressed": ["DeepSpeed's FusedAdam (the argv's --optimizer adamw is torch's; its step temporaries differ)",
                     *_UNEXPRESSED]},
    {"key": "openrlhf698-llama3-8b-full-zero2-adam-offload-1xa100-80gb-ran",
     "source": "openrlhf-issues-memory-reports",
     "url": _URL, "code_url": _CODE_URL,
     "quote": ("hijkzzz · comment · 2025-01-29\nuse --adam_offload\n\ntmfs10 · comment · 2025-01-31\n"
               "Thanks that worked!"),
     "printed": "Thanks that worked!", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": _ARGV.format(offload="--offload-optimizer cpu "),
     "assumptions": _SETTINGS.format(optimizer="--adam_offload: DeepSpeedCPUAdam with the optimizer states and fp32 "
                                               "masters in pinned host memory",
                                     what="the same command with --adam_offload trained"),
     "unexpressed": _UNEXPRESSED},
]
