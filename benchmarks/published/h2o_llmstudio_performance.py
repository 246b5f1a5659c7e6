"""Frozen, verdict rows: H2O LLM Studio's "H2O LLM Studio performance" page (h2oai/h2o-llmstudio,
documentation/docs/get-started/llm-studio-performance.md at 0ee6392, Nov 15 2023, "Document performance benchmarks").

The framework's own table of train and validation times for h2oai/h2ogpt-4096-llama2-7b/13b/70b (Llama-2's shapes
and 4,096 positions: the presets) LoRA-fine-tuned with a bfloat16 or an NF4 ("nf4") backbone on 1, 2, 4 and 8 A10G
and 1, 2 and 4 A100 80GB, "gathered using the default parameters" it prints: a time printed means the run trained
there (`ran`), "OOM" that it ran out of memory. No peak is printed. Every row of the table is a row here.

The printed defaults: `training: batch_size 2, grad_accumulation 1, lora true, lora_r 4, lora_alpha 16, lora_dropout
0.05, lora_target_modules '' , optimizer AdamW`; `tokenizer: max_length 512 (prompt 256 + answer 256),
padding_quantile 1.0`; `architecture: gradient_checkpointing true`; `environment: mixed_precision true, use_fsdp
false`; OASST (train_full.pq). Read in the code at the same commit (llm_studio/src/utils/modeling_utils.py,
data_utils.py; Pipfile: torch 2.0.1, transformers 4.34.0, peft 0.5.0, bitsandbytes 0.41.1):

* the backbone loads with `torch_dtype=torch.bfloat16` ("bfloat16"), or for "nf4" (the YAML's backbone_dtype int4)
  with `BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float16)`, after
  which LLM Studio casts every non-quantized fp16/bf16 parameter to fp32 (the embedding, norms and lm_head: what
  --kbit-prepare says); `gradient_checkpointing_enable()` and `enable_input_require_grads()`;
* LoRA through PEFT 0.5 on every nn.Linear whose name has no "head" (q/k/v/o/gate/up/down_proj: the CLI's
  all-linear), r=4, dropout 0.05;
* the step under `torch.cuda.amp.autocast(enabled=mixed_precision)` (fp16 autocast: --precision mixed), torch AdamW,
  DistributedDataParallel on more than one GPU (each GPU holds the whole model: per GPU the same as one);
* each batch padded to its own longest sample up to 512 tokens (batch_padding, quantile 1.0): --varying-lengths;
  transformers 4.34's Llama has no SDPA path: eager attention.
"""

from __future__ import annotations

_COMMIT = "0ee639270c4d3de6a92c5687e52e59b8788d48f1"
_URL = f"https://github.com/h2oai/h2o-llmstudio/blob/{_COMMIT}/documentation/docs/get-started/llm-studio-performance.md"
_HEADER = "| Hardware setup | LLM backbone | Quantization | Train (hh:mm:ss)| Validation (hh:mm:ss) |"
_SETTINGS = (
    "H2O LLM Studio at 0ee6392 (Nov 2023), the page's default parameters: {model} with a {dtype} backbone, LoRA r=4 "
    "dropout 0.05 on every block linear (PEFT 0.5), fp16 autocast, gradient checkpointing, torch AdamW, batch 2 x up "
    "to 512 tokens padded per batch (OASST), {where}; transformers 4.34.0 (eager attention), bitsandbytes 0.41.1; "
    "{verdict}"
)
_UNEXPRESSED = [
    "validation after the epoch generates answers (metric BLEU, max_length_inference 256, KV cache, no backward): "
    "not a training step",
    "the OASST samples' real lengths: the argv says the 512-token cap (prompt and answer cut to 256 each)",
]
_NF4 = ("bnb_4bit_compute_dtype fp16 and no double quantization (the CLI's --qlora names NF4; its double "
        "quantization saves about 0.4 bits per parameter on the frozen 4-bit weights)")


