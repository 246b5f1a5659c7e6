"""What the caching allocator reserves beyond the tensors: the fake-tensor trace's allocation stream replayed.

For a matrix of settings (model, full/LoRA, mixed/bf16, gradient checkpointing, batch shape), one training
step of the real transformers model is traced on the CPU (`accelwiz estimate --trace`, fake tensors) and its
recorded allocations and frees are replayed through accelwiz/estimate/allocator.py (PyTorch's CUDA caching
allocator as c10/cuda/CUDACachingAllocator.cpp defines it). The ratio of the replay's reserved peak to the
trace's allocated peak, its median per group, is what `accelwiz/estimate/reserve.py` multiplies the analytic
allocated figure's dynamic bytes by (the upper quartile is printed too). Each trace's stream is replayed twice:
with the default allocator (split blocks in segments of their own) and with `expandable_segments:True` (one
segment per pool and stream growing by pages); the second table, "expandable", is what reserve.py takes for
`estimate --expandable-segments`.

    python benchmarks/allocator_replay.py            # the whole matrix (about 15 minutes on 2 cores)
    python benchmarks/allocator_replay.py --only 0,3

Writes benchmarks/results/allocator_replay.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


@dataclass(frozen=True)
class Case:
    model: str
    regime: str  # full | lora
    precision: str  # mixed | bf16
    gradient_checkpointing: bool
    micro_batch: int
    seq_len: int
    layers: int | None = None  # trace 1 and N layers and scale (the large models)
    attention: str = "sdpa"  # Gemma-2: eager (transformers refuses sdpa for it)

    @property
    def label(self) -> str:
        return (f"{self.model} {self.regime} {self.precision} b{self.micro_batch}xs{self.seq_len}"
                + (" gc" if self.gradient_checkpointing else "") + (f" (L={self.layers})" if self.layers else "")
                + (f" {self.attention}" if self.attention != "sdpa" else ""))


def matrix() -> list[Case]:
    cases = []
    for regime in ("full", "lora"):
        for precision in ("mixed", "bf16"):
            for checkpointing in (False, True):
                for batch, seq in ((4, 512), (2, 2048)):
                    cases.append(Case("gpt2", regime, precision, checkpointing, batch, seq))
    for regime in ("full", "lora"):
        for checkpointing in (False, True):
            cases.append(Case("qwen2.5-0.5b", regime, "bf16", checkpointing, 2, 2048))
    cases += [
        Case("llama-3.1-8b", "lora", "bf16", True, 2, 2048, layers=2),
        Case("llama-3.1-8b", "full", "bf16", True, 1, 4096, layers=2),
        Case("llama-3.1-8b", "lora", "mixed", False, 1, 2048, layers=2),
        Case("llama-2-70b", "lora", "bf16", True, 2, 2048, layers=2),
        Case("llama-2-70b", "lora", "bf16", True, 8, 2048, layers=2),
        # the settings an H200 measured (benchmarks/estimator_accuracy.py), at full depth
        Case("llama-3.2-1b", "full", "mixed", False, 2, 2048),
        Case("llama-3.2-1b", "full", "mixed", True, 2, 2048),
        Case("llama-3.2-1b", "lora", "mixed", False, 4, 2048),
        Case("llama-3.2-1b", "lora", "mixed", True, 4, 2048),
        # other families, as the H200 measured them too (estimator_accuracy 22-26): a large vocabulary (Qwen2.5's
        # 152K), a 7B whose checkpointed step is small beside it, fused projections. Not Gemma-2 (eager): its
        # trace allocates what the GPU does in another order, and its replay is 8% under the real reserve
        Case("qwen2.5-1.5b", "full", "mixed", False, 2, 2048),
        Case("qwen2.5-1.5b", "lora", "mixed", True, 4, 2048),
        Case("mistral-7b", "lora", "mixed", True, 2, 2048),
        Case("phi-3-mini", "lora", "mixed", True, 2, 2048),
        # short sequences of full fine-tuning, where the optimizer step (gradients + AdamW's foreach temporary) is
        # the peak: the step is cut from what a backward fragmented, with or without checkpointing (reserve.py
        # STEP_PEAK_RATIO); before these, the checkpointed group's ratio was applied to such steps and a
        # checkpointed run was estimated above the same run without checkpointing
        Case("llama-3.2-1b", "full", "mixed", True, 1, 512),
        Case("llama-3.2-1b", "full", "mixed", False, 1, 512),
        Case("qwen2.5-0.5b", "full", "mixed", True, 1, 512),
        Case("qwen2.5-0.5b", "full", "mixed", False, 1, 512),
        Case("qwen2.5-0.5b", "full", "bf16", True, 1, 512),
    ]
    return cases


def run(case: Case) -> dict:
    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.trace import trace_workload
    from accelwiz.estimate.workload import Workload

    workload = Workload(resolve_model(case.model), micro_batch=case.micro_batch, seq_len=case.seq_len,
                        regime=case.regime, precision=case.precision,
                        gradient_checkpointing=case.gradient_checkpointing, attention=case.attention)
    trace = trace_workload(workload, strategy=Strategy("single"), layers=case.layers, time_limit=1e9)
    # static: what is allocated once and never freed (parameters, buffers, optimizer states); the rest is
    # the step's dynamic memory, whose reserve the analytic path scales (reserve.py)
    static = (trace.forward_end.bytes.get("parameters", 0) + trace.forward_end.bytes.get("buffers", 0)
              + trace.optimizer_states)
    dynamic_ratio = (trace.reserved - static) / (trace.peak - static)
    # the same events replayed with `expandable_segments:True` (trace_replay.py): one trace, two allocators
    expandable = trace.allocator["reserved_expandable"]
    return {"case": case.label, **asdict(case), "allocated": trace.peak, "peak_phase": trace.peak_phase,
            "reserved": trace.reserved, "static": static, "ratio": round(trace.reserved / trace.peak, 4),
            "dynamic_ratio": round(dynamic_ratio, 4), "reserved_expandable": expandable,
            "dynamic_ratio_expandable": round((expandable - static) / (trace.peak - static), 4),
            "allocator": trace.allocator, "seconds": round(trace.seconds, 1)}


def replay_group(row: dict) -> str:
    """The group a replay's ratio belongs to (reserve.py): full fine-tuning whose peak is the optimizer step is
    one group whatever the checkpointing; otherwise the method and the checkpointing."""
    if row["regime"] == "full" and row["peak_phase"] == "optimizer":
        return "full step peak"
    return f"{row['regime']} {'checkpointing' if row['gradient_checkpointing'] else 'no checkpointing'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated case numbers")
    args = parser.parse_args()
    cases = matrix()
    if args.only:
        cases = [cases[int(i)] for i in args.only.split(",")]
    rows = []
    print("| case | allocated GiB | reserved GiB | reserved/allocated | dynamic reserved/allocated | expandable: "
          "reserved GiB | dynamic |\n|---|---:|---:|---:|---:|---:|---:|")
    for case in cases:
        row = run(case)
        rows.append(row)
        print(f"| {row['case']} | {row['allocated'] / 2**30:.3f} | {row['reserved'] / 2**30:.3f} | "
              f"{row['ratio']:.3f} | {row['dynamic_ratio']:.3f} | {row['reserved_expandable'] / 2**30:.3f} | "
              f"{row['dynamic_ratio_expandable']:.3f} |", flush=True)
    out = REPO / "benchmarks" / "results" / "allocator_replay.json"
    if args.only and out.exists():  # a subset replaces its own rows in the last full run
        done = {row["case"] for row in rows}
        kept = [row for row in json.loads(out.read_text())["rows"] if row["case"] not in done]
        rows = sorted(kept + rows, key=lambda row: [c.label for c in matrix()].index(row["case"]))
    summary, expandable = summarise(rows, "dynamic_ratio"), summarise(rows, "dynamic_ratio_expandable")
    out.write_text(json.dumps({"summary": summary, "expandable": expandable, "rows": rows}, indent=2) + "\n")
    for name, table in (("split blocks (default)", summary), ("expandable_segments:True", expandable)):
        print(f"{name}:")
        for key, value in table.items():
            print(f"  {key}: median {value['median']:.3f} (reserve.py), upper quartile "
                  f"{value['upper_quartile']:.3f}, max {value['max']:.3f} over {value['n']}")
    return 0


def summarise(rows: list[dict], field: str) -> dict[str, dict]:
    """Per group (`replay_group`), the median, upper quartile and largest of `field` over the rows."""
    groups: dict[str, list[float]] = {}
    for row in rows:
        if field in row:
            groups.setdefault(replay_group(row), []).append(row[field])
    return {key: {"median": statistics.median(v), "max": max(v), "n": len(v),
                  "upper_quartile": statistics.quantiles(v, n=4, method="inclusive")[2]}
            for key, v in groups.items()}


if __name__ == "__main__":
    sys.exit(main())
