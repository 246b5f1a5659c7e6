"""Frozen: hiyouga/ChatGLM-Efficient-Tuning's README "硬件需求" (hardware requirements) table (source
`chatglm-efficient-tuning-readme-2023`): ChatGLM-6B fine-tuned by LoRA, P-Tuning v2 and Freeze through the HF
Trainer on one Tesla V100, "GPU显存" beside the batch size. The project that became LLaMA-Factory, before the rename
and before any issue thread of LLaMA-Factory's (llamafactory-issues-memory-reports); not liucongg's ChatGLM tables.

The table as read is README_zh.md at 4a90242 (2023-04-18), unchanged through 036f5a9 (2023-04-21): its three FP16
LoRA rows were measured and written in ee0b576 (2023-04-17, "support quantizated fine-tuning", replacing an earlier
table of other numbers) with the code they ran; 4a90242 added the INT8 LoRA and Freeze rows with the 8-bit loading
they ran. Its note: "`gradient_accumulation_steps` 参数设置为 `1`。上述结果均来自于单个 Tesla V100 GPU".

Read in the code at ee0b576 and 4a90242 (finetune_chatglm.py, utils.py, arguments.py, finetune.sh, requirements.txt):

* `AutoModel.from_pretrained(..., trust_remote_code=True)` with no torch_dtype: ChatGLM-6B's remote code builds every
  linear and embedding with `params_dtype = torch.half`, so the base is fp16 whatever the default dtype;
  `prepare_model_for_training` casts the 1-D `layernorm` weights to fp32, calls enable_input_require_grads and
  gradient_checkpointing_enable (the remote code's reentrant torch.utils.checkpoint per GLMBlock) and wraps lm_head
  in `CastOutputToFloat` (fp32 logits).
* LoRA: PEFT (installed from git, April 2023) r=8, alpha 32, dropout 0.1 on `query_key_value` (arguments.py defaults
  and the hard-coded target); PEFT's adapters of the day are created fp32 (nn.Linear in the default dtype).
* `--fp16`: the Trainer's fp16 autocast with a GradScaler over the fp16 base and fp32 adapters (--precision mixed);
  `optim` forced from adamw_hf to `adamw_torch` (torch.optim.AdamW, foreach on CUDA in torch 2.0).
* Data: alpaca_gpt4_zh, each sample's prompt truncated to max_source_length 512 - 1 and its answer to
  max_target_length 512 - 2 (defaults), [gMASK] [BOS] ... [EOS] around them: at most 1,024 tokens; the collator
  `DataCollatorForChatGLM` pads each batch to its own longest sample (pad_sequence), the Trainer's random sampler:
  --varying-lengths up to --seq-len 1024.
* Stack: requirements.txt says torch>=2.0.0, transformers>=4.27.4 (check_min_version): torch 2.0.0 and
  transformers 4.28.1, the releases of mid-April 2023, assumed.

ChatGLM-6B is remote code (model_type chatglm): the argv names models/chatglm-6b, the GPT-NeoX config.json of its
shapes and module names that liucongg_chatglm_finetuning.py uses (6,173,286,400 parameters, vocabulary 130,528). The
hub's model had dropped its 20,000 image tokens by then (THUDM/ChatGLM-6B#401, 2023-04-09: "最新的模型已经去掉了image
token"; the hub commit 72985e8), so the 130,528-token vocabulary, not liucongg v0.1's 150,528 of early April.

What the number is: "GPU显存", one V100's, how read not said: read as nvidia-smi's used memory, "GB" as GiB
(nvidia-smi's MiB / 1024; a 32 GB V100 shows 32,510 MiB, so 28GB is its card either way, below the 95% read as "the
card full"); the 28GB row implies the 32 GB V100. The INT8 rows (bitsandbytes LLM.int8 for LoRA and Freeze,
ChatGLM's own quantize() for P-Tuning), the P-Tuning v2 rows (a 16-token prefix encoder) and the Freeze rows (the MLPs
of the last three layers trained in fp32) have no accelwiz method: kept, not expressible.
"""

from __future__ import annotations

_COMMIT = "4a9024282701a6b500cacc1f936396fbfc8a0dae"  # 2023-04-18: the full table; its FP16 LoRA rows from ee0b576
_CODE_COMMIT = "ee0b576c00e4bf0c1808789f623dcb80da158471"  # 2023-04-17: the FP16 LoRA rows written with this code
_REPO = "https://github.com/hiyouga/ChatGLM-Efficient-Tuning/blob"
_URL = f"{_REPO}/{_COMMIT}/README_zh.md"
_SOURCE = "chatglm-efficient-tuning-readme-2023"
_MODEL = "benchmarks/published/models/chatglm-6b/config.json"

