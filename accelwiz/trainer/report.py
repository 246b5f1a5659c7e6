"""What a run measured, written as `run_report.json` beside the checkpoints.

Peak memory is the number people argue about, so the report puts the measured peak of every rank beside
accelwiz's own estimate for the same model and settings (when `accelwiz.estimate` can produce one).
"""

from __future__ import annotations

import json
import resource
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accelwiz.trainer.checkpoints import TrainerState
    from accelwiz.trainer.options import TrainerOptions

REPORT_FILE = "run_report.json"


def peak_memory_bytes(device_type: str) -> tuple[int, str]:
    """(peak bytes, what was measured): CUDA's allocator peak on GPU, else this process's peak RSS."""
    if device_type == "cuda":
        import torch

        return int(torch.cuda.max_memory_allocated()), "cuda_max_memory_allocated"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in kilobytes on Linux and in bytes on macOS
    return int(rss if sys.platform == "darwin" else rss * 1024), "process_peak_rss"


def cuda_peaks() -> dict[str, int]:
    """This rank's CUDA allocator peaks: what tensors held, and what the caching allocator reserved."""
    import torch

    return {"allocated": int(torch.cuda.max_memory_allocated()), "reserved": int(torch.cuda.max_memory_reserved())}


def parameter_checksum(state_dict: dict[str, Any]) -> float:
    """The sum of every floating-point tensor's fp64 sum: equal on two runs that trained the same weights."""
    return float(sum(t.detach().double().sum().item() for t in state_dict.values() if t.is_floating_point()))


def model_flops_per_token(parameters: int, trainable: int, layers: int, hidden: int, seq_len: int) -> float:
    """Training FLOPs per token (no recomputation counted, as MFU defines it).

    Forward 2N and the activation gradients 2N for every weight; weight gradients 2N only for the trainable
    ones (all of them in full fine-tuning, the adapters in LoRA); attention scores 12 x layers x hidden x
    sequence (forward and backward, PaLM appendix B).
    """
    return 4 * parameters + 2 * trainable + 12 * layers * hidden * seq_len


def gpu_peak_flops(device_name: str) -> tuple[float | None, str | None]:
    """(dense bf16 FLOP/s, table key) of the GPU from the probe's GPU table, or (None, None) when unlisted."""
    from accelwiz.probe.gpus import match_gpu_name

    model = match_gpu_name(device_name)
    if model is None or model.peak_16bit_tflops is None:
        return None, None
    return model.peak_16bit_tflops * 1e12, model.key


def error_percent(measured: int, estimated: int | None) -> float | None:
    if not estimated:
        return None
    return round(100.0 * (measured - estimated) / estimated, 1)


def estimate_for_run(settings: dict[str, Any]) -> dict[str, Any]:
    """accelwiz's memory estimate for these settings, or why there is none; never raises."""
    from accelwiz.trainer.estimate_bridge import estimate_from_settings

    try:
        with _outside_zero3_init():
            return {"available": True, **estimate_from_settings(settings)}
    except Exception as exc:  # noqa: BLE001 - the estimate is a comparison, never a reason to fail a finished run
        return {"available": False, "reason": f"{type(exc).__name__}: {exc}"}


@contextmanager
def _outside_zero3_init() -> Iterator[None]:
    """Hide the run's ZeRO-3 config from transformers while the estimator builds its model.

    Under ZeRO-3, transformers constructs every model inside `deepspeed.zero.Init`, which broadcasts each
    parameter to all ranks; the estimate runs on the main process alone, so that broadcast would wait forever.
    """
    try:
        from transformers.integrations import deepspeed as hf_deepspeed
    except ImportError:
        yield
        return
    saved = hf_deepspeed._hf_deepspeed_config_weak_ref
    hf_deepspeed._hf_deepspeed_config_weak_ref = None
    try:
        yield
    finally:
        hf_deepspeed._hf_deepspeed_config_weak_ref = saved


def write_report(output_dir: Path, report: dict[str, Any]) -> Path:
    from accelwiz.atomic import atomic_write

    path = output_dir / REPORT_FILE
    atomic_write(path, json.dumps(report, indent=2) + "\n")  # never a half-written report
    return path


