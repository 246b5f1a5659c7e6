"""Frozen, verdict rows: FastChat's README, "Fine-tuning" (lm-sys/FastChat, 2023): Vicuna full fine-tuning under the
Trainer's FSDP on 4 x A100 40GB (local GPUs) and on 8 x A100 80GB (the SkyPilot recipe). No peak is printed: each row
is a run the page says trains on that hardware (the estimate must not say "does not fit").

Read at each row's commit: fastchat/train/train.py loads the model without a torch_dtype (fp32 parameters; the
Trainer's --bf16 gives FSDP1 a bf16 MixedPrecision over the fp32 shards, autocast around the forward), `optim`
"adamw_torch", and tokenizes every conversation with `padding="max_length"` to `model_max_length` (2,048: every
sequence is exactly 2,048 tokens, --fixed-lengths); train_mem.py monkey-patches LlamaAttention with flash-attn
(`--attention flash`); `--gradient_checkpointing True`; `--fsdp "full_shard auto_wrap"` with
`--fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer'` (FSDP1, full shard, one unit per decoder layer).

Local GPUs (README at c478bbf, 2023-09-29: "You can use the following command to train Vicuna-7B with 4 x A100
(40GB)"): meta-llama/Llama-2-7b-hf, per-device batch 2 (accumulation 16), transformers >= 4.31 (its FSDP through
accelerate), FastChat's llama2 flash-attn 2 patch.

SkyPilot (README at 00d9e66, 2023-04-12: "Vicuna can be trained on 8 A100 GPUs with 80GB memory"): scripts/
train-vicuna.yaml on `A100-80GB:8`, MODEL_SIZE 13 (LLaMA-13B) by default or `--env MODEL_SIZE=7` ("Train a 7B
model"), SEQ_LEN 2048, GC_SCALE 4, so `PER_DEVICE_BATCH_SIZE=$((2048 * $GC_SCALE / $SEQ_LEN))` = 4, USE_FLASH_ATTN
1 (train_mem.py, flash-attn 1's unpadded kernel), torch 1.13.1, transformers at 41a2f35 (the LLaMA commit).
"""

from __future__ import annotations

_LOCAL = "c478bbf367a8e8ed2b7f402dcdae4831041aa8d9"
_SKY = "00d9e6675bdff60be6603ffff9313b1d797d2e3e"
_URL = "https://github.com/lm-sys/FastChat/blob/{}/README.md"
_SETTINGS = (
    "FastChat at {commit}: {model} full fine-tuning, fp32 parameters under the Trainer's FSDP1 full_shard "
    "(auto_wrap on LlamaDecoderLayer) with bf16 MixedPrecision on {hw}, per-device batch {mb}, every sequence "
    "padded to 2,048 tokens, gradient checkpointing, flash-attn through FastChat's monkey patch, torch AdamW; "
    "stated to train on that hardware (no peak printed)"
)
_LLAMA1 = ("LLaMA-1 {size} has Llama 2 {size}'s shapes and parameter count (2,048 positions instead of 4,096); the "
           "argv names the Llama 2 preset")
_OLD_STACK = ("torch 1.13.1 and transformers at 41a2f35 (March 2023, 4.28.0.dev0: the Trainer's own FSDP wrapping, "
              "flash-attn 1); the CLI estimates the installed torch (transformers 4.28 is in the argv)")


def _sky(size: str, quote: str, printed: str) -> dict:
    return {"key": f"fastchat-skypilot-llama-{size.lower()}-fsdp-full-8xa100-80gb-ran", "source": "fastchat-training",
            "url": _URL.format(_SKY), "quote": quote, "printed": printed, "measured_bytes": None,
            "metric": "reserved", "ran": True,
            "argv": f"estimate --model llama-2-{size.lower()} --system 8xA100-80GB --strategy fsdp_full "
                    "--fsdp-version 1 --precision mixed --micro-batch 4 --gradient-accumulation 2 --seq-len 2048 "
                    "--fixed-lengths "
                    "--gradient-checkpointing --attention flash --optimizer adamw --stack transformers==4.28 "
                    "--format json",
            "assumptions": _SETTINGS.format(commit=_SKY[:7], model=f"LLaMA-{size}", hw="8 x A100 80GB", mb=4)
            + "; scripts/train-vicuna.yaml (SEQ_LEN 2048, GC_SCALE 4: per-device batch 4; gradient_accumulation_steps "
              "128 * 512 / SEQ_LEN / batch / nodes / 8 GPUs = 2, read in the file's stored version 020f6ae)",
            "unexpressed": [_LLAMA1.format(size=size), _OLD_STACK]}


ROWS = [
    {"key": "fastchat-vicuna-llama-2-7b-fsdp-full-4xa100-40gb-ran", "source": "fastchat-training",
     "url": _URL.format(_LOCAL),
     "quote": "- You can use the following command to train Vicuna-7B with 4 x A100 (40GB). Update "
              "`--model_name_or_path` with the actual path to LLaMA weights and `--data_path` with the actual path "
              "to data.",
     "printed": "4 x A100 (40GB)", "measured_bytes": None, "metric": "reserved", "ran": True,
     "argv": "estimate --model llama-2-7b --system 4xA100-40GB --strategy fsdp_full --fsdp-version 1 "
             "--precision mixed --micro-batch 2 --gradient-accumulation 16 --seq-len 2048 --fixed-lengths "
             "--gradient-checkpointing "
             "--attention flash --optimizer adamw --format json",
     "assumptions": _SETTINGS.format(commit=_LOCAL[:7], model="meta-llama/Llama-2-7b-hf", hw="4 x A100 40GB", mb=2),
     "unexpressed": [
         "transformers and accelerate of September 2023 (transformers >= 4.31; the CLI estimates the installed "
         "ones); FastChat's flash-attn 2 monkey patch instead of transformers' own flash_attention_2",
     ]},
    _sky("13B", "Vicuna can be trained on 8 A100 GPUs with 80GB memory. The following command will automatically "
                "launch a node satisfying the requirement, setup and run the training job on it.",
         "8 A100 GPUs with 80GB memory"),
    _sky("7B", "# Train a 7B model\nsky launch -c vicuna -s scripts/train-vicuna.yaml --env WANDB_API_KEY --env "
               "MODEL_SIZE=7", "# Train a 7B model"),
]
