"""AW710-AW712: Trainer arguments against the launcher's DeepSpeed or FSDP, as
`Trainer.create_accelerator_and_postprocess` (transformers 5 trainer.py) refuses them. Each rule fires on the
combination the Trainer refuses and stays quiet on the closest one it accepts."""

from __future__ import annotations

import json

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl_defaults
from tests.rules.helpers import codes

FSDP2 = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
FSDP1_FULL = ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 1\n"
              "  fsdp_state_dict_type: FULL_STATE_DICT\n")
ZERO2 = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 2\n"
ZERO3 = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 3\n"
DDP = "distributed_type: MULTI_GPU\nnum_processes: 2\n"
BEST = ["--eval_strategy", "steps", "--load_best_model_at_end"]


def found(write, yaml: str, argv: list[str], *, trl: bool = False) -> set[str]:
    args = parse_argv(argv)
    args = with_trl_defaults(args, sft=True) if trl else args
    return codes(write("accelerate.yaml", yaml), select=("AW71",), training_args=args)


@pytest.mark.parametrize("code,yaml,bad,good", [
    ("AW710", FSDP2 + "  fsdp_activation_checkpointing: true\n", ["--gradient_checkpointing"],
     ["--gradient_checkpointing", "false"]),
    ("AW710", FSDP2 + "  fsdp_activation_checkpointing: 'true'\n", ["--activation_checkpointing"], []),
    ("AW710", FSDP2 + "  fsdp_activation_checkpointing: true\n", ["--gradient_checkpointing"], None),
    ("AW711", ZERO2, ["--save_only_model", *BEST], BEST),
    ("AW711", FSDP1_FULL, ["--save_only_model", *BEST], ["--save_only_model"]),
    ("AW711", FSDP2, ["--save_only_model"], []),  # FSDP2 saves a SHARDED_STATE_DICT unless told otherwise
    ("AW711", FSDP1_FULL.replace("FULL_STATE_DICT", "SHARDED_STATE_DICT"), ["--save_only_model"], []),
    ("AW712", ZERO3, ["--auto_find_batch_size"], []),
])
def test_rule_fires_on_the_refused_pair_and_not_on_the_close_one(write, code, yaml, bad, good):
    assert code in found(write, yaml, bad)
    if good is not None:
        assert code not in found(write, yaml, good)


def test_trl_configs_checkpoint_by_default(write):
    """SFTConfig, DPOConfig, GRPOConfig... default gradient_checkpointing to true: a TRL run on an FSDP config
    with fsdp_activation_checkpointing is refused unless it turns the Trainer's off."""
    yaml = FSDP2 + "  fsdp_activation_checkpointing: true\n"
    assert "AW710" in found(write, yaml, [], trl=True)
    assert "AW710" not in found(write, yaml, ["--gradient_checkpointing", "false"], trl=True)


@pytest.mark.parametrize("yaml", [DDP, ZERO2, FSDP1_FULL])
def test_no_finding_where_the_trainer_accepts_it(write, yaml):
    assert not found(write, yaml, ["--save_only_model", "--auto_find_batch_size", "--gradient_checkpointing"])
    assert "AW711" not in found(write, DDP, ["--save_only_model", *BEST])


