"""Design (frozen until issue 28's sixteenth round; moved when LitGPT's own GPT became expressible, `--stack
litgpt==0.2.0`: estimate/litgpt_model.py): LitGPT's Lightning Thunder page as first written
(extensions/thunder/README.md, PR #1171, 2024-03-20), its "Examples and benchmarks" table: TinyLlama 1.1B pretrained
from scratch with extensions/thunder/pretrain.py on A100-SXM4-40GB, three data-parallel settings by three compilers.

What the number is: "Memory (GB)", the script's `fabric.print(f"Memory used: {torch.cuda.max_memory_allocated() /
1e9:.02f} GB")` after training (allocated, 10^9 bytes, rank 0's GPU: one GPU's figure).

The settings, read in extensions/thunder/pretrain.py at fc60043 (the same commit): `Config.from_name
("tiny-llama-1.1b")` (22 layers, 2048 wide, 32 heads in 4 query groups, MLP 5632, vocab 32000, untied head, block
2048), built under `fabric.init_module(empty_init=True)` with `precision="bf16-true"` (weights, gradients and
optimizer states in bf16), `torch.optim.AdamW(..., fused=True)`, no activation checkpointing, micro-batch 4 of
2048-token pretokenized TinyStories chunks (fixed length), the loss litgpt.utils.chunked_cross_entropy on the
logits split in 128-row chunks, attention by torch's SDPA. (Fabric's `_FabricModule.forward` casts the logits to
fp32 before the loss, `precision.convert_output`, and the loop holds them through backward: read after this source
was scored, estimate/litgpt_model.py, said by `--stack litgpt==0.2.0`, the last release before fc60043, whose
pyproject says 0.3.0.dev0.) `--strategy fsdp` (the default): Fabric's
FSDPStrategy(auto_wrap_policy={Block}, FULL_SHARD), run with `--train.global_batch_size 32` (4 per GPU: no
accumulation, "Gradient accumulation is disabled in the FSDP setting"); `--strategy ddp`: Fabric's DDP at the default
global batch 512 (16 micro-batches accumulated under no_backward_sync); `--devices 1`: global batch 512, 128
accumulated. torch 2.3.0.dev20240314+cu121 (the page's environment). The Inductor (`--compiler torch`,
torch.compile) and Thunder (`--compiler thunder`, its own executors) rows are kept as not expressible: the CLI
estimates eager PyTorch.
"""

from __future__ import annotations

_URL = ("https://github.com/Lightning-AI/litgpt/blob/fc6004391c8fd0b87e0e9fb534cd46b2430a1554/"
        "extensions/thunder/README.md")
_SOURCE = "litgpt-thunder-benchmark-2024"
_MODEL = "benchmarks/published/models/tinyllama-1.1b/config.json"
_HEADER = ("| Data parallel | Compiler/JIT | Devices | ms/iter @ step 10 | Memory (GB) |\n"
           "|---------------|--------------|---------|-------------------|-------------|\n")
_SETTINGS = (
    "LitGPT extensions/thunder/pretrain.py at fc60043: TinyLlama 1.1B from scratch, bf16-true (bf16 weights, "
    "gradients and fused-AdamW states), no activation checkpointing, micro-batch 4 x 2048 tokens of TinyStories, "
    "chunked cross-entropy on the bf16 logits, SDPA, {how}; 'Memory (GB)' is torch.cuda.max_memory_allocated() in "
    "10^9 bytes on one A100-SXM4-40GB, torch 2.3.0 nightly"
)
_COMMON = "--precision bf16 --optimizer-kernel fused --micro-batch 4 --seq-len 2048 --fixed-lengths --attention sdpa "
# LitGPT's own GPT and Fabric loop (estimate/litgpt_model.py): the argv gained it when the source moved to design
_STACK = "--stack torch==2.3.0 --stack litgpt==0.2.0 "
_UNEXPRESSED = [
    "the validation before training (2 batches of 4 x 2048 under no_grad) and measure_flops on the meta device",
]
_WHERE = {
    "fsdp": ("--system 8xA100-40GB --strategy fsdp_full --fsdp-version 1 --no-fsdp-upcast --gradient-accumulation 1",
             "8 GPUs under Fabric's FSDP1 (full shard, each Block wrapped; the model created in bf16, nothing "
             "upcast), global batch 32 (no accumulation)"),
    "ddp": ("--system 8xA100-40GB --strategy ddp --gradient-accumulation 16",
            "8 GPUs under Fabric's DDP, global batch 512 (16 micro-batches accumulated per step)"),
    "single": ("--system 8xA100-40GB --gpus 1 --strategy single --gradient-accumulation 128",
               "one GPU, global batch 512 (128 micro-batches accumulated per step)"),
}
_SETTING = {"fsdp": "FSDP Zero 3", "ddp": "Replicated", "single": "None"}


def _cell(where: str, compiler: str, devices: int, ms: str, memory: str) -> str:
    return f"| {_SETTING[where]:<13} | {compiler:<12} | {devices:<7} | {ms:<17} | {memory:<11} |"


def _row(where: str, compiler: str, ms: str, memory: str) -> dict:
    devices = 1 if where == "single" else 8
    line = _cell(where, compiler, devices, ms, memory)
    flags, how = _WHERE[where]
    first = where == "fsdp" and compiler == "Eager"  # the table's first row follows its header; the rest are cut
    row = {"key": f"litgpt-thunder-tinyllama-{where}-{compiler.lower()}", "source": _SOURCE, "url": _URL,
           "quote": _HEADER + ("" if first else "...\n") + line, "printed": memory, "metric": "allocated",
           "measured_bytes": int(round(float(memory) * 1e9)) if memory != "OOM" else None,
           "assumptions": _SETTINGS.format(how=how)}
    if compiler == "Eager":
        row.update(argv=f"estimate --model {_MODEL} {flags} {_COMMON}--loss-dtype bf16 --no-gradient-checkpointing "
                        f"{_STACK}--format json",
                   unexpressed=list(_UNEXPRESSED))
    else:
        row.update(argv=None, not_expressible=(
            f"compiled with {'torch.compile (Inductor)' if compiler == 'Inductor' else 'Lightning Thunder'}: fused "
            "kernels change which activations are kept; the CLI estimates eager PyTorch"))
        if memory == "OOM":
            row["ran"] = False
    return row


ROWS = [
    _row("fsdp", "Eager", "460.88", "22.13"),
    _row("fsdp", "Inductor", "318.71", "17.08"),
    _row("fsdp", "Thunder", "345.02", "18.28"),
    _row("ddp", "Eager", "535.28", "32.05"),
    _row("ddp", "Inductor", "348.19", "27.01"),
    _row("ddp", "Thunder", "OOM", "OOM"),
    _row("single", "Eager", "449.88", "29.85"),
    _row("single", "Inductor", "320.22", "24.81"),
    _row("single", "Thunder", "322.83", "26.37"),
]
