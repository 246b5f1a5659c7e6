"""Frozen: GPU memory printed in llama-recipes' PR and issue threads (source `llama-recipes-threads`).

facebookresearch/llama-recipes (now meta-llama/llama-cookbook; the commits are the same) fine-tunes Llama 2 with
its own loop, `llama_finetuning.py`, under plain torch FSDP1 (no accelerate, no Trainer). Its maintainers and the
FSDP developers printed measured peaks in these threads:
- PR #41 (awgu, 2023-07-25, "Improve FSDP LoRA Memory Usage"): Llama-2-7B LoRA on 4 x A100 40GB, pure bf16, peak
  active and reserved before and after two changes (FSDP's rate limiter, `loss = model(**batch).loss`).
- issue #100 (2023-08-07, HamidShojanazeri): Llama-2-7B full fine-tuning on 4 x A100 40GB, "Max CUDA memory
  reserved was 29 GB", 27 with PR #97's `--use_fast_kernels` (BetterTransformer: SDPA).
- issue #120 (2023-08-22, HamidShojanazeri): Llama-2-70B full fine-tuning on 16 x A100 80GB, pure bf16 with torch
  AdamW and with AnyPrecisionAdamW, the recipe's MemoryTrace lines.
- issue #37 (2023-07-25): Llama-2-13B LoRA on a g5.48xlarge (8 x A10G 24GB) at batch 1, out of memory in backward.

The code, read at each thread's commit: the model is loaded in fp32 (`LlamaForCausalLM.from_pretrained` with no
dtype), `--pure_bf16` then casts it with `model.to(torch.bfloat16)` before `get_peft_model` (so PEFT's LoRA
adapters are created fp32 over a bf16 base, PEFT's default) and before FSDP, which gets `mixed_precision=None`:
bf16 weights, gradients and, with torch's `optim.AdamW(model.parameters())` (foreach on CUDA), bf16 states; no fp32
master copy. FSDP1 FULL_SHARD wraps each LlamaDecoderLayer (and, under PEFT, each trainable leaf linear: the
adapters' own units), `limit_all_gathers=True` from PR #41 on, activation checkpointing on every decoder layer
(non-reentrant, `fsdp_activation_checkpointing` True by default). Data: the default samsum_dataset, tokenized and
concatenated into fixed 2,048-token chunks (ft_datasets/utils.py `Concatenator(chunk_size=2048)`), batch
`batch_size_training` (default 4) with `default_data_collator`. transformers >= 4.31.0 (requirements.txt; July-August
2023: 4.31): eager Llama attention, logits upcast to fp32 before the loss (`--stack transformers==4.31.0`),
`use_cache` left at the config's True until PR #165 (Sept 2023): the forward returns every layer's key/value cache.

What the numbers are: utils/memory_utils.py's MemoryTrace prints `int(torch.cuda.max_memory_reserved() / 2**30)`
(and the allocated peak, reset at each epoch's start) as "GB": GiB, floored (the true peak is up to 1 GiB more).
The reserved peak is never reset, so it covers model loading and FSDP wrapping too. PR #41's two-decimal "GB"
figures are the author's own measurement of the same quantities; read as GiB like the recipe's (unverified).
"""

from __future__ import annotations

_REPO = "https://github.com/meta-llama/llama-cookbook"
_PR41_COMMIT = "71fdc4920ad4a3a9f462072ee5fa4e3218fd6d6a"  # the PR's head: limit_all_gathers=True, outputs dropped
_ISSUE37_COMMIT = "1e0f8a1fb77b9ddccf649970f632dd606a22bd06"  # main on 2023-07-25, before PR #41 merged
_ISSUE100_COMMIT = "597e63429ca79abf605bbc2066642e7a99b053c6"  # main on 2023-08-07 (PR #97 not merged yet)
_PR97_COMMIT = "44ef280d3108c1a3ea9e14e3459e2259279de38a"  # PR #97's head: --use_fast_kernels (BetterTransformer)
_ISSUE120_COMMIT = "fcc817e923c4345413b220d3e27d9e2f7658a47b"  # main on 2023-08-22 (docs/multi_gpu.md: 70B command)
_SOURCE = "llama-recipes-threads"
_GIB = 2**30

