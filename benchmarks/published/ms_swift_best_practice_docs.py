"""Frozen: ms-swift's own documentation pages (docs/source/LLM/, swift 1.3-2.1, Nov 2023 - June 2024), three pages,
three sources (split by page): each code block's header says the GPU it ran on and the GPU memory it took
("# Experimental environment: A100" / "# 26GB GPU memory"; "# 4 * 70GB GPU memory" on four GPUs, each GPU's).
Not the Benchmark page (ms-swift-benchmark-2024) nor the example scripts (ms-swift-example-scripts): other runs.

* `ms-swift-self-cognition-best-practice`: 自我认知微调最佳实践.md (self-cognition fine-tuning), LoRA on ALL linears
  of Qwen-7B-Chat (3914e1da, Dec 2023), Qwen1.5-4B-Chat (70bea62a, Feb 2024; db7ad128, April 2024) and
  Qwen2-7B-Instruct (a3fe4008, June 2024), one GPU, DDP on two or four, ZeRO-2 on four.
* `ms-swift-qwen1.5-best-practice`: Qwen1.5全流程最佳实践.md (b039ea78, March 2024; db7ad128): Qwen1.5-7B-Chat LoRA on
  one A100, under ZeRO-3 on four 3090s, split over two 3090s by device_map; Qwen1.5-72B-Chat LoRA under ZeRO-3 on four
  A100s at 4,096 tokens.
* `ms-swift-llm-finetune-doc`: LLM微调文档.md (c445b330, Nov 2023): Qwen-7B-Chat LoRA (DEFAULT: c_attn) on one GPU and
  under DDP on two 3090s.
* `ms-swift-vllm-lora-doc`: VLLM推理加速与部署.md (5da1d74d, March 2024), "准备LoRA": Llama-2-7B-Chat LoRA on ALL
  linears under DDP on four A100s at 4,096 tokens (registered after the three pages above were scored).
* `ms-swift-agent-best-practice`: Agent微调最佳实践.md (5616766b, March 2024): Qwen-7B-Chat LoRA on ALL linears, batch 2
  x 1,500 tokens, "占用显存22G" on one consumer GPU (registered after the three pages above were scored).

Each row is read at the commit that wrote its figure (`git log -S` on the header line); a header carried unchanged
beside a block whose model or settings a later commit rewrote is left out (the Qwen2 page's CLI "22GB" and
"4 * 24GB", the Qwen1.5 page's "4 * 24GB" once its block became ZeRO-2). The code at each commit: `swift sft`
(sft.py) on the HF Trainer (swift's Seq2SeqTrainer subclass; TrainingArguments built in SftArguments before the
model loads, so ZeRO-3 loads under zero.Init), `optim adamw_torch`, batch 1 with accumulation ceil(16 / GPUs)
unless the block gives one, gradient checkpointing on, `dtype AUTO` -> bf16 on an Ampere GPU (bf16 weights, the
Trainer's bf16 autocast; under DeepSpeed ds_config/zero2.json or zero3.json with bf16 'auto', no autocast), LoRA r=8
alpha 32 dropout 0.05 through swift's own LoRA (`tuner_backend swift`, lora_dtype fp32) until April 2024 and PEFT's
from then (`tuner_backend peft`, lora_dtype AUTO: PEFT's default). Data: the collator pads each batch to its
longest; with batch 1 every sample runs at its own length (--varying-lengths); samples past `max_length` are
dropped (truncation_strategy 'delete'; 'truncation_left' before Dec 2023: cut to it): the longest sample is assumed
to reach `max_length`, as ms_swift_benchmark.py and ms_swift_example_scripts.py assume.

Attention: Qwen1.5 and Qwen2 are transformers' Qwen2ForCausalLM (transformers >= 4.37): `use_flash_attn` unset leaves
transformers' default, SDPA. Qwen-7B-Chat runs its remote code with `use_flash_attn 'auto'` (flash-attn when it is
installed; swift does not install it: read as not installed), whose attention before the 2023-11-30 hub revision is
eager matmuls and from it torch's SDPA with an explicit mask (as ms_swift_example_scripts.py reads it); the argv
names the Qwen2 config.json stand-in of Qwen-7B's shapes. Stack: the transformers release of each commit's day
within swift's requirements (--stack).

What the number is: not said; read as nvidia-smi's used memory, "GB" as GiB (nvidia-smi's MiB / 1024), per GPU. A
figure equal to its card's whole memory ("24GB" on a 24 GB RTX 3090) is read as a verdict, not a measurement: the
run trained there (`ran`), as glm4_finetune.py reads its "80G".
"""

