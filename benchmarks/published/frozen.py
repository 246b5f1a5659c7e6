"""The frozen set: measured peaks from sources nobody here tuned on (added this round). Score only.

Each row: the URL, the quoted cell (`printed` appears in it), the hardware, the settings as published, the argv a
user types for them, and beside it what the source did not say (`assumptions`) or what the command line cannot say
(`unexpressed`). `ran: False` marks a setting the source measured to run out of memory (a verdict check only).
"""

# pinned: the 2025 run these figures come from (main's file now holds a 2026 rerun on another stack)
_PEFT = ("https://github.com/huggingface/peft/blob/bda9665bc9ad5e89279a55bc202724271bd5643b/method_comparison/"
         "MetaMathQA/results/{}.json")
_PEFT_SETTINGS = (
    "PEFT method_comparison/MetaMathQA/run.py at that commit: meta-llama/Llama-3.2-3B loaded in bfloat16 (use_amp "
    "false: pure bf16, torch AdamW states in bf16 for trained bf16 parameters; LoRA adapters in fp32, "
    "autocast_adapter_dtype true, so each adapted linear keeps an fp32 copy of its input: the argv's bf16 LoRA "
    "counts it), batch 4, default (sdpa) attention, no gradient checkpointing, one NVIDIA L40S, torch 2.7.1+cu126, "
    "transformers 4.52.4; 'cuda_memory_reserved_99th' is the 99th percentile over 5,000 steps of "
    "torch.cuda.memory_reserved() read after each training step (less what was reserved before the model), "
    "with torch.cuda.empty_cache() after every step (the every-10-steps schedule came in Nov 2025, PR #2894): the "
    "99th-percentile step's own peak reserved"
)
_PEFT_LENGTHS = (
    "sequence length: batches are padded to their longest sample (utils.py BucketIterator: 20 batches per bucket, "
    "sorted by length) of MetaMathQA query + response filtered to <= 1300 characters (data.py CHAR_LIMIT) and "
    "truncated at max_seq_length 768 tokens; the source counts 4,198,051 tokens in its 20,000 samples (210 per "
    "sample, EOS included: 'train total tokens'). The argv says the 768-token cap; the 99th-percentile step's "
    "padded length is below it and not recorded (the dataset and tokenizer were not at hand to count it)"
)
_LITGPT = ("https://github.com/Lightning-AI/litgpt/blob/03ffc5515b251fb7e3a461efd0e3c163e45b6b3b/"
           "config_hub/finetune/README.md")
_LITGPT_SETTINGS = (
    "LitGPT config_hub/finetune/{config}: precision bf16-true (weights, LoRA and AdamW states in bf16), {how}, "
    "max_seq_length 512 on Alpaca2k, torch AdamW, no activation checkpointing, one A10G (24 GB); 'Peak memory' is "
    "LitGPT's printed torch.cuda.max_memory_allocated() in GB (10^9); assumed: the longest batch reaches 512 "
    "tokens; LitGPT's own GPT and Fabric loop said by --stack litgpt==0.4.5 (pyproject.toml at e5493986, the "
    "commit of the bitsandbytes pin below)"
)
_LITGPT_LORA = "LoRA r=32 alpha 16 dropout 0.05 on the query and value projections only, micro-batch {mb}"
_LITGPT_QLORA = _LITGPT_LORA + ", base quantized with bnb.nf4 (no double quantization)"


def _peft(key: str, result: str, argv: str, reserved: int, printed_field: str) -> dict:
    return {"key": key, "source": "peft-metamathqa", "url": _PEFT.format(result),
            "quote": f'"cuda_memory_reserved_99th": {reserved},', "printed": str(reserved),
            "measured_bytes": reserved, "metric": "reserved",
            "argv": "estimate --model llama-3.2-3b --system 1xL40S --strategy single --micro-batch 4 --seq-len 768 "
                    f"--precision bf16 {argv}--format json",
            "assumptions": _PEFT_SETTINGS + printed_field, "unexpressed": [_PEFT_LENGTHS]}


