"""How close is `accelwiz estimate` to the memory real training uses? (And `accelerate estimate-memory`?)

Trains models built from configs (random init, nothing downloaded: transformers LlamaForCausalLM /
GPT2LMHeadModel
from a config) for a few steps on a GPU, one fresh process per setting, and records the peak
`torch.cuda.max_memory_allocated` / `max_memory_reserved`. Next to each it writes accelwiz's estimate, from the
command a user types for that setting (`estimate_argv`: `accelwiz estimate ... --format json`, run through the
real command-line app; `--dry-run` prints each argv) (the
`allocated` part, i.e. without the CUDA context, compared with max_memory_allocated; and the total minus the
CUDA context, compared with max_memory_reserved) and `accelerate estimate-memory`'s "Training using Adam"
number for the same model (`estimate_training_usage(calculate_maximum_sizes(model))`, computed offline on a
meta-device model: it has no batch, sequence, activations or sharding). Each setting is also traced on the
CPU with fake tensors through the same command with `--trace` (`trace_argv`: `accelwiz estimate ... --trace
--format json`, its traced peak read from the JSON's `trace.traced`; `--trace-layers N` adds `--layers N` where
--trace's time cap would refuse a whole model), so one GPU session gives measured vs trace vs analytic.
Every figure of this script is the output of a command a user types; none is built from internal objects
(the GPU's own training loop, benchmarks/gpu_step.py, is the measurement, and `accelerate estimate-memory` is
accelerate's figure).

    python benchmarks/estimator_accuracy.py --dry-run      # list the matrix (no GPU needed)
    python benchmarks/estimator_accuracy.py --dry-run --trace --only 0,7   # and the trace (CPU)
    python benchmarks/estimator_accuracy.py                # run it; needs CUDA (exit 2 without)
    python benchmarks/estimator_accuracy.py --only 3,7     # a subset

Writes benchmarks/results/estimator_accuracy.json and .md (median and worst relative error).
Settings run in one process with world size 1 (ZeRO stages then shard over one rank: what is measured is the
16-bit model, the master copy in the optimizer, the buckets, live parameters and activations).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
sys.path.insert(0, str(REPO))

from accelwiz.modelspec.lookup import resolve_model  # noqa: E402
from accelwiz.modelspec.spec import ModelSpec  # noqa: E402

GIB = 2**30
# What a command-line user passes as --model: a preset name, or a config.json (a ~100M Llama-shaped model,
# GQA 4:1, SwiGLU, to cover the small end with a Llama architecture: benchmarks/configs/llama-small).
MODEL_ARGUMENTS = {
    "llama-small": str(REPO / "benchmarks" / "configs" / "llama-small" / "config.json"),
    "gpt2-medium": "gpt2-medium",
    "llama-3.2-1b": "llama-3.2-1b",
    "llama-3.1-8b": "llama-3.1-8b",
    "qwen2.5-1.5b": "qwen2.5-1.5b",
    "gemma-2-2b": "gemma-2-2b",
    "mistral-7b": "mistral-7b",
    "phi-3-mini": "phi-3-mini",
}
MODELS = {name: resolve_model(argument) for name, argument in MODEL_ARGUMENTS.items()}


@dataclass(frozen=True)
class Setting:
    model: str
    strategy: str  # single | zero1 | zero2 | zero3 | zero3_offload | fsdp1 | fsdp2 (full shard)
    micro_batch: int
    seq_len: int
    gradient_checkpointing: bool = False
    attention: str = "sdpa"
    regime: str = "full"  # full | lora (LoRA r=16 on every linear layer, a bf16 base, autocast)

    @classmethod
    def from_row(cls, row: dict) -> Setting:
        """The setting a saved results row was measured with."""
        return cls(**{name: row[name] for name in cls.__dataclass_fields__ if name in row})

    @property
    def label(self) -> str:
        return f"{self.model} {self.regime} {self.strategy} b{self.micro_batch} s{self.seq_len} {self.attention}" + (
            " gc" if self.gradient_checkpointing else ""
        )


def matrix() -> list[Setting]:
    small = Setting("llama-small", "single", 4, 1024)
    gpt = Setting("gpt2-medium", "single", 4, 1024)
    big = Setting("llama-3.2-1b", "single", 2, 2048)
    return [
        small,
        replace(small, attention="eager"),
        replace(small, gradient_checkpointing=True),
        replace(small, micro_batch=8, seq_len=2048),
        gpt,
        replace(gpt, attention="eager"),
        replace(gpt, strategy="zero2"),
        big,
        replace(big, gradient_checkpointing=True),
        replace(big, strategy="zero1"),
        replace(big, strategy="zero2"),
        replace(big, strategy="zero3"),
        replace(big, strategy="zero3_offload"),
        replace(big, strategy="zero3", micro_batch=4, seq_len=4096, gradient_checkpointing=True),
        # LoRA, where published reserved rows were most under-estimated: a bf16 base built on the GPU, as
        # from_pretrained(torch_dtype=bfloat16, device_map="cuda") leaves it, adapters in fp32 under autocast
        replace(big, regime="lora", micro_batch=4),
        replace(big, regime="lora", micro_batch=4, gradient_checkpointing=True),
        Setting("llama-3.1-8b", "single", 1, 2048, regime="lora"),
        Setting("llama-3.1-8b", "single", 2, 2048, gradient_checkpointing=True, regime="lora"),
        # FSDP (fp32 parameters, bf16 compute: accelerate's `mixed_precision: bf16`), whose unshard stream keeps
        # its own blocks: not yet measured (appended so the recorded streams keep their numbers)
        replace(big, strategy="fsdp2"),
        replace(big, strategy="fsdp1"),
        replace(big, strategy="fsdp2", gradient_checkpointing=True),
        replace(big, strategy="fsdp1", gradient_checkpointing=True),
        # families beyond Llama, built by their own transformers classes: attention bias and a 152K vocabulary
        # (Qwen2.5), soft-capped logits and eager attention (Gemma-2), fused qkv and gate-up linears (Phi-3)
        Setting("qwen2.5-1.5b", "single", 2, 2048),
        Setting("qwen2.5-1.5b", "single", 4, 2048, gradient_checkpointing=True, regime="lora"),
        Setting("gemma-2-2b", "single", 2, 2048, attention="eager", regime="lora"),
        Setting("mistral-7b", "single", 2, 2048, gradient_checkpointing=True, regime="lora"),
        Setting("phi-3-mini", "single", 2, 2048, gradient_checkpointing=True, regime="lora"),
    ]


def estimate_argv(setting: Setting) -> list[str]:
    """The command a user types for this setting, on one GPU: `accelwiz estimate --model ... --gpus 1 --strategy
    ... --micro-batch ... --seq-len ... --attention ... [--gradient-checkpointing] [--lora --lora-dropout 0]`
    (the precision left to its default, as the GPU run trains: bf16 compute over fp32 weights, or a bf16 base
    with fp32 adapters for LoRA)."""
    strategy = {"zero3_offload": ["zero3", "--offload-optimizer", "cpu"],
                "fsdp1": ["fsdp_full", "--fsdp-version", "1"],
                "fsdp2": ["fsdp_full", "--fsdp-version", "2"]}.get(setting.strategy, [setting.strategy])
    argv = ["estimate", "--model", MODEL_ARGUMENTS[setting.model], "--gpus", "1", "--strategy", *strategy,
            "--micro-batch", str(setting.micro_batch), "--seq-len", str(setting.seq_len),
            "--attention", setting.attention]
    if setting.gradient_checkpointing:
        argv.append("--gradient-checkpointing")
    if setting.regime == "lora":
        argv += ["--lora", "--lora-dropout", "0"]
    return [*argv, "--format", "json"]


def trace_argv(setting: Setting, layers: int | None = None) -> list[str]:
    """The command a user types to trace the setting: `estimate_argv` with `--trace` (every layer, within
    --trace's time cap), or `--trace --layers N` (N layers traced with 1, scaled linearly)."""
    traced = ["--trace", *(["--layers", str(layers)] if layers is not None else [])]
    return [*estimate_argv(setting)[:-2], *traced, "--format", "json"]


def invoke(argv: list[str]):  # noqa: ANN201 (click's Result)
    """`accelwiz ARGV` in-process through the real command-line app (typer's CliRunner)."""
    from typer.testing import CliRunner

    from accelwiz.cli import app

    return CliRunner().invoke(app, argv)


def run_estimate(argv: list[str]) -> dict:
    """`accelwiz ARGV` through the command-line app; its JSON."""
    result = invoke(argv)
    if result.exit_code not in (0, 1):  # 1: does not fit, still a JSON estimate
        raise RuntimeError(f"`accelwiz {' '.join(argv)}` exited {result.exit_code}: {result.output[-400:]}")
    return json.loads(result.stdout)


def accelwiz_estimate(setting: Setting) -> dict:
    """The estimate as `accelwiz estimate` prints it for the setting's argv (estimate.peak and estimate.sizes)."""
    shown = run_estimate(estimate_argv(setting))["estimate"]
    return {
        "allocated": shown["peak"]["allocated"],
        "reserved": shown["peak"]["reserved"],  # torch.cuda.max_memory_reserved (the runtime is outside the allocator)
        "breakdown": {k: shown["sizes"][k]
                      for k in ("weights", "gradients", "optimizer_states", "activations", "logits", "buffers")},
    }


def trace_figures(setting: Setting, layers: int | None = None) -> dict:
    """The fake-tensor trace of the same step on the CPU, as `accelwiz estimate ... --trace [--layers N] --format
    json` prints it (`trace.traced`: the traced step sharded as the strategy runs it, its reserve replayed).
    Every model of the matrix traces whole within --trace's time cap; a trace the cap refuses raises with the
    CLI's message, whose hint names the `--layers` to pass (this script's --trace-layers)."""
    argv = trace_argv(setting, layers)
    comparison = run_estimate(argv)["trace"]
    return {
        "trace_allocated": comparison["traced"]["peak"],
        "trace_reserved": comparison["traced"]["reserved"],  # the traced stream replayed through the allocator
        "trace_phase": comparison["traced_peak_phase"],
        "trace_breakdown": comparison["traced"],
        "trace_seconds": comparison["trace"]["seconds"],
        "trace_layers": comparison["trace"]["layers_traced"],
        "trace_argv": " ".join(argv),
    }


def hf_model(spec: ModelSpec, attention: str, device: str | None = None):  # noqa: ANN201
    """A randomly initialised transformers model with `spec`'s shape."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    if spec.family == "gpt2":
        config = GPT2Config(
            vocab_size=spec.vocab_size,
            n_embd=spec.hidden_size,
            n_layer=spec.num_layers,
            n_head=spec.num_heads,
            n_positions=spec.max_position_embeddings,
        )
        cls = GPT2LMHeadModel
    elif spec.family != "llama":  # the family's own classes, from the config `estimate --trace` builds
        from transformers import AutoModelForCausalLM

        from accelwiz.estimate.trace_model import hf_config_for

        config = hf_config_for(spec)
        config._attn_implementation = attention
        return AutoModelForCausalLM.from_config(config)
    else:
        config = LlamaConfig(
            vocab_size=spec.vocab_size,
            hidden_size=spec.hidden_size,
            intermediate_size=spec.intermediate_size,
            num_hidden_layers=spec.num_layers,
            num_attention_heads=spec.num_heads,
            num_key_value_heads=spec.num_kv_heads,
            head_dim=spec.head_dim,
            tie_word_embeddings=spec.tie_word_embeddings,
            max_position_embeddings=spec.max_position_embeddings,
        )
        cls = LlamaForCausalLM
    config._attn_implementation = attention
    return cls(config)


def accelerate_estimate(spec: ModelSpec) -> int:
    """`accelerate estimate-memory`'s "Training using Adam" for float16, on a meta-device model."""
    from accelerate import init_empty_weights
    from accelerate.commands.estimate import estimate_training_usage
    from accelerate.utils import calculate_maximum_sizes

    with init_empty_weights():  # eager: every family has it (Gemma-2 refuses sdpa), and sizes do not depend on it
        model = hf_model(spec, "eager")
    total_size, _ = calculate_maximum_sizes(model)
    return max(estimate_training_usage(total_size, "float16").values())


def run_worker(setting: Setting, history: str | None) -> dict:
    """Train 3 steps of `setting` in this process and return what the GPU reported (benchmarks/gpu_step.py)."""
    from benchmarks.gpu_step import measure

    spec = MODELS[setting.model]
    return measure(setting, lambda: hf_model(spec, setting.attention), spec.vocab_size,
                   Path(history) if history else None)


def run_setting(setting: Setting, history: Path | None) -> dict:
    """One fresh process per setting: peak statistics, allocator state and process groups start clean."""
    command = [sys.executable, __file__, "--worker", json.dumps(asdict(setting))]
    if history is not None:
        command += ["--history", str(history)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        return {"error": ["timed out after 240 s"]}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr or done.stdout).strip().splitlines()[-3:] or ["no output"]}
    return json.loads(lines[-1])