from __future__ import annotations

from urllib.parse import quote

_REPO = "https://github.com/modelscope/ms-swift/blob/{commit}/docs/source/LLM/{page}"
_SELF_COG = "自我认知微调最佳实践.md"
_QWEN15 = "Qwen1.5全流程最佳实践.md"
_FINETUNE = "LLM微调文档.md"
_VLLM = "VLLM推理加速与部署.md"
_AGENT = "Agent微调最佳实践.md"
_SOURCE = {_SELF_COG: "ms-swift-self-cognition-best-practice", _QWEN15: "ms-swift-qwen1.5-best-practice",
           _FINETUNE: "ms-swift-llm-finetune-doc", _VLLM: "ms-swift-vllm-lora-doc",
           _AGENT: "ms-swift-agent-best-practice"}
_C_DEC = "3914e1da87e7028aafc74e46a76650a87eef0c3b"   # 2023-12-02, "Support self cognition (#188)"
_C_FEB = "70bea62a1d1ee1152f518366d22c2d3ddd17d6ff"   # 2024-02-17, "Support deepseek math (#413)"
_C_MAR = "b039ea781834480349e23632cdfdf9df6484c506"   # 2024-03-10, "update qwen1.5 best practice (#520)"
_C_APR = "db7ad12800fa34a1b0a92279d8a5f40f7f24944a"   # 2024-04-30, "update docs (#850)"
_C_JUN = "a3fe40084cafcc42677327ce14754a623d46dc21"   # 2024-06-07, "update qwen2 docs (#1097)"
_C_NOV = "c445b330c3ccb1f3764550013e713ee32c526de3"   # 2023-11-28, "update readme (#175)"
_C_VLLM = "5da1d74dcb21b5840b35245760b3de294430961f"  # 2024-03-19, "support vllm lora (#565)"
_C_AGENT = "5616766b59210462ec57cc4e25fa2aef39291608"  # 2024-03-19, "update agent documentation (#572)"

_GIB = ("'GB' read as GiB (nvidia-smi's MiB / 1024); read as 1e9 bytes the figure would be 6.9% smaller; how it was "
        "read (nvidia-smi, torch's counters) the page does not say, nor at which step")
_CARD = ("the printed figure is the card's whole memory (a 24 GB RTX 3090): read as 'trained there', not as a peak "
         "(nvidia-smi shows the caching allocator grown to the card)")
_SWIFT_LORA = "swift's own LoRA implementation (tuner_backend swift, lora_dtype fp32 adapters), not PEFT"
_PEFT_LORA = "PEFT's LoRA through swift (tuner_backend peft, lora_dtype AUTO: the adapters' dtype left to PEFT)"
_QWEN_STANDIN = ("Qwen-7B-Chat's own modeling code (model_type qwen, trust_remote_code): the argv names a Qwen2 "
                 "config.json of its shapes")
_QWEN_CODE = (f"{_QWEN_STANDIN}; LoRA ALL on its c_attn (fused q/k/v), attn.c_proj and mlp w1/w2/c_proj is the "
              "stand-in's seven block linears (one rank-8 adapter on the fused 4096 -> 12288 c_attn where the "
              "stand-in has three)")
_QWEN_FLASH = ("Qwen's `use_flash_attn 'auto'`: flash-attn used if installed (swift's requirements do not install it; "
               "read as absent), which the page does not say")
