#!/usr/bin/env bash
# A saved checkpoint through the product path on a GPU: `init --method lora --defaults`, `check`, `run`, then
# the run report's measured peaks (torch max_memory_allocated/reserved per rank) beside the estimate it carries.
# Used by benchmarks/gpu_session.sh; works anywhere `accelwiz` is on PATH:  bash benchmarks/gpu_checkpoint_run.sh DIR
set -eu
REPO=$PWD
mkdir -p "$1" && cd "$1"
python3 -c "import sys; sys.path.insert(0, '$REPO')
from pathlib import Path
from tests.pretrained import build_checkpoint
build_checkpoint(Path('checkpoint'), layers=8, hidden=1024)"
accelwiz init --model "$PWD/checkpoint" --method lora --defaults
accelwiz check accelerate.yaml
accelwiz run --steps 20 --micro-batch 8 --seq-len 256
python3 - <<'PY'
import json
report = json.load(open("accelwiz-run/run_report.json"))
estimate = report.get("estimate", {})
print(json.dumps({key: report.get(key) for key in ("device", "mixed_precision", "method", "peak_memory_bytes",
                                                  "peak_memory_measure", "loss_first", "loss_last", "ranks")}))
print(json.dumps(estimate))
PY
