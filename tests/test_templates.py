"""Every shipped template is a config `check` accepts, that accelerate and DeepSpeed load themselves."""

from __future__ import annotations

import json

import pytest
import yaml

from accelwiz.resources import templates_dir
from accelwiz.wizard.templates import list_templates
from tests.wizard.real_clients import deepspeed_validator

TEMPLATES = list_templates()
EXPECTED = {"cpu-single", "single-gpu", "ddp", "fsdp2", "zero2", "zero3", "zero3-offload", "multinode-zero3"}


def test_the_promised_templates_exist_and_every_json_belongs_to_a_yaml():
    assert {t.name for t in TEMPLATES} >= EXPECTED
    yaml_stems = {p.stem for p in templates_dir().glob("*.yaml")}
    assert {p.stem for p in templates_dir().glob("*.json")} <= yaml_stems


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_template_has_a_header(template):
    lines = template.yaml_path.read_text().splitlines()
    assert lines[0].startswith(f"# {template.name}: ") and template.description
    assert any(line.startswith("# yaml-language-server: $schema=") for line in lines)
    # single machine: the exact commands; multi-node: `accelwiz run --slurm/--print-node-commands` writes them
    assert any("accelerate launch --config_file" in line or "accelwiz run --config" in line for line in lines)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_template_passes_check(template, monkeypatch):
    from accelwiz.rules.engine import check_with_plans
    from accelwiz.rules.registry import select_rules

    monkeypatch.chdir(templates_dir())  # deepspeed_config_file is relative to where `accelerate launch` runs
    paths = [template.yaml_path] + ([template.json_path] if template.json_path else [])
    result = check_with_plans(paths, select_rules())  # as `accelwiz check`: a multi-node template's plan too
    assert not result.input_errors
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []
    if template.json_path:
        assert yaml.safe_load(template.yaml_path.read_text())["deepspeed_config"][
            "deepspeed_config_file"
        ] == (template.json_path.name)


@pytest.fixture(scope="module")
def load_accelerate_config():
    from accelerate.commands.config.config_args import load_config_from_file

    return load_config_from_file


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_accelerate_loads_the_template(template, load_accelerate_config):
    loaded = load_accelerate_config(str(template.yaml_path))
    assert loaded.num_processes == yaml.safe_load(template.yaml_path.read_text())["num_processes"]


@pytest.fixture(scope="module")
def deepspeed_config():
    yield from deepspeed_validator()


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t.json_path], ids=lambda t: t.name)
def test_deepspeed_accepts_the_template_json(template, deepspeed_config):
    config = json.loads(template.json_path.read_text())
    processes = yaml.safe_load(template.yaml_path.read_text())["num_processes"]
    parsed = deepspeed_config(config, processes)
    assert (
        parsed.train_batch_size
        == config["train_micro_batch_size_per_gpu"] * config["gradient_accumulation_steps"] * processes
    )


@pytest.mark.parametrize("template", [t for t in TEMPLATES if "machines x" in t.description or "multinode" in t.name],
                         ids=lambda t: t.name)
def test_a_multi_node_template_writes_every_machine_and_process(template):
    # "2 machines x 8 GPUs" in the description: num_machines 2, num_processes 16 (was 1 and 8)
    import re

    machines, gpus = (int(n) for n in re.search(r"(\d+) machines x (\d+) GPUs", template.description).groups())
    config = yaml.safe_load(template.yaml_path.read_text())
    assert (config["num_machines"], config["num_processes"]) == (machines, machines * gpus)
