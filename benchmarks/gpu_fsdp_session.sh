#!/usr/bin/env bash
# One lent GPU session for the FSDP1 rows: Answer.AI's train.py as rank 0 of two (benchmarks/gpu_fsdp_answerai.py)
# at the published rows' settings, each in a fresh process, under an RTX 3090's 24 GiB; the allocator's event
# stream of each is kept. Wheels as in gpu_session.sh, plus bitsandbytes copied from this machine (.whl/bnb:
# its Python files and the CUDA 13.0 library). Writes $OUT/fsdp.jsonl, $OUT/fsdp_session.tgz, $OUT/summary.txt.
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-/tmp/gpu-out}
WORK=/tmp/gpu-fsdp
mkdir -p "$OUT" "$WORK/history"
REPO=$PWD
BUDGET=${BUDGET:-420}  # seconds for all settings; each also has its own limit, LIMIT
LIMIT=${LIMIT:-90}  # a 70B setting needs about 4 minutes
SCRIPT=${SCRIPT:-benchmarks/gpu_fsdp_answerai.py}  # or benchmarks/gpu_fsdp_accelerate.py (its own SETTINGS)
started=$(date +%s)
DEADLINE=${DEADLINE:-$(( started + BUDGET ))}  # one deadline shared by several invocations of this script

if [ "${WHEELS:-1}" = 1 ]; then  # WHEELS=0: this machine's packages (checking the script without a GPU)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl || { echo "wheel install failed" > "$OUT/summary.txt"; exit 3; }
  cp -r .whl/bnb/* /tmp/site/
fi
export PYTHONPATH=/tmp/site:$REPO
python3 -c 'import sys, torch, transformers, peft, bitsandbytes
print(sys.version.split()[0], "torch", torch.__version__, torch.version.cuda, "transformers", transformers.__version__,
      "peft", peft.__version__, "bitsandbytes", bitsandbytes.__version__, torch.cuda.get_device_name(0))' \
  > "$WORK/env.txt" 2>&1

# key and the script's arguments (gpu_fsdp_answerai.py: regime batch seq [flags]): the most informative first
SETTINGS=${SETTINGS:-"
answerai-llama2-7b-qlora-b1-512 qlora 1 512
answerai-llama2-7b-lora-b1-512 lora 1 512
answerai-llama2-7b-lora-b1-2048 lora 1 2048
answerai-llama2-7b-qlora-b4-2048 qlora 4 2048
answerai-llama2-7b-lora-b6-2048 lora 6 2048
answerai-llama2-7b-qlora-ddp-b8-2048 qlora 8 2048 --ddp
answerai-llama2-7b-lora-offload-b10-2048 lora 10 2048 --offload
answerai-llama2-7b-qlora-b1-2048 qlora 1 2048
answerai-llama2-7b-lora-b4-2048 lora 4 2048
answerai-llama2-7b-qlora-b10-2048 qlora 10 2048
answerai-llama2-7b-lora-ddp-b4-2048 lora 4 2048 --ddp
answerai-llama2-7b-qlora-offload-b12-2048 qlora 12 2048 --offload
"}
echo "$SETTINGS" | while read -r key arguments; do
  [ -z "$key" ] && continue
  left=$(( DEADLINE - $(date +%s) ))
  [ "$left" -lt 30 ] && { echo "{\"key\": \"$key\", \"skipped\": \"out of time\"}" >> "$OUT/fsdp.jsonl"; continue; }
  limit=$(( left < LIMIT ? left : LIMIT ))
  echo "== $key ($(date +%T), ${limit}s)"
  # shellcheck disable=SC2086 - the arguments split as the script takes them
  timeout "$limit" python3 "$SCRIPT" "$key" $arguments \
      --history "$WORK/history/$key.jsonl.gz" > "$WORK/$key.log" 2>&1
  rc=$?
  line=$(grep '^{' "$WORK/$key.log" | tail -1)
  if [ -n "$line" ]; then echo "$line" >> "$OUT/fsdp.jsonl"
  else  # no result: the script itself failed; the other settings would too
    echo "{\"key\": \"$key\", \"rc\": $rc, \"error\": $(tail -3 "$WORK/$key.log" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()[-600:]))')}" >> "$OUT/fsdp.jsonl"
    [ "$rc" != 124 ] && break
  fi
done
{ cat "$WORK/env.txt"; cat "$OUT/fsdp.jsonl"; } > "$OUT/summary.txt"
tar czf "$OUT/fsdp_session.tgz" -C "$WORK" . 2>/dev/null
cat "$OUT/summary.txt"
