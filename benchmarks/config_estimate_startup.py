"""Wall time of `accelwiz estimate` for a config.json against a preset: the spec cache (spec_cache.py) at work.

Three commands, each a fresh process, median of `--runs`:

* preset: `estimate --model llama-3.1-8b`;
* config.json, cold: the same model's config.json with an empty cache (transformers builds it on `meta`);
* config.json, warm: the same again, the spec read from the cache (no torch, no transformers).

Target: warm within twice the preset's time. Writes benchmarks/results/config_estimate_startup.json.

    python benchmarks/config_estimate_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
# meta-llama/Llama-3.1-8B's config.json, the fields transformers reads
LLAMA_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256, "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "head_dim": 128, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}


def command(model: str) -> list[str]:
    beside = Path(sys.executable).parent / "accelwiz"
    executable = str(beside) if beside.exists() else shutil.which("accelwiz")
    base = [executable] if executable else [sys.executable, "-m", "accelwiz"]
    return [*base, "estimate", "--model", model, "--gpu-memory", "80GiB"]


def timed(argv: list[str], env: dict[str, str], runs: int, before: callable = lambda: None) -> list[float]:
    walls = []
    for _ in range(runs):
        before()
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, env=env)
        walls.append(time.perf_counter() - start)
    return walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "llama-3.1-8b" / "config.json"
        config.parent.mkdir()
        config.write_text(json.dumps(LLAMA_8B))
        cache = Path(scratch) / "cache"
        env = {**os.environ, "ACCELWIZ_CACHE_DIR": str(cache)}
        subprocess.run(command("llama-3.1-8b"), capture_output=True, check=True, env=env)  # warm .pyc files
        preset = timed(command("llama-3.1-8b"), env, args.runs)
        cold = timed(command(str(config)), env, max(3, args.runs // 2),
                     before=lambda: shutil.rmtree(cache, ignore_errors=True))
        subprocess.run(command(str(config)), capture_output=True, check=True, env=env)
        warm = timed(command(str(config)), env, args.runs)
    result = {
        "machine": f"{platform.machine()} {os.cpu_count()} CPU(s), Python {platform.python_version()}",
        "runs": args.runs,
        "preset_median_s": round(statistics.median(preset), 3),
        "config_cold_median_s": round(statistics.median(cold), 3),
        "config_warm_median_s": round(statistics.median(warm), 3),
    }
    result["warm_over_preset"] = round(result["config_warm_median_s"] / result["preset_median_s"], 2)
    result["target"] = "config.json (warm cache) within 2x the preset"
    result["met"] = result["warm_over_preset"] <= 2.0
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "config_estimate_startup.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
