"""accelwiz against DeepSpeed's own config parser (`deepspeed.runtime.config.DeepSpeedConfig`, no GPU needed).

Every corpus JSON that accelwiz reports without errors must also be accepted by DeepSpeed, once the Hugging
Face "auto" values are filled the way accelerate fills them; and configs that DeepSpeed rejects are flagged by
accelwiz. The world size is set by replacing the module's `dist` (cpu-feasibility.md, section 2).
"""

from __future__ import annotations

import copy
import csv
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from accelwiz.document import load_document
from accelwiz.rules.diagnostic import Severity
from tests.rules.helpers import diagnostics

WORLD = 8
HIDDEN = 4096  # the hidden size accelerate would read from model.config
# Refusals about this CPU-only machine rather than the config (aio.use_gds needs a CUDA accelerator).
MACHINE_DEPENDENT = ("only supported for CUDA accelerator",)


def fill_auto(data: dict[str, Any], world: int = WORLD) -> dict[str, Any]:
    """The JSON as accelerate hands it to DeepSpeed for a bf16 run with batch 2 and no accumulation."""
    filled = copy.deepcopy(data)
    values = {
        "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1, "gradient_clipping": 1.0,
        "zero_optimization.stage": 2, "zero_optimization.offload_optimizer.device": "none",
        "zero_optimization.offload_param.device": "none",
        "zero_optimization.stage3_gather_16bit_weights_on_model_save": False,
        "zero_optimization.reduce_bucket_size": HIDDEN * HIDDEN,
        "zero_optimization.stage3_prefetch_bucket_size": int(0.9 * HIDDEN * HIDDEN),
        "zero_optimization.stage3_param_persistence_threshold": 10 * HIDDEN,
        "optimizer.params.lr": 1e-4, "optimizer.params.weight_decay": 0.0,
        "optimizer.params.betas": [0.9, 0.999], "optimizer.params.eps": 1e-8,
        "scheduler.params.warmup_min_lr": 0, "scheduler.params.warmup_max_lr": 1e-4,
        "scheduler.params.warmup_num_steps": 10, "scheduler.params.total_num_steps": 100,
        "fp16.enabled": False, "bf16.enabled": True,
    }

    def walk(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            elif value == "auto" and f"{prefix}{key}" in values:
                node[key] = values[f"{prefix}{key}"]

    walk(filled, "")
    mbs, gas = filled.get("train_micro_batch_size_per_gpu"), filled.get("gradient_accumulation_steps")
    if data.get("train_batch_size") == "auto" and isinstance(mbs, int) and isinstance(gas, int):
        filled["train_batch_size"] = mbs * gas * world  # accelerate: micro x accumulation x processes
    return filled


@pytest.fixture(scope="module")
def deepspeed_config(request) -> Callable[[dict[str, Any], int], Any]:
    """Parse a config dict with DeepSpeed; returns the DeepSpeedConfig, or the error text when DeepSpeed "
      "refuses."""
    config_module = pytest.importorskip("deepspeed.runtime.config")
    real_dist = config_module.dist

    def parse(data: dict[str, Any], world: int = WORLD) -> Any:
        config_module.dist = SimpleNamespace(get_rank=lambda: 0, get_world_size=lambda *a, **k: world)
        try:
            return config_module.DeepSpeedConfig(copy.deepcopy(data))
        except Exception as exc:  # AssertionError, ValueError, pydantic errors, DeepSpeedConfigError
            return f"{type(exc).__name__}: {exc}"
        finally:
            config_module.dist = real_dist

    return parse


def corpus_jsons(corpus: Path) -> list[Path]:
    with open(corpus / "index.tsv", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        return [corpus / "real" / row["file"] for row in rows if row["kind"] == "deepspeed_json"]


def errors(path: Path) -> list[str]:
    return [f"{d.code} {d.message}" for d in diagnostics(path, select=("AW0", "AW2", "AW4"))
            if d.severity is Severity.ERROR]


def accepted_somewhere(deepspeed_config, data: dict[str, Any]) -> str | None:
    """None when DeepSpeed accepts the config for some world size, else its error for the largest one.

    A JSON checked alone does not say how many GPUs it is for (an inference config with train_batch_size 1 is
    for one GPU), so it counts as valid when any common world size works.
    """
    results = [deepspeed_config(fill_auto(data, world), world) for world in (1, 2, WORLD)]
    if any(not isinstance(r, str) or any(m in r for m in MACHINE_DEPENDENT) for r in results):
        return None
    return results[-1]


def test_corpus_jsons_without_errors_are_accepted_by_deepspeed(corpus, deepspeed_config):
    checked = 0
    for path in corpus_jsons(corpus):
        if errors(path):
            continue
        refusal = accepted_somewhere(deepspeed_config, load_document(path).data)
        assert refusal is None, f"{path.name}: accelwiz found no error, DeepSpeed says {refusal}"
        checked += 1
    assert checked >= 45


def test_corpus_jsons_deepspeed_refuses_are_flagged(corpus, deepspeed_config):
    refused = 0
    for path in corpus_jsons(corpus):
        refusal = accepted_somewhere(deepspeed_config, load_document(path).data)
        if refusal is not None:
            assert errors(path), f"{path.name}: DeepSpeed refuses it ({refusal}) but accelwiz found no error"
            refused += 1
    assert refused >= 5  # trlx's fp16 keys, axolotl's compile block, the snippets without batch keys


BASE = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
        "zero_optimization": {"stage": 2}}

# Configs DeepSpeed refuses at `DeepSpeedConfig()`, with the accelwiz code that must flag each.
REFUSED = [
    ({"zero_optimization": {"stage": 2, "overlap_comms": True}}, "AW001", "extra_forbidden"),
    ({"bf16": {"enabeld": True}}, "AW001", "extra_forbidden"),
    ({"zero_optimization": {"stage": 4}}, "AW004", "stage"),
    ({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "gpu"}}}, "AW004", "'cpu' or"),
    ({"fp16": {"enabled": True}, "bf16": {"enabled": True}}, "AW401", "cannot be simultaneously enabled"),
    ({"train_batch_size": 15, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 8}, "AW212",
     "15 != 2 * 8 * 1"),
    ({"train_micro_batch_size_per_gpu": None}, "AW213", "Either train_batch_size"),
    ({"elasticity": {"enabled": True}}, "AW010", "Elastic training has been removed"),
    ({"amp": {"enabled": True}}, "AW010", "Apex AMP"),
    ({"zero_optimization": {"stage": 1, "mics_shard_size": 8}}, "AW010", "MiCS"),
    ({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.3}}}, "AW209",
     "Partial offloading only supported for ZeRO Stage 3"),
    ({"zero_optimization": {"stage": 3}, "gradient_allreduce_op": "sum"}, "AW219", "not supported with ZeRO"),
    ({"zero_optimization": {"stage": 3, "compute_grad_norm": False}}, "AW220", "compute_grad_norm=false"),
    ({"zero_optimization": {"stage": 1, "reduce_bucket_size": 0}}, "AW218", "greater than 0"),
    ({"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 1, "prefetch_bucket_size": 1}},
     "AW229",
     "extra_forbidden"),
    ({"zero_optimization": {"stage": 2, "cpu_offload": True, "offload_optimizer": {"device": "cpu"}}},
     "AW229",
     "Cannot provide deprecated parameter"),
    ({"bf16": {"enabled": True, "bf16_optimizer_states": True}}, "AW406", "requires bf16_master_weights"),
    ({"zero_optimization": {"stage": 0}, "bf16": {"enabled": True, "bf16_master_weights_and_grads": True}},
     "AW407", "only supported with ZeRO Stage 1, 2, or 3"),
    ({"fp16": {"enabled": True, "loss_scale": -1.0}}, "AW408", "must be >= 0"),
    ({"fp16": {"enabled": True, "min_loss_scale": 0}}, "AW408", "min_loss_scale must be > 0"),
    ({"fp16": {"enabled": True, "opt_level": "O2"}}, "AW010", "extra_forbidden"),
    ({"compile": {"backend": "inductor"}}, "AW010", "extra_forbidden"),
    ({"communication_data_type": "int8"}, "AW004", "Invalid communication_data_type"),
    ({"gradient_allreduce_op": "max"}, "AW004", "Invalid gradient_allreduce_op"),
    ({"checkpoint": {"tag_validation": "maybe"}}, "AW004", "tag_validation"),
    ({"torch_autocast": {"enabled": True, "dtype": "fp8"}}, "AW004", "DtypeEnum"),
    ({"data_types": {"keep_in_fp32_modules": "norm"}}, "AW004", "keep_in_fp32_modules"),
]