def _row(size: str, dtype: str, gpus: int, gpu: str, train: str, valid: str) -> dict:
    ran = train != "OOM"
    system = f"{gpus}x{'A10G' if gpu == 'A10G' else 'A100-80GB'}"
    method = ("--qlora --stack bitsandbytes==0.41.1" if dtype == "nf4" else "--lora")
    where = (f"{'one' if gpus == 1 else gpus} {gpu}{'' if gpus == 1 else 's under DDP'}"
             f"{'' if gpu == 'A10G' else ' (80GB)'}")
    cells = (f"| {gpus}x{gpu}{'' if gpu == 'A10G' else ' 80GB'} | h2oai/h2ogpt-4096-llama2-{size} | {dtype} | {train} "
             f"| {valid} |")
    return {"key": f"h2o-llmstudio-llama2-{size}-{dtype}-{gpus}x{gpu.lower()}-{'ran' if ran else 'oom'}",
            "source": "h2o-llmstudio-performance-2023", "url": _URL, "quote": f"{_HEADER}\n...\n{cells}",
            "printed": train, "measured_bytes": None, "metric": "reserved", "ran": ran,
            "argv": f"estimate --model llama-2-{size} --system {system} --strategy {'single' if gpus == 1 else 'ddp'} "
                    f"--precision mixed {method} --lora-rank 4 --lora-dropout 0.05 --micro-batch 2 --seq-len 512 "
                    "--varying-lengths --gradient-checkpointing --attention eager --stack transformers==4.34.0 "
                    "--format json",
            "assumptions": _SETTINGS.format(model=f"h2oai/h2ogpt-4096-llama2-{size} (Llama-2-{size.upper()}'s shapes)",
                                            dtype=dtype, where=where,
                                            verdict=(f"trained in {train} (validation {valid})" if ran
                                                     else "printed OOM for training and validation")),
            "unexpressed": [*_UNEXPRESSED, *([_NF4] if dtype == "nf4" else [])]}


# The table as printed: (GPUs, GPU, model size, backbone dtype, train, validation).
_TABLE = [
    (8, "A10G", "7b", "bfloat16", "11:35", "3:32"), (4, "A10G", "7b", "bfloat16", "21:13", "06:35"),
    (2, "A10G", "7b", "bfloat16", "37:04", "12:21"), (1, "A10G", "7b", "bfloat16", "1:25:29", "15:50"),
    (8, "A10G", "7b", "nf4", "14:26", "06:13"), (4, "A10G", "7b", "nf4", "26:55", "11:59"),
    (2, "A10G", "7b", "nf4", "48:24", "23:37"), (1, "A10G", "7b", "nf4", "1:26:59", "42:17"),
    (8, "A10G", "13b", "bfloat16", "OOM", "OOM"), (4, "A10G", "13b", "bfloat16", "OOM", "OOM"),
    (2, "A10G", "13b", "bfloat16", "OOM", "OOM"), (1, "A10G", "13b", "bfloat16", "OOM", "OOM"),
    (8, "A10G", "13b", "nf4", "25:07", "10:58"), (4, "A10G", "13b", "nf4", "48:43", "21:25"),
    (2, "A10G", "13b", "nf4", "1:30:45", "42:06"), (1, "A10G", "13b", "nf4", "2:44:36", "1:14:20"),
    (8, "A10G", "70b", "nf4", "OOM", "OOM"), (4, "A10G", "70b", "nf4", "OOM", "OOM"),
    (2, "A10G", "70b", "nf4", "OOM", "OOM"), (1, "A10G", "70b", "nf4", "OOM", "OOM"),
    (4, "A100", "7b", "bfloat16", "7:04", "3:55"), (2, "A100", "7b", "bfloat16", "13:14", "7:23"),
    (1, "A100", "7b", "bfloat16", "23:36", "13:25"), (4, "A100", "7b", "nf4", "9:44", "6:30"),
    (2, "A100", "7b", "nf4", "18:34", "12:16"), (1, "A100", "7b", "nf4", "34:06", "21:51"),
    (4, "A100", "13b", "bfloat16", "11:46", "5:56"), (2, "A100", "13b", "bfloat16", "21:54", "11:17"),
    (1, "A100", "13b", "bfloat16", "39:10", "18:55"), (4, "A100", "13b", "nf4", "16:51", "10:35"),
    (2, "A100", "13b", "nf4", "32:05", "21:00"), (1, "A100", "13b", "nf4", "59:11", "36:53"),
    (4, "A100", "70b", "nf4", "1:13:33", "46:02"), (2, "A100", "70b", "nf4", "2:20:44", "1:33:42"),
    (1, "A100", "70b", "nf4", "4:23:57", "2:44:51"),
]

ROWS = [_row(size, dtype, gpus, gpu, train, valid) for gpus, gpu, size, dtype, train, valid in _TABLE]
