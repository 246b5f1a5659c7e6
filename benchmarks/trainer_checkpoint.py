"""The built-in trainer on a pretrained checkpoint, on this CPU: full fine-tuning and LoRA, 1 process and 2-process
DDP, through the real `accelwiz run` -> `accelerate launch`.

    python benchmarks/trainer_checkpoint.py [--steps 20]

The checkpoint is laid out as a downloaded one (tests/trainer/conftest.py builds it): a Llama-shaped model
(4 layers, hidden 256, vocab 2048 byte-level BPE trained with `tokenizers` on the bundled sonnets) saved with
save_pretrained, its tokenizer beside it. Each run: micro-batch 4, sequence 128, fp32, the bundled corpus.
Reports tokens/s (training time only, from run_report.json), peak RSS per rank, loss first -> last and the wall
time of the whole command. Writes benchmarks/results/trainer_checkpoint.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "trainer"))
sys.path.insert(0, str(HERE))

from _timing import machine  # noqa: E402
from conftest import build_checkpoint  # noqa: E402

CONFIGS = {
    "1 process": "distributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n",
    "2-process DDP": "distributed_type: MULTI_GPU\nnum_processes: 2\n",
}
HEAD = "compute_environment: LOCAL_MACHINE\nnum_machines: 1\nmixed_precision: 'no'\nmain_process_port: 29655\n"
METHODS = {"full": ["--lr", "3e-3"], "lora": ["--method", "lora", "--lr", "2e-2", "--", "--lora-targets",
                                               "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "trainer_checkpoint.json")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        checkpoint = build_checkpoint(cwd / "llama-4x256", vocab_size=2048, layers=4, hidden=256)
        for config_name, config in CONFIGS.items():
            (cwd / "accelerate.yaml").write_text(HEAD + config)
            for method, extra in METHODS.items():
                out = cwd / f"out-{method}-{len(rows)}"
                argv = [sys.executable, "-m", "accelwiz", "run", "--config", "accelerate.yaml", "--model",
                        str(checkpoint), "--steps", str(args.steps), "--micro-batch", "4", "--seq-len", "128",
                        "--output-dir", str(out), *extra]
                started = time.perf_counter()
                subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
                wall = time.perf_counter() - started
                report = json.loads((out / "run_report.json").read_text())
                rows.append({
                    "run": f"{config_name}, {method}", "wall_s": round(wall, 1),
                    "parameters": report["parameters"], "trainable_parameters": report["trainable_parameters"],
                    "tokens_per_second": round(report["tokens_per_second"]),
                    "peak_rss_mib_per_rank": [round(b / 2**20) for b in report["peak_memory_bytes"]],
                    "loss_first": round(report["loss_first"], 3), "loss_last": round(report["loss_last"], 3),
                    "load_average_1min": round(os.getloadavg()[0], 2),
                })
                print(rows[-1], flush=True)
    args.out.write_text(json.dumps({"machine": machine(), "steps": args.steps, "runs": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
