"""Frozen: ms-swift's example training scripts (examples/pytorch/llm/scripts/<model>/<method>/sft.sh, swift 1.2-1.6,
October 2023 - February 2024): each script's header says the GPU it ran on and the GPU memory it took
("# Experimental environment: A10, 3090" / "# 18GB GPU memory"; "# 2 * 18GB GPU memory" on two GPUs, each GPU's).
Not the Benchmark page (ms_swift_benchmark.py, a design source): other runs, other settings, other figures.

Each row is read at the commit that wrote its figure (`git log -S` on the header line), with the script and swift's
code at that commit: `swift sft` (llm_sft.py) on the HF Trainer (swift's Seq2SeqTrainer subclass), `optim
adamw_torch` (SftArguments' default), batch 1 with accumulation 16 (8 per GPU on two), gradient checkpointing on,
`dtype AUTO`/`bf16` -> bf16 weights with the Trainer's bf16=True (autocast); LoRA rank 8 (lora_alpha 32) through
swift's own LoRA (`tuner_backend swift`) on `ALL` linears or the model's `DEFAULT` (Qwen: the fused c_attn; Yi: q,
k and v_proj); QLoRA: BitsAndBytesConfig NF4 with double quantization (SftArguments' default) and bf16 compute, and
NO prepare_model_for_kbit_training (swift never calls it at these commits: the embedding, norms and lm_head stay
bf16, --no-kbit-prepare). DeepSpeed where the script says so (`ds_config/zero2.json`: ZeRO-2 with the optimizer
offloaded to the CPU; no autocast under DeepSpeed: Qwen's own loss then runs on the bf16 logits, --loss-dtype bf16,
as qwen_readme.py's rows). Data: the collator pads each batch to its longest; with batch 1 every sample runs at its
own length (--varying-lengths); samples past `max_length` are dropped (truncation_strategy 'delete') or, before
November 2023, cut to it: the longest sample is assumed to reach `max_length` (as ms_swift_benchmark.py assumes).

Qwen's model code (model_type qwen, trust_remote_code) is not in transformers: the argv names the Qwen2 config.json
stand-ins of the same shapes under benchmarks/published/models/ (those of ms_swift_benchmark.py); its remote-code
loss shifts the logits with a contiguous copy, as transformers' own loss did before 4.49 (--stack transformers==the
month's release). Attention without `use_flash_attn`: Qwen's code before its 2023-11-30 revision runs eager
attention, from that revision torch's SDPA with an explicit mask; Yi (LlamaForCausalLM, transformers 4.34/4.35)
runs eager attention.

What the number is: not said; read as nvidia-smi's used memory, "GB" as GiB (nvidia-smi's MiB / 1024), per GPU.
Left out: the int4/int8 (GPTQ) models' scripts (not bitsandbytes), `lora_mp`/`full_mp` scripts (one model split
over GPUs by device_map: naive model parallelism), models without a stand-in here (ChatGLM, Baichuan, InternLM,
Mistral/OpenBuddy, CodeFuse), and scripts whose header was written for different settings than it now sits beside.
"""

from __future__ import annotations

_URL = "https://github.com/modelscope/ms-swift/blob/{commit}/examples/pytorch/llm/scripts/{script}/sft.sh"
_QKV = "--lora-target q_proj --lora-target k_proj --lora-target v_proj "
_GIB = ("'GB' read as GiB (nvidia-smi's MiB / 1024); read as 1e9 bytes the figure would be 6.9% smaller; how it was "
        "read (nvidia-smi, torch's counters) the script does not say, nor at which step")
_SWIFT_LORA = "swift's own LoRA implementation (tuner_backend swift), not PEFT; its adapters' dtype not read"
_QWEN_CODE = ("Qwen's own modeling code (model_type qwen, trust_remote_code): the argv names a Qwen2 config.json of "
              "its shapes")
_FUSED = ("LoRA on Qwen's fused c_attn (one adapter of rank 8, 4096 -> 3 x 4096): the stand-in's q/k/v_proj, three "
          "of rank 8")