_LONGEST = ("the longest sample assumed to reach max_length {seq} ({data}; a shorter longest sample means a smaller "
            "peak)")
_EVAL = "evaluation every 50 steps at batch 1 (no backward): not a training step"


def _url(commit: str, page: str) -> str:
    return _REPO.format(commit=commit, page=quote(page))


def _row(key: str, page: str, commit: str, header: str, printed: str, system: str, argv: str, what: str,
         unexpressed: list[str], *, ran: bool | None = None, batch: int = 1) -> dict:
    """One code block: its header quoted, its figure per GPU (GiB), or a verdict where the figure is the card's."""
    verdict = ran is not None
    return {"key": key, "source": _SOURCE[page], "url": _url(commit, page), "quote": header, "printed": printed,
            "measured_bytes": None if verdict else int(round(float(printed.rstrip("GB")) * 2**30)),
            "metric": "nvidia-smi", **({"ran": ran} if verdict else {}),
            "argv": f"estimate --model {argv.split()[0]} --system {system} {' '.join(argv.split()[1:])} "
                    f"--micro-batch {batch} --gradient-checkpointing --varying-lengths --format json",
            "assumptions": f"ms-swift {page} at {commit[:9]} (the commit that wrote its figure): {what}",
            "unexpressed": [_GIB, *([_CARD] if verdict else []), _EVAL, *unexpressed]}


def _m(name: str) -> str:
    return f"benchmarks/published/models/{name}/config.json"


_LORA = "--precision bf16 --lora --lora-rank 8 --lora-dropout 0.05"
_QKV = "--lora-target q_proj --lora-target k_proj --lora-target v_proj"

