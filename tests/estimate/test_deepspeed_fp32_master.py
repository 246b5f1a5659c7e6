"""DeepSpeed keeps a separate fp32 master partition of an fp32 model too (issue 28): real ZeRO-1/2/3 engines in
fp32 (no bf16/fp16 section) on this CPU, their optimizer's master partitions and Adam states counted by storage.

ZeRO-1/2 clone the partition (deepspeed 0.19.8 stage_1_and_2.py 560-561); ZeRO-3's alias for an fp32 partition
(stage3.py 1162-1167) compares a torch.device with the accelerator's device name, a str, which torch says is
unequal, so it copies too (1169-1172). The estimate counted no master under fp32 (4 B per sharded parameter
short: the GLM-4 and ChatGLM3 ZeRO-3 fp32 rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelwiz.estimate.states import model_states
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import spec_from_hf_config
from tests.estimate.deepspeed_engine import MASTER_ENGINE, engine_lines
from tests.estimate.deepspeed_engine import TINY_LLAMA as _TINY_LLAMA



@pytest.mark.slow
def test_fp32_zero_engines_keep_a_separate_fp32_master_partition(tmp_path: Path) -> None:
    lines = engine_lines(tmp_path, MASTER_ENGINE, _TINY_LLAMA, [[1, None], [2, None], [3, None]], "MASTER",
                         what="an fp32 ZeRO engine on the CPU", env={"DS_ACCELERATOR": "cpu"})
    workload = Workload(spec_from_hf_config(_TINY_LLAMA, name="tiny", source="test"), precision="fp32")
    elements = workload.trainable_parameters
    for stage, dtype, state_dtype, separate, states in lines:
        assert (dtype, state_dtype) == ("torch.float32", "torch.float32"), (stage, dtype, state_dtype)
        # one process: nothing sharded; DeepSpeed pads a partition to its alignment (a few elements)
        counted = model_states(workload, Strategy(f"zero{stage}")).optimizer_states
        assert counted <= int(separate) + int(states) < counted + 64, (stage, int(separate) / elements,
                                                                      int(states) / elements, counted / elements)
        assert int(separate) // elements == 4, (stage, int(separate) / elements)  # the master: its own 4 bytes
