"""Frozen, verdict rows: InternLM/xtuner's documentation (docs/zh_cn/acceleration/, 43ef6ab, June 2024), two pages.

* `xtuner-speed-benchmark-2024`: benchmark.rst, "速度基准" (speed benchmark), "NVIDIA A100-SXM4-80GB GPUs": a TGS
  (tokens per GPU per second) for each config it names, i.e. each ran there. Only the configs without sequence
  parallelism (`..._sp1.py`) are rows here: Llama2-7B at 8k and 32k tokens on 8 GPUs, Yi-34B-200K and Llama2-70B at
  8k on 32 GPUs (each row's cells quoted: model, GPUs, length, TGS, TFLOPs; its Config cell links the config,
  whose link text for Llama2-7B at 8k reads `llama2_70b_full_alpaca_enzh_8k_sp1.py` while the link goes to the 7B
  config, read as the 7B's). The sequence-parallel configs (sp2 to sp64: DeepSpeed-Ulysses-style splitting of the
  sequence over GPUs) are not expressible and left out.
* `xtuner-long-sequence-zero3-oom`: train_extreme_long_sequence.rst, "表 1" (Table 1): Yi-34B at 128k tokens under
  ZeRO-3 without sequence parallelism (SP 1) out of memory ("OOM") on 16, 32 and 64 GPUs; the table names no GPU:
  the argv takes the benchmark page's A100-SXM4-80GB (same documentation set, same team). Its SP 8 row (ran) is not
  expressible and left out.

Read at the same commit: the configs xtuner/configs/llama_speed_benchmark/<model>/<model>_full_alpaca_enzh_<len>_sp1.py
(full fine-tuning of meta-llama/Llama-2-7b, 01-ai/Yi-34B-200K, meta-llama/Llama-2-70b-hf; alpaca en + zh packed to
`max_length` with `pack_to_max_length=True`, `use_varlen_attn=False`: every sample is max_length tokens, attention
across the packed documents: --fixed-lengths; batch 1 per GPU, `accumulative_counts` 1; torch.optim.AdamW;
SupervisedFinetune's `use_activation_checkpointing=True`); xtuner/model/sft.py (`_prepare_for_flash_attn`: a Llama
config gets `attn_implementation='flash_attention_2'` and `torch_dtype=torch.bfloat16` when flash-attn is installed,
as a speed benchmark's environment has it: bf16 weights, --attention flash); xtuner/engine/_strategy/deepspeed.py
(HfDeepSpeedConfig built before the model: ZeRO-3 loads it under zero.Init); xtuner/configs/deepspeed/
deepspeed_zero3.json (stage 3, overlap_comm, bf16 'auto' -> on: fp32 master partitions, torch AdamW allowed as an
untested optimizer on them: --precision mixed, --optimizer adamw); the loss is transformers' own (LlamaForCausalLM's
on the fp32 logits; transformers 4.41.2, June 2024's release, within the requirement >=4.36, !=4.38.0-4.38.2).
The benchmark page does not say which `--deepspeed` config its runs used: the argv says ZeRO-3, the only stage under
which the 34B and 70B rows' bf16 weights fit on an 80 GB GPU and the stage the long-sequence page names.
"""

from __future__ import annotations

_COMMIT = "43ef6ab9972fafd6a614effefcc579be7adc569c"
_URL = f"https://github.com/InternLM/xtuner/blob/{_COMMIT}/docs/zh_cn/acceleration/{{page}}"
_HARDWARE = "硬件\n----\n\n-  NVIDIA A100-SXM4-80GB GPUs"
_ARGV = ("estimate --model {model} --system {system} --strategy zero3 --precision mixed --optimizer adamw "
         "--micro-batch 1 --seq-len {seq} --fixed-lengths --gradient-checkpointing --attention flash "
         "--stack transformers==4.41.2 --format json")
_SETTINGS = (
    "xtuner at 43ef6ab (June 2024), config {config}.py: {name} full fine-tuning on {gpus} x A100-SXM4-80GB under "
    "DeepSpeed ZeRO-3 (deepspeed_zero3.json, bf16, zero.Init), bf16 weights with flash-attn 2, activation "
    "checkpointing, torch AdamW on the fp32 partitions, alpaca en + zh packed to {seq:,} tokens, batch 1, no "
    "accumulation, transformers 4.41.2 (assumed: June 2024's release); {verdict}"
)
_UNEXPRESSED = [
    "which --deepspeed config the runs used: not printed (ZeRO-3 assumed, see the module docstring)",
    "mmengine's runner and xtuner's dispatch of the model's modules (RMSNorm, RoPE kernels where installed): what they "
    "keep for backward is not modelled beyond transformers' Llama",
    "packed samples attend across document boundaries (use_varlen_attn False): the same bytes as one long sequence",
]