_UNEXPRESSED = [
    "'GB' read as GiB (nvidia-smi's MiB / 1024); read as 10^9 bytes the figure would be 6.9% smaller; how it was read "
    "and at which step the README does not say; the V100's memory (32 GB) inferred from the 28GB row",
    "ChatGLM-6B's remote code: the argv names a GPT-NeoX config.json of its shapes and module names; its 2D rotary "
    "positions, alpha-scaled residual and 4D boolean attention mask are not modelled, and its jit-scripted tanh GELU "
    "is counted as gelu_new's eager intermediates",
    "ChatGLM-6B's manual attention (query-key layer scaling, the softmax in fp32) under --attention eager, "
    "transformers' eager path for the stand-in",
    "the loss: CastOutputToFloat makes the lm_head output fp32 [seq, batch, vocab], ChatGLM permutes it to a "
    "contiguous copy, shifts and runs CrossEntropyLoss, then casts the logits back to fp16; counted as transformers' "
    "pre-4.49 loss on fp32 logits",
    "alpaca_gpt4_zh's lengths: the longest batch of the run (prompt and answer both near their 511/510-token caps) "
    "is assumed to reach the 1,024-token cap",
]
_SETTINGS = ("hiyouga/ChatGLM-Efficient-Tuning ee0b576/4a90242, '硬件需求' table: ChatGLM-6B (fp16 by its remote code; "
             "layernorms cast to fp32) {how} on one Tesla V100 32GB through the HF Trainer (Seq2SeqTrainer) with "
             "--fp16 autocast, adamw_torch, micro-batch {batch}, accumulation 1 (the table's note), gradient "
             "checkpointing on (prepare_model_for_training), alpaca_gpt4_zh padded per batch to its longest sample "
             "(at most 512 + 512 tokens); torch 2.0.0 and transformers 4.28.1 assumed (requirements: torch>=2.0.0, "
             "transformers>=4.27.4)")


def _quote(method: str, batch: int, mode: str, printed: str) -> str:
    return f"| {method:<16} |     {batch:<2}     | {mode} |  {printed}  | 8ex/s |"


def _row(key: str, method: str, batch: int, mode: str, printed: str, how: str, *, argv: str | None = None,
         not_expressible: str | None = None) -> dict:
    row = {"key": f"chatglm-etuning-{key}", "source": _SOURCE, "url": _URL,
           "code_url": f"{_REPO}/{_CODE_COMMIT}/utils.py", "quote": _quote(method, batch, mode, printed),
           "printed": printed, "measured_bytes": int(round(float(printed.rstrip("GB")) * 2**30)),
           "metric": "nvidia-smi", "assumptions": _SETTINGS.format(how=how, batch=batch),
           "unexpressed": list(_UNEXPRESSED), "argv": argv}
    return {**row, "not_expressible": not_expressible} if argv is None else row


def _lora_argv(batch: int) -> str:
    return (f"estimate --model {_MODEL} --system 1xV100-32GB --strategy single --precision mixed --lora --lora-rank 8 "
            f"--lora-dropout 0.1 --lora-target query_key_value --micro-batch {batch} --seq-len 1024 --varying-lengths "
            "--gradient-checkpointing --attention eager --stack transformers==4.28.1 --stack torch==2.0.0 "
            "--format json")


_LORA = ("LoRA r=8 alpha 32 dropout 0.1 on query_key_value (fp32 adapters, PEFT from git of April 2023) over the "
         "fp16 base")
_INT8 = "the base loaded in 8 bits (load_in_8bit: bitsandbytes LLM.int8): no 8-bit --method"
_PTUNING = "P-Tuning v2 (ChatGLM's own prefix encoder, pre_seq_len 16, feeding every layer): no such --method"
_FREEZE = "Freeze tuning (only the MLPs of layers 25-27 train, cast to fp32): no such --method"

ROWS = [
    *(_row(f"lora-r8-qkv-fp16-b{batch}-1xv100", "LoRA (r=8)", batch, "FP16", printed, _LORA,
           argv=_lora_argv(batch))
      for batch, printed in ((16, "28GB"), (8, "24GB"), (4, "20GB"))),
    _row("lora-r8-qkv-int8-b4-1xv100", "LoRA (r=8)", 4, "INT8", "10GB", _LORA + ", the base in 8 bits",
         not_expressible=_INT8),
    _row("ptuning-p16-fp16-b4-1xv100", "P-Tuning (p=16)", 4, "FP16", "20GB", "P-Tuning v2, 16 prefix tokens",
         not_expressible=_PTUNING),
    _row("ptuning-p16-int8-b4-1xv100", "P-Tuning (p=16)", 4, "INT8", "16GB", "P-Tuning v2 over quantize(8)",
         not_expressible=_PTUNING + "; ChatGLM's own 8-bit quantize()"),
    _row("ptuning-p16-int4-b4-1xv100", "P-Tuning (p=16)", 4, "INT4", "12GB", "P-Tuning v2 over quantize(4)",
         not_expressible=_PTUNING + "; ChatGLM's own 4-bit quantize()"),
    _row("freeze-l3-fp16-b4-1xv100", "Freeze (l=3)", 4, "FP16", "24GB", "Freeze tuning of the last 3 MLPs",
         not_expressible=_FREEZE),
    _row("freeze-l3-int8-b4-1xv100", "Freeze (l=3)", 4, "INT8", "12GB", "Freeze tuning over an 8-bit base",
         not_expressible=_FREEZE + "; " + _INT8),
]