_SELF_COGNITION = [
    # 3914e1da (Dec 2023): Qwen-7B-Chat, alpaca-zh + alpaca-en (500 samples) + 500 self-cognition samples; the Python
    # block and the CLI block run the same settings and print different figures: both kept.
    _row("swift-doc-selfcog-qwen-7b-chat-lora-all-python-3090", _SELF_COG, _C_DEC,
         "# Experimental environment: A10, 3090, V100, ...\n# 18GB GPU memory", "18GB", "1xRTX3090",
         f"{_m('qwen-7b')} --strategy single {_LORA} --gradient-accumulation 16 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.35.2",
         "Qwen-7B-Chat in bf16 (dtype AUTO on an Ampere GPU; the argv takes the 3090 of the header's list), LoRA r=8 "
         "dropout 0.05 on ALL linears, alpaca-zh + alpaca-en (train_dataset_sample 500) + 500 self-cognition samples, "
         "max_length 2048 (the default), batch 1 x accumulation 16, the Python block (SftArguments), December 2023 "
         "(transformers 4.35.2; Qwen's hub revision of 2023-11-30: SDPA)",
         [_QWEN_CODE, _SWIFT_LORA, _QWEN_FLASH, _LONGEST.format(seq=2048, data="alpaca and self-cognition samples "
                                                                 "are short: the cap is likely far")]),
    _row("swift-doc-selfcog-qwen-7b-chat-lora-all-cli-3090", _SELF_COG, _C_DEC,
         "# Experimental environment: A10, 3090, V100, ...\n# 22GB GPU memory", "22GB", "1xRTX3090",
         f"{_m('qwen-7b')} --strategy single {_LORA} --gradient-accumulation 16 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.35.2",
         "the same run as the Python block (Qwen-7B-Chat, bf16, LoRA r=8 on ALL, alpaca 500 + 500 self-cognition, "
         "max_length 2048, batch 1 x 16) through the CLI (`swift sft`), which prints 22GB where the Python block "
         "prints 18GB",
         [_QWEN_CODE, _SWIFT_LORA, _QWEN_FLASH, _LONGEST.format(seq=2048, data="alpaca and self-cognition samples "
                                                                 "are short: the cap is likely far")]),
    _row("swift-doc-selfcog-qwen-7b-chat-lora-all-ddp-2x3090-ran", _SELF_COG, _C_DEC,
         "# Experimental environment: 2 * 3090, 2 * V100, ...\n# 2 * 24GB GPU memory", "24GB", "2xRTX3090",
         f"{_m('qwen-7b')} --strategy ddp {_LORA} --gradient-accumulation 8 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.35.2",
         "the same run under DDP on two GPUs (NPROC_PER_NODE=2, --gradient_accumulation_steps 8), the argv takes the "
         "3090s of the header's list; '2 * 24GB' is each 3090's whole memory: a verdict row, trained there",
         [_QWEN_CODE, _SWIFT_LORA, _QWEN_FLASH, _LONGEST.format(seq=2048, data="alpaca: the cap is likely far")],
         ran=True),
    # 70bea62a (Feb 2024): Qwen1.5-4B-Chat on sharegpt-gpt4-mini (multi-turn: the longest kept sample is near 2048).
    _row("swift-doc-selfcog-qwen1.5-4b-chat-lora-all-3090", _SELF_COG, _C_FEB,
         "# Experimental environment: A10, 3090, V100, ...\n# 23GB GPU memory", "23GB", "1xRTX3090",
         f"{_m('qwen1.5-4b')} --strategy single {_LORA} --gradient-accumulation 16 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.37.2",
         "Qwen1.5-4B-Chat in bf16, LoRA r=8 dropout 0.05 on ALL linears, sharegpt-gpt4-mini (train_dataset_sample "
         "1000) + 500 self-cognition samples, max_length 2048, batch 1 x accumulation 16, one GPU (the argv takes the "
         "3090: a 23GB figure does not fit an A10's 22.5 GiB), February 2024 (transformers 4.37.2, swift's "
         "requirement < 4.38; SDPA)",
         [_SWIFT_LORA, _LONGEST.format(seq=2048, data="sharegpt-gpt4-mini, multi-turn chats, samples past 2048 "
                                       "dropped")]),
    _row("swift-doc-selfcog-qwen1.5-4b-chat-lora-all-ddp-4xa100", _SELF_COG, _C_FEB,
         "# Experimental environment: 4 * A100\n# 4 * 32GB GPU memory", "32GB", "4xA100-80GB",
         f"{_m('qwen1.5-4b')} --strategy ddp {_LORA} --gradient-accumulation 4 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.37.2",
         "the same run under DDP on four A100s (NPROC_PER_NODE=4; accumulation ceil(16 / 4) = 4; 80 GB assumed); "
         "the figure is each GPU's",
         [_SWIFT_LORA, _LONGEST.format(seq=2048, data="sharegpt-gpt4-mini, samples past 2048 dropped")]),
    # db7ad128 (April 2024): the same model on alpaca-zh + alpaca-en; headers rewritten (23 -> 22GB; DDP -> ZeRO-2).
    _row("swift-doc-selfcog-qwen1.5-4b-chat-lora-all-alpaca-3090", _SELF_COG, _C_APR,
         "# Experimental environment: A10, 3090, V100, ...\n# 22GB GPU memory", "22GB", "1xRTX3090",
         f"{_m('qwen1.5-4b')} --strategy single {_LORA} --gradient-accumulation 16 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.40.1",
         "Qwen1.5-4B-Chat in bf16, LoRA r=8 dropout 0.05 on ALL linears through PEFT, alpaca-zh + alpaca-en "
         "(train_dataset_sample 1000) + 500 self-cognition samples, max_length 2048, batch 1 x accumulation 16, one "
         "GPU (the argv takes the 3090), April 2024 (transformers 4.40.1; SDPA)",
         [_PEFT_LORA, _LONGEST.format(seq=2048, data="alpaca and self-cognition samples are short: the cap is "
                                      "likely far")]),
    _row("swift-doc-selfcog-qwen1.5-4b-chat-lora-all-zero2-4x3090-ran", _SELF_COG, _C_APR,
         "# Experimental environment: 4 * 3090\n# 4 * 24GB GPU memory", "24GB", "4xRTX3090",
         f"{_m('qwen1.5-4b')} --strategy zero2 {_LORA} --gradient-accumulation 4 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.40.1",
         "the same run under DeepSpeed ZeRO-2 (default-zero2: ds_config/zero2.json, bf16 'auto' -> on, no offload) "
         "on four 3090s, accumulation ceil(16 / 4) = 4; '4 * 24GB' is each card's whole memory: a verdict row",
         [_PEFT_LORA, _LONGEST.format(seq=2048, data="alpaca: the cap is likely far")], ran=True),
    # a3fe4008 (June 2024): Qwen2-7B-Instruct; only the Python block's header was rewritten.
    _row("swift-doc-selfcog-qwen2-7b-instruct-lora-all-3090-ran", _SELF_COG, _C_JUN,
         "# Experimental environment: 3090, V100, ...\n# 24GB GPU memory", "24GB", "1xRTX3090",
         f"qwen2-7b --strategy single {_LORA} --gradient-accumulation 16 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.41.2",
         "Qwen2-7B-Instruct in bf16, LoRA r=8 dropout 0.05 on ALL linears through PEFT, alpaca-zh#500 + "
         "alpaca-en#500 + self-cognition#500, max_length 2048, batch 1 x accumulation 16, one 3090 (the header's "
         "first GPU), June 2024 (transformers 4.41.2; SDPA); '24GB' is the 3090's whole memory: a verdict row",
         [_PEFT_LORA, "on a V100 (the header's second GPU, no bf16) dtype AUTO would be fp16: not this argv",
          _LONGEST.format(seq=2048, data="alpaca and self-cognition samples are short: the cap is likely far")],
         ran=True),
]