_LORA = ("--lora --lora-rank 8 --lora-target q_proj --lora-target v_proj --lora-dropout 0.05 ")
_COMMON = ("--strategy fsdp_full --fsdp-version 1 --no-fsdp-upcast --precision bf16 --optimizer adamw {kernel}"
           "--micro-batch {batch} "
           "--seq-len 2048 --fixed-lengths --gradient-checkpointing --attention {attention} "
           "--stack transformers==4.31.0 --format json")
_UNEXPRESSED = [
    "use_cache=True (the Llama config's default until PR #165, Sept 2023): the forward returns every layer's "
    "key/value cache (for Llama-2-7B at 4 x 2,048 tokens 32 x 2 x 64 MiB = 4 GiB), held until the outputs are dropped",
    "the torch version is not printed (requirements.txt pins 2.0.1; the FSDP developers ran nightlies)",
    "MemoryTrace floors to whole GiB and its reserved peak is the process's since start (loading and wrapping "
    "included)",
]


def _url(commit: str, path: str = "llama_finetuning.py") -> str:
    return f"{_REPO}/blob/{commit}/{path}"


def _row(key: str, url: str, commit: str, quote: str, printed: str, metric: str, argv: str, settings: str,
         extra=(), measured: bool = True, ran: bool | None = None) -> dict:
    row = {"key": key, "source": _SOURCE, "url": url, "code_url": _url(commit), "quote": quote, "printed": printed,
           "measured_bytes": int(round(float(printed.split()[0]) * _GIB)) if measured else None, "metric": metric,
           "argv": argv, "assumptions": settings, "unexpressed": [*_UNEXPRESSED, *extra]}
    if ran is not None:
        row["ran"] = ran
    return row


# --- PR #41: Llama-2-7B LoRA, 4 x A100 40GB ---------------------------------------------------------------------
_PR41_URL = f"{_REPO}/pull/41"
_PR41_CMD = ("torchrun --nnodes 1 --nproc_per_node 4  llama_finetuning.py --enable_fsdp --use_peft --peft_method lora "
             "--model_name llama-2-7b-hf/ --pure_bf16 --output_dir output_dir")
_PR41_SETTINGS = (
    f"llama-recipes PR #41 (2023-07-25) at {_PR41_COMMIT[:7]}: `{_PR41_CMD}` on 4 x A100 40GB: Llama-2-7B cast to "
    "bf16, PEFT LoRA r=8 alpha 32 dropout 0.05 on q_proj and v_proj (configs/peft.py; adapters fp32), FSDP1 "
    "FULL_SHARD, {what}, activation checkpointing, torch AdamW (foreach), batch 4 x 2,048 concatenated samsum "
    "tokens (train_config defaults); peak torch.cuda reserved per GPU, read as GiB"
)
_Q41_FINAL = ("Overall, this **decreases peak reserved memory by 13.31 GB and peak active memory by 10.64 GB** on 4 "
              "GPUs for pure bf16 training. In the end, this only uses 15.22 GB peak active memory and 19.36 GB peak "
              "reserved memory.")
_Q41_BEFORE = ("For my AWS setup with 4 40 GB A100 GPUs:\n- With `limit_all_gathers=False`:\n    - Peak active: 25.86 "
               "GB\n    - Peak reserved: 32.67 GB\n- With `limit_all_gathers=True`:\n    - Peak active: 20.20 GB\n"
               "    - Peak reserved: 27.36 GB")
_PR41_ARGV = ("estimate --model llama-2-7b --system 4xA100-40GB " + _LORA
              + _COMMON.format(kernel="", batch=4, attention="eager"))