def relative_error(estimate: float, measured: float) -> float:
    return (estimate - measured) / measured


def _median_worst(errors: list[float]) -> tuple[float | None, float | None]:
    """Median |error| and the worst signed error (the furthest from zero)."""
    if not errors:
        return None, None
    return statistics.median(abs(e) for e in errors), max(errors, key=abs)


def summarise(rows: list[dict], gpu: str) -> dict:
    measured = [r for r in rows if "max_allocated" in r]
    summary: dict = {"gpu": gpu, "settings": len(rows), "measured": len(measured)}
    for name in ("allocated", "reserved", "accelerate", "trace", "trace_reserved"):
        median, worst = _median_worst([r[f"error_{name}"] for r in measured if f"error_{name}" in r])
        summary[f"median_abs_error_{name}"], summary[f"worst_error_{name}"] = median, worst
    return summary


def _row_line(r: dict) -> str:
    if "max_allocated" not in r:
        return f"| {r['setting']} | failed: {r.get('error')} |" + " |" * 11
    trace = f"{r['trace_allocated'] / GIB:.2f} | {r['error_trace']:+.1%}" if "trace_allocated" in r else "— | —"
    replay = (f"{r['trace_reserved'] / GIB:.2f} | {r['error_trace_reserved']:+.1%}" if "trace_reserved" in r
              else "— | —")
    runtime = f"{r['runtime'] / 2**20:.0f}" if r.get("runtime") is not None else "—"
    return (f"| {r['setting']} | {r['max_allocated'] / GIB:.2f} | {r['accelwiz_allocated'] / GIB:.2f} | "
            f"{r['error_allocated']:+.1%} | {trace} | {r['max_reserved'] / GIB:.2f} | "
            f"{r['accelwiz_reserved'] / GIB:.2f} | {r['error_reserved']:+.1%} | {replay} | {runtime} | "
            f"{r['accelerate'] / GIB:.2f} ({r['error_accelerate']:+.0%}) |")