_QWEN15_PAGE = [
    # b039ea78 (March 2024): ms-bench-mini (train_dataset_sample 1000) + 500 self-cognition samples.
    _row("swift-doc-qwen1.5-7b-chat-lora-all-a100", _QWEN15, _C_MAR,
         "# Experimental environment: A100\n# 26GB GPU memory", "26GB", "1xA100-80GB",
         f"qwen1.5-7b --strategy single {_LORA} --gradient-accumulation 16 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.38.2",
         "Qwen1.5-7B-Chat in bf16, LoRA r=8 dropout 0.05 on ALL linears, ms-bench-mini (train_dataset_sample 1000) "
         "+ 500 self-cognition samples, max_length 2048, batch 1 x accumulation 16, one A100 (80 GB assumed), March "
         "2024 (transformers 4.38.2, swift's requirement < 4.40; SDPA)",
         [_SWIFT_LORA, _LONGEST.format(seq=2048, data="ms-bench-mini, samples past 2048 dropped")]),
    _row("swift-doc-qwen1.5-7b-chat-lora-all-zero3-4x3090-ran", _QWEN15, _C_MAR,
         "# Experimental environment: 4 * 3090\n# 4 * 24GB GPU memory", "24GB", "4xRTX3090",
         f"qwen1.5-7b --strategy zero3 {_LORA} --gradient-accumulation 4 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.38.2",
         "the same run under DeepSpeed ZeRO-3 (default-zero3: ds_config/zero3.json, bf16 'auto' -> on, no offload, "
         "stage3_max_live_parameters 1e9, buckets 'auto') on four 3090s, accumulation ceil(16 / 4) = 4; '4 * 24GB' "
         "is each card's whole memory: a verdict row",
         [_SWIFT_LORA, _LONGEST.format(seq=2048, data="ms-bench-mini, samples past 2048 dropped")], ran=True),
    {"key": "swift-doc-qwen1.5-7b-chat-lora-all-mp-2x3090", "source": _SOURCE[_QWEN15], "url": _url(_C_MAR, _QWEN15),
     "quote": "# Experimental environment: 2 * 3090\n# 2 * 19GB GPU memory", "printed": "19GB",
     "measured_bytes": None, "metric": "nvidia-smi",
     "not_expressible": "one model split over two GPUs by device_map 'auto' (naive model parallelism, one process)",
     "assumptions": f"ms-swift {_QWEN15} at {_C_MAR[:9]}: Qwen1.5-7B-Chat LoRA split over two 3090s (CUDA_VISIBLE_"
                    "DEVICES=0,1 without NPROC_PER_NODE), max_length 2048"},
    _row("swift-doc-qwen1.5-72b-chat-lora-all-zero3-4xa100", _QWEN15, _C_MAR,
         "# Experimental environment: 4 * A100\n# 4 * 70GB GPU memory", "70GB", "4xA100-80GB",
         f"{_m('qwen1.5-72b')} --strategy zero3 {_LORA} --gradient-accumulation 4 --seq-len 4096 --attention sdpa "
         "--stack transformers==4.38.2",
         "Qwen1.5-72B-Chat in bf16 under DeepSpeed ZeRO-3 (default-zero3, loaded under zero.Init: TrainingArguments "
         "are built before the model), LoRA r=8 dropout 0.05 on ALL linears, ms-bench-mini (1000) + 500 "
         "self-cognition samples, max_length 4096, batch 1 x accumulation ceil(16 / 4) = 4, four A100s (80 GB), "
         "March 2024 (transformers 4.38.2; SDPA); the figure is each GPU's",
         [_SWIFT_LORA, _LONGEST.format(seq=4096, data="ms-bench-mini, samples past 4096 dropped")]),
    # db7ad128 (April 2024): the single-GPU block moved to alpaca on a 3090, its header rewritten to the card's size.
    _row("swift-doc-qwen1.5-7b-chat-lora-all-alpaca-3090-ran", _QWEN15, _C_APR,
         "# Experimental environment: 3090\n# 24GB GPU memory", "24GB", "1xRTX3090",
         f"qwen1.5-7b --strategy single {_LORA} --gradient-accumulation 16 --seq-len 2048 --attention sdpa "
         "--stack transformers==4.40.1",
         "Qwen1.5-7B-Chat in bf16, LoRA r=8 dropout 0.05 on ALL linears through PEFT, alpaca-zh + alpaca-en "
         "(train_dataset_sample 1000) + 500 self-cognition samples, max_length 2048, batch 1 x accumulation 16, one "
         "3090, April 2024 (transformers 4.40.1; SDPA); '24GB' is the card's whole memory: a verdict row",
         [_PEFT_LORA, _LONGEST.format(seq=2048, data="alpaca and self-cognition samples are short: the cap is "
                                      "likely far")], ran=True),
]