ROWS = [
    _row("llamarecipes41-llama2-7b-lora-fsdp1-4xa100-40gb-reserved", _PR41_URL, _PR41_COMMIT, _Q41_FINAL,
         "19.36 GB", "reserved", _PR41_ARGV,
         _PR41_SETTINGS.format(what="limit_all_gathers=True, `loss = model(**batch).loss` (the PR's final code)"),
         ["FSDP1 wraps each LoRA linear (lora_A, lora_B) as its own unit beside the decoder layers (utils/"
          "fsdp_utils.py's lambda policy)"]),
]
# The PR's two earlier configurations keep what the CLI cannot say: FSDP's rate limiter off (all-gathers run ahead,
# each on the communication stream's own cached blocks), and the forward's outputs (fp32 logits, every layer's
# key/value cache) held through backward by `outputs = model(**batch)`.
for _key, _printed, _why in (
        ("llamarecipes41-llama2-7b-lora-fsdp1-no-limit-outputs-kept", "32.67 GB",
         "limit_all_gathers=False and `outputs = model(**batch)` keeping the logits and key/value cache through "
         "backward: neither can be said on the command line"),
        ("llamarecipes41-llama2-7b-lora-fsdp1-outputs-kept", "27.36 GB",
         "`outputs = model(**batch)` keeping the fp32 logits and every layer's key/value cache through backward "
         "(1 GiB + 4 GiB at 4 x 2,048): cannot be said on the command line")):
    ROWS.append({"key": _key, "source": _SOURCE, "url": _PR41_URL, "code_url": _url(_PR41_COMMIT),
                 "quote": _Q41_BEFORE, "printed": _printed, "measured_bytes": int(round(float(_printed[:-3]) * _GIB)),
                 "metric": "reserved", "ran": True, "argv": None, "not_expressible": _why,
                 "assumptions": _PR41_SETTINGS.format(what=_why)})

# --- issue #100: Llama-2-7B full fine-tuning, 4 x A100 40GB --------------------------------------------------------
_I100_URL = f"{_REPO}/issues/100"
_Q100 = ("@ArslanTu For 7B with FSDP only without PEFT, on 4 A100 40 GB, Max CUDA memory reserved was 29 GB and if you "
         "use this [PR](https://github.com/facebookresearch/llama-recipes/pull/97), on A100 that make use of flash "
         "attention it reduced the max reserved to 27.")
_I100_SETTINGS = (
    "llama-recipes issue #100 (2023-08-07, a maintainer's run) at {commit}: Llama-2-7B full fine-tuning, FSDP1 "
    "FULL_SHARD on 4 x A100 40GB, pure bf16 (docs/multi_gpu.md's full fine-tuning command passes --pure_bf16; "
    "fsdp_config's default is False here: assumed as documented), activation checkpointing, torch AdamW (foreach, "
    "bf16 states), batch 4 x 2,048 concatenated samsum tokens (defaults), {attention}; MemoryTrace's "
    "max_memory_reserved, whole GiB"
)
ROWS += [
    _row("llamarecipes100-llama2-7b-full-fsdp1-4xa100-40gb-reserved", _I100_URL, _ISSUE100_COMMIT, _Q100, "29 GB",
         "reserved", "estimate --model llama-2-7b --system 4xA100-40GB "
         + _COMMON.format(kernel="", batch=4, attention="eager"),
         _I100_SETTINGS.format(commit=_ISSUE100_COMMIT[:7], attention="transformers' eager Llama attention"),
         ["the run's batch size and --pure_bf16 are not printed: the documented command and defaults assumed"]),
    _row("llamarecipes100-llama2-7b-full-fsdp1-4xa100-40gb-fast-kernels-reserved", _I100_URL, _PR97_COMMIT, _Q100,
         "27", "reserved", "estimate --model llama-2-7b --system 4xA100-40GB "
         + _COMMON.format(kernel="", batch=4, attention="sdpa"),
         _I100_SETTINGS.format(commit=_PR97_COMMIT[:7], attention="PR #97's --use_fast_kernels: optimum's "
                               "BetterTransformer Llama attention on torch SDPA (flash on A100)"),
         ["the run's batch size and --pure_bf16 are not printed: the documented command and defaults assumed",
          "BetterTransformer's attention, not transformers' own SDPA path (which came in 4.36)"]),
]

# --- issue #120: Llama-2-70B full fine-tuning, 16 x A100 80GB ------------------------------------------------------
_I120_URL = f"{_REPO}/issues/120"
_Q120_ADAMW = ("pure_bf16:\n\nMax CUDA memory allocated was 42 GB\nMax CUDA memory reserved was 63 GB\nPeak active "
               "CUDA memory was 59 GB")
