"""accelwiz's estimate against published GPU measurements (no GPU needed to run this).

HF "Efficient training on a single GPU": bert-large-uncased, seq 512, V100 16 GB, Trainer, eager attention,
nvidia-smi "GPU memory occupied" (MiB, including a 1343 MiB CUDA context measured on the same stack). The same
table is asserted within 10% in tests/estimate/test_published.py. Writes
benchmarks/results/estimator_vs_published.json and prints a Markdown table.
"""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from accelwiz.estimate.memory import CUDA_CONTEXT_BYTES, estimate_memory  # noqa: E402
from accelwiz.estimate.models import MODEL_PRESETS  # noqa: E402
from accelwiz.estimate.strategy import Strategy  # noqa: E402
from accelwiz.estimate.workload import Workload  # noqa: E402
from tests.estimate.test_published import HF_BERT_LARGE, HF_CONTEXT_MIB  # noqa: E402


def main() -> None:
    rows = []
    for batch, precision, optimizer, checkpointing, measured in HF_BERT_LARGE:
        workload = replace(Workload(MODEL_PRESETS["bert-large"], micro_batch=batch, seq_len=512, attention="eager"),
                           precision=precision, optimizer=optimizer, gradient_checkpointing=checkpointing)
        estimate = estimate_memory(workload, Strategy("single"))
        ours = (estimate.per_gpu_total - CUDA_CONTEXT_BYTES) / 2**20 + HF_CONTEXT_MIB
        rows.append({"micro_batch": batch, "precision": precision, "optimizer": optimizer,
                     "gradient_checkpointing": checkpointing, "measured_mib": measured,
                     "estimate_mib": round(ours), "error_percent": round(100 * (ours - measured) / measured, 1)})
    errors = [abs(r["error_percent"]) for r in rows]
    summary = {"median_abs_error_percent": statistics.median(errors), "worst_abs_error_percent": max(errors)}
    (REPO / "benchmarks" / "results" / "estimator_vs_published.json").write_text(
        json.dumps({"source": "HF perf_train_gpu_one (bert-large-uncased, V100 16 GB)", "rows": rows,
                    **summary}, indent=2) + "\n")
    print("| micro-batch | precision | optimizer | checkpointing | measured | accelwiz | error |")
    print("|---:|---|---|---|---:|---:|---:|")
    for r in rows:
        checkpointing = "yes" if r["gradient_checkpointing"] else "no"
        print(f"| {r['micro_batch']} | {r['precision']} | {r['optimizer']} | {checkpointing}"
              f" | {r['measured_mib']} MiB | {r['estimate_mib']} MiB | {r['error_percent']:+.1f}% |")
    print(f"\nmedian |error| {summary['median_abs_error_percent']}%, worst {summary['worst_abs_error_percent']}%")


if __name__ == "__main__":
    main()
