"""Frozen: the runs a lit-gpt pull request measured to add QLoRA (source `litgpt-pr275-qlora`).

Lightning-AI/lit-gpt#275 ("Enable fine tuning with QLORA 4-bit floating point and bitsandbytes int8 types", merged
2023-08-21 as 064fd52): in the thread (2023-08-18) its reviewer posted "a new batch of results", a table of
StableLM-3B LoRA runs with finetune/lora.py ("Training Memory" 33.50 GB for the default bfloat16-mixed, 15.86 GB
for --precision bf16-true, micro batch 4, 5,000 iterations on Alpaca), and the PR committed the full table of its
runs to tutorials/finetune_lora.md: six StableLM-3B rows and six Llama-2-7B rows (precision x --quantize). Not the
later tables of the same tutorial (rewritten in #596 after Fabric's quantization replaced this code), nor LitGPT's
config hub or resource tables, nor Raschka's October experiments (lit-gpt bf60124, sources litgpt-config-hub,
litgpt-resource-tables, raschka-lora-insights-2023).

The code, read at 064fd52 (finetune/lora.py, lit_gpt/utils.py, quantize/bnb.py, scripts/prepare_alpaca.py): LoRA
r=8 alpha 16 dropout 0.05 on the query and value of the fused qkv projection (LoRAQKVLinear), one device, no
activation checkpointing, torch SDPA attention (torch >= 2.1.0dev), Alpaca prepared without truncation
(max_seq_length = the block size) with the longest sample forced into the first batch (`get_batch(...,
longest_seq_ix if iter_num == 0 else None)`) and every batch padded to its longest: the first step holds micro-batch
x the longest sample, 1,034 tokens for StableLM Alpha's tokenizer and 1,304 for Llama 2's (the counts LitGPT's
tutorials/resource-tables.md prints at f684138). `model(input_ids, lm_head_chunk_size=128)` returns the logits in
128-token chunks and `chunked_cross_entropy` runs F.cross_entropy per chunk: under bf16-mixed (Fabric's autocast over
fp32 weights, fp32 adapters) autocast upcasts each chunk (the CLI's fp32 loss); under bf16-true (every weight, adapter,
gradient and AdamW state in bf16, no autocast) the loss runs on the bf16 chunks (--loss-dtype bf16). `--quantize
bnb.nf4` / `bnb.nf4-dq` builds the model inside `quantization(mode)`, which swaps torch.nn.Linear for bitsandbytes'
Linear4bit (NF4; `compress_statistics` False / True: double quantization only for -dq), the output layer included,
and switches the optimizer to bitsandbytes' PagedAdamW (32-bit states in CUDA managed memory); without --quantize,
torch.optim.AdamW. Under bf16-mixed the unquantized embedding and norms stay fp32 under autocast (what the CLI's
k-bit preparation counts); under bf16-true they are bf16 (--no-kbit-prepare). bitsandbytes >= 0.41.1 (commented in
requirements.txt; 0.41.1 was August 2023's release): --stack bitsandbytes==0.41.1 (MatMul4Bit keeps each 4-bit
linear's input).

Micro batch: the table at 064fd52 says 4 for both models; the same tutorial's next revision (5a7276e, #596's head)
says "using a microbatch size of 1" for Llama 2 7B, and 20.60 GB for Llama-2-7B LoRA in bf16-true leaves room for
no more than one 1,304-token sequence without checkpointing (13.5 GB of weights), so the Llama rows say
--micro-batch 1 (the StableLM rows: 4, as the thread's own table prints in its "Micro batch size" column).

What the number is: finetune/lora.py's last line, `Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB`
(allocated, 10^9 bytes, over the whole run). The GPU is not named: one A100 40GB assumed (the lit-gpt tutorials of
those weeks ran on one; raschka_lora_insights.py assumes the same card for the same author's runs); the Llama-2-7B
bf16-mixed run printed OutOfMemoryError on it: a verdict row under that assumption.
"""

from __future__ import annotations

_URL = "https://github.com/Lightning-AI/litgpt/pull/275"
_COMMIT = "064fd523128cdc1bfc4d76cfeff67cb36078e56b"
_CODE = f"https://github.com/Lightning-AI/litgpt/blob/{_COMMIT}/finetune/lora.py"
_TABLE = f"https://github.com/Lightning-AI/litgpt/blob/{_COMMIT}/tutorials/finetune_lora.md"
_STABLELM = "benchmarks/published/models/stablelm-base-alpha-3b/config.json"
_Q_THREAD = ("| StableLM 3B (default)    | Default (bfloat16-mixed)                                | 5,000        | "
             "Alpaca    | 4                 | No               | 33.50 GB         | 591.78s        | 0.9207    | "
             "Time for inference: 1.07 sec total, 68.35 tokens/sec  Memory used: 7.61 GB        |\n"
             "| StableLM 3B (default)    | --precision bf16-true                                   | 5,000        | "
             "Alpaca    | 4                 | No               | 15.86 GB")
