"""DeepSpeed's bf16 master weights and optimizer states (`bf16.bf16_master_weights_and_grads`,
`bf16.bf16_optimizer_states`, 0.18.3+), said by the estimate's flags: real ZeRO-1/2/3 engines of a bf16 model on
this CPU, their optimizer's master partitions and Adam states counted by storage and dtype, against the bytes the
CLI counts for the same run through `--bf16-master-weights-and-grads --bf16-optimizer-states`, and without them
(fp32 masters and states: a bf16 model under DeepSpeed is mixed precision to it). One process: nothing sharded.
Under ZeRO-3 optimizer offload the engine's DeepSpeedCPUAdam host tensors (the master, its gradient partition in
the master's dtype, the gradient buffer, Adam's states) against the host RAM the CLI counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelwiz.estimate.memory import HOST_PROCESS_BYTES
from tests.estimate.deepspeed_engine import HOST_ENGINE, MASTER_ENGINE, engine_lines
from tests.estimate.deepspeed_engine import TINY_LLAMA as _TINY_LLAMA

_FLAGS = ("--bf16-master-weights-and-grads", "--bf16-optimizer-states")


def _counted(cli, config: Path, stage: int, low: bool) -> tuple[int, int]:
    """The optimizer's bytes the CLI counts for the engine's run (master copy and Adam states), and the model's
    parameter count."""
    result = cli("estimate", "--model", str(config), "--strategy", f"zero{stage}", "--gpus", "1", "--gpu-memory",
                 "80GiB", "--precision", "bf16", "--seq-len", "8", *(_FLAGS if low else ()), "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["estimate"]["strategy"]["bf16_master_weights_and_grads"] is low
    return data["estimate"]["sizes"]["optimizer_states"], data["model"]["parameters"]


@pytest.mark.slow
def test_the_flags_count_the_bf16_master_and_states_a_real_engine_keeps(cli, tmp_path: Path) -> None:
    settings = [[1, True], [2, True], [3, True], [3, False]]
    sections = [[stage, {"enabled": True, "bf16_master_weights_and_grads": low, "bf16_optimizer_states": low}]
                for stage, low in settings]
    lines = engine_lines(tmp_path, MASTER_ENGINE, _TINY_LLAMA, sections, "MASTER",
                         what="a bf16 ZeRO engine on the CPU", env={"DS_ACCELERATOR": "cpu"})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**_TINY_LLAMA, "architectures": ["LlamaForCausalLM"]}))
    for (stage, low), (_, master_dtype, state_dtype, separate, states) in zip(settings, lines):
        counted, parameters = _counted(cli, config, stage, low)
        width = 2 if low else 4
        dtype = "torch.bfloat16" if low else "torch.float32"
        assert (master_dtype, state_dtype) == (dtype, dtype), (stage, low, master_dtype, state_dtype)
        # a master copy of its own (never the bf16 model's storage) and Adam's m and v in its dtype
        assert int(separate) // parameters == width and int(states) // parameters == 2 * width, (stage, low)
        # DeepSpeed pads a partition to its alignment (a few elements)
        assert counted <= int(separate) + int(states) < counted + 64, (stage, low, counted / parameters)


# the engine builds DeepSpeedCPUAdam from the JSON's optimizer, its moments in bf16 with bf16_optimizer_states
# (0.19.8 engine.py `get_optimizer_configuration`); tests/estimate/test_host.py measures the same tensors in fp32


@pytest.mark.slow
def test_the_flags_count_the_host_tensors_of_a_real_offloading_engine(cli, tmp_path: Path) -> None:
    settings = [[True], [False]]
    sections = [[3, {"enabled": True, "bf16_master_weights_and_grads": True, "bf16_optimizer_states": states}]
                for (states,) in settings]
    lines = engine_lines(tmp_path, HOST_ENGINE, _TINY_LLAMA, sections, "HOST", what="DeepSpeedCPUAdam",
                         env={"ACCELERATE_USE_CPU": "true"})
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**_TINY_LLAMA, "architectures": ["LlamaForCausalLM"]}))
    for (states,), (_, host, grad_dtype, state_dtype) in zip(settings, lines):
        result = cli("estimate", "--model", str(config), "--strategy", "zero3", "--offload-optimizer", "cpu",
                     "--gpus", "1", "--gpu-memory", "80GiB", "--precision", "bf16", "--seq-len", "8",
                     *(_FLAGS if states else _FLAGS[:1]), "--format", "json")
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)
        assert grad_dtype == "torch.bfloat16" and state_dtype == ("torch.bfloat16" if states else "torch.float32")
        # master 2 + its gradient partition 2 + the gradient buffer 2 + Adam m, v (4 in bf16, 8 in fp32) B/param
        assert int(host) == (10 if states else 14) * data["model"]["parameters"], (states, int(host))
        assert data["estimate"]["host_bytes_per_node"] - HOST_PROCESS_BYTES == int(host), states
