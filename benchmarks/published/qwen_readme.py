"""Frozen: the QwenLM/Qwen README's "Profiling of Memory and Speed" table (Qwen-1.8B/7B/14B/72B on A100-SXM4-80G).

Settings read from the repository at the pinned commit (finetune.py and finetune/*.sh): HF Trainer with
`--bf16 True` on a model whose own code casts its weights to bf16 on an A100 (Qwen's `config.bf16` is
auto-set), every sample right-padded to `model_max_length` (so each step is exactly the column's length), batch 1
and accumulation 8 (the README's profiling text; the scripts say 2), gradient checkpointing on, torch AdamW
(`optim="adamw_torch"`), LoRA r=64 alpha 16 dropout 0.05 on `c_attn`, `c_proj`, `w1`, `w2` (every block linear),
flash-attention 2. LoRA on one GPU runs without DeepSpeed; Q-LoRA loads the GPTQ Int4 chat model in fp16 under
DeepSpeed ZeRO-2 (`finetune_qlora_single_gpu.sh`); full-parameter runs `finetune_ds.sh` (ZeRO-3); the multinode
LoRA rows `finetune_lora_ds.sh` (ZeRO-2); 72B LoRA passes `ds_config_zero3.json`.

What the number is: "the memory (GB)", the tool not named; read as the process's footprint (nvidia-smi) in 10^9
bytes. GB and not GiB because the 7B full-parameter cell at 1024 tokens, 162.0 on two GPUs, is 81.0 per GPU:
above an A100-80G's 80 GiB in GiB, possible in GB. Multi-GPU cells are read as the sum over the GPUs (that cell
and 72B's 215.4-289.2 on four exceed one 80G GPU); the row's measured figure is the cell divided by the GPU count.

Qwen's model code (model_type `qwen`, trust_remote_code) is not in transformers, so the argv names a Qwen2
config.json with the same shapes (benchmarks/published/models/qwen-*/config.json: qkv bias, no grouped KV,
untied embeddings; parameter counts equal to Qwen's: 1,836,828,672 / 7,721,324,544 / 14,167,290,880 /
72,287,920,128). Left out: the 18 "LoRA (emb)" cells (`modules_to_save=["wte", "lm_head"]`, trainable
embedding and output layer, which the argv cannot say).
"""

from __future__ import annotations

_URL = "https://github.com/QwenLM/Qwen/blob/2df8e8ac450fa185c421a08b0090ef81826caa6e/README.md"
_LENGTHS = (256, 512, 1024, 2048, 4096, 8192)
_COMMON = (
    "QwenLM/Qwen README 'Profiling of Memory and Speed', row '{size} / {method}' ({nodes} node(s) x {gpus} GPU(s)), "
    "column {seq}: A100-SXM4-80G, CUDA 11.8, PyTorch 2.0, flash-attention 2, batch 1, accumulation 8, samples "
    "padded to model_max_length={seq}, gradient checkpointing, torch AdamW; {how}; 'memory (GB)' read as the "
    "process footprint (nvidia-smi) in 10^9 bytes{per_gpu}"
)
_HOW = {
    "LoRA": "LoRA r=64 alpha 16 dropout 0.05 on c_attn/c_proj/w1/w2 of the chat model, bf16 weights (Qwen's code "
            "casts them), Trainer bf16 autocast, no DeepSpeed",
    "Q-LoRA": "Q-LoRA on the GPTQ Int4 chat model (Qwen-*-Chat-Int4), fp16, DeepSpeed ZeRO-2 on one GPU "
              "(finetune_qlora_single_gpu.sh), prepare_model_for_kbit_training, LoRA r=64 on c_attn/c_proj/w1/w2; "
              "the loss in fp16: DeepSpeed's engine casts the model to fp16 and accelerate does not autocast under "
              "DeepSpeed, and Qwen's remote code takes CrossEntropyLoss on lm_logits without .float() "
              "(--loss-dtype fp16)",
    "Full-parameter": "full-parameter, bf16 under DeepSpeed ZeRO-3 (finetune_ds.sh, ds_config_zero3.json: fp32 "
                      "master and AdamW states in DeepSpeed's optimizer)",
    "LoRA (multinode)": "LoRA r=64 on c_attn/c_proj/w1/w2, bf16, DeepSpeed ZeRO-2 (finetune_lora_ds.sh) on 2 nodes "
                        "of 2 GPUs",
    "LoRA + Deepspeed Zero3": "LoRA r=64 on c_attn/c_proj/w1/w2 of the chat model, bf16, DeepSpeed ZeRO-3 "
                              "(ds_config_zero3.json)",
}
_FLAGS = {
    "LoRA": "--strategy single --precision bf16 --lora",
    "Q-LoRA": "--strategy zero2 --precision mixed --qlora --loss-dtype fp16",
    "Full-parameter": "--strategy zero3 --precision bf16",
    "LoRA (multinode)": "--strategy zero2 --precision bf16 --lora",
    "LoRA + Deepspeed Zero3": "--strategy zero3 --precision bf16 --lora",
}
_MODEL = "Qwen's own modeling code (model_type qwen, trust_remote_code): argv names a Qwen2 config.json of its shapes"
# Qwen's remote code computes its loss on the logits as they come (`CrossEntropyLoss()(shift_logits, ...)`, no
# `.float()`): under DeepSpeed's 16-bit engine (no autocast) that is a 16-bit loss. The Q-LoRA argv says so
# (--loss-dtype fp16); the bf16 DeepSpeed rows keep transformers' fp32 loss, the line below says why.
_BF16_LOSS = ("Qwen's loss on the bf16 logits under DeepSpeed (a bf16 loss) is not given: with --loss-dtype bf16 the "
              "7B full-parameter 2048-token row, measured out of memory, reads 'fits' (71.5 GiB of 80) and the "
              "2-node LoRA rows fall to -19 %, so something else in these rows is not modelled yet")
