"""AW810-AW812 against trl 1.16's and vLLM's code, which cannot run here (no vLLM, no GPU).

AW810: TRL's own check is in `VLLMGeneration._init_vllm` (trl/generation/vllm_generation.py), after its
`is_vllm_available()` gate and before any vLLM call. The test runs that very method, in a subprocess, with the gate
opened and TRL's world size (`accelerator.num_processes`) given per case: TRL must raise its "must divide world
size" exactly where the rule fires; past the check, the method fails on the vLLM it never imported.
AW811: TRL has no check (the trainer waits `vllm_server_timeout` in VLLMClient.check_server, then raises
ConnectionError); the rule is TRL's documented layout, one GPU at least for `trl vllm-serve` beside the training
processes, tested over machines of 1 to 8 GPUs. AW812: vLLM's requested share of each GPU beside the step.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl
from accelwiz.probe.profiles import load_system
from tests.rules.helpers import codes

INIT_VLLM = """
import json, sys, types
import torch
import trl.generation.vllm_generation as vllm_generation

vllm_generation.is_vllm_available = lambda: True  # the gate: past it, TRL checks the sizes before touching vLLM
refused = []
for world, tensor in json.load(open(sys.argv[1])):
    generation = vllm_generation.VLLMGeneration.__new__(vllm_generation.VLLMGeneration)
    generation.model, generation.mode, generation.tensor_parallel_size = torch.nn.Linear(1, 1), "colocate", tensor
    generation.accelerator = types.SimpleNamespace(num_processes=world, process_index=0, local_process_index=0)
    try:
        generation._init_vllm()
    except ValueError as exc:
        refused.append(str(exc) if "must divide world size" in str(exc) else None)
    except Exception:  # past TRL's check: a process group, or vLLM's LLM, that is not there
        refused.append(None)
json.dump(refused, open(sys.argv[2], "w"))
"""


def _argv_codes(yaml: Path, argv: list[str], select: tuple[str, ...], **context) -> set[str]:
    return codes(yaml, select=select, training_args=with_trl(parse_argv(argv), "grpo", None, argv), **context)


def test_aw810_fires_exactly_where_trls_init_vllm_refuses(tmp_path: Path) -> None:
    cases = [(world, tensor) for world in (1, 2, 3, 4, 6, 8) for tensor in (1, 2, 3, 4, 8)]
    given, out, script = tmp_path / "cases.json", tmp_path / "refused.json", tmp_path / "init_vllm.py"
    given.write_text(json.dumps(cases))
    script.write_text(INIT_VLLM)
    subprocess.run([sys.executable, str(script), str(given), str(out)], check=True, capture_output=True, timeout=300)
    refusals = json.loads(out.read_text())
    disagreements = []
    for (world, tensor), refusal in zip(cases, refusals, strict=True):
        yaml = tmp_path / f"w{world}.yaml"
        yaml.write_text(f"distributed_type: MULTI_GPU\nnum_processes: {world}\n")
        argv = ["--use_vllm", "--vllm_mode", "colocate", "--vllm_tensor_parallel_size", str(tensor),
                "--per_device_train_batch_size", "8", "--num_generations", "8"]
        if ("AW810" in _argv_codes(yaml, argv, ("AW810",))) != (refusal is not None):
            disagreements.append((world, tensor, refusal))
    assert not disagreements, disagreements
    assert 5 <= sum(r is not None for r in refusals) <= len(cases) - 5  # both sides


def test_aw811_wants_one_gpu_left_for_the_vllm_server(tmp_path: Path) -> None:
    argv = ["--use_vllm", "--vllm_mode", "server", "--per_device_train_batch_size", "8", "--num_generations", "8"]
    for gpus in (1, 2, 4, 8):
        system = load_system(f"{gpus}xH100-80GB")
        for world in range(1, gpus + 1):
            yaml = tmp_path / f"w{world}.yaml"
            yaml.write_text(f"distributed_type: MULTI_GPU\nnum_processes: {world}\n")
            fires = "AW811" in _argv_codes(yaml, argv, ("AW811",), system=system)
            assert fires == (world == gpus), (gpus, world)
    # colocate shares the training GPUs: nothing to leave free
    yaml.write_text("distributed_type: MULTI_GPU\nnum_processes: 8\n")
    assert not _argv_codes(yaml, [a if a != "server" else "colocate" for a in argv], ("AW811",), system=system)


def test_aw812_adds_vllms_requested_memory_to_the_step(cli, write) -> None:
    """vLLM takes `total_memory × gpu_memory_utilization` of each GPU (vllm/v1/worker/gpu_worker.py, init_device:
    `requested_memory`, refused at start-up when not free), whatever the training step holds: the rule fires
    exactly where that share and the step (the same at every share) exceed the GPU."""
    import re

    config = write("accelerate.yaml", "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n"
                                      "  zero_stage: 3\n")

    def aw812(share: float) -> list[float] | None:
        result = cli("check", str(config), "--system", "8xH100-80GB", "--model", "llama-8b", "--kind", "grpo",
                     "--select", "AW812", "--format", "json", "--", "--use_vllm", "--vllm_gpu_memory_utilization",
                     str(share), "--per_device_train_batch_size", "8", "--num_generations", "8",
                     "--vllm_max_model_length", "2048")
        pattern = r"\(([\d.]+) GiB\) and the GRPO step needs ([\d.]+) GiB more: [\d.]+ GiB of ([\d.]+)"
        # the other finding, a share too small for one request's KV cache, is vLLM's block arithmetic
        found = [re.search(pattern, d["message"]) for d in json.loads(result.stdout)]
        return next(([float(n) for n in f.groups()] for f in found if f), None)

    share_gib, step_gib, gpu_gib = aw812(0.95)
    assert share_gib == pytest.approx(0.95 * gpu_gib, abs=0.1)
    for share in (0.1, 0.3, 0.5, 0.7, 0.9):
        found = aw812(share)
        assert (found is not None) == (share * gpu_gib + step_gib > gpu_gib), share
        if found is not None:
            assert found[0] == pytest.approx(share * gpu_gib, abs=0.1) and found[1] == step_gib