_LONGEST = ("the longest sample assumed to reach max_length {seq} (the dataset, {data}, was not at hand; a shorter "
            "longest sample means a smaller peak)")
_QWEN_ATTN = ("Qwen's attention without flash-attn: the argv says {attn} for the hub revision of the day ({why}); "
              "which revision the run downloaded is not printed")


def _row(key: str, script: str, commit: str, header: str, printed: str, system: str, argv: str, what: str,
         unexpressed: list[str]) -> dict:
    return {"key": key, "source": "ms-swift-example-scripts",
            "url": _URL.format(commit=commit, script=script), "quote": header, "printed": printed,
            "measured_bytes": int(round(float(printed.rstrip("GB")) * 2**30)), "metric": "nvidia-smi",
            "argv": f"estimate --model {argv.split()[0]} --system {system} {' '.join(argv.split()[1:])} "
                    "--micro-batch 1 --gradient-checkpointing --varying-lengths --format json",
            "assumptions": f"ms-swift {script}/sft.sh at {commit[:9]} (the commit that wrote its figure): {what}",
            "unexpressed": [_GIB, *unexpressed]}


def _m(name: str) -> str:
    return f"benchmarks/published/models/{name}/config.json"


ROWS = [
    _row("swift-script-qwen-7b-chat-lora-all-a100", "qwen_7b_chat/lora", "50eb82b09d73669f993a5437ebd826a11d297737",
         "# Experimental environment: A100\n# 24GB GPU memory", "24GB", "1xA100-80GB",
         f"{_m('qwen-7b')} --strategy single --precision bf16 --lora --lora-rank 8 --lora-dropout 0.05 "
         "--gradient-accumulation 16 --seq-len 2048 --attention sdpa --stack transformers==4.37",
         "Qwen-7B-Chat, bf16 (dtype AUTO on an A100), LoRA r=8 dropout 0.05 on ALL linears, ms-agent (mix ratio 2.0) "
         "with 3,000 self-cognition samples, max_length 2048, batch 1 x accumulation 16, use_flash_attn false, one "
         "A100 (80 GB assumed), February 2024 (transformers 4.37)",
         [_QWEN_CODE, _SWIFT_LORA, _LONGEST.format(seq=2048, data="ms-agent"),
          _QWEN_ATTN.format(attn="sdpa", why="after 2023-11-30: torch's SDPA with an explicit mask")]),
    _row("swift-script-qwen-7b-chat-qlora-all-a10", "qwen_7b_chat/qlora", "e818bf260d6ab5f9e960b0b684a3cffd36e52130",
         "# Experimental environment: A10, 3090\n# 18GB GPU memory", "18GB", "1xA10G",
         f"{_m('qwen-7b')} --strategy single --qlora --precision bf16 --no-kbit-prepare --lora-rank 8 "
         "--lora-dropout 0.05 --gradient-accumulation 16 --seq-len 4096 --attention eager --stack transformers==4.35",
         "Qwen-7B-Chat, NF4 with double quantization and bf16 compute (bnb_4bit_comp_dtype AUTO), no k-bit "
         "preparation, LoRA r=8 dropout 0.05 on ALL linears, damo-agent-mini-zh (20,000 samples), max_length 4096, "
         "batch 1 x accumulation 16, use_flash_attn false, one A10 or 3090 (the argv says the A10: 22.5 GiB), "
         "November 2023 (transformers 4.35)",
         [_QWEN_CODE, _SWIFT_LORA, _LONGEST.format(seq=4096, data="damo-agent-mini-zh"),
          _QWEN_ATTN.format(attn="eager", why="before 2023-11-30: the score matrix in eager matmuls")]),
    _row("swift-script-qwen-1.8b-chat-full-a10", "qwen_1_8b_chat/full", "9efe7ddd3fdb79dd4fdff1be1339202a1dee6748",
         "# Experimental environment: A10\n# 20GB GPU memory", "20GB", "1xA10G",
         f"{_m('qwen-1.8b')} --strategy single --precision bf16 --optimizer adamw --gradient-accumulation 16 "
         "--seq-len 2048 --attention sdpa --stack transformers==4.35",
         "Qwen-1.8B-Chat full fine-tuning in bf16 (bf16 weights, torch AdamW with bf16 states), cmnli-mini-zh, "
         "max_length 2048, batch 1 x accumulation 16, use_flash_attn false, one A10, November 2023 (transformers "
         "4.35)",
         [_QWEN_CODE, _LONGEST.format(seq=2048, data="cmnli-mini-zh, short sentence pairs: the cap is likely far"),
          _QWEN_ATTN.format(attn="sdpa", why="Qwen-1.8B was released on 2023-11-30 with the SDPA path")]),
    _row("swift-script-qwen-14b-chat-qlora-all-a10", "qwen_14b_chat/qlora", "d2551e979e64147615b2aef5e05c5bc333aeb872",
         "# Experimental environment: A10 or 3090\n# 16GB GPU memory", "16GB", "1xA10G",
         f"{_m('qwen-14b')} --strategy single --qlora --precision bf16 --no-kbit-prepare --lora-rank 8 "
         "--gradient-accumulation 16 --seq-len 2048 --attention eager --stack transformers==4.34",
         "Qwen-14B-Chat, NF4 with double quantization and bf16 compute, no k-bit preparation, LoRA r=8 without "
         "dropout on ALL linears, blossom-math-zh, max_length 2048 (longer samples cut to it), batch 1 x "
         "accumulation 16, use_flash_attn false, one A10 or 3090 (the argv says the A10), October 2023 (swift "
         "1.2's examples/pytorch/llm/src; transformers 4.34)",
         [_QWEN_CODE, "swift 1.2's LoRA (examples/pytorch/llm/src: swift's own tuner); its adapters' dtype not read",
          _LONGEST.format(seq=2048, data="blossom-math-zh, math word problems: the cap is likely far"),
          _QWEN_ATTN.format(attn="eager", why="before 2023-11-30")]),
    _row("swift-script-qwen-72b-chat-qlora-default-a100", "qwen_72b_chat/qlora",
         "9efe7ddd3fdb79dd4fdff1be1339202a1dee6748", "# Experimental environment: A100\n# 45GB GPU memory", "45GB",
         "1xA100-80GB",
         f"{_m('qwen-72b')} --strategy single --qlora --precision bf16 --no-kbit-prepare --lora-rank 8 "
         f"--lora-dropout 0.05 {_QKV}--gradient-accumulation 16 --seq-len 2048 --attention flash "
         "--stack transformers==4.35",
         "Qwen-72B-Chat, NF4 with double quantization and bf16 compute, no k-bit preparation, LoRA r=8 dropout 0.05 "
         "on DEFAULT (c_attn), blossom-math-zh (20,000 samples), max_length 2048, batch 1 x accumulation 16, "
         "flash-attn on, one A100 (80 GB assumed), November 2023 (transformers 4.35)",
         [_QWEN_CODE, _FUSED, _SWIFT_LORA, _LONGEST.format(seq=2048, data="blossom-math-zh")]),
    _row("swift-script-yi-34b-chat-qlora-default-a10", "yi_34b_chat/qlora", "2180a0865fe9bb994bc6df452e600b7d2915bc1a",
         "# Experimental environment: A10, 3090\n# 21GB GPU memory", "21GB", "1xA10G",
         f"{_m('yi-34b')} --strategy single --qlora --precision bf16 --no-kbit-prepare --lora-rank 8 "
         f"--lora-dropout 0.05 {_QKV}--gradient-accumulation 16 --seq-len 2048 --attention eager "
         "--stack transformers==4.35",
         "Yi-34B-Chat (LlamaForCausalLM), NF4 with double quantization and bf16 compute, no k-bit preparation, "
         "LoRA r=8 dropout 0.05 on DEFAULT (q, k and v_proj), blossom-math-zh, max_length 2048, batch 1 x "
         "accumulation 16, use_flash_attn false, one A10 or 3090 (the argv says the A10), November 2023 "
         "(transformers 4.35: eager attention)",
         [_SWIFT_LORA, _LONGEST.format(seq=2048, data="blossom-math-zh")]),
    _row("swift-script-yi-6b-lora-all-a10", "yi_6b/lora", "0b3f840378b0a9b0da456bf71697cf60b8ad0a7f",
         "# Experimental environment: A10\n# 15GB GPU memory", "15GB", "1xA10G",
         f"{_m('yi-6b')} --strategy single --precision bf16 --lora --lora-rank 8 --lora-dropout 0.05 "
         "--gradient-accumulation 16 --seq-len 2048 --attention eager --stack transformers==4.35",
         "Yi-6B (LlamaForCausalLM) in bf16, LoRA r=8 dropout 0.05 on ALL linears, dureader-robust-zh, max_length "
         "2048, batch 1 x accumulation 16, flash-attn not asked for, one A10, November 2023 (transformers 4.35: eager "
         "attention)",
         [_SWIFT_LORA, _LONGEST.format(seq=2048, data="dureader-robust-zh")]),
    _row("swift-script-qwen-7b-chat-lora-all-zero2-offload-2xa10", "qwen_7b_chat/lora_ddp_ds",
         "fe9674a8a569796ba06dab7695504e0f4a8be080", "# Experimental environment: 2 * A10\n# 2 * 18GB GPU memory",
         "18GB", "2xA10G",
         f"{_m('qwen-7b')} --strategy zero2 --offload-optimizer cpu --precision bf16 --loss-dtype bf16 --lora "
         "--lora-rank 8 --gradient-accumulation 8 --seq-len 2048 --attention eager --stack transformers==4.34",
         "Qwen-7B-Chat in bf16 under DeepSpeed ZeRO-2 with the optimizer offloaded to the CPU (ds_config/zero2.json "
         "at that commit; bf16 'auto' -> on), no autocast under DeepSpeed (Qwen's loss on the bf16 logits), LoRA r=8 "
         "without dropout on ALL linears, advertise-gen, max_length 2048 (longer samples cut to it), batch 1 x "
         "accumulation 8 per GPU, use_flash_attn false, two A10s (torchrun), October 2023 (transformers 4.34); the "
         "figure is each GPU's",
         [_QWEN_CODE, "swift 1.2's LoRA (examples/pytorch/llm/src: swift's own tuner); its adapters' dtype not read",
          _LONGEST.format(seq=2048, data="advertise-gen, short advertising texts: the cap is likely far"),
          _QWEN_ATTN.format(attn="eager", why="before 2023-11-30")]),
    _row("swift-script-yi-34b-chat-lora-default-ddp-2xa100", "yi_34b_chat/lora_ddp_ds",
         "2180a0865fe9bb994bc6df452e600b7d2915bc1a", "# Experimental environment: 2 * A100\n# 2 * 72GB GPU memory",
         "72GB", "2xA100-80GB",
         f"{_m('yi-34b')} --strategy ddp --precision bf16 --lora --lora-rank 8 --lora-dropout 0.05 {_QKV}"
         "--gradient-accumulation 8 --seq-len 2048 --attention flash --stack transformers==4.35",
         "Yi-34B-Chat in bf16 under DDP (torchrun on two A100s; the script at that commit passes no DeepSpeed "
         "config despite its folder's name), LoRA r=8 dropout 0.05 on DEFAULT (q, k and v_proj), blossom-math-zh, "
         "max_length 2048, batch 1 x accumulation 8 per GPU, flash-attn on, November 2023 (transformers 4.35); the "
         "figure is each GPU's",
         [_SWIFT_LORA, _LONGEST.format(seq=2048, data="blossom-math-zh")]),
]
