"""Frozen: liucongg/ChatGLM-Finetuning's README (79bdc89, 2023-08-06, the commit that wrote its four tables with the
code they ran; the tables unchanged through 8631de0, its last commit before the ChatGLM3 rewrite): ChatGLM-6B and
ChatGLM2-6B fine-tuned four ways (Freeze, P-Tuning v2, LoRA, full) by its own DeepSpeed loop on one or four A40s,
each table "所耗显存" (memory consumed) per GPU beside the settings it ran. A fine-tuning repository's own tables:
not ChatGLM3's finetune_demo (chatglm3-finetune-demo), not THUDM's ptuning pages.

Read in the code at 79bdc89 (train.py, utils.py, model.py, the three ZeRO JSONs, requirements.txt):

* train.py is a plain loop over `deepspeed.initialize` (no HF Trainer): the model is built by the repository's own
  copies of ChatGLM's remote code (glm1/, glm2/) with `from_pretrained` and no torch_dtype (fp32 on the CPU); the
  JSONs enable DeepSpeed fp16, so the engine halves the whole model (adapters included) before moving it to the GPU
  and keeps fp32 master partitions of what trains (--precision mixed under ZeRO: no autocast); the optimizer is the
  JSON's "AdamW" (DeepSpeed's FusedAdam without offload, DeepSpeedCPUAdam with it), batch 1 x accumulation 4.
* "offload_param/offload_optimizer": {"device": "auto"} in ds_zero2_no_offload.json and ds_zero3_no_offload.json is
  no offload: DeepSpeed 0.9.0 (the pin) drops every "auto" value of a non-strict config model (config_utils.py),
  leaving device "none", as the tables' "Offload: No" says; ds_zero3_offload.json names "cpu" for both.
* utils.DataCollator pads every batch to `max(max(lengths), 1560)`: every step runs 1,560 tokens whatever the
  sample (--fixed-lengths --seq-len 1560; fixed at 8631de0 to the batch's longest, after the tables).
* LoRA: PEFT 0.3.0 r=16, alpha 64, dropout 0.1 on `query_key_value` (ChatGLM-6B's command) or on
  `query_key_value,dense_h_to_4h,dense_4h_to_h,dense` (ChatGLM2-6B's: every block linear); full fine-tuning: every
  parameter under ZeRO-3 (the JSON's defaults: no stage3_* keys).
* ZeRO-3 without zero.Init (--no-zero3-init): train.py calls `from_pretrained` before `deepspeed.initialize` and
  never makes an HfDeepSpeedConfig, so transformers 4.27.1's `is_deepspeed_zero3_enabled()` is false and the whole
  fp32 model is built on the CPU; DeepSpeed 0.9.0's engine halves it and moves it whole to each GPU
  (`_configure_distributed_model`: `self.module.half()`, `self.module.to(self.device)`) before ZeRO-3 partitions it.
  With ds_zero3_offload.json's `offload_param` the freed blocks stay reserved (stage3.py defragments, and empties
  the cache, only partitions kept on the GPU). The full rows' argv first left the flag out (accelwiz's default is
  zero.Init): a misreading of this script, corrected after scoring (sources.py says the before and after).
* `--gradient_checkpointing` calls the model's gradient_checkpointing_enable (the remote code's reentrant
  torch.utils.checkpoint per layer); the tables say for each row whether it was on.
* Stack: torch 1.13.1+cu116, transformers 4.27.1, deepspeed 0.9.0 (requirements.txt). Under torch 1.13 ChatGLM2's
  CoreAttention takes its manual path (SDPA only from torch 2): eager attention, softmax in fp32; ChatGLM-6B's
  attention is always the manual one (scores cast to fp32 before the softmax). Both models compute the loss on
  fp32 logits (`lm_logits.to(torch.float32)`).

The models are remote code (model_type chatglm). ChatGLM2-6B is accelwiz's `chatglm2-6b` preset (a Qwen2 stand-in of
its shapes: 28 layers, hidden 4096, 2 KV groups, qkv bias, SwiGLU 13696, vocabulary 65024, untied output layer:
6,243,584,000 parameters). ChatGLM-6B (GLM: 28 layers, hidden 4096, 32 heads, fused biased query_key_value, biased
dense, a 4 x hidden GELU MLP dense_h_to_4h/dense_4h_to_h with biases, LayerNorm, vocabulary 130,528 with the output
layer tied to the embedding by transformers' tie_weights) has no transformers class: the argv names a GPT-NeoX
config.json of exactly those shapes and module names (models/chatglm-6b: 6,173,286,400 parameters, ChatGLM-6B's
count), sequential residual, with hidden_act gelu_new for ChatGLM's own tanh GELU (`gelu_impl`). The hub's
chatglm-6b config of August 2023 (the README: "模型使用的是最新版本（20230806）") has vocabulary 130,528
(tokenizer_config num_image_tokens 0), not the 150,528 default of the copied configuration_chatglm.py.

What the number is: "所耗显存", per GPU (the column beside "GPU-A40 Number"), how read not said: read as nvidia-smi's.
Its unit "G" is read as 10^9 bytes, as the Yuan 2.0 pages' (yuan2_finetune_docs.py): the LoRA table prints 45G on an
A40, whose whole memory is 46,068 MiB (44.99 GiB), so a GiB reading would exceed the card; 45e9 bytes is 93.2% of it,
below the 95% read elsewhere as "the card full", so every figure is scored as measured. The Freeze rows (the last
four of 28 layers trained) and the P-Tuning v2 rows (a 16-token prefix encoder) have no accelwiz method: kept, not
expressible.
"""

