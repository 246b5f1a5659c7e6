"""Published numbers: model-state formulas as other tools print them, and measured peaks as frameworks report them.

* `zero_paper_model_states`: ZeRO (Rajbhandari et al., SC'20, arXiv:1910.02054) §5: per device,
  mixed-precision Adam with K = 12 bytes/param of fp32 optimizer state; stage 0 = DDP, 1 = P_os, 2 = P_os+g,
  3 = P_os+g+p.
* `deepspeed_zero2_model_states` / `deepspeed_zero3_model_states`: the "deepspeed-compatible" mode, the
  formulas of `estimate_zero2_model_states_mem_needs` (runtime/zero/stage_1_and_2.py, current since v0.14.3:
  `2P + 18P/N`) and `estimate_zero3_model_states_mem_needs` (runtime/zero/stage3.py), returning
  (cpu_bytes_per_node, gpu_bytes). They count model states only, as DeepSpeed does; `estimate_memory` adds the
  rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from accelwiz.resolution.stack import Stack


def zero_paper_model_states(parameters: float, dp_degree: int, stage: int, k: int = 12) -> float:
    """Bytes per device of fp16 params (2Ψ), fp16 grads (2Ψ) and optimizer states (KΨ), sharded by stage."""
    params, grads, optimizer = 2 * parameters, 2 * parameters, k * parameters
    if stage >= 1:
        optimizer /= dp_degree
    if stage >= 2:
        grads /= dp_degree
    if stage >= 3:
        params /= dp_degree
    return params + grads + optimizer


def deepspeed_zero2_model_states(
    total_params: int,
    num_gpus_per_node: int = 1,
    num_nodes: int = 1,
    *,
    cpu_offload: bool = True,
    additional_buffer_factor: float = 1.5,
    legacy: bool = False,
) -> tuple[int, int]:
    """DeepSpeed's ZeRO-2 estimator; `legacy=True`: the pre-0.14.3 `4P + 16P/N` the docs still show."""
    total_gpus = num_nodes * num_gpus_per_node
    if cpu_offload:
        gpu = 2 * total_params
        cpu = total_params * max(4 * total_gpus, 16) * additional_buffer_factor
    else:
        gpu = (
            4 * total_params + int(16 * total_params / total_gpus)
            if legacy
            else 2 * total_params + int(18 * total_params / total_gpus)
        )
        cpu = total_params * 4 * num_gpus_per_node * additional_buffer_factor
    return int(cpu), int(gpu)


def deepspeed_zero3_model_states(
    total_params: int,
    largest_layer_params: int,
    num_gpus_per_node: int = 1,
    num_nodes: int = 1,
    *,
    cpu_offload: bool = True,
    cpu_offload_params: bool = True,
    zero_init: bool = True,
    additional_buffer_factor: float = 1.5,
) -> tuple[int, int, int]:
    """DeepSpeed's ZeRO-3 estimator: (cpu bytes per node, gpu bytes, largest-layer working memory)."""
    total_gpus = num_nodes * num_gpus_per_node
    gpus_factor = 1 / num_nodes
    largest_layer_memory = 4 * largest_layer_params
    abf = additional_buffer_factor
    if cpu_offload:
        if cpu_offload_params:
            gpu = largest_layer_memory
            cpu = (
                total_params * 18 * gpus_factor * abf
                if zero_init
                else total_params * max(4 * num_gpus_per_node, 18 * gpus_factor) * abf
            )
        else:
            gpu = largest_layer_memory + int(2 * total_params / total_gpus)
            cpu = (
                total_params * 16 * gpus_factor * abf
                if zero_init
                else total_params * max(4 * num_gpus_per_node, 16 * gpus_factor) * abf
            )
    else:
        gpu = largest_layer_memory + int(18 * total_params / total_gpus)
        cpu = (
            largest_layer_params * 4 * num_gpus_per_node * abf
            if zero_init
            else total_params * 4 * num_gpus_per_node * abf
        )
    return int(cpu), int(gpu), int(largest_layer_memory)


# -- measured rows the H200 replays check ------------------------------------------------------------------------
# The published rows themselves are the argv a user types, in benchmarks/published/ (benchmarks/
# estimator_vs_published.py). Kept here as Workload/Strategy settings: only the rows benchmarks/fsdp_streams.py and
# tests/estimate/test_fsdp_streams.py replay on an H200 (Answer.AI's fsdp_qlora settings, and PEFT's FSDP QLoRA
# offload row measured at Answer.AI-like settings). Every `quote` is the table cell the figure was read from.

