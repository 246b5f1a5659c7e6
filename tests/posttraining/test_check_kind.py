"""`check --kind dpo|grpo` end to end: TRL's arguments from a recipe YAML or after `--`, the world size from the
Accelerate YAML or --num-processes, and bad input."""

from __future__ import annotations

import json


def test_a_trl_recipe_is_read_for_trls_own_fields(cli, write) -> None:
    config = write("accelerate.yaml", "distributed_type: MULTI_GPU\nnum_processes: 3\n")
    recipe = write("recipe.yaml", "per_device_train_batch_size: 4\nnum_generations: 8\nuse_vllm: true\n"
                                  "vllm_mode: colocate\nvllm_tensor_parallel_size: 2\n")
    result = cli("check", str(config), "--kind", "grpo", "--training-args", str(recipe), "--format", "json")
    assert result.exit_code == 1
    found = {d["code"]: d["message"] for d in json.loads(result.stdout)}
    assert set(found) >= {"AW801", "AW810"}
    assert "generation batch 12" in found["AW801"] and "recipe.yaml: num_generations" in found["AW801"]
    assert "num_generations" not in result.stderr  # read, so not among the arguments accelwiz ignores


def test_the_same_arguments_pass_where_the_processes_divide(cli, write) -> None:
    config = write("accelerate.yaml", "distributed_type: MULTI_GPU\nnum_processes: 4\n")
    result = cli("check", str(config), "--kind", "grpo", "--", "--per_device_train_batch_size", "4",
                 "--num_generations", "8", "--use_vllm", "--vllm_tensor_parallel_size", "2")
    assert result.exit_code == 0, result.output
    assert "AW8" not in result.stdout


def test_dpo_with_sync_ref_model_and_precomputed_log_probs(cli, write) -> None:
    config = write("accelerate.yaml", "distributed_type: 'NO'\n")
    result = cli("check", str(config), "--kind", "dpo", "--", "--sync_ref_model", "--precompute_ref_log_probs")
    assert result.exit_code == 1 and "AW804" in result.stdout


def test_an_unknown_kind_is_one_line_and_exit_2(cli, write) -> None:
    config = write("accelerate.yaml", "distributed_type: 'NO'\n")
    result = cli("check", str(config), "--kind", "ppo")
    assert result.exit_code == 2 and "--kind ppo" in result.stderr and "Traceback" not in result.output


def test_dpo_loss_lists_are_read_as_trls_nargs_and_from_a_recipe(cli, write) -> None:
    config = write("accelerate.yaml", "distributed_type: 'NO'\n")
    result = cli("check", str(config), "--kind", "dpo", "--format", "json", "--", "--loss_type", "sigmoid", "sft",
                 "--loss_weights", "1.0", "--beta", "0.2")
    found = {d["code"]: d["message"] for d in json.loads(result.stdout)}
    assert result.exit_code == 1 and "1 loss weight(s) (--loss_weights 1.0) for 2 loss type(s)" in found["AW808"]
    assert "sft" not in result.stderr  # read as loss_type's second value, not an argument accelwiz ignores
    recipe = write("recipe.yaml", "loss_type: [sigmoid, kto]\nloss_weights: [0.5, 0.5]\n")
    result = cli("check", str(config), "--kind", "dpo", "--training-args", str(recipe), "--format", "json")
    assert {d["code"] for d in json.loads(result.stdout)} == {"AW807"}
