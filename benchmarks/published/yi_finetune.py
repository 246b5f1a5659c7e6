"""Frozen, verdict rows: 01-ai/Yi's finetune README (finetune/README.md at 03c9c1b, Nov 2023), "Hardware Setup".

The model vendor's own fine-tuning code for Yi-6B and Yi-34B (a DeepSpeed-Chat-style loop on the DeepSpeed engine,
finetune/sft/main.py), and the hardware the page says it trains on: "For Yi-6B model, a node with 4 GPUs, each has
GPU mem larger than 60GB is recommended" (and the 6B run "takes about 20 minutes"), and for Yi-34B "a node with
8GPUS (limit to 4 in running by CUDA_VISIBLE_DEVICES=0,1,2,3), each has GPU mem larger than 80GB". No peak is
printed: each row is a run stated to train there (the estimate must not say "does not fit"). Not ms-swift's Yi
scripts (ms-swift-example-scripts, another repository).

Read at the same commit: scripts/run_sft_Yi_6b.sh and run_sft_Yi_34b.sh (`deepspeed main.py
--per_device_train_batch_size 1 --max_seq_len 4096 --gradient_accumulation_steps 1 --gradient_checkpointing
--zero_stage 2 --deepspeed --offload`, the 34B one under CUDA_VISIBLE_DEVICES=0,1,2,3); utils/ds_utils.py (ZeRO
stage 2 with offload_optimizer to the CPU, `"fp16": {"enabled": True}`, DeepSpeed's default buckets);
sft/main.py (DeepSpeedCPUAdam with --offload, betas 0.9/0.95; the model's own loss; evaluation before and after
each epoch at batch 1); utils/model/model_utils.py (`from_pretrained(..., trust_remote_code=True)` with no
torch_dtype: fp32, cast to fp16 by the engine; embeddings resized to a multiple of 8 of the tokenizer: 64,000);
utils/data/data_utils.py (every SFT sample tokenized with `padding="max_length"` to 4,096: fixed lengths).
Stack: the repository's Dockerfile (torch 2.0.1, flash-attn 2.3.3) and requirements.txt (transformers 4.34.0,
deepspeed 0.11.1). Yi's remote code of the day runs flash-attn when it is installed: --attention flash.
"""

from __future__ import annotations

_COMMIT = "03c9c1b35f76c54a6467ac7783ec997c01e857c0"
_URL = f"https://github.com/01-ai/Yi/blob/{_COMMIT}/finetune/README.md"
_QUOTE_6B = "For Yi-6B model, a node with 4 GPUs, each has GPU mem larger than 60GB is recommended."
_QUOTE_34B = ("A typical hardware setup for finetuning 34B model is a node with 8GPUS (limit to 4 in running by "
              "CUDA_VISIBLE_DEVICES=0,1,2,3), each has GPU mem larger than 80GB, with total CPU mem larger than 900GB.")
_SETTINGS = (
    "Yi finetune at 03c9c1b: {model} fully fine-tuned with its DeepSpeed-Chat-style loop under ZeRO-2 with the "
    "optimizer offloaded to the CPU (DeepSpeedCPUAdam), fp16 (DeepSpeed's fp16 optimizer, fp32 masters on the host), "
    "loaded in fp32 and cast by the engine, gradient checkpointing, batch 1 x 4,096 tokens (every sample padded to "
    "max_length), accumulation 1, flash-attn 2.3.3, transformers 4.34.0, deepspeed 0.11.1, torch 2.0.1, on 4 GPUs; "
    "{gpu}: stated to train there (no peak printed)"
)
_UNEXPRESSED = [
    "Yi's remote modeling code of Nov 2023 (the stand-in is its Llama-shaped config.json); flash-attn assumed on, as "
    "the repository's Docker image installs it",
    "fp16 (DeepSpeed's fp16 optimizer, dynamic loss scale) where the argv's --precision mixed does not say which "
    "16-bit type: the same bytes",
    "evaluation before training and after each epoch at batch 1 x 4,096, no backward: not a training step",
]


def _row(key: str, quote: str, printed: str, model: str, gpu: str, extra: tuple[str, ...] = ()) -> dict:
    return {"key": key, "source": "yi-finetune-readme", "url": _URL, "quote": quote, "printed": printed,
            "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": f"estimate --model benchmarks/published/models/{model}/config.json --system 8xA100-80GB "
                    "--gpus 4 --strategy zero2 --offload-optimizer cpu --precision mixed --optimizer adamw "
                    "--micro-batch 1 --seq-len 4096 --fixed-lengths --gradient-checkpointing --attention flash "
                    "--stack transformers==4.34.0 --format json",
            "assumptions": _SETTINGS.format(model=model.replace("yi", "Yi").replace("b", "B"), gpu=gpu),
            "unexpressed": [*_UNEXPRESSED, *extra]}


ROWS = [
    _row("yi-6b-zero2-optoffload-4x80gb-ran", _QUOTE_6B, "larger than 60GB", "yi-6b",
         "the page asks for more than 60GB each without naming the card: the argv takes an 80GB A100, the smallest "
         "common card above 60GB",
         ("the card: 'GPU mem larger than 60GB' (an A100/H100/A800/H800 80GB in Nov 2023), not named",)),
    _row("yi-34b-zero2-optoffload-4x80gb-ran", _QUOTE_34B, "larger than 80GB", "yi-34b",
         "the page says 'larger than 80GB' without naming the card: the argv takes an 80GB A100 (read as 'at "
         "least 80GB', the largest common card of Nov 2023)",
         ("the card: 'GPU mem larger than 80GB' read as 80GB; a strict reading (a 94/96GB H100 NVL or H20) would "
          "give about 14 GiB more",)),
]