_Q120_ANY = ("pure_bf16 + anyprecisionAdamW   \n\nMax CUDA memory allocated was 42 GB\nMax CUDA memory reserved was "
             "58 GB\nPeak active CUDA memory was 52 GB")
_I120_SETTINGS = (
    f"llama-recipes issue #120 (2023-08-22, the maintainers' experiments 'on 16xA100 80GB') at "
    f"{_ISSUE120_COMMIT[:7]}: Llama-2-70B full fine-tuning with docs/multi_gpu.md's 70B command (--enable_fsdp "
    "--low_cpu_fsdp --pure_bf16 --batch_size_training 1 --micro_batch_size 1) on 2 nodes x 8, FSDP1 FULL_SHARD, "
    "activation checkpointing, batch 1 x 2,048 concatenated samsum tokens, eager attention, {optimizer}; MemoryTrace's "
    "{what}, whole GiB"
)
_ANY = ("AnyPrecisionAdamW (policies/anyprecision_optimizer.py, momentum and variance bf16, no Kahan summation): a "
        "per-parameter loop with no parameter-sized temporary, said as --optimizer-kernel fused; its few small "
        "per-flat-parameter temporaries are not counted")
_70B_ARGV = "estimate --model llama-2-70b --system 2x8xA100-80GB " + "{common}"
for _opt, _quote, _kernel, _extra in (
        ("adamw", _Q120_ADAMW, "", []), ("anyprecision", _Q120_ANY, "--optimizer-kernel fused ", [_ANY])):
    for _metric, _printed in (("allocated", "42 GB"), ("reserved", "63 GB" if _opt == "adamw" else "58 GB")):
        ROWS.append(_row(
            f"llamarecipes120-llama2-70b-full-fsdp1-16xa100-80gb-{_opt}-{_metric}", _I120_URL, _ISSUE120_COMMIT,
            _quote, _printed, _metric,
            _70B_ARGV.format(common=_COMMON.format(kernel=_kernel, batch=1, attention="eager")),
            _I120_SETTINGS.format(
                optimizer="torch AdamW (foreach, bf16 states)" if _opt == "adamw" else _ANY.split(":")[0],
                what="max_memory_allocated over the epoch" if _metric == "allocated"
                else "max_memory_reserved since start"),
            ["the batch size is not printed: the documented 70B command assumed (batch 1)", *_extra]))

# --- issue #37: Llama-2-13B LoRA, 8 x A10G 24GB, out of memory ------------------------------------------------------
_Q37 = ("Hi, I am trying to fine-tune LLama 13B model on g5.48xlarge instance type (8 GPUs, 24GB per GPU)  and running "
        "into CUDA OOM issue.")
ROWS.append(_row(
    "llamarecipes37-llama2-13b-lora-fsdp1-8xa10g-batch1-oom", f"{_REPO}/issues/37", _ISSUE37_COMMIT, _Q37,
    "running into CUDA OOM issue", "reserved",
    "estimate --model llama-2-13b --system 8xA10G " + _LORA + _COMMON.format(kernel="", batch=1, attention="eager"),
    f"llama-recipes issue #37 (2023-07-25) at {_ISSUE37_COMMIT[:7]} (before PR #41): `torchrun --nnodes 1 "
    "--nproc_per_node 8 llama_finetuning.py --use_peft --peft_method lora --model_name /PATH/TO/13B --pure_bf16 "
    "--batch_size_training 1 --micro_batch_size 1 --enable_fsdp` on 8 x A10G 24GB: Llama-2-13B cast to bf16, LoRA "
    "r=8 on q_proj and v_proj, FSDP1 FULL_SHARD with limit_all_gathers=False, activation checkpointing, batch 1 x "
    "2,048 samsum tokens: out of memory in backward, on torch 2.0.1 and again on the nightly 2.1.0.dev20230724 the "
    "user printed (a maintainer named FSDP1 not resharding frozen parameters in backward, fixed in nightlies)",
    ["limit_all_gathers=False and `outputs = model(**batch)` holding the logits and key/value cache through "
     "backward (this commit predates PR #41)"], measured=False, ran=False))