def write_results(rows: list[dict], gpu: str, *, show: bool = True) -> None:
    summary = summarise(rows, gpu)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "estimator_accuracy.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))
    lines = [
        f"# Estimator accuracy on {gpu}",
        "",
        "| setting | measured alloc. GiB | accelwiz alloc. GiB | error | trace alloc. GiB | error | "
        "measured reserved GiB | accelwiz reserved GiB | error | trace replay reserved GiB | error | "
        "runtime MiB (NVML) | accelerate GiB (error) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *(_row_line(r) for r in rows),
    ]
    for name, what in (("allocated", "accelwiz vs max_memory_allocated"), ("reserved", "accelwiz vs "
                       "max_memory_reserved"), ("trace", "trace vs max_memory_allocated"),
                       ("trace_reserved", "trace replayed through the allocator model vs max_memory_reserved"),
                       ("accelerate", "accelerate estimate-memory vs max_memory_allocated")):
        if summary[f"median_abs_error_{name}"] is not None:
            lines.append(f"\n{what}: median |error| {summary[f'median_abs_error_{name}']:.1%}, "
                         f"worst {summary[f'worst_error_{name}']:+.1%}")
    (RESULTS / "estimator_accuracy.md").write_text("\n".join(lines) + "\n")
    if show:
        print("\n".join(lines))


