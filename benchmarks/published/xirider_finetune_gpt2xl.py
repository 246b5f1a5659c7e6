"""Frozen: Xirider's guide "Finetune GPT2-XL and GPT-NEO on a single GPU with DeepSpeed" (2021), verdict rows.

Source `xirider-finetune-gpt2xl-2021`: one engineer's guide in his own repository (Xirider/finetune-gpt2xl, README.md
at a71ee45, 2021-08-13; the batch-12 sentence first written at 8ec2916, March 2021), with the code it runs beside it:
transformers' examples/pytorch/language-modeling/run_clm.py with two lines added (`config.gradient_checkpointing =
True`, `config.use_cache = False`), launched by `deepspeed --num_gpus=1` with ds_config.json (GPT2-XL) or
ds_config_gptneo.json (GPT-Neo): DeepSpeed's fp16 engine (`"fp16": {"enabled": "auto"}` and the command's `--fp16`:
the model cast to fp16, no autocast), ZeRO stage 2 with `"cpu_offload": true` (DeepSpeed 0.4.0's key for the
optimizer's offload: fp32 master weights and AdamW states on the CPU, DeepSpeedCPUAdam), reduce and allgather
buckets of 2e8, contiguous gradients, overlap_comm. requirements.txt at a71ee45: transformers 4.7.0, deepspeed
0.4.0.

The data: the Shakespeare example converted to one CSV row, grouped by run_clm.py's `group_texts` into blocks of
`block_size`, which defaults to the tokenizer's model_max_length capped at 1,024 (GPT-2's 1,024, GPT-Neo's 2,048 ->
1,024): every sequence 1,024 tokens. transformers 4.7.0: eager attention (no SDPA), GPT-2's loss is CrossEntropyLoss
on the fp16 shifted logits (no upcast: --loss-dtype fp16, and the shift copy of transformers < 4.49), GPT-Neo's
upcasts its logits to fp32 for the loss (the CLI's default).

The GPU: "a single 16 GB VRAM V100" (Google Compute Engine, one nvidia-tesla-v100; the GPT-Neo section: "I tested it
with a server with one V100 GPU (16 GB VRAM)"). Verdicts: GPT2-XL at batch 8 x accumulation 2 (the command; "one
gradient step takes about 9 seconds") and at batch 12 ran; "You can go up to batch size of 12 before running out of
memory" says a larger batch did not: the row takes batch 16 (out of memory under either reading, 13 or the next
power of two, since memory only grows with the batch). GPT-Neo 2.7B at batch 4 x accumulation 2 ran ("This works
now").
"""

from __future__ import annotations

_COMMIT = "a71ee45902d799b9122c914777cc4f13518e5d48"
_URL = f"https://github.com/Xirider/finetune-gpt2xl/blob/{_COMMIT}/README.md"
_CODE = f"https://github.com/Xirider/finetune-gpt2xl/blob/{_COMMIT}/"
_Q_XL = ("Training on the Shakespeare example should take about 17 minutes. With gradient accumulation 2 and batch "
         "size 8, one gradient step takes about 9 seconds. This means the model training speed should be almost 2 "
         "examples / second. You can go up to batch size of 12 before running out of memory, but that doesn't "
         "provide any speedups.")
_Q_NEO = ("This works now. I tested it with a server with one V100 GPU (16 GB VRAM) and 78 GB normal RAM, but it "
          "might not actually need that much RAM.")
_SETTINGS = (
    "Xirider's finetune-gpt2xl guide (a71ee45, 2021): run_clm.py with gradient checkpointing under `deepspeed "
    "--num_gpus=1` and {config}: DeepSpeed 0.4.0's fp16 engine, ZeRO-2 with the optimizer offloaded to the CPU "
    "(cpu_offload), buckets 2e8; {model}, batch {batch} x accumulation 2 of 1,024-token blocks, transformers 4.7.0 "
    "(eager attention); {how}; one V100 16GB"
)
_UNEXPRESSED = ["DeepSpeed 0.4.0 (2021): its ZeRO-2 offload buffers and CPU Adam as that release sized them",
                "torch's version (the GCE pytorch-latest-gpu image of 2021) and so its CUDA context"]
_ZERO2_OFFLOAD = "--strategy zero2 --offload-optimizer cpu --precision mixed "


def _row(key: str, quote: str, *, model: str, batch: int, ran: bool, how: str, config: str, flags: str) -> dict:
    return {"key": key, "source": "xirider-finetune-gpt2xl-2021", "url": _URL, "code_url": _CODE + config,
            "quote": quote, "printed": "16 GB" if "16 GB" in quote else "batch size of 12", "ran": ran,
            "metric": "nvidia-smi",
            "argv": f"estimate --model benchmarks/published/models/{model}/config.json --system 1xV100-16GB "
                    f"{_ZERO2_OFFLOAD}{flags}--method full --optimizer adamw --micro-batch {batch} "
                    "--gradient-accumulation 2 --seq-len 1024 --fixed-lengths --gradient-checkpointing "
                    "--attention eager --stack transformers==4.7.0 --format json",
            "assumptions": _SETTINGS.format(config=config, model=model, batch=batch, how=how),
            "unexpressed": list(_UNEXPRESSED)}


_GPT2_LOSS = "--loss-dtype fp16 "  # transformers 4.7.0's GPT-2 loss on the fp16 logits (DeepSpeed: no autocast)
ROWS = [
    _row("xirider-gpt2-xl-zero2-offload-b8-v100", _Q_XL, model="gpt2-xl", batch=8, ran=True, config="ds_config.json",
         how="the guide's command: it trained ('one gradient step takes about 9 seconds')", flags=_GPT2_LOSS),
    _row("xirider-gpt2-xl-zero2-offload-b12-v100", _Q_XL, model="gpt2-xl", batch=12, ran=True,
         config="ds_config.json", how="'You can go up to batch size of 12': it trained", flags=_GPT2_LOSS),
    _row("xirider-gpt2-xl-zero2-offload-b16-v100-oom", _Q_XL, model="gpt2-xl", batch=16, ran=False,
         config="ds_config.json", flags=_GPT2_LOSS,
         how="'before running out of memory': a batch above 12 ran out of memory (16 taken: out of memory whichever "
             "batch above 12 was tried)"),
    _row("xirider-gpt-neo-2.7b-zero2-offload-b4-v100", _Q_NEO, model="gpt-neo-2.7b", batch=4, ran=True,
         config="ds_config_gptneo.json", flags="",
         how="EleutherAI/gpt-neo-2.7B (the stand-in is its config.json: alternating global and local attention, "
             "which the CLI counts approximately), its loss upcast to fp32; 'This works now' on one V100"),
]
