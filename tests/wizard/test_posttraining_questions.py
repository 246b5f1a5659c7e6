"""Issue 19: the kind of training and DPO/GRPO's decisive settings, asked with the estimate beside each choice;
bad answers refused at their question with the reason; what the plan records."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from accelwiz.errors import UsageError
from accelwiz.wizard.catalog import CATALOG, question
from accelwiz.wizard.flow import validate, walk
from accelwiz.wizard.posttraining import verify_reward
from accelwiz.wizard.prompters import ScriptedPrompter, Tries
from tests.wizard.scenarios import COMMON, REWARD, SCENARIOS, run_scenario, system

GRPO_ON_CPU = {"model": "gpt2", "kind": "grpo", "max_prompt_length": 128, "max_completion_length": 64,
               "regime": "full", "beta": 0.0, "gradient_checkpointing": True, "num_machines": 1,
               "processes": 1, **COMMON, "micro_batch": 1, "gradient_accumulation": 2, "num_generations": 2,
               "reward": REWARD}


def scripted(script: dict, machine: str = "cpu"):
    prompter = ScriptedPrompter(script)
    result = walk(CATALOG, system(machine), prompter, on_refused=prompter.refused)
    return prompter, result


def test_num_generations_offers_the_divisors_of_the_generation_batch_and_refuses_the_rest():
    # 1 (micro-batch) x 2 (processes) x 3 (accumulation) = 6: 2, 3 and 6 divide it; 4 is refused with the reason
    script = {**GRPO_ON_CPU, "processes": 2, "gradient_accumulation": 3, "num_generations": Tries(4, 3)}
    prompter, result = scripted(script)
    choices = question("num_generations").resolve_choices(result.answers, system("cpu"))
    assert [c.value for c in choices] == [2, 3, 6]
    assert prompter.defaults["num_generations"] == 6  # TRL's 8 does not divide 6: the largest value below it
    refused = dict(prompter.refusals)["num_generations"]
    assert refused == "num_generations 4 does not divide the generation batch 6"
    assert validate(result.answers, system("cpu")).num_generations == 3


def test_a_grpo_step_of_one_sample_is_refused_at_the_accumulation_and_defaults_to_two():
    script = {**GRPO_ON_CPU, "gradient_accumulation": Tries(1, 2)}
    prompter, _ = scripted(script)
    assert prompter.defaults["gradient_accumulation"] == 2
    assert "generation batch (micro-batch x processes x accumulation) of 2 or more" in dict(
        prompter.refusals)["gradient_accumulation"]


def test_answers_whose_num_generations_does_not_divide_the_batch_are_inconsistent():
    with pytest.raises(UsageError, match="num_generations 4 does not divide the generation batch 2"):
        validate({**GRPO_ON_CPU, "num_generations": 4, "reward": ""}, system("cpu"))


@pytest.mark.parametrize(("source", "spec", "message"), [
    (None, "missing.py:reward", "no file missing.py"),
    ("def other(completions, **kwargs):\n    return []\n", "r.py:reward", "r.py defines no function reward"),
    ("def reward(completions):\n    return []\n", "r.py:reward", "must accept `completions` and `**kwargs`"),
    ("def reward(completions, **kwargs)\n", "r.py:reward", "does not parse as Python"),
    ("", "r.py", "expected FILE.py:FUNCTION"),
])
def test_a_reward_is_checked_without_running_it(tmp_path, monkeypatch, source, spec, message):
    monkeypatch.chdir(tmp_path)
    if source is not None:
        (tmp_path / "r.py").write_text(source)
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        verify_reward(spec, {}, system("cpu"))


def test_a_reward_file_is_never_imported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.py").write_text("open('imported', 'w').close()\n\ndef reward(completions, **kw):\n    return []\n")
    verify_reward("r.py:reward", {}, system("cpu"))
    assert not (tmp_path / "imported").exists()


def test_vllm_where_it_is_missing_is_planned_only_when_the_user_insists(tmp_path):
    insisted = next(s for s in SCENARIOS if s.name == "a100-grpo-vllm-insisted")
    outcome = run_scenario(insisted, tmp_path / "accelerate.yaml")
    plan = yaml.safe_load(outcome.generated.plan.text)
    assert plan["training"]["trainer_arguments"] == ["--beta", "0.04", "--num_generations", "8",
                                                     "--max_completion_length", "256", "--use_vllm", "--vllm_mode",
                                                     "colocate"]
    assert any("vLLM is not installed here" in todo for todo in outcome.generated.todos)
    # vLLM colocate's 30% of each GPU is in the estimate only when it is planned
    declined = {**insisted.script, "vllm_anyway": False}
    answers = validate(scripted(declined, insisted.system)[1].answers, system(insisted.system))
    assert answers.planned_generation.value == "hf"
    from accelwiz.wizard.generate import generate

    hf = generate(answers, system(insisted.system), output=tmp_path / "hf.yaml", command="test")
    assert "--use_vllm" not in hf.plan.text
    assert outcome.generated.option.per_gpu_bytes - hf.option.per_gpu_bytes > 0.3 * 79 * 2**30
    # a preset lists no packages: vLLM is assumed there and the question is not asked
    prompter, _ = scripted({key: value for key, value in insisted.script.items() if key != "vllm_anyway"},
                           "2xA100-80GB")
    assert "vllm_anyway" not in prompter.asked


def test_grpo_without_a_reward_leaves_a_todo_that_run_refuses(tmp_path):
    script = {**GRPO_ON_CPU, "reward": "none"}
    _, result = scripted(script)
    from accelwiz.wizard.generate import generate

    generated = generate(validate(result.answers, system("cpu")), system("cpu"), output=tmp_path / "a.yaml",
                         command="test")
    assert generated.todos == [f"TODO: GRPO needs a reward: set `training.reward: FILE.py:FUNCTION` in "
                               f"{tmp_path / 'a.plan.yaml'} (or pass --reward); `accelwiz run` refuses the plan "
                               "until then"]
    assert "reward" not in yaml.safe_load(generated.plan.text)["training"]
    assert "# TODO: GRPO needs a reward" in generated.accelerate.text


def test_the_reference_model_is_costed_beside_beta_and_the_regime():
    """Full fine-tuning holds a whole reference copy for DPO; LoRA disables the adapter instead (no copy)."""
    answers = {"model": "llama-3.2-1b", "gpus": 8}
    kind = question("kind")
    machine = system("8xH100-80GB")
    labels = [c.label for c in kind.resolve_choices(answers, machine)]
    assert all(" GiB per GPU" in label for label in labels)
    from accelwiz.wizard import costing
    from accelwiz.wizard.answers import Regime, TrainingKind

    def best(kind: TrainingKind, regime: Regime) -> int:
        plan = costing.plan_for({**answers, "kind": kind, "regime": regime, "max_prompt_length": 1024,
                                 "max_completion_length": 1024}, machine)
        return next(o for o in plan.options if o.strategy.value == "ddp").per_gpu_bytes

    sft = costing.plan_for({**answers, "kind": TrainingKind.sft, "regime": Regime.full, "seq_len": 2048}, machine)
    sft_ddp = next(o for o in sft.options if o.strategy.value == "ddp").per_gpu_bytes
    # DPO runs chosen and rejected together and keeps a whole reference copy: more than SFT at one sequence length
    assert best(TrainingKind.dpo, Regime.full) > sft_ddp
    assert best(TrainingKind.dpo, Regime.lora) < best(TrainingKind.dpo, Regime.full)
    note = question("beta").explain({**answers, "kind": TrainingKind.dpo, "regime": Regime.lora}, machine)
    assert "adapter disabled" in note and "no second copy" in note


def test_qlora_is_not_offered_for_dpo_or_grpo_and_says_why():
    """`accelwiz run` trains DPO/GRPO with TRL in full or with LoRA (trainer/trl_run.py refuses QLoRA)."""
    script = {**GRPO_ON_CPU, "regime": Tries("qlora", "lora"), "lora_rank": 8}
    prompter, result = scripted(script)
    assert [c.value.value for c in question("regime").resolve_choices(result.answers, system("cpu"))] == [
        "full", "lora"]
    assert dict(prompter.refusals)["regime"].startswith("regime qlora is not offered for GRPO: `accelwiz run` trains")


def test_a_dpo_plan_that_does_not_fit_is_offered_a_shorter_completion():
    """The fallbacks shorten what DPO/GRPO can shorten (the completion, not `seq_len`, which they do not ask),
    costed by the post-training estimate; never QLoRA."""
    from accelwiz.wizard.answers import Precision, Regime, StrategyChoice, TrainingKind
    from accelwiz.wizard.fallbacks import fallbacks

    answers = {"model": "llama-3.1-8b", "kind": TrainingKind.dpo, "regime": Regime.lora, "max_prompt_length": 1024,
               "max_completion_length": 4096, "micro_batch": 2, "gpus": 1, "strategy": StrategyChoice.single,
               "precision": Precision.bf16, "gradient_checkpointing": True}
    # an L40S: the 8B base loads in fp32 through TRL (its default dtype), 30 GiB before any activation
    found = fallbacks(answers, system("1xL40S"), fixed=frozenset({"regime", "strategy"}))
    assert [set(f.changes) for f in found] == [{"max_completion_length"}]
    assert found[0].changes["max_completion_length"] < 4096 and found[0].option.fits
    assert found[0].reason.startswith(f"completion {found[0].changes['max_completion_length']} fits (single GPU) "
                                      "where 4096 does not")
    free = fallbacks({**answers, "regime": Regime.full}, system("1xL40S"))
    # whatever fits first, never QLoRA, and any completion it changes is shorter
    assert free and all(f.changes.get("regime") in (None, Regime.lora) for f in free)
    assert all(f.changes.get("max_completion_length", 0) < 4096 for f in free)


def test_vllm_server_mode_leaves_a_gpu_to_the_server_or_is_refused_where_there_is_none():
    from accelwiz.wizard.answers import Generation, TrainingKind

    answers = {"model": "llama-3.2-1b", "kind": TrainingKind.grpo, "generation": Generation.vllm_server}
    gpus = question("gpus")
    assert gpus.resolve_default(answers, system("8xH100-80GB")) == 7  # `trl vllm-serve` on the eighth
    assert "give the training GPUs only" in gpus.explain(answers, system("8xH100-80GB"))
    assert gpus.resolve_default({**answers, "generation": Generation.hf}, system("8xH100-80GB")) == 8
    with pytest.raises(UsageError, match="vLLM server mode takes 1 of the 1 GPU"):
        question("generation").verify(Generation.vllm_server, answers, system("1xA100-80GB"))


def test_the_reward_is_written_relative_to_the_plan_as_every_path_in_it(tmp_path, monkeypatch):
    """trainer/trl_data.with_plan resolves `training.reward`'s file against the plan's directory."""
    from accelwiz.wizard.post_plan import post_fields

    monkeypatch.chdir(tmp_path)
    answers = validate({**GRPO_ON_CPU, "reward": "rewards.py:length"}, system("cpu"))
    assert post_fields(answers, Path("runs/a.yaml"))["reward"] == "../rewards.py:length"
    assert post_fields(answers, Path("a.yaml"))["reward"] == "rewards.py:length"
    absolute = validate({**GRPO_ON_CPU, "reward": f"{tmp_path}/r.py:length"}, system("cpu"))
    assert post_fields(absolute, Path("runs/a.yaml"))["reward"] == f"{tmp_path}/r.py:length"


def test_under_fsdp_the_trainer_owns_checkpointing_when_it_owns_the_batch():
    """transformers refuses FSDP's activation checkpointing beside the Trainer's (AW710), which TRL turns on by
    default: a trainer-owned FSDP plan leaves it to the Trainer's --activation_checkpointing."""
    from accelwiz.wizard.answers import Owner
    from accelwiz.wizard.build import build, trainer_arguments

    script = {"model": "llama-3.1-8b", "kind": "grpo", "gpus": 4, "strategy": "fsdp_full", "offload_params": False,
              "precision": "bf16", "gradient_checkpointing": True, "num_generations": 4, "reward": ""}
    for owner, fsdp in ((Owner.trainer, False), (Owner.accelerate, True)):
        answers = validate({**script, "owner": owner.value}, system("4xA100-40GB"))
        config = build(answers, system("4xA100-40GB")).accelerate
        assert config["fsdp_config"]["fsdp_activation_checkpointing"] is fsdp
    assert "--activation_checkpointing" in trainer_arguments(answers)  # what a trainer-owned plan passes instead
