"""Does what loading leaves cached absorb the growth of batches of varying length? (no GPU; issue 28, cause 4)

benchmarks/varying_lengths_replay.py replays a run of steps at varying lengths through the caching-allocator model
(accelwiz/estimate/allocator.py) with the parameters allocated by the step's own trace: nothing is cached before
the first step. A real run first loads the model. This replay puts a loading stream before the same steps, the
full model's weights as accelwiz/estimate/loading_warmup.py models them, and leaves the traced frozen base out:

* `warmup`: transformers' caching_allocator_warmup block (loading_warmup.warmup_block) allocated and freed, then
  tensor by tensor in module order: each 4-bit block linear arrives as its 16-bit copy, is quantized
  (bitsandbytes' Params4bit: the copy, then the NF4 weight with its state, the copy freed), every other parameter
  at the load width; then prepare_model_for_kbit_training's fp32 casts (each original freed) and TRL's casts back
  (loading_warmup._casts);
* `plain`: the same without the warmup block (transformers before 4.51, or a 16-bit LoRA load);
* `none`: the trace's own parameters, as varying_lengths_replay.py (the full model's other weights a static
  segment of their own before the run, so that the three hold the same bytes).

Every case loads a 16-bit checkpoint (fp16) and prepares it for k-bit training, as the TRL notebook does.
Each is replayed once at the cap for every step (`fixed`) and once at lengths drawn as the data's (`varying`).
The step is traced at `--layers` layers (with checkpointing a layer keeps its input only: the step's dynamic
tensors hardly depend on the depth) and lengths cap/2, 3cap/4, cap (each request a polynomial in the length).

    python benchmarks/varying_lengths_loading.py --case trl-qwen3-8b --layers 2 --steps 120 --seeds 0,1

Writes benchmarks/results/varying_lengths_loading.json (one entry per case, merged with what is there).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

OUT = REPO / "benchmarks" / "results" / "varying_lengths_loading.json"
GIB = 2**30
_ALL = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# the published rows' settings (benchmarks/published/*.py): model, system GPU, transformers, batch, cap, LoRA, data
CASES = {
    # TRL's SFT notebook at 28bba8c6b (trl_example_notebooks.py): 11.959 GiB after loading, 13.615 at the peak
    "trl-qwen3-8b": {"config": "benchmarks/published/models/qwen3-8b/config.json", "gpu": "A100-40GB",
                     "transformers": (4, 57, 1), "micro_batch": 2, "cap": 1024, "rank": 32, "targets": _ALL,
                     "truncate": True, "measured": {"loading": 11.959, "peak": 13.615}},
    # AMD's Llama-2-7B QLoRA on an MI300X (rocm_blogs_llama.py, a bottom-group design source): no warmup in 4.31
    "rocm-llama2-7b": {"config": {"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096,
                                  "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
                                  "num_key_value_heads": 32, "max_position_embeddings": 4096,
                                  "tie_word_embeddings": False},
                       "gpu": "MI300X", "transformers": (4, 31), "micro_batch": 4, "cap": 1024, "rank": 8,
                       "targets": ("q_proj", "v_proj"), "truncate": True, "measured": None},
    # ms-swift's benchmark QLoRA row (ms_swift_benchmark.py, the fit's source; no --stack: today's warmup)
    "swift-qwen-7b-qlora": {"config": "benchmarks/published/models/qwen-7b/config.json", "gpu": "A100-80GB",
                            "transformers": None, "micro_batch": 1, "cap": 2048, "rank": 8,
                            "targets": ("q_proj", "k_proj", "v_proj"), "truncate": False, "measured": None},
}


def workload_of(case: dict, spec: object) -> object:
    from accelwiz.estimate.workload import Stack, Workload

    return Workload(spec, regime="qlora", base_dtype="fp16", precision="mixed", micro_batch=case["micro_batch"],
                    seq_len=case["cap"], stack=Stack(transformers=case["transformers"]))


def loading_events(workload: object, gpu_bytes: int | None, context: float, block: bool) -> list[tuple]:
    """The loading stream of module docstring's `warmup` (block) or `plain` (no block) load."""
    from accelwiz.estimate.loading_warmup import QLORA_BYTES_PER_PARAM, SMALL_POOL_LIMIT, _load_width, warmup_block

    spec = workload.model
    width = _load_width(workload)
    events: list[tuple] = [("phase", "loading")]
    if block:
        size, _ = warmup_block(workload, gpu_bytes, context)
        if size:
            events += [("alloc", "warmup", int(size)), ("free", "warmup")]
    quantized = {id(t) for t in spec.all_block_linears()}
    for i, tensor in enumerate(spec.tensors()):
        n = spec.scaled(tensor.numel)
        if id(tensor) in quantized:  # Params4bit._quantize: the 16-bit copy on the GPU, quantized, freed
            events += [("alloc", ("copy", i), 2 * n), ("alloc", ("w", i), round(QLORA_BYTES_PER_PARAM * n)),
                       ("free", ("copy", i))]
        else:
            events.append(("alloc", ("w", i), width * n))
    if workload.kbit_prepared and width == 2:  # loading_warmup._casts, tensor by tensor
        kept = [(i, t) for i, t in enumerate(spec.tensors()) if id(t) not in quantized]
        for i, tensor in kept:
            n = spec.scaled(tensor.numel)
            if 4 * n > SMALL_POOL_LIMIT:
                events += [("alloc", ("w32", i), 4 * n), ("free", ("w", i))]
        if workload.trl_bf16_cast_parameters:
            for i, tensor in kept:
                n = spec.scaled(tensor.numel)
                if 4 * n > SMALL_POOL_LIMIT and any(m in tensor.module for m in ("lm_head", "embed_tokens")):
                    events += [("alloc", ("w16", i), 2 * n), ("free", ("w32", i))]
    return events