from __future__ import annotations

_COMMIT = "79bdc89f40de35e90e0b4fa479031176cb3cd8d2"
_URL = f"https://github.com/liucongg/ChatGLM-Finetuning/blob/{_COMMIT}/README.md"
_SOURCE = "liucongg-chatglm-finetuning-2023"
_GLM1 = "benchmarks/published/models/chatglm-6b/config.json"

_UNIT = ("'G' read as 10^9 bytes (45G on a 46,068 MiB A40 rules out GiB); read as GiB the figure would be 7.4% "
         "larger; how it was read (nvidia-smi assumed) and at which step the README does not say")
_CODE = {
    "glm": "ChatGLM-6B's remote code (the repository's glm1/): the argv names a GPT-NeoX config.json of its shapes and "
           "module names; its 2D rotary positions, alpha-scaled residual and 4D boolean attention mask are not "
           "modelled, and its jit-scripted tanh GELU is counted as gelu_new's eager intermediates",
    "glm2": "ChatGLM2-6B's remote code (the repository's glm2/): the chatglm2-6b preset is a Qwen2 stand-in of its "
            "shapes; its manual attention's copies of the 2 KV groups expanded to 32 heads are not the stand-in's",
}
_ATTENTION = ("the manual attention of the remote code keeps fp32 scores and 16-bit probabilities per layer (query-key "
              "layer scaling in ChatGLM-6B); the argv's --attention eager is transformers' eager path for the stand-in")
_SETTINGS = ("liucongg/ChatGLM-Finetuning 79bdc89, the README's '{table}' table: {model} {how} by train.py's own "
             "DeepSpeed 0.9.0 loop on {gpus} x A40 (48 GB), fp32-loaded model halved by DeepSpeed's fp16 engine (fp32 master partitions, no autocast), "
             "DeepSpeed AdamW ({adam}), batch 1 x accumulation 4, samples cut at max_len {length} and every batch "
             "padded to at least 1,560 tokens by the collator (spo_0.json), gradient checkpointing {gc}; torch "
             "1.13.1, transformers 4.27.1, peft 0.3.0")
_STACK = "--stack transformers==4.27.1 --stack torch==1.13.1"
_MODEL = {"glm": f"--model {_GLM1}", "glm2": "--model chatglm2-6b"}
_NAME = {"glm": "ChatGLM-6B", "glm2": "ChatGLM2-6B"}


def _line(model: str, stage: str, offload: str, gc: str, length: int, gpus: int, printed: str) -> str:
    """The table's row as printed (the README names ChatGLM 'ChaGLM')."""
    name = "ChaGLM" if model == "glm" else "ChaGLM2"
    return f"| {name} | {stage} | {offload} | {gc} | 1 | {length}  | {gpus} | {printed} |"


def _row(key: str, model: str, stage: str, offload: bool, gc: bool, gpus: int, printed: str, how: str, *,
         table: str, flags: str | None, length: int = 1560, not_expressible: str | None = None) -> dict:
    quote = _line(model, stage, "Yes" if offload else "No", "Yes" if gc else "No", length, gpus, printed)
    adam = "DeepSpeedCPUAdam" if offload else "FusedAdam"
    row = {"key": f"liucongg-{key}", "source": _SOURCE, "url": _URL, "quote": quote, "printed": printed,
           "measured_bytes": int(round(float(printed.rstrip("G")) * 1e9)), "metric": "nvidia-smi",
           "assumptions": _SETTINGS.format(table=table, model=_NAME[model], how=how, gpus=gpus, adam=adam,
                                           length=length, gc="on" if gc else "off"),
           "unexpressed": [_UNIT, _CODE[model], _ATTENTION]}
    if flags is None:
        return {**row, "argv": None, "not_expressible": not_expressible}
    offload_flags = " --offload-optimizer cpu --offload-param cpu" if offload else ""
    checkpointing = "--gradient-checkpointing" if gc else "--no-gradient-checkpointing"
    row["argv"] = (f"estimate {_MODEL[model]} --system {gpus}xA40 --strategy {stage}{offload_flags} --precision mixed "
                   f"{flags}--micro-batch 1 --gradient-accumulation 4 --seq-len {length} --fixed-lengths "
                   f"{checkpointing} --attention eager {_STACK} --format json")
    return row