_FINETUNE_DOC = [
    # c445b330 (Nov 2023): Qwen-7B-Chat LoRA on DEFAULT (c_attn), blossom-math-zh (2,000 samples).
    _row("swift-doc-finetune-qwen-7b-chat-lora-default-a10", _FINETUNE, _C_NOV,
         "# Experimental environment: A10, 3090, A100, ...\n# 20GB GPU memory", "20GB", "1xA10G",
         f"{_m('qwen-7b')} --strategy single {_LORA} {_QKV} --gradient-accumulation 16 --seq-len 2048 "
         "--attention eager --stack transformers==4.35.2",
         "Qwen-7B-Chat in bf16, LoRA r=8 dropout 0.05 on DEFAULT (c_attn), blossom-math-zh (train_dataset_sample "
         "2000), max_length 2048 (longer samples cut to it: truncation_left), batch 1 x accumulation 16, one GPU (the "
         "argv takes the header's first, an A10), November 2023 (transformers 4.35.2; Qwen's hub revision before "
         "2023-11-30: eager attention)",
         [_QWEN_STANDIN, "LoRA on Qwen's fused c_attn (one adapter of rank 8, 4096 -> 3 x "
          "4096): the stand-in's q/k/v_proj, three of rank 8", _SWIFT_LORA, _QWEN_FLASH,
          _LONGEST.format(seq=2048, data="blossom-math-zh, math word problems: the cap is likely far")]),
    _row("swift-doc-finetune-qwen-7b-chat-lora-default-ddp-2x3090", _FINETUNE, _C_NOV,
         "# Experimental environment: 2 * 3090\n# 2 * 23GB GPU memory", "23GB", "2xRTX3090",
         f"{_m('qwen-7b')} --strategy ddp {_LORA} {_QKV} --gradient-accumulation 16 --seq-len 2048 "
         "--attention eager --stack transformers==4.35.2",
         "the same run under DDP on two 3090s (NPROC_PER_NODE=2; accumulation 16 per GPU: SftArguments' fixed "
         "default at that commit, not yet divided by the GPUs); the figure is each GPU's",
         [_QWEN_STANDIN, "LoRA on Qwen's fused c_attn: the stand-in's q/k/v_proj", _SWIFT_LORA,
          _QWEN_FLASH, _LONGEST.format(seq=2048, data="blossom-math-zh: the cap is likely far")]),
]