def run(case: dict, layers: int, steps: int, seeds: list[int], kinds=("none", "plain", "warmup")) -> dict:
    """The case's replays (module docstring), each variant's fixed and varying peaks in GiB, and the growth in loss
    tails (the fp32 log-softmax at the cap)."""
    from accelwiz.estimate.allocator import replay
    from accelwiz.estimate.loading_warmup import gpu_memory_bytes, loading_reserved
    from accelwiz.estimate.trace import TraceSettings
    from accelwiz.modelspec.lookup import spec_from_hf_config
    from benchmarks.varying_lengths_replay import data_lengths, run_events, step_template

    config = case["config"] if isinstance(case["config"], dict) else json.loads((REPO / case["config"]).read_text())
    spec = spec_from_hf_config(config, name=str(case["config"])[:40], source="varying_lengths_loading")
    workload = workload_of(case, spec)
    gpu = gpu_memory_bytes(case["gpu"])
    context = 400_000_000
    cap = case["cap"]
    settings = TraceSettings(micro_batch=case["micro_batch"], seq_len=cap, precision="mixed", attention="sdpa",
                             gradient_checkpointing=True, lora_rank=case["rank"], lora_targets=case["targets"])
    traced = dict(config, num_hidden_layers=layers)
    template = step_template(traced, settings, (cap // 2, 3 * cap // 4, cap), frozen=True)
    # `none`: the trace's own frozen base, beside the rest of the model's weights as one static block
    traced_frozen = sum(round(e[2] + e[3] * cap + e[4] * cap * cap) for e in template if e[0] == "frozen")
    loads = {kind: loading_events(workload, gpu, context, kind == "warmup") for kind in ("warmup", "plain")}
    loaded = replay(loads["warmup"])
    model_r, _ = loading_reserved(workload, 0.0, gpu, context)
    rest = max(0, _held(loads["plain"]) - traced_frozen)
    result = {"layers": layers, "steps": steps, "seeds": seeds, "weights_loaded": _held(loads["plain"]) / GIB,
              "loading_reserved_model": model_r / GIB, "loading_reserved_replay": loaded.peak_reserved / GIB,
              "loading_free_replay": (loaded.peak_reserved - _held(loads["warmup"])) / GIB,
              "measured": case["measured"], "variants": {}}
    truncate = case["truncate"]
    tail = 4 * case["micro_batch"] * cap * config["vocab_size"]
    result["loss_tail"] = tail / GIB
    for kind in kinds:
        before = [("alloc", "rest", rest)] if kind == "none" else loads[kind]
        runs = lambda lengths: replay(before + run_events(template, lengths, loaded=kind != "none"))  # noqa: E731
        fixed = runs([cap] * 3)
        varying = []
        for seed in seeds:
            batch = case["micro_batch"]
            lengths = ([min(n, cap) for n in data_lengths(steps * batch, 10**9, seed)] if truncate
                       else data_lengths(steps * batch, cap, seed))
            # a batch is padded to its longest sample
            batches = [max(lengths[i:i + batch]) for i in range(0, len(lengths), batch)]
            varying.append(runs(batches).peak_reserved / GIB)
        result["variants"][kind] = {"fixed_allocated": fixed.peak_allocated / GIB,
                                    "fixed_reserved": fixed.peak_reserved / GIB, "varying_reserved": varying,
                                    "growth_tails": [round((v - fixed.peak_reserved / GIB) * GIB / tail, 2)
                                                     for v in varying]}
        print(f"{kind}: fixed {fixed.peak_allocated / GIB:.2f} alloc / {fixed.peak_reserved / GIB:.2f} reserved, "
              f"varying {[round(v, 2) for v in varying]}", flush=True)
    return result


def _held(events: list[tuple]) -> int:
    """The bytes a stream leaves allocated."""
    live: dict[object, int] = {}
    for event in events:
        if event[0] == "alloc":
            live[event[1]] = event[2]
        elif event[0] == "free":
            live.pop(event[1], None)
    return sum(live.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), required=True)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--lengths", choices=("case", "drop", "truncate"), default="case",
                        help="samples beyond the cap dropped or cut to it (default: as the case's source does)")
    args = parser.parse_args()
    started = time.perf_counter()
    case = CASES[args.case] if args.lengths == "case" else dict(CASES[args.case], truncate=args.lengths == "truncate")
    result = run(case, args.layers, args.steps, [int(s) for s in args.seeds.split(",")])
    result["seconds"] = round(time.perf_counter() - started, 1)
    saved = json.loads(OUT.read_text()) if OUT.exists() else {}
    result["lengths"] = "truncate" if case["truncate"] else "drop"
    saved[f"{args.case}/{result['lengths']}"] = result
    OUT.write_text(json.dumps(saved, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
