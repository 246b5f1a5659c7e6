"""Frozen, verdict rows: tatsu-lab/stanford_alpaca's issue tracker (source `stanford-alpaca-issues`).

Users running Alpaca's train.py on LLaMA-7B under the Trainer's FSDP on A100 40GB cards say whether it trained or ran
out of memory, with the command (or the README's, changed as they say). The README is another source
(`stanford-alpaca-readme`); this is its issue tracker. Four threads:

- #39 (2023-03-16): the README's command (4 processes, per-device batch 4, accumulation 8, --bf16) tried on 8 x A100
  40GB: "it meets cuda oom error"; the same user, told to lower the batch: "I should set per_device_train_batch_size
  to 2 right? If that's right then I do make it work".
- #32 (2023-03-17): a user's full command on 8 x A100 40GB, `--fp16 True --per_device_train_batch_size 1
  --gradient_accumulation_steps 4 --fsdp "full_shard auto_wrap" --fsdp_transformer_layer_cls_to_wrap
  'LlamaDecoderLayer'`: "My training finishes in 4 hours with 8 * A100 (40G) using fp16. (3 epochs)" (torch 1.13,
  transformers from git).
- #190 (2023-04-07): `torchrun --nproc_per_node=8 train.py ... --bf16 True --per_device_train_batch_size 1
  --gradient_accumulation_steps 8 --fsdp "full_shard auto_wrap" --fsdp_transformer_layer_cls_to_wrap
  'LlamaDecoderLayer' --tf32 True` on A100 40GB: the epoch trains to its end (812/812, `train_runtime` printed); the
  out-of-memory comes after, when the full state dict is gathered to save (not a training step).
- #280 (2023-06-30): "I tried 4 A100 40GB with FSDP offload, but had to reduce the eval and train batch size from 3
  to 2 in order to avoid OOM. Took 58 hours." (the README's "Addressing OOM": `--fsdp "full_shard auto_wrap
  offload"`).

The code, train.py read at each thread's commit (c8ea92b 2023-03-16, aa65c49 2023-03-29, 761dc5b 2023-05-29; the
training path is the same in all three): `AutoModelForCausalLM.from_pretrained(path)` with no dtype (fp32 parameters;
--bf16/--fp16 give FSDP1 a 16-bit MixedPrecision over fp32 shards, autocast around the forward), a pad token added
(32,001 embedding rows), optim adamw_torch, model_max_length 512, each sample tokenized alone and cut at 512, and
DataCollatorForSupervisedDataset padding each batch to its own longest (--varying-lengths up to 512). No gradient
checkpointing is passed; LLaMA in transformers of spring 2023 has eager attention only. Not kept: #46 (8 x A100 40GB
out of memory "after one iteration", its batch not stated; the same user's #32 command trained a day later).
"""

from __future__ import annotations

_SOURCE = "stanford-alpaca-issues"
_REPO = "https://github.com/tatsu-lab/stanford_alpaca"
_MARCH = "c8ea92b1c360269f787036fb3746b9e2dea120e5"
_LATE_MARCH = "aa65c492bb788e144712daab42bc5d11c2761591"
_MAY = "761dc5bfbdeeffa89b8bff5d038781a4055f796a"

_ARGV = ("estimate --model llama-2-7b --system {system} --strategy fsdp_full --fsdp-version 1 {offload}--precision "
         "mixed --micro-batch {mb} --gradient-accumulation {ga} --seq-len 512 --varying-lengths "
         "--no-gradient-checkpointing --attention eager --optimizer adamw --stack transformers=={tf} --format json")
_SETTINGS = (
    "stanford_alpaca#{issue} ({date}): train.py at {commit}, LLaMA-7B full fine-tuning loaded in fp32, the Trainer's "
    "FSDP1 full_shard (auto_wrap on the decoder layer){offload} with {dtype} MixedPrecision, torch AdamW, on {hw}, "
    "per-device batch {mb}, accumulation {ga}, samples cut at 512 tokens and padded to each batch's longest, no "
    "gradient checkpointing, eager attention; {verdict}"
)
_UNEXPRESSED = [
    "LLaMA-1 7B has Llama 2 7B's shapes and parameter count (2,048 positions instead of 4,096, unused at 512 "
    "tokens); the argv names the Llama 2 preset; the added pad token (32,001 embedding rows) is not counted",
    "the longest padded batch (Alpaca samples rarely reach 512 tokens; the argv says the cap)",
]


