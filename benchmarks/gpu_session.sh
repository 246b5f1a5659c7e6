#!/usr/bin/env bash
# One lent GPU session, as one prepared script (the device tool's machine: torch, accelerate, peft, NVML
# installed; accelwiz's other needs carried as wheels in .whl/, see docs/performance.md "On a GPU").
#
#   1. the wheels, the versions, `nvidia-smi`;
#   2. `accelwiz probe --json` through NVML;
#   3. benchmarks/estimator_accuracy.py --no-trace --history: real steps, peaks, runtime, allocator streams;
#   4. the README's quickstart on the GPU: `init --model tiny --defaults`, `check`, `run`;
#   5. `init`/`check`/`run` of a saved checkpoint with LoRA, its run_report's peaks beside the estimate.
#
# Each part has its own time limit, which together stay inside the call's, so the bundle at the end is always
# written: $OUT/gpu_session.tgz (everything) and $OUT/summary.txt (what the reply shows).
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-/tmp/gpu-out}
WORK=/tmp/gpu-session
mkdir -p "$OUT" "$WORK/bin"
REPO=$PWD
# the FSDP settings first (not yet measured), then a repeat of three measured ones, then the rest
ORDER=${ORDER:-18,19,20,21,7,10,8,16,17,14,15,11,12,0,3,4,6,9,13,1,5,2}
stamp() { echo "== $* ($(date +%T))"; }

stamp wheels
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed" > "$OUT/summary.txt"; exit 3; }
export PYTHONPATH=/tmp/site:$REPO
printf '#!/bin/sh\nexec python3 -m accelwiz "$@"\n' > "$WORK/bin/accelwiz" && chmod +x "$WORK/bin/accelwiz"
export PATH=$WORK/bin:$PATH
{
  nvidia-smi
  python3 -c 'import sys, torch, transformers, accelerate, deepspeed, peft, trl, datasets
print(sys.version.split()[0], "torch", torch.__version__, torch.version.cuda, "transformers", transformers.__version__,
      "accelerate", accelerate.__version__, "deepspeed", deepspeed.__version__, "peft", peft.__version__,
      "trl", trl.__version__, "datasets", datasets.__version__)'
} > "$WORK/env.txt" 2>&1

stamp probe
timeout 60 accelwiz probe --json > "$WORK/probe.json" 2> "$WORK/probe.err"

stamp matrix
timeout "${MATRIX_SECONDS:-330}" python3 benchmarks/estimator_accuracy.py --no-trace --only "$ORDER" \
  --history "$WORK/history" > "$WORK/matrix.log" 2>&1
cp benchmarks/results/estimator_accuracy.json benchmarks/results/estimator_accuracy.md "$WORK/" 2>/dev/null

stamp quickstart
mkdir -p "$WORK/quick"
(cd "$WORK/quick" && timeout 90 sh -c 'accelwiz init --model tiny --defaults && accelwiz check accelerate.yaml \
  && accelwiz run') > "$WORK/quickstart.log" 2>&1

stamp checkpoint
timeout 120 bash benchmarks/gpu_checkpoint_run.sh "$WORK/ckpt" > "$WORK/checkpoint.log" 2>&1

stamp bundle
{
  cat "$WORK/env.txt" | tail -1
  grep -h '"name"\|bf16\|compute_capability' "$WORK/probe.json" | head -8
  cat "$WORK/estimator_accuracy.md" 2>/dev/null || tail -20 "$WORK/matrix.log"
  echo "-- quickstart"; tail -3 "$WORK/quickstart.log"
  echo "-- checkpoint"; tail -6 "$WORK/checkpoint.log"
} > "$OUT/summary.txt" 2>&1
tar czf "$OUT/gpu_session.tgz" -C "$WORK" --exclude bin --exclude "*.safetensors" --exclude "*.bin" --exclude "*.pt" --exclude "*.pth" . 2>/dev/null
cat "$OUT/summary.txt"
