"""Frozen: Sebastian Raschka's "PyTorch Performance Tips for Faster LLM Training" (source `raschka-llms-from-scratch`).

The page: rasbt/LLMs-from-scratch ch05/10_llm-training-speed/README.md, written with its three scripts in one commit
(908dd2f, 2025-02-12; later commits reword the page and keep every figure). Not the 2023 LoRA write-ups
(raschka-lora-insights-2023): the book's own GPT-2-sized model, trained from scratch on one Gutenberg novel, one
change at a time, each with the "Reserved memory" its script printed. One author's page, one source.

The code, read at 908dd2f:

* `00_orig.py` (the baseline): the book's GPTModel with GPT_CONFIG_124M (vocab 50,257, context 1,024, 768 wide, 12
  heads, 12 layers, drop_rate 0.1, qkv_bias False) and its own `out_head` (not tied to `tok_emb`: 163,009,536
  parameters, the book's count), from-scratch MultiHeadAttention (scores, mask fill, softmax, dropout on the
  weights), LayerNorm and tanh-GELU written in Python; fp32 weights, no autocast; `torch.optim.AdamW` with no
  kernel named (foreach on CUDA); batch 8 of 1,024-token windows (stride 1,024, drop_last: every batch full); no
  checkpointing; the loss `F.cross_entropy(logits.flatten(0, 1), targets)` on the logits as they are.
* `01_opt_single_gpu.py` (all changes, in the page's order): causal mask made on the fly, TF32 matmuls, AdamW
  `fused=True`, pinned loader memory, `model.to(torch.bfloat16)` (weights, gradients and AdamW states bf16, no
  autocast, the loss on bf16 logits), `nn.LayerNorm` and `nn.GELU(approximate="tanh")`, one fused qkv Linear with
  `F.scaled_dot_product_attention(..., dropout_p=0.1, is_causal=True)`, `torch.compile(model)`, vocab padded to
  50,304, batch 32.
* `02_opt_multi_gpu_dpp.py`: the same under torchrun on 4 GPUs, DistributedDataParallel (defaults: 25 MiB buckets,
  no gradient_as_bucket_view), batch 32 per GPU.

Each intermediate step's code is the baseline with the page's listed changes applied in order (the page says so:
"`01_opt_single_gpu.py` contains all the modifications listed sequentially below"); its row says which are on.

What the number is: after each epoch, `torch.cuda.memory_reserved(device) / 1024**3` printed as "GB" (GiB): the
caching allocator's reserve now, which nothing in the scripts ever releases (no empty_cache), so the peak reserve of
the epoch's training steps (eval and the 50-token sample run under no_grad at batch 8 and 1); per GPU (rank 0 under
DDP). The "Allocated memory" line (2.5069 GB in the baseline) is memory_allocated() at that moment, the resident
weights and AdamW states, not a peak: not scored. The page prints PyTorch 2.6.0+cu124 and says "All experiments were
run on A100 GPUs" without the memory: A100 40GB assumed (batch 32 was "the largest power of 2 supported by the GPU",
about 22.5 GiB, so batch 64 at about twice that did not fit: a 40 GB card, not an 80 GB one).
"""

from __future__ import annotations

_COMMIT = "908dd2f71ed39ecc36934b8315f16d21c60cd0d9"
_DIR = f"https://github.com/rasbt/LLMs-from-scratch/blob/{_COMMIT}/ch05/10_llm-training-speed/"
_URL = _DIR + "README.md"
_MODEL = "benchmarks/published/models/llms-from-scratch-gpt-124m/config.json"
_MODEL_PADDED = "benchmarks/published/models/llms-from-scratch-gpt-124m-v50304/config.json"
# from step 6 on: nn.GELU(approximate="tanh"), sayable as the config's gelu_pytorch_tanh since fc5f36b (the source was
# moved to design first; before, every stand-in said gelu_new and these rows said so as unexpressed)
_MODEL_NATIVE = "benchmarks/published/models/llms-from-scratch-gpt-124m-native-gelu/config.json"
_SETTINGS = (
    "Raschka's LLMs-from-scratch training-speed page (908dd2f, Feb 2025), {script}: the book's GPTModel (GPT-2 124M "
    "shape, untied out_head: 163,009,536 parameters; the stand-in config.json says so), trained from scratch on "
    "1,024-token windows, batch {batch}, dropout 0.1, no checkpointing, {how}; torch.cuda.memory_reserved() after "
    "epoch 1 in GiB ('GB'), never released, so the peak reserve; PyTorch 2.6.0; 'A100' without its memory: 40GB "
    "assumed (batch 32 was the largest power of two that fit)"
)
_QKV_BIAS = "the model's q/k/v projections have no bias (qkv_bias False; the GPT-2 stand-in has 27,648 more)"
_OWN_LOSS = ("the script's own F.cross_entropy on the logits as the model returns them (no shift copy, no upcast); "
             "the CLI counts the gpt2 family's transformers loss")
_SCRATCH_ATTN = ("from-scratch attention: q/k/v kept as separate transposed views, the fp scores masked in place, "
                 "softmax of scores / sqrt(d), dropout on the weights, as transformers' eager GPT-2 attention "
                 "(--attention eager)")
_SCRATCH_NORM = ("from-scratch LayerNorm in Python (mean, var, x - mean, sqrt, division, scale and shift each a "
                 "tensor kept for backward) where GPT-2's is nn.LayerNorm")
