"""Facts joined whatever path they come by: check's launch flags (--num-processes, --num-machines), --system, the
Trainer's arguments and the files meet in one effective config before any rule runs (issue 29)."""

from __future__ import annotations

import json

import pytest

AUTO_JSON = {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
             "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}
DEEPSPEED_YAML = ("distributed_type: DEEPSPEED\nnum_processes: {processes}\nnum_machines: {machines}\n"
                  "main_process_ip: 10.0.0.1\nmain_process_port: 29500\n"
                  "deepspeed_config:\n  deepspeed_config_file: ds.json\n")


def findings(cli, *argv: str) -> tuple[int, list[dict]]:
    result = cli("check", "--format", "json", *argv)
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("processes,shares", [(8, True), (2, False)])
def test_num_processes_meets_the_system_for_a_lone_json(cli, write, processes, shares):
    # was never compared: the rule read only a YAML's count
    lone = write("ds.json", json.dumps(AUTO_JSON))
    code, found = findings(cli, "--num-processes", str(processes), "--system", "2xRTX3090", str(lone), "--",
                           "--bf16", "--per_device_train_batch_size", "4")
    aw602 = [d for d in found if d["code"] == "AW602"]
    assert bool(aw602) is shares and code == (1 if shares else 0)
    if shares:
        assert "8 processes per machine (--num-processes 8" in aw602[0]["message"]
        assert "2 GPU(s)" in aw602[0]["message"] and aw602[0]["fix"] == "Pass `--num-processes 2`"


def test_the_flag_wins_over_the_yaml_and_explain_says_both(cli, write):
    write("ds.json", json.dumps(AUTO_JSON))
    config = write("accelerate.yaml", DEEPSPEED_YAML.format(processes=2, machines=1))
    code, found = findings(cli, str(config), "--system", "2xRTX3090", "--num-processes", "8")
    assert code == 1 and [d["code"] for d in found if d["code"] == "AW602"] == ["AW602"]
    explained = cli("check", str(config), "--num-processes", "8", "--explain").stdout
    row = next(line for line in explained.splitlines() if line.split()[:1] == ["num_processes"])
    assert row.split()[1:3] == ["8", "command"] and "the YAML says 2" in row


@pytest.mark.parametrize("machines,shares", [(1, True), (2, False)])
def test_num_machines_splits_the_processes(cli, write, machines, shares):
    write("ds.json", json.dumps(AUTO_JSON))
    config = write("accelerate.yaml", DEEPSPEED_YAML.format(processes=8, machines=1))
    _, found = findings(cli, str(config), "--system", "4xA100-40GB", "--num-machines", str(machines))
    assert any(d["code"] == "AW602" for d in found) is shares


CLIPPING_CASES = {
    "--deepspeed, the JSON alone": (None, ["--deepspeed", "ds.json"]),
    "the YAML names the JSON": (DEEPSPEED_YAML.format(processes=2, machines=1), []),
}


@pytest.mark.parametrize("case", CLIPPING_CASES)
def test_max_grad_norm_without_gradient_clipping_is_not_applied(cli, write, case):
    yaml_text, extra = CLIPPING_CASES[case]
    lone = write("ds.json", json.dumps(AUTO_JSON))
    files = [str(write("accelerate.yaml", yaml_text))] if yaml_text else [str(lone)]
    _, found = findings(cli, *files, "--", *extra, "--max_grad_norm", "0.3")
    aw718 = [d for d in found if d["code"] == "AW718"]
    assert len(aw718) == 1 and "--max_grad_norm 0.3 is not applied" in aw718[0]["message"]
    assert "DeepSpeed clips at its default, 1.0" in aw718[0]["message"]


@pytest.mark.parametrize("written,argv", [
    ({"gradient_clipping": "auto"}, ["--max_grad_norm", "0.3"]),  # the Trainer fills it
    ({}, ["--max_grad_norm", "1.0"]),  # DeepSpeed's default is the value asked for
    ({}, []),  # the Trainer's default 1.0, DeepSpeed's 1.0
])
def test_clipping_that_is_applied_is_silent(cli, write, written, argv):
    lone = write("ds.json", json.dumps({**AUTO_JSON, **written}))
    _, found = findings(cli, str(lone), "--", "--deepspeed", str(lone), "--bf16", *argv)
    assert not [d for d in found if d["code"] == "AW718"]


def test_system_local_never_asks_for_system_local(cli, write):
    # on a machine without GPUs the hardware rules ran: no "pass --system local" note
    result = cli("check", str(write("a.yaml", "distributed_type: 'NO'\nnum_processes: 1\n")), "--system", "local")
    assert result.exit_code == 0 and "hardware rules skipped" not in result.stderr
    plain = cli("check", str(write("b.yaml", "distributed_type: 'NO'\nnum_processes: 1\n")))
    assert "hardware rules skipped" in plain.stderr  # the note itself still exists where it is true
