"""Frozen: verdicts from baichuan-inc/Baichuan2's issue tracker (source `baichuan2-issues-verdicts-2023`): its own
full fine-tuning script, fine-tune/fine-tune.py with fine-tune/ds_config.json, on A100 40GB cards.

Read at 953523a (main on 2023-09-19; fine-tune/ unchanged from f620769, 2023-09-09, to the end of 2023): the README's
command `deepspeed --hostfile=$hostfile fine-tune.py --model_name_or_path baichuan-inc/Baichuan2-7B-Base
--model_max_length 512 --per_device_train_batch_size 16 --gradient_accumulation_steps 1 ... --gradient_checkpointing
True --deepspeed ds_config.json --bf16 True --tf32 True`. fine-tune.py parses TrainingArguments (so transformers'
HfDeepSpeedConfig exists) before `AutoModelForCausalLM.from_pretrained(..., trust_remote_code=True)` with no dtype:
the model is built under zero.Init, partitioned; optim adamw_torch (the script's default); SupervisedDataset pads
every sample to model_max_length (512 tokens). ds_config.json: ZeRO-3, overlap_comm, bf16 "auto" (on), no optimizer
and no offload: DeepSpeed's bf16 engine with fp32 master partitions and torch AdamW on them. fine-tune/requirements.txt
pins torch 2.0.0; transformers is unpinned (4.33.x in September 2023). Baichuan2-7B's remote code takes xformers'
memory-efficient attention when installed, else torch's scaled_dot_product_attention (--attention sdpa).

- #162 (2023-12-07, Xu-pixel, quoting an earlier report and adding his own): "4张A100(40G)，batch size=1，对
  Baichuan2-7B-Base进行全量微调，都OOV" (four A100 40GB at batch 1: out of memory) and "6张A100(40G)，batch size=2,
  对Baichuan2-7B-Chat进行全量微调，能跑" (six A100 40GB at batch 2: runs).
- #147 (2023-09-19): "使用A100(40GB)单机(8卡)基于baichuan-inc/Baichuan2-7B-Base进行全量微调，报错显存不足。可是已经将batch
  size设置为1" (eight A100 40GB at batch 1: out of memory).
"""

from __future__ import annotations

_SOURCE = "baichuan2-issues-verdicts-2023"
_REPO = "https://github.com/baichuan-inc/Baichuan2"
_COMMIT = "953523ac3643ebe8f15b4ae367ddae1b7c6f845a"  # main on 2023-09-19; fine-tune/ as at f620769
_Q162_4 = "> 4张A100(40G)，batch size=1，对Baichuan2-7B-Base进行全量微调，都OOV"
_Q162_6 = "6张A100(40G)，batch size=2,对Baichuan2-7B-Chat进行全量微调，能跑"
_Q147 = ("使用A100(40GB)单机(8卡)基于baichuan-inc/Baichuan2-7B-Base进行全量微调，报错显存不足。可是已经将batch "
         "size设置为1。")
_ARGV = ("estimate --model baichuan2-7b --system {gpus}xA100-40GB --strategy zero3 --precision bf16 --optimizer adamw "
         "--micro-batch {mb} --seq-len 512 --fixed-lengths --gradient-checkpointing --attention sdpa "
         "--stack transformers==4.33.2 --stack torch==2.0.0 --format json")
_SETTINGS = (
    "Baichuan2#{issue} ({date}): fine-tune/fine-tune.py with ds_config.json at 953523a (the README's command with "
    "per-device batch {mb}): Baichuan2-7B fully fine-tuned under DeepSpeed ZeRO-3 with zero.Init and the bf16 engine "
    "(fp32 master partitions, torch AdamW), every sample padded to 512 tokens, gradient checkpointing, on {gpus} x "
    "A100 40GB; {verdict}"
)
_UNEXPRESSED = [
    "transformers is unpinned: 4.33.2 (September 2023) assumed; DeepSpeed unpinned and unstated",
    "Baichuan2-7B's remote code (NormHead output layer, its own loss with a z-loss term, xformers when installed): "
    "the baichuan2-7b preset is a Llama stand-in of its shapes (125,696-token vocabulary)",
    "whether the reported out-of-memory was on the GPU or in host RAM is not said",
]


def _row(issue: int, key: str, quote: str, printed: str, gpus: int, mb: int, ran: bool, date: str,
         verdict: str) -> dict:
    return {"key": f"baichuan2-{issue}-7b-full-zero3-{gpus}xa100-40gb-b{mb}-{key}", "source": _SOURCE,
            "url": f"{_REPO}/issues/{issue}", "code_url": f"{_REPO}/blob/{_COMMIT}/fine-tune/fine-tune.py",
            "quote": quote, "printed": printed, "measured_bytes": None, "metric": "reserved", "ran": ran,
            "argv": _ARGV.format(gpus=gpus, mb=mb),
            "assumptions": _SETTINGS.format(issue=issue, date=date, mb=mb, gpus=gpus, verdict=verdict),
            "unexpressed": list(_UNEXPRESSED)}


ROWS = [
    _row(162, "oom", _Q162_4, "都OOV", 4, 1, False, "2023-12-07", "out of memory (Baichuan2-7B-Base)"),
    _row(162, "ran", _Q162_6, "能跑", 6, 2, True, "2023-12-07", "trained (Baichuan2-7B-Chat: the same shapes)"),
    _row(147, "oom", _Q147, "报错显存不足", 8, 1, False, "2023-09-19", "out of memory"),
]
