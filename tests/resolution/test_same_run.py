"""One door (issue 30): every command that resolves a run, given the same plan, files and flags, resolves the same
workload with the same sources, and what `run` prints is what it launches.

The commands: `check --explain` (its values table), `run --print-node-commands` (its summary, its launch line and
the run the launched trainer resolves from that line), `estimate --config` (the workload it sizes), `convert
--model` (the workload its memory table uses), `init`'s write check (its findings against `check`'s on the files
it wrote) and `env` (its findings against `check --system local`'s). A flag that contradicts the plan is applied
and named "flag" everywhere; one that contradicts a number the DeepSpeed JSON writes is refused in one line
everywhere.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

# the summary/--explain table's rows for the workload, by the resolution's names
ROWS = {"micro_batch": "micro_batch", "seq_len": "sequence_length", "gradient_checkpointing": "gradient_checkpointing",
        "method": "fine_tuning_method", "attention": "attention"}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def table(stderr: str) -> dict[str, tuple[str, str]]:
    """The effective-values table's workload rows: name -> (value, source)."""
    rows = {}
    for line in stderr.splitlines():
        found = re.match(r"^  (\w+)\s+(\S+)\s+(flag|plan|yaml|json|deepspeed json|command line|derived|"
                         r"accelerate default|trainer)\b", line)
        if found and found[1] in ROWS.values():
            rows[found[1]] = (found[2], found[3])
    return rows


def trainer_run_of(line: str):
    from accelwiz.trainer.options import parse_args
    from accelwiz.trainer.settings import resolve_settings

    words = shlex.split(line)
    return resolve_settings(parse_args(words[words.index("accelwiz.trainer.train") + 1:]))


def init_plan(cli, *extra: str) -> None:
    result = cli("init", "--model", "llama-3.2-1b", "--system", "1xA100-40GB", "--method", "lora", "--defaults",
                 "-o", "a.yaml", *extra)
    assert result.exit_code == 0, result.stderr