# Registered after the three pages above were scored, before either of these rows was.
_LATER_PAGES = [
    _row("swift-doc-vllm-llama2-7b-chat-lora-all-ddp-4xa100", _VLLM, _C_VLLM,
         "# Experimental environment: 4 * A100\n# 4 * 30GB GPU memory", "30GB", "4xA100-80GB",
         f"llama-2-7b --strategy ddp {_LORA} --gradient-accumulation 4 --seq-len 4096 --attention sdpa "
         "--stack transformers==4.38.2",
         "Llama-2-7B-Chat (transformers' LlamaForCausalLM) in bf16 under DDP on four A100s (NPROC_PER_NODE=4; 80 GB "
         "assumed), LoRA r=8 dropout 0.05 on ALL linears, sharegpt-gpt4-mini (train_dataset_sample 1000) + 500 "
         "self-cognition samples, max_length 4096, batch 1 x accumulation ceil(16 / 4) = 4, March 2024 (transformers "
         "4.38.2, swift's requirement < 4.40; SDPA); the figure is each GPU's",
         [_SWIFT_LORA, _LONGEST.format(seq=4096, data="sharegpt-gpt4-mini, multi-turn chats, samples past 4096 "
                                       "dropped")]),
    _row("swift-doc-agent-qwen-7b-chat-lora-all-bs2-3090", _AGENT, _C_AGENT,
         "> 1. 该训练使用消费级单显卡也可以运行（对应的训练过程约15个小时，占用显存22G），用户可以将DDP改为单卡命令即可",
         "22G", "1xRTX3090",
         f"{_m('qwen-7b')} --strategy single {_LORA} --gradient-accumulation 32 --seq-len 1500 "
         "--attention sdpa --stack transformers==4.38.2",
         "Qwen-7B-Chat (model_revision master, March 2024) in bf16 (dtype AUTO), LoRA r=8 dropout 0.05 on ALL linears "
         "(tuner_backend swift), ms-agent (train_dataset_mix_ratio 2.0: mixed with general data) + 3000 "
         "self-cognition samples, max_length 1500, batch 2 x accumulation 32 (`expr 32 / $nproc_per_node` on one "
         "GPU), gradient checkpointing, on 'a single consumer GPU' (the argv takes a 24 GB RTX 3090), transformers "
         "4.38.2 (Qwen's hub revision of the day: SDPA without flash-attn)",
         [_QWEN_CODE, _SWIFT_LORA, _QWEN_FLASH, "the consumer GPU is not named (a 3090 or 4090: 24 GB)",
          _LONGEST.format(seq=1500, data="ms-agent's tool-calling dialogues, samples past 1500 dropped")], batch=2),
]

ROWS = [*_SELF_COGNITION, *_QWEN15_PAGE, *_FINETUNE_DOC, *_LATER_PAGES]