def test_the_deepspeed_json_the_trainer_is_given_decides_the_stage(write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # --deepspeed ds.json is opened from the working directory, as the Trainer does
    yaml = write("accelerate.yaml", DDP)
    for stage, expected in ((3, True), (2, False)):
        ds = write("ds.json", json.dumps({"train_micro_batch_size_per_gpu": "auto",
                                          "zero_optimization": {"stage": stage}}))
        args = parse_argv(["--deepspeed", "ds.json", "--auto_find_batch_size"])
        assert ("AW712" in codes(yaml, ds, select=("AW71",), training_args=args)) is expected


def test_the_installed_trainer_still_refuses_these_pairs():
    """The rules copy conditions of the installed transformers' Trainer: fail when its source stops raising them,
    so the rules are revisited with the library."""
    pytest.importorskip("transformers")
    import inspect

    from transformers import Trainer

    source = inspect.getsource(Trainer.create_accelerator_and_postprocess)
    for condition in ("fsdp_plugin.activation_checkpointing and self.args.activation_checkpointing",
                      "self.args.save_only_model", "self.args.load_best_model_at_end",
                      "deepspeed_plugin.zero_stage == 3", "self.args.auto_find_batch_size",
                      '"SHARDED_STATE_DICT" in str(self.accelerator.state.fsdp_plugin.state_dict_type)'):
        assert condition in source, condition


# One process imports transformers once (7 of its 8 seconds here) and builds each case's Trainer in a child forked
# for that case alone: a fresh process's Accelerator state each time, as four separate runs would have.
_TRAINER_PROBE = """
import json, os, sys, tempfile, traceback
os.environ.update({"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1"})
from transformers import GPT2Config, GPT2LMHeadModel, HfArgumentParser, Trainer, TrainingArguments
for case in json.loads(sys.argv[1]):
    sys.stdout.flush()
    child = os.fork()
    if child:
        os.waitpid(child, 0)
        continue
    try:
        os.environ["MASTER_PORT"] = case["port"]
        (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
            [*case["argv"], "--deepspeed", case["ds"], "--output_dir", tempfile.mkdtemp(), "--report_to", "none"])
        model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=32))
        try:
            Trainer(model=model, args=args)
            print("VERDICT", case["name"], "ACCEPTED", flush=True)
        except ValueError as error:
            print("VERDICT", case["name"], "REFUSED", json.dumps(str(error)), flush=True)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)
"""

REAL_TRAINER_CASES = [
    (3, ["--auto_find_batch_size"], "AW712"),
    (2, ["--auto_find_batch_size"], "AW712"),
    (2, ["--save_only_model", "--load_best_model_at_end", "--eval_strategy", "steps"], "AW711"),
    (2, ["--save_only_model"], "AW711"),
]


def _deepspeed_json(stage: int) -> str:
    return json.dumps({"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
                       "train_batch_size": "auto", "zero_optimization": {"stage": stage}})


@pytest.fixture(scope="module")
def real_trainer_verdicts(tmp_path_factory) -> dict[str, str]:
    """What the real Trainer said to each case ("ACCEPTED" or "REFUSED <message>"), by the case's index."""
    pytest.importorskip("deepspeed")
    import subprocess
    import sys

    from tests.ports import free_port

    directory = tmp_path_factory.mktemp("real-trainer")
    cases = []
    for index, (stage, argv, _) in enumerate(REAL_TRAINER_CASES):
        ds = directory / f"ds{index}.json"
        ds.write_text(_deepspeed_json(stage))
        cases.append({"name": str(index), "ds": str(ds), "argv": argv, "port": str(free_port())})
    probe = directory / "probe.py"
    probe.write_text(_TRAINER_PROBE)
    out = subprocess.run([sys.executable, str(probe), json.dumps(cases)], cwd=directory, capture_output=True,
                         text=True, timeout=600)
    verdicts = {}
    for line in out.stdout.splitlines():
        if line.startswith("VERDICT "):
            _, name, verdict = line.split(" ", 2)
            verdicts[name] = verdict
    return verdicts | {"output": out.stdout + out.stderr[-3000:]}


@pytest.mark.slow
@pytest.mark.xdist_group("real-trainer")  # the four cases share one probe process: one worker runs them all
@pytest.mark.parametrize("case", range(len(REAL_TRAINER_CASES)),
                         ids=[f"{stage}-{' '.join(argv)}-{code}" for stage, argv, code in REAL_TRAINER_CASES])
def test_the_real_trainer_refuses_exactly_what_the_rule_reports(write, tmp_path, monkeypatch, real_trainer_verdicts,
                                                                case):
    """The real Trainer of transformers 5 under DeepSpeed (one process on this machine's CPU), built from the same
    command line and JSON the rule reads."""
    stage, argv, code = REAL_TRAINER_CASES[case]
    monkeypatch.chdir(tmp_path)
    ds = write("ds.json", _deepspeed_json(stage))
    out = real_trainer_verdicts.get(str(case), real_trainer_verdicts["output"])
    refused = out.startswith("REFUSED")
    assert refused or out == "ACCEPTED", out
    args = parse_argv(["--deepspeed", "ds.json", *argv])
    assert (code in codes(write("accelerate.yaml", DDP), ds, select=("AW71",), training_args=args)) is refused