def rank_report(accelerator: Any, model: Any, final_loss: float | None) -> list[dict[str, Any]]:
    """Every rank's view at the end, gathered (a collective: every rank calls it): its global, node and local
    rank, its host (and SLURM node), the final loss it saw, and the checksum of its own full copy of the
    parameters (ZeRO-3 shards gathered first). Across the machines of a multi-node run these must agree."""
    import contextlib
    import os
    import socket

    from accelerate.utils import gather_object

    parameters = list(accelerator.unwrap_model(model).parameters())
    gathered = contextlib.nullcontext()
    plugin = getattr(accelerator.state, "deepspeed_plugin", None)
    if plugin is not None and plugin.zero_stage == 3:
        import deepspeed

        gathered = deepspeed.zero.GatheredParameters(parameters, modifier_rank=None)
    with gathered:
        checksum = float(sum(p.detach().double().sum().item() for p in parameters))
    mine = {
        "rank": accelerator.process_index,
        "node_rank": int(os.environ.get("GROUP_RANK", os.environ.get("NODE_RANK", "0"))),
        "local_rank": accelerator.local_process_index,
        "host": socket.gethostname(),
        "slurm_node": os.environ.get("SLURMD_NODENAME"),
        "final_loss": final_loss,
        "parameter_checksum": checksum,
    }
    return sorted(gather_object([mine]), key=lambda r: r["rank"])


def report_run(
    accelerator: Any,
    opts: TrainerOptions,
    run: dict[str, Any],
    model_config: Any,
    result: dict[str, Any],
    state: TrainerState,
    resumed_from: Path | None,
    extra: dict[str, Any],
) -> None:
    """Gather every rank's peak memory; the main process writes run_report.json beside the estimate."""
    import torch

    peak, measured = peak_memory_bytes(accelerator.device.type)
    on_gpu = accelerator.device.type == "cuda"
    mine = [peak, *(cuda_peaks().values() if on_gpu else (0, 0))]
    gathered = accelerator.gather(torch.tensor([mine], device=accelerator.device)).tolist()
    if not accelerator.is_main_process:
        return
    peaks = [row[0] for row in gathered]
    estimate = estimate_for_run({**run, "model_config": model_config.to_dict()})
    report = {
        **run,
        **result,
        "final_loss": result["loss_last"],
        **extra,
        "checkpoints": [c for c in result["checkpoints"] if Path(c).is_dir()],  # after pruning
        "start_step": state.step,
        "resumed_from": str(resumed_from) if resumed_from else None,
        "lr": opts.lr,
        "peak_memory_bytes": peaks,
        "peak_memory_measure": measured,
        "estimate": estimate,
    }
    if on_gpu:
        report["gpu"] = gpu_report(accelerator, run, model_config, result, gathered, estimate)
    path = write_report(opts.output_dir, report)
    if result["losses"]:
        trained = (f"loss {result['loss_first']:.3f} -> {result['loss_last']:.3f}, "
                   f"{result['tokens_per_second']:,.0f} tokens/s, ")
    else:
        trained = "nothing left to train, "
    accelerator.print(
        f"done: step {result['steps']}/{opts.steps}, {trained}peak {max(peaks) / 2**20:,.0f} MiB ({measured}); "
        f"saved {extra['saved']}; report: {path}",
        file=sys.stderr,
    )


def gpu_report(accelerator: Any, run: dict[str, Any], model_config: Any, result: dict[str, Any],
               gathered: list[list[int]], estimate: dict[str, Any]) -> dict[str, Any]:
    """Every rank's CUDA peaks beside the estimate for these settings, and MFU against the GPU table's peak."""
    import torch

    estimated = estimate.get("per_rank_allocated_bytes") if estimate.get("available") else None
    name = torch.cuda.get_device_name(accelerator.device)
    peak_flops, key = gpu_peak_flops(name)
    per_token = model_flops_per_token(
        run["parameters"], run["trainable_parameters"], getattr(model_config, "num_hidden_layers", 0),
        getattr(model_config, "hidden_size", 0), run["seq_len"])
    seconds = result["train_seconds"]
    mfu = None
    if peak_flops and seconds > 0 and result["tokens"]:
        mfu = round(per_token * result["tokens"] / (seconds * peak_flops * accelerator.num_processes), 4)
    return {
        "device_name": name,
        "gpu_table_key": key,
        "max_memory_allocated_bytes": [row[1] for row in gathered],
        "max_memory_reserved_bytes": [row[2] for row in gathered],
        "estimated_allocated_bytes": estimated,
        "estimate_error_percent": [error_percent(row[1], estimated) for row in gathered],
        "model_flops_per_token": per_token,
        "peak_flops_per_gpu": peak_flops,
        "mfu": mfu,
    }