_TITLE = {"stablelm": "The table below lists a comparison with different settings on a StableLM 3B model finetuned "
                      "with LoRA on Alpaca for 5,000 iterations using a microbatch size of 4:",
          "llama2": "The table below summarizes the results for Llama 2 7B on Alpaca for 5,000 iterations using a "
                    "microbatch size of 4:"}
_SETTINGS = (
    "lit-gpt#275 (merged as {commit}), finetune/lora.py on one GPU: {model}, LoRA r=8 alpha 16 dropout 0.05 on "
    "query and value, micro batch {mb} with the longest Alpaca sample ({seq} tokens) in the first batch, no "
    "activation checkpointing, torch SDPA, the script's chunked cross-entropy, {how}; 'Training Memory' is "
    "torch.cuda.max_memory_allocated() in 10^9 bytes; one A100 40GB assumed (not named)"
)
_LITGPT = ("LitGPT's own GPT module and LoRAQKVLinear (adapters on the q and v thirds of the fused qkv projection, "
           "the argv's LoRA on the whole projection has the same count); its chunked cross-entropy over 128-token "
           "logits chunks")
# The Llama 2 rows say LitGPT's own GPT and Fabric loop (--stack litgpt==0.1.0, lit-gpt's setup.py at 064fd52:
# estimate/litgpt_model.py, which writes the Llama family's block); StableLM's GPT-NeoX block is not written there,
# and the loss tail alone on transformers' GPT-NeoX layer (already +1..+18%) moved its rows to +16..+27% with its
# bf16-mixed row 'does not fit': they keep the argv they had
_STACK = {"stablelm": "", "llama2": "--stack litgpt==0.1.0 "}
_BF16_ADAPTERS = ("adapters in bf16 under bf16-true; the argv's bf16 LoRA counts PEFT's default fp32 adapters, each "
                  "adapted linear keeping an fp32 copy of its input")
_HEAD_4BIT = "the output layer quantized too (quantization() swaps every torch.nn.Linear; the CLI quantizes block linears)"
_NO_DQ = "NF4 without double quantization (fp32 absmax per 64 weights, 0.37 bit/param more than the CLI's NF4-DQ)"
_MODELS = {"stablelm": ("StableLM-Base-Alpha-3B", _STABLELM, 4, 1034, "--lora-target query_key_value "),
           "llama2": ("Llama 2 7B", "llama-2-7b", 1, 1304, "--lora-target q_proj --lora-target v_proj ")}
_KINDS = {  # key: (settings cell, how, flags, extra unexpressed)
    "bf16mixed": ('Default (bfloat16-mixed)', "bf16-mixed (autocast over fp32 weights and adapters), torch AdamW",
                  "--lora --precision mixed --base-dtype fp32 --optimizer adamw ", []),
    "bf16true": ('--precision "bf16-true"', "bf16-true, torch AdamW",
                 "--lora --precision bf16 --loss-dtype bf16 --optimizer adamw ", [_BF16_ADAPTERS]),
    "nf4": ('--quantize "bnb.nf4"', "bf16-mixed over an NF4 base (no double quantization), PagedAdamW",
            "--qlora --precision mixed --optimizer paged-adamw --stack bitsandbytes==0.41.1 ", [_NO_DQ, _HEAD_4BIT]),
    "nf4dq": ('--quantize "bnb.nf4-dq"', "bf16-mixed over an NF4 base with double quantization, PagedAdamW",
              "--qlora --precision mixed --optimizer paged-adamw --stack bitsandbytes==0.41.1 ", [_HEAD_4BIT]),
    "bf16true-nf4": ('--precision "bf16-true"  --quantize "bnb.nf4"',
                     "bf16-true over an NF4 base (no double quantization), PagedAdamW",
                     "--qlora --no-kbit-prepare --precision bf16 --loss-dtype bf16 --optimizer paged-adamw "
                     "--stack bitsandbytes==0.41.1 ", [_NO_DQ, _HEAD_4BIT]),
    "bf16true-nf4dq": ('--precision "bf16-true"  --quantize "bnb.nf4-dq"',
                       "bf16-true over an NF4 base with double quantization, PagedAdamW",
                       "--qlora --no-kbit-prepare --precision bf16 --loss-dtype bf16 --optimizer paged-adamw "
                       "--stack bitsandbytes==0.41.1 ", [_HEAD_4BIT]),
}