def add_errors(row: dict) -> dict:
    if "max_allocated" in row:
        row["error_allocated"] = relative_error(row["accelwiz_allocated"], row["max_allocated"])
        row["error_reserved"] = relative_error(row["accelwiz_reserved"], row["max_reserved"])
        row["error_accelerate"] = relative_error(row["accelerate"], row["max_allocated"])
        if "trace_allocated" in row:
            row["error_trace"] = relative_error(row["trace_allocated"], row["max_allocated"])
        if "trace_reserved" in row:
            row["error_trace_reserved"] = relative_error(row["trace_reserved"], row["max_reserved"])
    return row


def re_estimate() -> int:
    """The saved GPU measurements against this code's estimates (the measurements stay as the GPU gave them)."""
    saved = json.loads((RESULTS / "estimator_accuracy.json").read_text())
    for row in saved["rows"]:
        estimate = accelwiz_estimate(Setting.from_row(row))
        row.update(accelwiz_allocated=estimate["allocated"], accelwiz_reserved=estimate["reserved"],
                   accelwiz_breakdown=estimate["breakdown"])
        add_errors(row)
    write_results(saved["rows"], saved["summary"]["gpu"])
    return 0


def add_traces(layers: int | None = None) -> int:
    """Trace, on this CPU, the settings a GPU run measured with --no-trace, and rewrite the results."""
    saved = json.loads((RESULTS / "estimator_accuracy.json").read_text())
    rows = saved["rows"]
    for row in rows:
        if "trace_allocated" not in row:
            row.update(trace_figures(Setting.from_row(row), layers))
            add_errors(row)
            print(f"{row['setting']}: trace {row['trace_allocated'] / GIB:.2f} GiB", file=sys.stderr)
    write_results(rows, saved["summary"]["gpu"])
    return 0