_UNEXPRESSED = {
    "LoRA": ["peft<0.8 keeps the adapters in the base's bf16 (no autocast_adapter_dtype)"],
    "Q-LoRA": ["GPTQ Int4 base (auto-gptq, group size 128, fp16 scales), not bitsandbytes NF4",
               "fp16 with DeepSpeed's dynamic loss scaler"],
    "Full-parameter": [_BF16_LOSS],
    "LoRA (multinode)": [_BF16_LOSS],
    "LoRA + Deepspeed Zero3": [_BF16_LOSS],
}

# (size, method, nodes, GPUs per node, the cells as printed: "memory / speed", "-" where not measured)
_TABLE = [
    ("1.8B", "LoRA", 1, 1, ["6.7G / 1.0s/it", "7.4G / 1.0s/it", "8.4G / 1.1s/it", "11.0G / 1.7s/it",
                            "16.2G / 3.3s/it", "21.8G / 6.8s/it"]),
    ("1.8B", "Q-LoRA", 1, 1, ["5.8G / 1.4s/it", "6.0G / 1.4s/it", "6.6G / 1.4s/it", "7.8G / 2.0s/it",
                              "10.2G / 3.4s/it", "15.8G / 6.5s/it"]),
    ("1.8B", "Full-parameter", 1, 1, ["43.5G / 2.1s/it", "43.5G / 2.2s/it", "43.5G / 2.2s/it", "43.5G / 2.3s/it",
                                      "47.1G / 2.8s/it", "48.3G / 5.6s/it"]),
    ("7B", "LoRA", 1, 1, ["20.1G / 1.2s/it", "20.4G / 1.5s/it", "21.5G / 2.8s/it", "23.8G / 5.2s/it",
                          "29.7G / 10.1s/it", "36.6G / 21.3s/it"]),
    ("7B", "Q-LoRA", 1, 1, ["11.5G / 3.0s/it", "11.5G / 3.0s/it", "12.3G / 3.5s/it", "13.9G / 7.0s/it",
                            "16.9G / 11.6s/it", "23.5G / 22.3s/it"]),
    ("7B", "Full-parameter", 1, 2, ["139.2G / 4.0s/it", "148.0G / 4.0s/it", "162.0G / 4.5s/it", "-", "-", "-"]),
    ("7B", "LoRA (multinode)", 2, 2, ["74.7G / 2.09s/it", "77.6G / 3.16s/it", "84.9G / 5.17s/it", "95.1G / 9.25s/it",
                                      "121.1G / 18.1s/it", "155.5G / 37.4s/it"]),
    ("14B", "LoRA", 1, 1, ["34.6G / 1.6s/it", "35.1G / 2.4s/it", "35.3G / 4.4s/it", "37.4G / 8.4s/it",
                           "42.5G / 17.0s/it", "55.2G / 36.0s/it"]),
    ("14B", "Q-LoRA", 1, 1, ["18.7G / 5.3s/it", "18.4G / 6.3s/it", "18.9G / 8.2s/it", "19.9G / 11.8s/it",
                             "23.0G / 20.1s/it", "27.9G / 38.3s/it"]),
    ("72B", "LoRA + Deepspeed Zero3", 1, 4, ["215.4G / 17.6s/it", "217.7G / 20.5s/it", "222.6G / 29.4s/it",
                                             "228.8G / 45.7s/it", "249.0G / 83.4s/it", "289.2G / 161.5s/it"]),
    ("72B", "Q-LoRA", 1, 1, ["61.4G / 27.4s/it", "61.4G / 31.5s/it", "62.9G / 41.4s/it", "64.1G / 59.5s/it",
                             "68.0G / 97.7s/it", "75.6G / 179.8s/it"]),
]