def _row(model: str, kind: str, printed: str, line: str) -> dict:
    name, spec, mb, seq, targets = _MODELS[model]
    cell, how, flags, extra = _KINDS[kind]
    assert line.startswith(f"| {cell} ") and printed in line, (line, cell, printed)
    quote = f"{_TITLE[model]}\n{line}" if (model, kind) not in (("stablelm", "bf16mixed"), ("stablelm", "bf16true")) \
        else _Q_THREAD
    row = {"key": f"litgpt275-{model}-lora-{kind}", "source": "litgpt-pr275-qlora", "url": _URL, "code_url": _CODE,
           "table_url": _TABLE, "quote": quote, "printed": printed, "metric": "allocated",
           "argv": f"estimate --model {spec} --system 1xA100-40GB --strategy single --micro-batch {mb} "
                   f"--seq-len {seq} --fixed-lengths --no-gradient-checkpointing --attention sdpa {flags}"
                   f"--lora-rank 8 {targets}--lora-dropout 0.05 {_STACK[model]}--format json",
           "assumptions": _SETTINGS.format(commit=_COMMIT[:7], model=name, mb=mb, seq=seq, how=how),
           "unexpressed": [_LITGPT, *extra] if model == "stablelm" else [e for e in extra if e != _BF16_ADAPTERS]}
    if printed == "OutOfMemoryError":
        return {**row, "measured_bytes": None, "ran": False}
    return {**row, "measured_bytes": int(round(float(printed.split()[0]) * 1e9))}


# The table rows as tutorials/finetune_lora.md has them at 064fd52 (the PR's own commit).
_LINES = {
    "stablelm": [
        ("bf16mixed", "33.50 GB", "| Default (bfloat16-mixed)                                | 33.50 GB         | "
                                  "591.78s        | 0.9207    | 7.61 GB          |"),
        ("bf16true", "15.86 GB", '| --precision "bf16-true"                                 | 15.86 GB         | '
                                 "592.14s        | 0.9180    | 7.61 GB          |"),
        ("nf4", "22.34 GB", '| --quantize "bnb.nf4"                                    | 22.34 GB         | '
                            "944.93s        | 0.9417    | 3.25 GB          |"),
        ("nf4dq", "22.18 GB", '| --quantize "bnb.nf4-dq"                                 | 22.18 GB         | '
                              "962.23s        | 0.9383    | 3.08 GB          |"),
        ("bf16true-nf4", "14.81 GB", '| --precision "bf16-true"  --quantize "bnb.nf4"           | 14.81 GB         '
                                     "| 802.02s        | 0.9408    | 3.25 GB          |"),
        ("bf16true-nf4dq", "14.65 GB", '| --precision "bf16-true"  --quantize "bnb.nf4-dq"        | 14.65 GB         '
                                       "| 802.94s        | 0.9384    | 3.08 GB          |"),
    ],
    "llama2": [
        ("bf16mixed", "OutOfMemoryError", "| Default (bfloat16-mixed)                            | OutOfMemoryError | "
                                          "N/A            | N/A    | N/A              |"),
        ("bf16true", "20.60 GB", '| --precision "bf16-true"                             | 20.60 GB         | '
                                 "876.30s        | 0.8696 | 13.82 GB         |"),
        ("nf4", "19.62 GB", '| --quantize "bnb.nf4"                                | 19.62 GB         | '
                            "1320.63s       | 1.0178 | 4.66 GB          |"),
        ("nf4dq", "19.32 GB", '| --quantize "bnb.nf4-dq"                             | 19.32 GB         | '
                              "1359.10s       | 1.0132 | 4.34 GB          |"),
        ("bf16true-nf4", "13.44 GB", '| --precision "bf16-true"  --quantize "bnb.nf4"       | 13.44 GB         | '
                                     "1089.79s       | 1.0130 | 4.66 GB          |"),
        ("bf16true-nf4dq", "13.15 GB", '| --precision "bf16-true"  --quantize "bnb.nf4-dq"    | 13.15 GB         | '
                                       "1135.86s       | 1.0124 | 4.34 GB          |"),
    ],
}
ROWS = [_row(model, kind, printed, line) for model, lines in _LINES.items() for kind, printed, line in lines]
