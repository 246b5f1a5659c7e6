"""The plan carries the kind of training (issue 19): a DPO or GRPO plan trains through TRL without flags."""

from __future__ import annotations

from accelwiz.plan_file import PlanFile, PlanFiles, PlanModel, PlanSystem, PlanTraining, dump_plan, load_plan
from accelwiz.trainer.options import parse_args
from accelwiz.trainer.trl_data import with_plan

SINGLE = "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n"


def write_plan(tmp_path, **training) -> None:
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    plan = PlanFile(files=PlanFiles(accelerate="accelerate.yaml"), system=PlanSystem(name="local"),
                    model=PlanModel(name="tiny"), training=PlanTraining(micro_batch=2, sequence_length=64, **training))
    (tmp_path / "accelerate.plan.yaml").write_text(dump_plan(plan))


def test_a_grpo_plan_gives_the_trainer_its_kind_and_settings_where_no_flag_does(tmp_path):
    write_plan(tmp_path, kind="grpo", num_generations=4, max_completion_length=16, reward="reward.py:length")
    config = str(tmp_path / "accelerate.yaml")
    planned = with_plan(parse_args(["--config", config]))
    assert (planned.kind, planned.num_generations, planned.max_completion_length, planned.reward) == (
        "grpo", 4, 16, f"{tmp_path / 'reward.py'}:length")  # the reward's file is relative to the plan
    flagged = with_plan(parse_args(["--config", config, "--num-generations", "8"]))
    assert flagged.num_generations == 8  # a flag replaces the plan's field


def test_the_plan_refuses_a_kind_it_does_not_know_and_a_single_generation(tmp_path):
    import pytest

    from accelwiz.errors import InputError

    write_plan(tmp_path)
    text = (tmp_path / "accelerate.plan.yaml").read_text()
    for bad in ("  kind: ppo\n", "  num_generations: 1\n"):
        (tmp_path / "accelerate.plan.yaml").write_text(text.replace("  kind: sft\n", bad))
        with pytest.raises(InputError, match="invalid plan at `training"):
            load_plan(tmp_path / "accelerate.plan.yaml")