# Stand-ins with the presets' shapes and the positions the runs fed: the speed configs pass no
# max_position_embeddings, so xtuner scales no RoPE and Llama-2 (4,096 positions) runs at 8k and 32k tokens
# (transformers computes RoPE for any position), while the CLI refuses a --seq-len past a config's positions
# (as universal_llm_trainer.py's Llama-2-13B at 8,192). Yi-34B-200K's own config has 200,000 positions.
_LLAMA2_7B = "benchmarks/published/models/llama-2-7b-32k/config.json"
_LLAMA2_70B = "benchmarks/published/models/llama-2-70b-8k/config.json"
_YI = "benchmarks/published/models/yi-34b-200k/config.json"


def _speed_row(key: str, model: str, name: str, config: str, gpus: int, seq: int, row_cells: str) -> dict:
    system = "8xA100-80GB" if gpus == 8 else f"{gpus // 8}x8xA100-80GB"
    return {"key": key, "source": "xtuner-speed-benchmark-2024", "url": _URL.format(page="benchmark.rst"),
            "quote": f"{_HARDWARE}\n...\n{row_cells}", "printed": row_cells.split()[-3],
            "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": _ARGV.format(model=model, system=system, seq=seq),
            "assumptions": _SETTINGS.format(config=config, name=name, gpus=gpus, seq=seq,
                                            verdict="a TGS printed for it: it ran there (no peak printed)"),
            "unexpressed": list(_UNEXPRESSED)}


def _oom_row(gpus: int) -> dict:
    nodes = gpus // 8
    cells = f"  * - 1\n    - yi-34B\n    - ZeRO-3\n    - {gpus}\n    - OOM"
    return {"key": f"xtuner-yi-34b-128k-zero3-sp1-{gpus}xa100-oom", "source": "xtuner-long-sequence-zero3-oom",
            "url": _URL.format(page="train_extreme_long_sequence.rst"),
            "quote": f".. list-table:: **表 1 不同序列长度时，使用 ZeRO-3 训练 128k 上下文 yi-34B 模型的训练情况**\n...\n{cells}",
            "printed": "OOM", "measured_bytes": None, "metric": "reserved", "ran": False,
            "argv": _ARGV.format(model=_YI,
                                 system=f"{nodes}x8xA100-80GB", seq=131072),
            "assumptions": _SETTINGS.format(config="yi_34b_200k_full_alpaca_enzh_128k (SP 1: the sp8 config with "
                                                   "sequence_parallel_size 1)", name="Yi-34B-200K", gpus=gpus,
                                            seq=131072, verdict="printed OOM"),
            "unexpressed": [*_UNEXPRESSED,
                            "the GPU: Table 1 names none; the argv takes the benchmark page's A100-SXM4-80GB",
                            "the SP 1 run's accumulation: the sp8 config's accumulative_counts 8 keeps the global "
                            "batch; with SP 1 the page does not say (the argv says 1; accumulation only adds the "
                            "live gradients, and the row is out of memory in the first micro-batch's activations)"]}

ROWS = [
    _speed_row("xtuner-llama2-7b-full-zero3-8k-8xa100-ran", _LLAMA2_7B, "Llama2-7B",
               "llama2_7b_full_alpaca_enzh_8k_sp1", 8, 8192,
               "  * - Llama2-7B\n    - 8\n    - 8k\n    - 3028.3\n    - 185.3"),
    _speed_row("xtuner-llama2-7b-full-zero3-32k-8xa100-ran", _LLAMA2_7B, "Llama2-7B",
               "llama2_7b_full_alpaca_enzh_32k_sp1", 8, 32768,
               "  * - Llama2-7B\n    - 8\n    - 32k\n    - 2234.2\n    - 193.0"),
    _speed_row("xtuner-yi-34b-200k-full-zero3-8k-32xa100-ran", _YI, "Yi-34B-200K",
               "yi_34b_200k_full_alpaca_enzh_8k_sp1", 32, 8192,
               "  * - Yi-34B-200K\n    - 32\n    - 8k\n    - 485.1\n    - 165.6"),
    _speed_row("xtuner-llama2-70b-full-zero3-8k-32xa100-ran", _LLAMA2_70B, "Llama2-70B",
               "llama2_70b_full_alpaca_enzh_8k_sp1", 32, 8192,
               "  * - Llama2-70B\n    - 32\n    - 8k\n    - 216.8\n    - 144.7"),
    *(_oom_row(gpus) for gpus in (16, 32, 64)),
]
