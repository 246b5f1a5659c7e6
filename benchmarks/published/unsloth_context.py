"""Design, verdict rows only: the Unsloth README's longest context for the "Hugging Face + FA2" baseline (January 2025).

"We tested Llama 3.1 (8B) Instruct and did 4bit QLoRA on all linear layers (Q, K, V, O, gate, up and down) with
rank = 32 with a batch size of 1. We padded all sequences to a certain maximum sequence length"; Llama 3.3 (70B)
the same "on a 80GB A100". Each "Hugging Face + FA2" cell is the longest padded length that ran in that much GPU
memory: a run measured to fit (the estimate must not say "does not fit"); no peak is printed, so nothing is
scored. The two "OOM" cells (8B in 8 GB, 70B in 48 GB) are left out: the lengths tried are not printed.

Not printed either, assumed: transformers' own gradient checkpointing (without it no 28k-token step of an 8B
model fits in 80 GB), bf16 compute over a bitsandbytes NF4 base with double quantization (Unsloth's bnb-4bit
checkpoints), LoRA dropout 0 and 8-bit AdamW (Unsloth's notebooks' defaults), flash-attention 2; the GPU memory
classes (8..80 GB) are the cards' sizes, whose memory is that many GiB. Llama 3.3 70B has Llama 3.1 70B's shapes.
"""

from __future__ import annotations

_URL = "https://github.com/unslothai/unsloth/blob/e3162dc5bf88bf4c2b598c74cbcaba0706c4067b/README.md"
_SETTINGS = (
    "Unsloth README 'Context length benchmarks', {model}, 'Hugging Face + FA2' column, {gb} GB row: the longest "
    "padded length that ran, batch 1, 4-bit QLoRA r=32 on q/k/v/o/gate/up/down; assumed: transformers' gradient "
    "checkpointing, bf16 compute over NF4 with double quantization, LoRA dropout 0, 8-bit AdamW, flash-attention 2"
)
_UNEXPRESSED = ["the non-quantized parameters' dtype and whether prepare_model_for_kbit_training ran (not printed; "
                "the CLI's built-in trainer upcasts them to fp32)"]


def _row(preset: str, gb: int, quote: str) -> dict:
    model = "Llama 3.1 (8B)" if preset.endswith("8b") else "Llama 3.3 (70B)"
    tokens = quote.split("|")[3].strip()  # the 'Hugging Face + FA2' cell
    return {"key": f"unsloth-hf-fa2-{preset}-qlora-{gb}gb-{tokens.replace(',', '')}",
            "source": "unsloth-readme-context", "url": _URL, "quote": quote, "printed": tokens,
            "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": f"estimate --model {preset} --gpus 1 --gpu-memory {gb}GiB --strategy single --precision bf16 "
                    "--qlora --lora-rank 32 --optimizer adamw8bit --micro-batch 1 "
                    f"--seq-len {tokens.replace(',', '')} --gradient-checkpointing --attention flash --format json",
            "assumptions": _SETTINGS.format(model=model, gb=gb), "unexpressed": _UNEXPRESSED}


_QUOTES = {  # the README's table lines, as printed
    ("llama-3.1-8b", 12): "| 12 GB    | 21,848                | 932             |",
    ("llama-3.1-8b", 16): "| 16 GB    | 40,724                | 2,551           |",
    ("llama-3.1-8b", 24): "| 24 GB    | 78,475                | 5,789           |",
    ("llama-3.1-8b", 40): "| 40 GB    | 153,977               | 12,264          |",
    ("llama-3.1-8b", 48): "| 48 GB    | 191,728               | 15,502          |",
    ("llama-3.1-8b", 80): "| 80 GB    | 342,733               | 28,454          |",
    ("llama-3.1-70b", 80): "| 80 GB    | 89,389                | 6,916            |",
}

ROWS = [_row(preset, gb, quote) for (preset, gb), quote in _QUOTES.items()]