def _row(key: str, issue: int, commit: str, quote: str, printed: str, ran: bool, *, system: str, mb: int, ga: int,
         tf: str, date: str, dtype: str, verdict: str, stack: str, offload: bool = False,
         extra: tuple[str, ...] = ()) -> dict:
    hw = f"{system.split('x', 1)[0]} x A100 40GB"
    return {"key": key, "source": _SOURCE, "url": f"{_REPO}/issues/{issue}",
            "code_url": f"{_REPO}/blob/{commit}/train.py", "quote": quote, "printed": printed,
            "measured_bytes": None, "metric": "reserved", "ran": ran,
            "argv": _ARGV.format(system=system, offload="--offload-param cpu " if offload else "", mb=mb, ga=ga,
                                 tf=tf),
            "assumptions": _SETTINGS.format(issue=issue, date=date, commit=commit[:7], dtype=dtype, hw=hw, mb=mb,
                                            ga=ga, verdict=verdict,
                                            offload=" with CPU offload (parameters, gradients and the AdamW step on "
                                                    "the host)" if offload else ""),
            "unexpressed": [*_UNEXPRESSED, stack, *extra]}


_STACK_MARCH = ("transformers from git main of March 2023 (4.27/4.28.0.dev with the LLaMA PR: the Trainer's own FSDP "
                "wrapping) and torch 1.13 (#32) or unstated; the CLI estimates the installed torch")
_STACK_APRIL = ("transformers from git main of April 2023 (4.28.0.dev) and torch unstated; the CLI estimates the "
                "installed torch")
_STACK_JUNE = ("transformers >= 4.28.1 (requirements.txt; 4.30.2 was current) and torch unstated; the CLI estimates "
               "the installed torch")
_Q39_OOM = ("Hi\n\nGreat work! In READM, you guys mention that 4 A100 80G can train this model, but when I try 8 40G "
            "A100, it meets cuda oom error.")
_Q39_RAN = ("Thank you for your reply! Yes I realize I have 8 GPUs so I should set per_device_train_batch_size to 2 "
            "right? If that's right then I do make it work")
_Q32 = "My training finishes in 4 hours with 8 * A100 (40G) using fp16. (3 epochs)"
_Q190 = ("When finish training comes errors:\n```\n{'train_runtime': 5162.7837, 'train_samples_per_second': 10.072, "
         "'train_steps_per_second': 0.157, 'train_loss': 1.0267484738615347, 'epoch': 1.0}")
_Q280 = ("I tried 4 A100 40GB with FSDP offload, but had to reduce the eval and train batch size from 3 to 2 in order "
         "to avoid OOM. Took 58 hours.")

ROWS = [
    _row("alpaca39-llama-7b-fsdp-full-b4-8xa100-40gb-oom", 39, _MARCH, _Q39_OOM, "it meets cuda oom error", False,
         system="8xA100-40GB", mb=4, ga=8, tf="4.27", date="2023-03-16", dtype="bf16", stack=_STACK_MARCH,
         verdict="out of memory (the README's command on 8 GPUs)",
         extra=("the user's command is not shown: the README's (batch 4, accumulation 8, --bf16) with 8 "
                "processes assumed",)),
    _row("alpaca39-llama-7b-fsdp-full-b2-8xa100-40gb-ran", 39, _MARCH, _Q39_RAN, "then I do make it work", True,
         system="8xA100-40GB", mb=2, ga=8, tf="4.27", date="2023-03-16", dtype="bf16", stack=_STACK_MARCH,
         verdict="trained at per-device batch 2",
         extra=("only the batch is said to change: the README's accumulation 8 and --bf16 kept",)),
    _row("alpaca32-llama-7b-fsdp-full-fp16-b1-8xa100-40gb-ran", 32, _MARCH, _Q32, "My training finishes in 4 hours",
         True, system="8xA100-40GB", mb=1, ga=4, tf="4.27", date="2023-03-17", dtype="fp16", stack=_STACK_MARCH,
         verdict="trained, 3 epochs in 4 hours (the user's full command)"),
    _row("alpaca190-llama-7b-fsdp-full-b1-8xa100-40gb-ran", 190, _LATE_MARCH, _Q190, "'train_runtime': 5162.7837",
         True, system="8xA100-40GB", mb=1, ga=8, tf="4.28", date="2023-04-07", dtype="bf16", stack=_STACK_APRIL,
         verdict="the epoch trained (812/812 steps; out of memory only afterwards, gathering the full state dict to "
                 "save)"),
    _row("alpaca280-llama-7b-fsdp-full-offload-b3-4xa100-40gb-oom", 280, _MAY, _Q280, "from 3 to 2 in order to avoid "
         "OOM", False, system="4xA100-40GB", mb=3, ga=8, tf="4.30.2", date="2023-06-30", dtype="bf16",
         stack=_STACK_JUNE, offload=True, verdict="out of memory at per-device batch 3",
         extra=("the README's other flags (accumulation 8, --bf16) assumed with `offload` added to --fsdp",)),
    _row("alpaca280-llama-7b-fsdp-full-offload-b2-4xa100-40gb-ran", 280, _MAY, _Q280, "Took 58 hours.", True,
         system="4xA100-40GB", mb=2, ga=8, tf="4.30.2", date="2023-06-30", dtype="bf16", stack=_STACK_JUNE,
         offload=True, verdict="trained at per-device batch 2 (58 hours)",
         extra=("the README's other flags (accumulation 8, --bf16) assumed with `offload` added to --fsdp",)),
]