_LORA_HOW = {"glm": "LoRA r=16 alpha 64 dropout 0.1 on query_key_value (PEFT 0.3.0), ZeRO-2 (no offload)",
             "glm2": "LoRA r=16 alpha 64 dropout 0.1 on query_key_value, dense_h_to_4h, dense_4h_to_h and dense (every "
                     "block linear; PEFT 0.3.0), ZeRO-2 (no offload)"}
_LORA_FLAGS = {"glm": "--lora --lora-rank 16 --lora-dropout 0.1 --lora-target query_key_value ",
               "glm2": "--lora --lora-rank 16 --lora-dropout 0.1 "}
# The "Lora方法" table: (model, gradient checkpointing, GPUs, printed)
_LORA = [("glm", True, 1, "20G"), ("glm", False, 1, "45G"), ("glm", True, 4, "20G"), ("glm", False, 4, "45G"),
         ("glm2", True, 1, "20G"), ("glm2", False, 1, "43G"), ("glm2", True, 4, "19G"), ("glm2", False, 4, "42G")]
# The "全参方法" table: (model, offload, printed), all on 4 GPUs with checkpointing
_FULL = [("glm", True, "33G"), ("glm2", False, "44G"), ("glm2", True, "26G")]
# The "Freeze方法" table: (model, gradient checkpointing, GPUs, printed)
_FREEZE = [("glm", True, 1, "36G"), ("glm", False, 1, "38G"), ("glm", True, 4, "24G"), ("glm", False, 4, "29G"),
           ("glm2", True, 1, "35G"), ("glm2", False, 1, "36G"), ("glm2", True, 4, "22G"), ("glm2", False, 4, "27G")]
# The "PT方法" table: (model, gradient checkpointing, max length, GPUs, printed)
_PT = [("glm", True, 768, 1, "43G"), ("glm", False, 300, 1, "44G"), ("glm", True, 1560, 4, "37G"),
       ("glm", False, 1360, 4, "44G"), ("glm2", True, 1560, 1, "20G"), ("glm2", False, 1560, 1, "40G"),
       ("glm2", True, 1560, 4, "19G"), ("glm2", False, 1560, 4, "39G")]


def _gc(on: bool) -> str:
    return "gc" if on else "nogc"


ROWS = [
    *[_row(f"{model}-lora-r16-zero2-{gpus}xa40-{_gc(gc)}", model, "zero2", False, gc, gpus, printed,
           _LORA_HOW[model], table="Lora方法", flags=_LORA_FLAGS[model]) for model, gc, gpus, printed in _LORA],
    *[_row(f"{model}-full-zero3-4xa40-{'offload' if offload else 'no-offload'}", model, "zero3", offload, True, 4,
           printed, "fully fine-tuned under ZeRO-3 " + ("(ds_zero3_offload.json: parameters and optimizer on the CPU)"
                                                        if offload else "(ds_zero3_no_offload.json: no offload)"),
           table="全参方法", flags="--no-zero3-init ") for model, offload, printed in _FULL],
    *[_row(f"{model}-freeze-4-layers-zero2-{gpus}xa40-{_gc(gc)}", model, "zero2", False, gc, gpus, printed,
           "Freeze-tuned (layers 24-27 trained, the rest frozen), ZeRO-2", table="Freeze方法", flags=None,
           not_expressible="Freeze tuning (only layers.24-27 train, every other parameter frozen): no such --method")
      for model, gc, gpus, printed in _FREEZE],
    *[_row(f"{model}-ptuning-v2-zero2-{gpus}xa40-{_gc(gc)}-{length}", model, "zero2", False, gc, gpus, printed,
           "P-Tuning v2 (pre_seq_len 16, prefix_projection), ZeRO-2", table="PT方法", flags=None,
           length=length,
           not_expressible="P-Tuning v2 (a 16-token prefix encoder feeding every layer): no such --method")
      for model, gc, length, gpus, printed in _PT],
]