MIB, GIB_, GB = 2**20, 2**30, 10**9


@dataclass(frozen=True)
class PublishedMeasurement:
    """One measured peak, where it was published, the settings it names, and how it was measured."""

    key: str
    url: str
    quote: str  # the sentence or table cell the figure was read from
    model: str  # an accelwiz model name or count (`resolve_model`)
    workload: dict[str, Any]  # Workload fields the source names (micro_batch, seq_len, regime, precision, ...)
    strategy: dict[str, Any]  # Strategy fields (kind, gpus_per_node, offload_optimizer, offload_param)
    measured_bytes: float
    printed: str  # the figure as the source prints it (it appears in `quote`)
    # what the figure counts: `nvidia-smi` (the whole process: CUDA context and the allocator's reserve
    # included), `reserved` (torch.cuda.max_memory_reserved: the allocator's segments, the cuBLAS workspaces
    # among them, without the CUDA context and NCCL) or `allocated` (torch.cuda.max_memory_allocated: tensors)
    metric: Literal["nvidia-smi", "reserved", "allocated"]
    settings: str = ""  # the settings in words, and any the source leaves open (with the value assumed)
    known_miss: str = ""  # a setting accelwiz does not model, and what it costs; empty: accelwiz models it
    gpu: str | None = None  # the GPU the source names (the runtime beside the tensors depends on it)
    cuda_major: int = 12  # the CUDA of the source's stack (before 12: eager module loading, a larger context)


_PEFT_SFT = "https://github.com/huggingface/peft/blob/main/docs/source/accelerate/{}.md"
_PEFT_SFT_SETTINGS = (
    "meta-llama/Llama-2-70b-hf, PEFT examples/sft/train.py through SFTTrainer, max_seq_len 2048 with packing, "
    "--bf16, gradient checkpointing, flash attention 2, LoRA r=8 all-linear, --lora_dropout 0.1 (run_peft_*.sh); "
    "transformers from git main as the guides were written (March 2024: 4.39.dev, examples/sft/requirements.txt), "
    "'memory consumed per GPU' with a "
    "screenshot of GPU memory usage (taken as the process's whole footprint, as nvidia-smi counts it: assumed, "
    "the page does not name the tool)"
)
ALL_LINEAR_LLAMA = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


_ANSWERAI = "https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md"
_ANSWERAI_SETTINGS = (
    "Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the context, "
    "truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and AdamW states in "
    "bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, gate, up and down "
    "projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes NF4 Linear4bit with "
    "quant_storage bf16 and its default double quantization on every block linear, sdpa attention, "
    "reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 FULL_SHARD (use_orig_params "
    "false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD for the 'DDP' rows; 'Peak Memory' is "
    "rank 0's peak reserved memory (the page: 'the reported peak reserved memory'), in GiB; transformers 4.37 "
    "(the README then: 'transformers!=4.38.*,!=4.39.*', the benchmarks February-March 2024, before 4.40)"
)


