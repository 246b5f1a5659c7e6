"""Which set each source is in, and why: split by whole source (a page, a table, a results folder), never by row.

`design`: rows accelwiz was developed and tuned against; any constant fitted from a published row comes from one
of these (docs/performance.md, "Memory estimator accuracy", lists where the estimator cites them). `frozen`: rows
only scored; nothing is tuned on them. When a frozen source misses, the mechanism is fixed, the source moves to
`design`, and a new frozen source is found.
"""

SOURCES = {
    "hf-perf-train-gpu-one": (
        "design", "transformers' 'Efficient training on a single GPU' (bert-large, V100): the first rows; runtime.py "
        "takes its measured V100 CUDA context (1343 MiB) as EAGER_CONTEXT['volta']"),
    "peft-readme": (
        "design", "the PEFT README's T0_3B table: used while building the LoRA and ZeRO-3 offload accounting"),
    "peft-sft-guides": (
        "design", "PEFT's DeepSpeed and FSDP guides (Llama-2-70B): the FSDP loading and offload notes were checked "
        "against them"),
    "torchtune-readme": (
        "design", "torchtune's README table: FSDP2's root unit kept gathered was added after its 70B row missed"),
    "answerai-fsdp-qlora": (
        "design", "Answer.AI's fsdp_qlora benchmarks: fsdp_reserve.py's FSDP1 stream reserve and the allocator's "
        "retry (MemoryEstimate.retries_on) were fitted and checked on these rows and their H200 replays"),
    "peft-metamathqa": (
        "frozen", "new this round (PEFT's method comparison, 2025, L40S): never used to tune anything"),
    "litgpt-config-hub": (
        "frozen", "new this round (LitGPT's finetune config table, A10G): never used to tune anything"),
    "torchtitan-h100-2024": (
        "frozen", "new this round (torchtitan's Llama 3.1 H100 benchmark): never used to tune anything"),
}