def _config(changes: dict[str, Any]) -> dict[str, Any]:
    data = {**BASE, **changes}
    return {k: v for k, v in data.items() if v is not None}


@pytest.mark.parametrize("changes,code,deepspeed_says", REFUSED)
def test_configs_deepspeed_refuses_are_flagged(write, deepspeed_config, changes, code, deepspeed_says):
    data = _config(changes)
    result = deepspeed_config(data, 1)
    assert isinstance(result, str) and deepspeed_says in result
    assert code in {d.code for d in diagnostics(write("ds.json", json.dumps(data)), select=(code,))}


# Configs DeepSpeed accepts at parse time although the run does not do what they say (or fails later).
SILENT = [
    ({"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}}, "AW206"),
    ({"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "nvme", "nvme_path": "/n"}}},
     "AW208"),
    ({"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}, "AW207"),
    ({"zero_optimization": {"stage": 0, "offload_optimizer": {"device": "cpu"}}}, "AW211"),
    ({"optimizer": {"type": "FooOpt"}}, "AW222"),
    ({"scheduler": {"type": "FooLR"}}, "AW223"),
    ({"optimizer": {"type": "Adam", "params": {"max_grad_norm": 1.0}}}, "AW221"),
    ({"zero_optimization": {"stage": 3, "stage3_max_live_parameters": "auto"}}, "AW226"),
    ({"gradient_acumulation_steps": 4}, "AW001"),
    ({"stage3_max_live_parameters": 1e9}, "AW002"),
]


@pytest.mark.parametrize("changes,code", SILENT)
def test_configs_deepspeed_silently_accepts_are_flagged(write, deepspeed_config, changes, code):
    data = _config(changes)
    assert not isinstance(deepspeed_config(data, 1), str)
    assert code in {d.code for d in diagnostics(write("ds.json", json.dumps(data)), select=(code,))}


def test_auto_in_a_pydantic_block_is_dropped_by_deepspeed(deepspeed_config):
    data = _config({"zero_optimization": {"stage": "auto"}, "fp16": {"enabled": "auto"}})
    parsed = deepspeed_config(data, 1)
    assert parsed.zero_optimization_stage == 0 and parsed.float16_config.enabled is False


def test_integral_floats_are_integers_for_deepspeed_and_accelwiz(write, deepspeed_config):
    data = _config({"zero_optimization": {"stage": 3, "reduce_bucket_size": 5e8, "sub_group_size": 1e9}})
    assert deepspeed_config(data, 1).zero_config.reduce_bucket_size == 500_000_000
    assert errors(write("ds.json", json.dumps(data))) == []