def _shown(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


# the same what-if given to every command: each contradicts the plan (micro-batch 1, sequence 2048, no
# checkpointing, sdpa attention)
FLAGS = ("--micro-batch", "4", "--seq-len", "1024", "--gradient-checkpointing", "--attention", "eager")
EXPECTED = {"micro_batch": "4", "seq_len": "1024", "gradient_checkpointing": "true", "method": "lora",
            "attention": "eager"}
SOURCES = {"micro_batch": "flag", "seq_len": "flag", "gradient_checkpointing": "flag", "method": "plan",
           "attention": "flag"}


def test_check_and_run_show_the_same_workload_and_run_launches_it(cli):
    init_plan(cli)
    checked = cli("check", "a.yaml", "--explain", *FLAGS)
    assert checked.exit_code == 0, checked.stderr + checked.stdout
    ran = cli("run", "--config", "a.yaml", "--print-node-commands", "--force", "--explain",
              *[f for f in FLAGS if f != "--attention" and f != "eager"])
    assert ran.exit_code == 0, ran.stderr
    check_rows, run_rows = table(checked.stdout + checked.stderr), table(ran.stderr)
    for name, row in ROWS.items():
        assert check_rows[row][0] == EXPECTED[name], (name, check_rows[row])
        assert check_rows[row][1] == SOURCES[name], (name, check_rows[row])
        if name != "attention":  # run has no --attention: the trainer attends as the plan says
            assert run_rows[row] == check_rows[row], (name, run_rows[row], check_rows[row])
    trained = trainer_run_of(ran.stdout.strip().splitlines()[-1])
    for name in ("micro_batch", "seq_len", "gradient_checkpointing", "method"):
        item = getattr(trained, name)
        assert (_shown(item.value), item.source) == run_rows[ROWS[name]], (name, item)


def test_estimate_and_convert_size_the_workload_check_and_run_resolve(cli):
    init_plan(cli)
    estimated = cli("estimate", "--config", "a.yaml", *FLAGS, "--format", "json")
    assert estimated.exit_code == 0, estimated.stderr
    workload = json.loads(estimated.stdout)["workload"]
    assert {name: _shown(workload["regime" if name == "method" else name]) for name in EXPECTED} == EXPECTED
    checked = cli("check", "a.yaml", "--explain", *FLAGS)
    assert {name: table(checked.stdout + checked.stderr)[row][0] for name, row in ROWS.items()} == EXPECTED


def test_a_flag_against_the_deepspeed_json_is_refused_by_every_command(cli):
    init_plan(cli, "--system", "2xA100-40GB", "--strategy", "zero2")
    line = "--micro-batch 8 contradicts the deepspeed json's micro_batch 1"
    for args in (("run", "--config", "a.yaml", "--print-node-commands"), ("check", "a.yaml"),
                 ("estimate", "--config", "a.yaml")):
        result = cli(*args, "--micro-batch", "8")
        assert result.exit_code == 2, (args, result.stderr, result.stdout)
        assert line in result.stderr, (args, result.stderr)
        assert "Effective values" not in result.stderr + result.stdout


def test_convert_sizes_the_workload_the_run_trains(cli):
    init_plan(cli, "--system", "2xA100-40GB", "--strategy", "zero2")
    converted = cli("convert", "a.yaml", "--to", "fsdp", "-o", "b.yaml", "--model", "llama-3.2-1b", "--seq-len",
                    "1024")
    assert converted.exit_code in (0, 1), converted.stderr
    assert "workload: llama-3.2-1b, micro-batch 1, sequence 1024" in converted.stdout
    estimated = json.loads(cli("estimate", "--config", "a.yaml", "--seq-len", "1024", "--format", "json").stdout)
    assert (estimated["workload"]["micro_batch"], estimated["workload"]["seq_len"]) == (1, 1024)


def test_init_answers_are_the_plan_every_command_resolves(cli, write):
    """An answer file's values are written, not dropped, and read back as the plan's by check, run and estimate;
    init's own write check judged the same workload (its verdict line names it)."""
    write("s.yaml", "micro_batch: 2\nseq_len: 1024\ngradient_checkpointing: true\n")
    made = cli("init", "--model", "llama-3.2-1b", "--system", "1xA100-40GB", "--method", "lora", "--defaults",
               "--answers", "s.yaml", "-o", "a.yaml")
    assert made.exit_code == 0, made.stderr
    from pathlib import Path

    # the header's memory line is init's own costing of the answers: the same workload
    assert "seq 1024, micro-batch 2" in Path("a.yaml").read_text()
    expected = {"micro_batch": ("2", "plan"), "seq_len": ("1024", "plan"), "gradient_checkpointing": ("true", "plan"),
                "method": ("lora", "plan")}
    checked = table(cli("check", "a.yaml", "--explain").stdout)
    ran = cli("run", "--config", "a.yaml", "--print-node-commands", "--force", "--explain")
    for name, shown in expected.items():
        assert checked[ROWS[name]] == shown == table(ran.stderr)[ROWS[name]], name
    trained = trainer_run_of(ran.stdout.strip().splitlines()[-1])
    assert {n: (_shown(getattr(trained, n).value), getattr(trained, n).source) for n in expected} == expected
    workload = json.loads(cli("estimate", "--config", "a.yaml", "--format", "json").stdout)["workload"]
    assert (workload["micro_batch"], workload["seq_len"], workload["gradient_checkpointing"]) == (2, 1024, True)


@pytest.mark.parametrize(("flags", "line"), [
    (("--lora", "--qlora"), "--lora, --qlora name two methods"),
    (("--attention", "bogus"), "invalid attention `bogus`"),
    (("--lora-dropout", "1.5"), "LoRA dropout must be at least 0 and below 1 (got 1.5)"),
])
def test_check_and_estimate_refuse_a_bad_flag_in_the_same_line(cli, flags, line):
    """One place validates the workload flags (cli/common.workload_flags -> resolution.options): the same line
    from `check` as from `estimate`."""
    init_plan(cli)
    for args in (("check", "a.yaml"), ("estimate", "--model", "gpt2")):
        result = cli(*args, *flags)
        assert result.exit_code == 2, (args, result.stderr)
        assert line in result.stderr, (args, result.stderr)
        assert len([x for x in result.stderr.splitlines() if x.strip()]) == 2  # the error and its hint