def dry_run(settings: list[Setting], trace: bool, layers: int | None = None) -> int:
    for number, setting in enumerate(matrix()):
        if setting not in settings:
            continue
        estimate = accelwiz_estimate(setting)
        traced = ""
        if trace:
            figures = trace_figures(setting, layers)
            traced = f"  trace {figures['trace_allocated'] / GIB:6.2f} GiB ({figures['trace_phase']})"
        print(f"{number:>2}  {setting.label:<50} accelwiz {estimate['allocated'] / GIB:6.2f} GiB allocated"
              + traced + f"\n    accelwiz {' '.join(estimate_argv(setting))}")
    return 0


def measure_all(settings: list[Setting], *, trace: bool, history: Path | None, layers: int | None = None) -> int:
    """Each setting measured on the GPU (and traced on the CPU unless told not to); results saved after each."""
    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA device: this benchmark trains on a GPU (use --dry-run to list the matrix)",
              file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name(0)
    accelerate_numbers = {name: accelerate_estimate(spec) for name, spec in MODELS.items()}
    rows = []
    for setting in settings:
        number = matrix().index(setting)
        estimate = accelwiz_estimate(setting)
        row = {"setting": setting.label, **asdict(setting), "accelwiz_allocated": estimate["allocated"],
               "accelwiz_reserved": estimate["reserved"], "accelwiz_breakdown": estimate["breakdown"],
               "accelerate": accelerate_numbers[setting.model],
               **run_setting(setting, history / f"{number:02d}.jsonl.gz" if history else None)}
        if trace:
            try:  # the same step traced on the CPU: measured vs trace vs analytic in one table
                row.update(trace_figures(setting, layers))
            except Exception as exc:  # noqa: BLE001 - a failed trace must not lose the GPU measurement
                row["trace_error"] = f"{type(exc).__name__}: {exc}"[:200]
        rows.append(add_errors(row))
        print(json.dumps({k: v for k, v in row.items() if not k.endswith("breakdown")}), flush=True)
        write_results(rows, gpu, show=False)  # a run cut short keeps what it measured
    write_results(rows, gpu)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="list the settings and the estimates; no GPU needed")
    parser.add_argument("--only", help="comma-separated setting numbers")
    parser.add_argument("--trace", action="store_true",
                        help="with --dry-run: also trace each setting on the CPU (fake tensors)")
    parser.add_argument("--no-trace", action="store_true",
                        help="measure on the GPU only; trace later on any CPU with --add-traces")
    parser.add_argument("--add-traces", action="store_true",
                        help="trace the settings of the saved results that have no trace yet (CPU)")
    parser.add_argument("--re-estimate", action="store_true",
                        help="recompute accelwiz's estimates for the saved measurements (CPU)")
    parser.add_argument("--history", help="directory for each setting's allocator event stream (jsonl.gz)")
    parser.add_argument("--trace-layers", type=int, help="trace N layers and scale (`estimate --trace --layers N`): "
                        "for a model whose whole trace --trace's time cap refuses")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_worker(Setting(**json.loads(args.worker)), args.history)))
        return 0
    if args.add_traces:
        return add_traces(args.trace_layers)
    if args.re_estimate:
        return re_estimate()
    settings = matrix()
    if args.only:
        settings = [settings[int(i)] for i in args.only.split(",")]
    if args.dry_run:
        return dry_run(settings, args.trace, args.trace_layers)
    return measure_all(settings, trace=not args.no_trace, history=Path(args.history) if args.history else None,
                       layers=args.trace_layers)


if __name__ == "__main__":
    sys.exit(main())
