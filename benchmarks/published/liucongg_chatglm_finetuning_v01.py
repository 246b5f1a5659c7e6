"""Frozen: liucongg/ChatGLM-Finetuning's first README table (e13710c, 2023-04-06, the commit that wrote it with the
scripts it ran; kept under the tag v0.1 that the August README points to), "显卡占用" (GPU memory taken) of four
methods on ChatGLM-6B on one 48G A40. A different table, code and model version from the August tables
(liucongg-chatglm-finetuning-2023, registered and scored before this one was registered).

Read in the code at e13710c (finetuning_lora.py, data_set.py; the pins of 8fb47d7, ten minutes later: torch
1.13.1+cu116, transformers 4.26.0, deepspeed 0.8.1, peft 0.2.0) and the README's "实验结果" notes:

* finetuning_lora.py: ChatGLM-6B's own code (`ChatGLMForConditionalGeneration.from_pretrained`), PEFT LoRA r=8,
  alpha 32, dropout 0.1 on `query_key_value`, then `model.half().cuda()` (adapters in fp16 too); its inline
  DeepSpeed config: fp16, ZeRO stage 1 with the optimizer offloaded to the CPU (pinned; "Adam" -> DeepSpeedCPUAdam),
  reduce and allgather buckets 2e8, micro-batch 2 (--train_batch_size 2), accumulation 1, no gradient
  checkpointing (the README turned it on for the P-Tuning runs only).
* data_set.py pads every sample to max_len 768 (`pad_len = max_len - len(input_ids)`): fixed 768-token batches.
* The model of April 2023 has the 150,528-token vocabulary (20,000 image tokens: the collator pads with id 20003),
  output layer tied to the embedding: the argv names models/chatglm-6b-150k, a GPT-NeoX config.json of ChatGLM-6B's
  shapes (as models/chatglm-6b) with that vocabulary, 6,255,206,400 parameters; with the 3,670,016 LoRA parameters
  6,258,876,416: the README's "总参数" 6.255B (Freeze) and 6.259B (LoRA), and its 0.0586% trainable.

What the number is: "显卡占用", the one GPU's, how read not said: nvidia-smi assumed; "G" read as 10^9 bytes as in
the August tables (same author and card). The P-Tuning v2, prefix-on-embedding and Freeze (the last five layers)
columns have no accelwiz method: kept, not expressible.
"""

from __future__ import annotations

_COMMIT = "e13710cb3cc0ffd1fb669ac862f4b1b4770c8172"
_URL = f"https://github.com/liucongg/ChatGLM-Finetuning/blob/{_COMMIT}/README.md"
_SOURCE = "liucongg-chatglm-finetuning-v0.1-2023"
_QUOTE = "| 显卡占用 | 37G | 30G | 24G | 39G |"
_MODEL = "benchmarks/published/models/chatglm-6b-150k/config.json"
_SETTINGS = ("liucongg/ChatGLM-Finetuning e13710c (the v0.1 scripts), '实验结果' table: ChatGLM-6B (April 2023, "
             "vocabulary 150,528) {how} on one A40 (48 GB) under DeepSpeed 0.8.1 fp16 ZeRO-1 with CPU optimizer "
             "offload (DeepSpeedCPUAdam), the model halved by the script (no autocast), micro-batch 2, every sample "
             "padded to 768 tokens (spo_0.json), {gc}; torch 1.13.1, transformers 4.26.0, peft 0.2.0")
_UNEXPRESSED = [
    "'G' read as 10^9 bytes (as the same author's August tables on the same A40); read as GiB the figure would be 7.4% "
    "larger; how it was read (nvidia-smi assumed) and at which step the README does not say",
    "ChatGLM-6B's remote code: the argv names a GPT-NeoX config.json of its shapes and module names; its 2D rotary "
    "positions, alpha-scaled residual and 4D boolean attention mask are not modelled, and its jit-scripted tanh GELU "
    "is counted as gelu_new's eager intermediates",
    "ChatGLM-6B's manual attention keeps the fp32 softmax output and fp16 probabilities per layer (query-key layer "
    "scaling); the argv's --attention eager is transformers' eager path for the stand-in",
]


def _row(key: str, printed: str, how: str, *, argv: str | None, gc: str, not_expressible: str | None = None) -> dict:
    row = {"key": f"liucongg-v01-{key}", "source": _SOURCE, "url": _URL, "quote": _QUOTE, "printed": printed,
           "measured_bytes": int(round(float(printed.rstrip("G")) * 1e9)), "metric": "nvidia-smi",
           "assumptions": _SETTINGS.format(how=how, gc=gc), "unexpressed": list(_UNEXPRESSED), "argv": argv}
    return {**row, "not_expressible": not_expressible} if argv is None else row


ROWS = [
    _row("glm-lora-r8-qkv-zero1-offload-1xa40", "39G", "LoRA r=8 alpha 32 dropout 0.1 on query_key_value (fp16 "
         "adapters with DeepSpeed's fp32 master on the CPU)", gc="no gradient checkpointing",
         argv=f"estimate --model {_MODEL} --system 1xA40 --strategy zero1 --offload-optimizer cpu --precision mixed "
              "--lora --lora-rank 8 --lora-dropout 0.1 --lora-target query_key_value --micro-batch 2 --seq-len 768 "
              "--fixed-lengths --no-gradient-checkpointing --attention eager --stack transformers==4.26.0 "
              "--stack torch==1.13.1 --format json"),
    _row("glm-ptuning-embedding-only-1xa40", "37G", "P-Tuning on the embedding only (PT-Only-Embedding)",
         gc="gradient checkpointing on (the README's note on the P-Tuning runs)", argv=None,
         not_expressible="prefix tuning on the embedding (ChatGLM's pre_seq_len without prefix projection): no "
                         "such --method"),
    _row("glm-ptuning-v2-1xa40", "30G", "P-Tuning v2 (ChatGLM's prefix encoder on every layer)",
         gc="gradient checkpointing on (the README's note on the P-Tuning runs)", argv=None,
         not_expressible="P-Tuning v2 (a prefix encoder feeding every layer): no such --method"),
    _row("glm-freeze-last-5-layers-1xa40", "24G", "Freeze-tuned (layers 23-27 trained, the rest frozen)",
         gc="no gradient checkpointing", argv=None,
         not_expressible="Freeze tuning (only layers.23-27 train): no such --method"),
]