def _litgpt(key: str, config: str, model: str, regime: str, mb: int, gb: float | None, quote: str) -> dict:
    how = (_LITGPT_QLORA if regime == "qlora" else _LITGPT_LORA if regime == "lora" else "full fine-tuning, "
           "micro-batch {mb}").format(mb=mb)
    flags = f"--{regime} --lora-rank 32 --lora-target q_proj --lora-target v_proj --lora-dropout 0.05 " \
        if regime != "full" else ""
    row = {"key": key, "source": "litgpt-config-hub", "url": _LITGPT, "quote": quote,
           "printed": f"{gb:.2f} GB" if gb else "OOM", "measured_bytes": int(gb * 1e9) if gb else None,
           "metric": "allocated",
           "argv": f"estimate --model {model} --system 1xA10G --strategy single --micro-batch {mb} --seq-len 512 "
                   f"--precision bf16 {flags}--stack litgpt==0.4.5 --format json",
           "assumptions": _LITGPT_SETTINGS.format(config=config, how=how)}
    if gb is None:
        row["ran"] = False
    if regime == "qlora":
        row["unexpressed"] = ["bitsandbytes NF4 without double quantization (the CLI's QLoRA double-quantizes: "
                              "about 0.4 bits/param less)"]
    return row


_TITAN = ("https://github.com/pytorch/torchtitan/blob/31a17bfdb70bab6f62a13d21816a5339b911d6e3/benchmarks/"
          "llama3_h100_202412_torchtitan.md")