_COMPILE = "torch.compile(model) (Inductor fuses the elementwise ops and chooses what the backward keeps)"
_TF32 = "TF32 matmuls and pinned loader memory (no change to what is kept)"


def _row(key: str, quote: str, printed: str, *, script: str, batch: int, how: str, flags: str,
         unexpressed: list[str], model: str = _MODEL, system: str = "1xA100-40GB --strategy single") -> dict:
    return {"key": key, "source": "raschka-llms-from-scratch", "url": _URL, "code_url": _DIR + script,
            "quote": quote, "printed": printed, "measured_bytes": int(round(float(printed.split()[0]) * 2**30)),
            "metric": "reserved",
            "argv": f"estimate --model {model} --system {system} --method full --optimizer adamw {flags}"
                    f"--micro-batch {batch} --seq-len 1024 --fixed-lengths --no-gradient-checkpointing "
                    "--stack torch==2.6.0 --format json",
            "assumptions": _SETTINGS.format(script=script, batch=batch, how=how),
            "unexpressed": [*unexpressed, _QKV_BIAS, _OWN_LOSS]}


def _step(before: str, after: str) -> str:
    return f"Before:\n- `{before}`\n\nAfter:\n- {after}"


_FP32 = "--precision fp32 --attention eager "
_BF16 = "--precision bf16 --loss-dtype bf16 --optimizer-kernel fused "
ROWS = [
    _row("llms-from-scratch-baseline-fp32-b8", "Allocated memory: 2.5069 GB\nReserved memory: 26.2617 GB",
         "26.2617 GB", script="00_orig.py", batch=8,
         how="fp32 weights, gradients and AdamW states (foreach), no autocast, from-scratch attention, LayerNorm "
             "and GELU", flags=_FP32, unexpressed=[_SCRATCH_ATTN, _SCRATCH_NORM]),
    _row("llms-from-scratch-bf16-b8",
         _step("Reserved memory: 26.2422 GB", "`Avg tok/sec: 45486`\n- `Reserved memory: 13.7871 GB`"),
         "13.7871 GB", script="01_opt_single_gpu.py", batch=8,
         how="step 5 (changes 1-5 of the page on): model.to(torch.bfloat16) (pure bf16: weights, gradients and "
             "fused AdamW states), the mask made on the fly, from-scratch attention, LayerNorm and GELU, the loss on "
             "bf16 logits", flags=_BF16 + "--attention eager ", unexpressed=[_SCRATCH_ATTN, _SCRATCH_NORM, _TF32]),
    _row("llms-from-scratch-bf16-native-norm-gelu-b8",
         _step("Reserved memory: 13.7871 GB", "`Avg tok/sec: 55256`\n- `Reserved memory: 11.5645 GB`"),
         "11.5645 GB", script="01_opt_single_gpu.py", batch=8,
         how="step 6: step 5 with nn.LayerNorm and nn.GELU(approximate='tanh'), still the from-scratch attention",
         flags=_BF16 + "--attention eager ", model=_MODEL_NATIVE, unexpressed=[_SCRATCH_ATTN, _TF32]),
    _row("llms-from-scratch-bf16-sdpa-b8",
         _step("Reserved memory: 11.5645 GB", "`Avg tok/sec: 91901`\n- `Reserved memory: 5.9004 GB`"),
         "5.9004 GB", script="01_opt_single_gpu.py", batch=8,
         how="step 7: step 6 with one fused qkv Linear and F.scaled_dot_product_attention(dropout_p=0.1, "
             "is_causal=True) (flash on an A100 in bf16)",
         flags=_BF16 + "--attention sdpa ", model=_MODEL_NATIVE, unexpressed=[_TF32]),
    _row("llms-from-scratch-bf16-sdpa-compiled-v50304-b8",
         _step("Reserved memory: 6.1875 GB", "`Step tok/sec: 127345`\n- `Reserved memory: 5.8906 GB`"),
         "5.8906 GB", script="01_opt_single_gpu.py", batch=8,
         how="step 9: step 7 compiled (torch.compile) with the vocabulary padded to 50,304",
         flags=_BF16 + "--attention sdpa ", model=_MODEL_PADDED, unexpressed=[_COMPILE, _TF32]),
    _row("llms-from-scratch-bf16-sdpa-compiled-v50304-b32",
         _step("Reserved memory: 5.8906 GB", "`Step tok/sec: 142156`\n- `Reserved memory: 22.5078 GB`"),
         "22.5078 GB", script="01_opt_single_gpu.py", batch=32,
         how="step 10 (01_opt_single_gpu.py as committed): step 9 at batch 32",
         flags=_BF16 + "--attention sdpa ", model=_MODEL_PADDED, unexpressed=[_COMPILE, _TF32]),
    _row("llms-from-scratch-bf16-sdpa-compiled-v50304-b32-ddp4",
         "After (4 GPUs):\n- `Step tok/sec: 419259`\n- `Reserved memory: 22.7969 GB`",
         "22.7969 GB", script="02_opt_multi_gpu_dpp.py", batch=32,
         how="02_opt_multi_gpu_dpp.py under torchrun --nproc_per_node=4: step 10 wrapped in DistributedDataParallel "
             "(compiled, then bf16, then DDP), batch 32 per GPU; rank 0's figure after epoch 1",
         flags=_BF16 + "--attention sdpa ", model=_MODEL_PADDED, system="4xA100-40GB --strategy ddp",
         unexpressed=[_COMPILE, _TF32]),
]