def _row(size: str, method: str, nodes: int, gpus: int, seq: int, cell: str) -> dict:
    printed = cell.split(" / ")[0]
    total = float(printed.rstrip("G")) * 1e9
    system = f"{nodes}x{gpus}xA100-80GB" if nodes > 1 else f"{gpus}xA100-80GB"
    lora = "" if method == "Full-parameter" else "--lora-rank 64 --lora-dropout 0.05 "
    per_gpu = f"; the cell is the sum over {nodes * gpus} GPUs, divided here" if nodes * gpus > 1 else ""
    slug = method.lower().replace(" + deepspeed zero3", "-zero3").replace(" (multinode)", "-2nodes")
    return {
        "key": f"qwen-readme-{size.lower()}-{slug}-{seq}", "source": "qwen-readme-profiling", "url": _URL,
        "quote": f'<td align="center">{cell}</td>', "printed": printed,
        "measured_bytes": int(total / (nodes * gpus)), "metric": "nvidia-smi", "printed_gpus": nodes * gpus,
        "argv": f"estimate --model benchmarks/published/models/qwen-{size.lower()}/config.json --system {system} "
                f"{_FLAGS[method]} {lora}--micro-batch 1 --gradient-accumulation 8 --seq-len {seq} "
                "--gradient-checkpointing "
                "--attention flash --format json",
        "assumptions": _COMMON.format(size=size, method=method, nodes=nodes, gpus=gpus, seq=seq, how=_HOW[method],
                                      per_gpu=per_gpu),
        "unexpressed": [_MODEL, *_UNEXPRESSED.get(method, [])],
    }


ROWS = [_row(size, method, nodes, gpus, seq, cell)
        for size, method, nodes, gpus, cells in _TABLE
        for seq, cell in zip(_LENGTHS, cells) if cell != "-"]

# The 7B full-parameter row stops at 1024 tokens: "We only report the statistics of 256, 512, and 1024 tokens due to
# the limitation of GPU memory" -- read as 2048 tokens not fitting on the two GPUs (a verdict check only).
ROWS.append({
    "key": "qwen-readme-7b-full-parameter-2048-oom", "source": "qwen-readme-profiling", "url": _URL,
    "quote": "We only report the statistics of 256, 512, and 1024 tokens due to the limitation of GPU memory.",
    "printed": "limitation of GPU memory", "measured_bytes": None, "metric": "nvidia-smi", "ran": False,
    "argv": "estimate --model benchmarks/published/models/qwen-7b/config.json --system 2xA100-80GB --strategy zero3 "
            "--precision bf16 --micro-batch 1 --gradient-accumulation 8 --seq-len 2048 --gradient-checkpointing "
            "--attention flash --format json",
    "assumptions": _COMMON.format(size="7B", method="Full-parameter", nodes=1, gpus=2, seq=2048,
                                  how=_HOW["Full-parameter"], per_gpu="") + "; the 2048 column is '-', read as OOM",
    "unexpressed": [_MODEL, _BF16_LOSS],
})