def _answerai(key: str, model: str, regime: str, batch: int, seq: int, gib: float, quote: str, *,
              gpu: str = "NVIDIA GeForce RTX 3090", offload: bool = False, ddp: bool = False,
              metric: str = "reserved", note: str = "") -> PublishedMeasurement:
    strategy: dict[str, Any] = {"kind": "ddp" if ddp else "fsdp_full", "gpus_per_node": 2, "fsdp_version": 1,
                                "fsdp_use_orig_params": False}
    if offload:
        strategy.update(offload_optimizer="cpu", offload_param="cpu")
    return PublishedMeasurement(
        key=key,
        url=_ANSWERAI,
        quote=quote,
        model=model,
        workload={"micro_batch": batch, "seq_len": seq, "precision": "bf16", "attention": "sdpa",
                  "gradient_checkpointing": True, "regime": regime, "lora_rank": 64, "lora_dropout": 0.1,
                  "lora_targets": ("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "down_proj"),
                  "stack": Stack(transformers=(4, 37, 0)),
                  # train.py loads everything in bf16 and never calls prepare_model_for_kbit_training
                  "kbit_prepared": False,
                  # and its LoRA adapters end in bf16 too: rank 0 of 2 on an H200 held 6.91 GB after wrapping
                  # Llama-2-7B LoRA, the bf16 base's 6.74 GB + 0.14 GB of bf16 adapters (fp32: 0.29 GB)
                  # (benchmarks/results/gpu_fsdp_answerai.jsonl, allocated_after_wrap)
                  "adapter_dtype": "bf16"},
        strategy=strategy,
        measured_bytes=gib * GIB_,
        printed=f"{gib:.2f}",
        metric=metric,  # type: ignore[arg-type]
        settings=_ANSWERAI_SETTINGS + (f"; {note}" if note else ""),
        gpu=gpu,
    )


PUBLISHED_MEASUREMENTS: tuple[PublishedMeasurement, ...] = (
    # PEFT docs "Fully Sharded Data Parallel" guide: Llama-2-70B QLoRA with CPU offload
    PublishedMeasurement(
        key="peft-llama2-70b-qlora-fsdp-2gpu-offload",
        url=_PEFT_SFT.format("fsdp"),
        quote="In the above example, the memory consumed per GPU is **19.6 GB** while CPU RAM usage is around "
        "**107 GB**.",
        model="llama-2-70b",
        workload={"micro_batch": 2, "seq_len": 2048, "precision": "bf16", "attention": "flash",
                  "gradient_checkpointing": True, "regime": "qlora", "lora_rank": 8,
                  "lora_targets": ALL_LINEAR_LLAMA, "lora_dropout": 0.1, "stack": Stack(transformers=(4, 39, 0)),
                  "kbit_prepared": False},  # sharded QLoRA: TRL skipped prepare_model_for_kbit_training
        strategy={"kind": "fsdp_full", "gpus_per_node": 2, "fsdp_version": 1, "fsdp_use_orig_params": False,
                  "offload_optimizer": "cpu",
                  "offload_param": "cpu"},
        measured_bytes=19.6 * GB,
        printed="19.6 GB",
        metric="nvidia-smi",
        settings=_PEFT_SFT_SETTINGS + "; per_device_train_batch_size 2; QLoRA, bf16 quant storage; FSDP1 "
        "FULL_SHARD on 2x 24GB GPUs with fsdp_offload_params true",
        known_miss=(
            "the page's figure is not the step's: this setting, run on an H200 as rank 0 of two (Answer.AI's "
            "train.py path with PEFT's r=8 on every linear, benchmarks/gpu_fsdp_answerai.py), reserved 12.1 GiB "
            "at most, 13.0 with the runtime beside it, 5.2 GiB under the quoted 19.6 GB (18.3 GiB); accelwiz's "
            "15.1 GiB is above the step. The page says offload's savings are 'untested at present'; what it "
            "read beyond the step (its 2024 stack, loading, the final full-state-dict save) is not measured here"
        ),
    ),
    # Answer.AI "Benchmarking QLoRA+FSDP" (fsdp_qlora, 2x RTX 3090 and 2x RTX 4090, 24 GB each)
    _answerai("answerai-llama2-7b-qlora-b1-512", "llama-2-7b", "qlora", 1, 512, 4.98,
              "|   QLoRA    |      512       |       4.98        |  1,082   | (Llama-2 7B with a batch size of one)"),
    _answerai("answerai-llama2-7b-qlora-b1-2048", "llama-2-7b", "qlora", 1, 2048, 5.21,
              "|   QLoRA    |      2048      |       5.21        |  1,564   | (Llama-2 7B with a batch size of one)"),
    _answerai("answerai-llama2-7b-lora-b1-512", "llama-2-7b", "lora", 1, 512, 10.24,
              "|    LoRA    |      512       |       10.24       |  2,597   | (Llama-2 7B with a batch size of one)"),
    _answerai("answerai-llama2-7b-lora-b1-2048", "llama-2-7b", "lora", 1, 2048, 10.22,
              "|    LoRA    |      2048      |       10.22       |  3,090   | (Llama-2 7B with a batch size of one)"),
    _answerai("answerai-llama2-7b-lora-b1-512-allocated", "llama-2-7b", "lora", 1, 512, 8.28,
              "NB: While the reported peak reserved memory for both 512 and 2048 context length is roughly the "
              "same, the peak allocated memory is 8.28 GiB vs 9.16 GiB, respectively.", metric="allocated"),
    _answerai("answerai-llama2-7b-lora-b1-2048-allocated", "llama-2-7b", "lora", 1, 2048, 9.16,
              "NB: While the reported peak reserved memory for both 512 and 2048 context length is roughly the "
              "same, the peak allocated memory is 8.28 GiB vs 9.16 GiB, respectively.", metric="allocated"),
    _answerai("answerai-llama2-7b-qlora-b4-2048", "llama-2-7b", "qlora", 4, 2048, 11.22,
              "|   QLoRA    |     4      |       11.22       |   998    | (Llama-2 7B with Context Length of 2048)"),
    _answerai("answerai-llama2-7b-qlora-b10-2048", "llama-2-7b", "qlora", 10, 2048, 20.97,
              "|   QLoRA    |     10     |       20.97       |   936    | (Llama-2 7B with Context Length of 2048)"),
    _answerai("answerai-llama2-7b-lora-b4-2048", "llama-2-7b", "lora", 4, 2048, 16.14,
              "|    LoRA    |     4      |       16.14       |  1,366   | (Llama-2 7B with Context Length of 2048)"),
    _answerai("answerai-llama2-7b-lora-b6-2048", "llama-2-7b", "lora", 6, 2048, 21.35,
              "|    LoRA    |     6      |       21.35       |  1,199   | (Llama-2 7B with Context Length of 2048)"),
    _answerai("answerai-llama2-7b-qlora-ddp-b8-2048", "llama-2-7b", "qlora", 8, 2048, 20.94,
              "|   QLoRA    | True |     8      |       20.94       |   875    | (DDP column)", ddp=True,
              note="sharding_strategy 'ddp' (FSDP NO_SHARD: every GPU holds the whole model)"),
    _answerai("answerai-llama2-7b-lora-ddp-b4-2048", "llama-2-7b", "lora", 4, 2048, 22.04,
              "|    LoRA    | True |     4      |       22.04       |   881    | (DDP column)", ddp=True,
              note="sharding_strategy 'ddp' (FSDP NO_SHARD: every GPU holds the whole model)"),
    _answerai("answerai-llama2-7b-lora-offload-b10-2048", "llama-2-7b", "lora", 10, 2048, 22.69,
              "|    LoRA    |    True     | False |     10     |       22.69       |   482    |",
              gpu="NVIDIA GeForce RTX 4090", offload=True, note="use_cpu_offload true (FSDP1 CPUOffload)"),
    _answerai("answerai-llama2-7b-qlora-offload-b12-2048", "llama-2-7b", "qlora", 12, 2048, 22.38,
              "|   QLoRA    |    True     | False |     12     |       22.38       |   464    |",
              gpu="NVIDIA GeForce RTX 4090", offload=True, note="use_cpu_offload true (FSDP1 CPUOffload)"),
    _answerai("answerai-llama2-70b-qlora-offload-b2-2048", "llama-2-70b", "qlora", 2, 2048, 14.92,
              "|   QLoRA    |    True     |     2      |       14.92       |  11,795  | (Llama-2 70B with Context "
              "Length of 2048)", offload=True, note="use_cpu_offload true (FSDP1 CPUOffload)"),
    _answerai("answerai-mistral-7b-qlora-offload-b12-2048", "mistral-7b", "qlora", 12, 2048, 22.54,
              "|   QLoRA    |    True     |     12     |     2,048      |       22.54       |   483    |",
              gpu="NVIDIA GeForce RTX 4090", offload=True,
              note="Mistral 7B v0.2 Base (the v0.1 preset's shapes; v0.2 drops the sliding window, which does "
              "not change sdpa's memory at 2,048 tokens); use_cpu_offload true"),
    _answerai("answerai-mistral-7b-qlora-offload-b1-24576", "mistral-7b", "qlora", 1, 24576, 22.54,
              "|   QLoRA    |    True     |     1      |     24,576     |       22.54       |  7,809   |",
              gpu="NVIDIA GeForce RTX 4090", offload=True,
              note="Mistral 7B v0.2 Base (no sliding window: full causal attention over 24,576 tokens, memory-"
              "efficient sdpa); use_cpu_offload true"),
)
