"""AW805-AW808 against TRL itself: GRPOConfig's importance-sampling checks over a grid of argument sets, and the
real GRPOTrainer/DPOTrainer built on the tiny checkpoint and trained one step (where TRL refuses an unknown loss),
for argument sets on both sides of every condition. TRL must refuse exactly when the rules fire."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl
from tests.posttraining.test_trl_rules_differential import world_yaml
from tests.rules.helpers import codes

LOSS_RULES = ("AW805", "AW806", "AW807", "AW808")


def argv_of(case: dict) -> list[str]:
    """The case as TrlParser's command line: a flag alone for True, nargs="+" for lists."""
    argv = []
    for name, value in case.items():
        if value is True:
            argv.append(f"--{name}")
        elif isinstance(value, list):
            argv += [f"--{name}", *map(str, value)]
        else:
            argv += [f"--{name}", str(value)]
    return argv


def fired(kind: str, case: dict, yaml: Path) -> set[str]:
    argv = argv_of(case)
    return codes(yaml, select=LOSS_RULES, training_args=with_trl(parse_argv(argv), kind, None, argv))


def sampling_grid() -> list[dict]:
    """GRPOConfig.__post_init__'s importance-sampling checks: every mode, bounds absent, ordered and not."""
    cases = []
    bounds = ((None, None), (None, 3.0), (0.5, None), (0.5, 3.0), (3.0, 3.0), (4.0, 3.0))
    modes = ("token_truncate", "token_mask", "sequence_truncate", "sequence_mask")
    for (low, high), mode, correction in itertools.product(bounds, modes, (True, False)):
        case = {"vllm_importance_sampling_mode": mode, "vllm_importance_sampling_clip_max": high}
        if low is not None:
            case["vllm_importance_sampling_clip_min"] = low
        if not correction:
            case["vllm_importance_sampling_correction"] = False
        cases.append(case)
    return cases


def test_grpo_config_refuses_exactly_when_aw806_fires(tmp_path: Path) -> None:
    from trl import GRPOConfig

    yaml, disagreements, refusals = world_yaml(tmp_path, 1), [], 0
    for case in sampling_grid():
        try:
            GRPOConfig(output_dir=str(tmp_path / "out"), report_to="none", use_cpu=True, num_generations=2,
                       per_device_train_batch_size=2, **case)
            refused = None
        except ValueError as exc:
            refused, refusals = str(exc).splitlines()[0], refusals + 1
        # the reader turns "None" into None, as a YAML recipe's null (TrlParser's argparse would refuse the text)
        found = fired("grpo", {k: "None" if v is None else v for k, v in case.items()}, yaml)
        if bool(found) != (refused is not None):
            disagreements.append((case, sorted(found), refused))
    assert not disagreements, disagreements
    assert 10 <= refusals <= 40  # both sides of the grid


def _train_one_step(kind: str, checkpoint: Path, tmp_path: Path, case: dict) -> str | None:
    """Build the real trainer and train one step; TRL's refusal (its first line), or None. vLLM's absence
    (ImportError, raised after every check of GRPOTrainer.__init__ before VLLMGeneration) counts as accepted."""
    from datasets import Dataset

    common = {"output_dir": str(tmp_path / "out"), "report_to": "none", "use_cpu": True, "max_steps": 1,
              "per_device_train_batch_size": 2, "save_strategy": "no", "disable_tqdm": True}
    try:
        if kind == "grpo":
            from trl import GRPOConfig, GRPOTrainer

            data = Dataset.from_list([{"prompt": "a b c"}, {"prompt": "d e f"}])
            args = GRPOConfig(**common, num_generations=2, max_completion_length=4, **case)
            trainer = GRPOTrainer(model=str(checkpoint), args=args, train_dataset=data,
                                  reward_funcs=lambda completions, **_: [float(len(c)) for c in completions])
        else:
            from trl import DPOConfig, DPOTrainer

            data = Dataset.from_list([{"prompt": "a b", "chosen": " c d", "rejected": " e"}] * 2)
            trainer = DPOTrainer(model=str(checkpoint), args=DPOConfig(**common, max_length=16, **case),
                                 train_dataset=data)
        trainer.train()
    except (ValueError, NotImplementedError) as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    except ImportError as exc:
        assert "vLLM" in str(exc), exc
    return None


GRPO_CASES = [
    {"loss_type": "grpo"}, {"loss_type": "cispo"}, {"loss_type": "luspo", "importance_sampling_level": "sequence"},
    {"loss_type": "gspo"},
    {"importance_sampling_level": "sentence"},
    {"scale_rewards": "batch"}, {"scale_rewards": "none"}, {"scale_rewards": "std"},
    {"multi_objective_aggregation": "normalize_then_sum", "scale_rewards": "std"},  # never read there: accepted
    {"multi_objective_aggregation": "mean"},
    # GRPOTrainer.__init__ checks VESPO's mode before it builds VLLMGeneration (which needs vLLM)
    {"loss_type": "vespo", "use_vllm": True, "vllm_importance_sampling_mode": "sequence_mask"},
    {"loss_type": "vespo", "use_vllm": True, "vllm_importance_sampling_mode": "token_mask"},
]
DPO_CASES = [
    {"loss_type": ["ipo"]}, {"loss_type": ["kto"]}, {"loss_type": ["sigmoid", "sft"], "loss_weights": [1.0]},
    {"loss_type": ["sigmoid", "sft"], "loss_weights": [0.8, 0.2]},
    {"loss_type": ["exo_pair"]}, {"loss_type": ["exo_pair"], "label_smoothing": 0.001},
    {"loss_type": ["aot"], "use_weighting": True}, {"loss_type": ["aot"]},
    {"f_divergence_type": "forward_kl"}, {"f_divergence_type": "js_divergence", "loss_type": ["nca_pair"]},
    {"f_divergence_type": "kl"},
]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "case"), [("grpo", c) for c in GRPO_CASES] + [("dpo", c) for c in DPO_CASES])
def test_trainers_refuse_exactly_when_the_loss_rules_fire(kind: str, case: dict, checkpoint: Path,
                                                          tmp_path: Path) -> None:
    refused = _train_one_step(kind, checkpoint, tmp_path, case)
    found = fired(kind, case, world_yaml(tmp_path, 1))
    assert bool(found) == (refused is not None), (found, refused)
