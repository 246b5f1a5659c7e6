"""AW801-AW804 against TRL itself: the real GRPOConfig (built in one process, and in two under torchrun, where
`world_size` is 2) and the real GRPOTrainer/DPOTrainer on the tiny checkpoint. TRL must refuse exactly when the
rules fire."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl
from tests.ports import free_port
from tests.rules.helpers import codes

BATCH_RULES = ("AW801", "AW802", "AW803")


def grid() -> list[dict]:
    """Small but covering: every branch of GRPOConfig.__post_init__'s batch logic, divisible and not."""
    cases = []
    for micro, accumulation, generations in itertools.product((1, 2, 3, 4), (1, 3), (1, 2, 3, 4, 6)):
        cases.append({"per_device_train_batch_size": micro, "gradient_accumulation_steps": accumulation,
                      "num_generations": generations})
    for size, steps in ((6, None), (8, None), (None, 2), (6, 2)):
        for micro, generations in ((2, 2), (2, 3), (3, 4), (4, 4)):
            case = {"per_device_train_batch_size": micro, "num_generations": generations}
            if size is not None:
                case["generation_batch_size"] = size
            if steps is not None:
                case["steps_per_generation"] = steps
            cases.append(case)
    cases += [{"auto_find_batch_size": True, "per_device_train_batch_size": 4, "num_generations": 4},
              {"eval_strategy": "steps", "per_device_eval_batch_size": 3, "num_generations": 2},
              {"eval_strategy": "steps", "per_device_eval_batch_size": 3, "num_generations": 3},
              {"eval_strategy": "steps", "per_device_eval_batch_size": 2, "num_generations": 4,
               "num_generations_eval": 2}]
    return cases


def argv_of(case: dict) -> list[str]:
    argv = []
    for name, value in case.items():
        argv += [f"--{name}"] if value is True else [f"--{name}", str(value)]
    return argv


def fired(case: dict, yaml: Path) -> set[str]:
    argv = argv_of(case)
    args = with_trl(parse_argv(argv), "grpo", None, argv)
    return codes(yaml, select=BATCH_RULES, training_args=args)


def world_yaml(tmp_path: Path, world: int) -> Path:
    path = tmp_path / f"world{world}.yaml"
    kind = "NO" if world == 1 else "MULTI_CPU"
    path.write_text(f"distributed_type: {kind}\nnum_processes: {world}\nuse_cpu: true\n")
    return path


# Builds GRPOConfig for each case (TrainingArguments' world_size is the launched process count) and writes which
# ones TRL refused; run in one process, or in each of two under torchrun.
CONFIG_SCRIPT = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
from trl import GRPOConfig
cases = json.load(open(sys.argv[1]))
refused = []
for case in cases:
    try:
        GRPOConfig(output_dir=sys.argv[3], report_to="none", use_cpu=True, **case)
        refused.append(None)
    except ValueError as exc:
        refused.append(str(exc).splitlines()[0])
if int(os.environ.get("RANK", "0")) == 0:
    json.dump(refused, open(sys.argv[2], "w"))
"""


def trl_refusals(tmp_path: Path, cases: list[dict], world: int) -> list[str | None]:
    script, given, out = tmp_path / "build.py", tmp_path / "cases.json", tmp_path / f"refused{world}.json"
    script.write_text(CONFIG_SCRIPT)
    given.write_text(json.dumps(cases))
    launcher = [sys.executable] if world == 1 else [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(world),
        "--master_port", str(free_port())]
    subprocess.run([*launcher, str(script), str(given), str(out), str(tmp_path / "out")], check=True,
                   capture_output=True, timeout=600, env={**__import__("os").environ, "ACCELERATE_USE_CPU": "true"})
    return json.loads(out.read_text())


@pytest.mark.parametrize("world", [1, 2])
def test_grpo_config_refuses_exactly_when_the_batch_rules_fire(tmp_path: Path, world: int) -> None:
    cases = grid()
    refusals = trl_refusals(tmp_path, cases, world)
    yaml = world_yaml(tmp_path, world)
    disagreements = []
    for case, refusal in zip(cases, refusals, strict=True):
        found = fired(case, yaml)
        if bool(found) != (refusal is not None):
            disagreements.append((case, sorted(found), refusal))
    assert not disagreements, disagreements
    assert sum(r is not None for r in refusals) >= 10 and sum(r is None for r in refusals) >= 10  # both sides


def _trainer(kind: str, checkpoint: Path, tmp_path: Path, peft: object = None, **config: object) -> None:
    """Build the real trainer on the tiny checkpoint (a refusal raises, as at start-up)."""
    from datasets import Dataset

    common = {"output_dir": str(tmp_path / "out"), "report_to": "none", "use_cpu": True, "max_steps": 1}
    if kind == "grpo":
        from trl import GRPOConfig, GRPOTrainer

        data = Dataset.from_list([{"prompt": "a b c"}, {"prompt": "d e f"}])
        args = GRPOConfig(**common, per_device_train_batch_size=2, num_generations=2, max_completion_length=4,
                          **config)
        GRPOTrainer(model=str(checkpoint), reward_funcs=lambda completions, **_: [0.0] * len(completions),
                    args=args, train_dataset=data, peft_config=peft)
    else:
        from trl import DPOConfig, DPOTrainer

        data = Dataset.from_list([{"prompt": "a b", "chosen": " c", "rejected": " d"}] * 2)
        args = DPOConfig(**common, per_device_train_batch_size=2, max_length=16, **config)
        DPOTrainer(model=str(checkpoint), args=args, train_dataset=data, peft_config=peft)


@pytest.mark.parametrize(("kind", "config", "regime"), [
    ("grpo", {"sync_ref_model": True}, "full"),  # beta 0.0: no reference model
    ("grpo", {"sync_ref_model": True, "beta": 0.04}, "full"),
    ("grpo", {"sync_ref_model": True, "beta": 0.04}, "lora"),  # the adapter disabled is the reference
    ("grpo", {"beta": 0.04}, "lora"),
    ("dpo", {"sync_ref_model": True, "precompute_ref_log_probs": True}, "full"),
    ("dpo", {"sync_ref_model": True}, "full"),
    ("dpo", {"sync_ref_model": True}, "lora"),
])
def test_trainers_refuse_exactly_when_aw804_fires(kind: str, config: dict, regime: str, checkpoint: Path,
                                                  tmp_path: Path) -> None:
    from peft import LoraConfig

    from accelwiz.modelspec.lookup import resolve_model
    from accelwiz.estimate.workload import Workload

    argv = argv_of(config)
    args = with_trl(parse_argv(argv), kind, None, argv)
    workload = Workload(resolve_model("llama-8b"), regime=regime)  # only its regime is read
    fires = "AW804" in codes(world_yaml(tmp_path, 1), select=("AW804",), training_args=args, workload=workload)
    peft = LoraConfig(r=4, task_type="CAUSAL_LM", target_modules="all-linear") if regime == "lora" else None
    try:
        _trainer(kind, checkpoint, tmp_path, peft, **config)
        refused = False
    except (ValueError, NotImplementedError):
        refused = True
    assert refused == fires