ROWS = [
    _peft("peft-mmqa-llama3.2-3b-full", "full-finetuning--llama-3.2-3B-lr_0.00001", "", 33573390254,
          "; full fine-tuning (no peft_config), lr 1e-5"),
    _peft("peft-mmqa-llama3.2-3b-lora-r32-qv", "lora--llama-3.2-3B-rank32",
          "--lora --lora-rank 32 --lora-target q_proj --lora-target v_proj ", 17710763212,
          "; LoRA r=32 alpha 64 dropout 0.0 on q_proj and v_proj (PEFT's default targets for Llama)"),
    _litgpt("litgpt-llama-2-7b-lora", "llama-2-7b/lora.yaml", "llama-2-7b", "lora", 2, 19.77,
            "| llama-2-7b/lora.yaml              | llama-2-7b             | 4      | 512            | 2                "
            "| 1xA10G  | 32.82 min        | $1.0 | 19.77 GB    |"),
    _litgpt("litgpt-llama-2-7b-qlora", "llama-2-7b/qlora.yaml", "llama-2-7b", "qlora", 2, 13.68,
            "| llama-2-7b/qlora.yaml             | llama-2-7b             | 4      | 512            | 2                "
            "| 1xA10G  | 45.67 min        | $1.4 | 13.68 GB    |"),
    _litgpt("litgpt-llama-3-8b-lora", "llama-3-8b/lora.yaml", "llama-3.1-8b", "lora", 1, 19.73,
            "| llama-3-8b/lora.yaml              | llama-3-8b             | 2      | 512            | 1                "
            "| 1xA10G  | 14.79 min        | $0.4 | 19.73 GB    |"),
    _litgpt("litgpt-llama-3-8b-qlora", "llama-3-8b/qlora.yaml", "llama-3.1-8b", "qlora", 2, 17.41,
            "| llama-3-8b/qlora.yaml             | llama-3-8b             | 2      | 512            | 2                "
            "| 1xA10G  | 22.24 min        | $0.7 | 17.41 GB    |"),
    _litgpt("litgpt-mistral-7b-lora", "mistral-7b/lora.yaml", "mistral-7b", "lora", 2, 20.66,
            "| mistral-7b/lora.yaml              | mistral-7b             | 4      | 512            | 2                "
            "| 1xA10G  | 31.01 min        | $0.9 | 20.66 GB    |"),
    _litgpt("litgpt-mistral-7b-qlora", "mistral-7b/qlora.yaml", "mistral-7b", "qlora", 2, 14.29,
            "| mistral-7b/qlora.yaml             | mistral-7b             | 4      | 512            | 2                "
            "| 1xA10G  | 44.75 min        | $1.3 | 14.29 GB    |"),
    _litgpt("litgpt-gemma-2-9b-qlora", "gemma2-9b/qlora.yaml", "gemma-2-9b", "qlora", 1, 20.92,
            "| gemma2-9b/qlora.yaml              | gemma-2-9b             | 2      | 512            | 1                "
            "| 1xA10G  | 50.01 min        | $4.0 | 20.92 GB    |"),
    _litgpt("litgpt-gemma-2-9b-lora-oom", "gemma2-9b/lora.yaml", "gemma-2-9b", "lora", 1, None,
            "| gemma2-9b/lora.yaml               | gemma-2-9b             | 2      | 512            | 1                "
            "| 1xA10G  | OOM              | OOM  | OOM         |"),
    _litgpt("litgpt-llama-3.1-8b-full-oom", "llama-3.1-8b/full.yaml", "llama-3.1-8b", "full", 4, None,
            "| llama-3.1-8b/full.yaml            | llama-3.1-8b           | 1      | 512            | 4                "
            "| 1xA10G  | OOM              | OOM  | OOM         |"),
    {"key": "torchtitan-llama3.1-8b-fsdp8-sac", "source": "torchtitan-h100-2024", "url": _TITAN,
     "quote": "| FSDP | 5,762 | 82.4 |", "printed": "82.4", "measured_bytes": int(82.4 * 2**30), "metric": "reserved",
     "argv": None,
     "not_expressible": "selective activation checkpointing (every other layer's activations kept), torchtitan's "
                        "FSDP2 on 8 H100 96GB (no such preset; --gpu-memory would say it)",
     "assumptions": "Table 1: Llama 3.1 8B, 8 GPUs, local batch 2, seq 8192 (llama3_8b.toml), FSDP2 bf16 params, "
                    "fp32 reduce, no torch.compile; 'Memory(GiB)' read as the max reserved"},
    {"key": "torchtitan-llama3.1-8b-fsdp8-cp1-32k", "source": "torchtitan-h100-2024", "url": _TITAN,
     "quote": "| FSDP 8, CP 1 | 32768 | 3,890 | 83.9 |", "printed": "83.9", "measured_bytes": int(83.9 * 2**30),
     "metric": "reserved", "argv": None,
     "not_expressible": "Float8 linears (torchao) and torch.compile",
     "assumptions": "Table 2: Llama 3.1 8B, 8 GPUs, local batch 1, seq 32768, full activation checkpointing"},
]

# LitGPT's QLoRA (its bitsandbytes plugin, precision bf16-true) keeps the non-quantized parameters in bf16; the CLI
# estimates the built-in trainer, which upcasts them to fp32 (PEFT's prepare_model_for_kbit_training). Noted, not
# tuned: these rows moved by +0.5..+2.0 GiB when that upcast was modelled for the built-in trainer (issue 28).
# The mechanism of their under-estimate: LitGPT pinned bitsandbytes 0.42.0 when the table was measured
# (pyproject.toml at e5493986, 2024-07-22), whose MatMul4Bit kept every 4-bit linear's input for backward
# (`ctx.tensors = (A, B)`); 0.43.2 keeps only the weight (bitsandbytes PR #1270, 9e75374 "fix QLoRA mem bug:
# delete useless buffered activation"), and today's frozen base keeps no input (activations_lora.py).
_OLD_BNB = "--stack bitsandbytes==0.42.0"  # LitGPT's pin when measured: the argv says it (issue 28)
for _row in ROWS:
    if _row["source"] == "litgpt-config-hub" and "--qlora" in (_row.get("argv") or ""):
        # the non-quantized parameters kept in bf16 (no prepare_model_for_kbit_training): said by the argv since
        # this source moved to design (8625a58) and the flag came (b66131e)
        _row["argv"] = _row["argv"].replace(" --format json", f" --no-kbit-prepare {_OLD_BNB} --format json")
