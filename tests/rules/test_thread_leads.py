"""Rules found from misses of the thread corpus (tests/corpus/threads): AW116 (a multi-node DeepSpeed launch through
DeepSpeed's runner without a hostfile) and AW618 (DeepSpeed fp16 on GPUs older than Volta). Each fires on the
mistake and stays quiet on the close config without it; the library behaviour each encodes is pinned against the
installed accelerate and DeepSpeed."""

from __future__ import annotations

import pytest

from accelwiz.probe.profiles import load_system
from accelwiz.rules.diagnostic import Severity
from tests.rules.helpers import codes, diagnostics

MULTI_NODE = ("distributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 16\nmain_process_ip: 10.0.0.1\n"
              "main_process_port: 29500\n")


@pytest.mark.parametrize("section", [
    "deepspeed_config:\n  zero_stage: 3\n",  # pdsh, the default launcher
    "deepspeed_config:\n  zero_stage: 3\n  deepspeed_multinode_launcher: pdsh\n",
    "deepspeed_config:\n  zero_stage: 3\n  deepspeed_multinode_launcher: openmpi\n",
    "deepspeed_config:\n  deepspeed_config_file: ds.json\n  deepspeed_multinode_launcher: nossh\n",
])
def test_multinode_deepspeed_without_hostfile_is_an_error(write, section):
    write("ds.json", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}')
    found = [d for d in diagnostics(write("a.yaml", MULTI_NODE + section)) if d.code == "AW116"]
    assert len(found) == 1 and found[0].severity is Severity.ERROR
    assert "this node alone" in found[0].message


@pytest.mark.parametrize("text", [
    MULTI_NODE + "deepspeed_config:\n  zero_stage: 3\n  deepspeed_hostfile: /job/hostfile\n",
    MULTI_NODE + "deepspeed_config:\n  zero_stage: 3\n  deepspeed_multinode_launcher: standard\n",
    "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  zero_stage: 3\n",  # one machine
    MULTI_NODE.replace("DEEPSPEED", "MULTI_GPU"),  # torchrun on each node: no hostfile involved
])
def test_hostfile_standard_launcher_or_one_machine_is_clean(write, text):
    assert "AW116" not in codes(write("a.yaml", text))


def test_accelerate_hands_deepspeeds_runner_the_path_none_and_the_runner_falls_back_to_local(tmp_path, monkeypatch):
    """The premise of AW116, in the installed libraries: no --deepspeed_hostfile becomes `--hostfile None`, a path
    DeepSpeed's runner does not find, so it uses the local GPUs only."""
    from accelerate.commands.launch import launch_command_parser
    from accelerate.utils.launch import prepare_deepspeed_cmd_env
    from deepspeed.launcher.runner import fetch_hostfile

    args = launch_command_parser().parse_args(
        ["--use_deepspeed", "--num_machines", "2", "--num_processes", "16", "--machine_rank", "0",
         "--main_process_ip", "10.0.0.1", "--zero_stage", "3", "--mixed_precision", "no", "train.py"])
    args.deepspeed_fields_from_accelerate_config = ""  # what launch_command sets without a config file
    monkeypatch.chdir(tmp_path)  # the runner opens the hostfile path from where it is started
    cmd, _ = prepare_deepspeed_cmd_env(args)
    assert cmd[:3] == ["deepspeed", "--hostfile", "None"] and "--launcher" in cmd, cmd
    assert fetch_hostfile(cmd[2]) is None


FP16_JSON = '{"train_batch_size": 8, "fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}'


@pytest.mark.parametrize("system", ["1xP100-PCIE-16GB", "1xTITAN-Xp"])
def test_deepspeed_fp16_before_volta_is_an_error(write, system):
    found = [d for d in diagnostics(write("ds.json", FP16_JSON), system=load_system(system)) if d.code == "AW618"]
    assert len(found) == 1 and found[0].severity is Severity.ERROR
    assert "Type fp16 is not supported." in found[0].message


def test_accelerate_fp16_with_deepspeed_on_pascal_is_an_error(write):
    text = "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: fp16\ndeepspeed_config:\n  zero_stage: 2\n"
    assert "AW618" in codes(write("a.yaml", text), system=load_system("2xP100-PCIE-16GB"))


def test_trainer_fp16_filling_auto_on_pascal_is_an_error(write):
    from accelwiz.config.training_args import parse_argv

    path = write("ds.json", '{"train_micro_batch_size_per_gpu": "auto", "fp16": {"enabled": "auto"}, '
                            '"zero_optimization": {"stage": 2}}')
    system = load_system("1xP100-PCIE-16GB")
    assert "AW618" in codes(path, system=system, training_args=parse_argv(["--deepspeed", str(path), "--fp16"]))
    assert "AW618" not in codes(path, system=system, training_args=parse_argv(["--deepspeed", str(path)]))


@pytest.mark.parametrize("json_text,system", [
    (FP16_JSON, "2xV100-16GB"),  # Volta: fp16 is fine
    (FP16_JSON.replace("fp16", "bf16"), "1xP100-PCIE-16GB"),  # bf16 is AW604's finding, not this one
    (FP16_JSON.replace("true", "false"), "1xP100-PCIE-16GB"),  # fp32
])
def test_fp16_on_volta_or_no_fp16_is_clean(write, json_text, system):
    assert "AW618" not in codes(write("ds.json", json_text), system=load_system(system))


def test_fp16_without_deepspeed_on_pascal_is_left_to_aw607(write):
    found = codes(write("a.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp16\n"),
                  system=load_system("2xP100-PCIE-16GB"))
    assert "AW618" not in found and "AW607" in found


def test_deepspeeds_cuda_accelerator_refuses_fp16_below_compute_capability_7(monkeypatch):
    """The premise of AW618 in the installed DeepSpeed (accelerator/cuda_accelerator.py is_fp16_supported); the
    GPU query is the only thing replaced, as this machine has no GPU."""
    import torch
    from deepspeed.accelerator.cuda_accelerator import CUDA_Accelerator

    accelerator = CUDA_Accelerator.__new__(CUDA_Accelerator)  # its __init__ probes NVML; the check needs none
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delenv("DS_ALLOW_DEPRECATED_FP16", raising=False)
    for capability, supported in (((6, 0), False), ((6, 1), False), ((7, 0), True), ((8, 0), True)):
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, c=capability: c)
        assert accelerator.is_fp16_supported() is supported, capability
    monkeypatch.setenv("DS_ALLOW_DEPRECATED_FP16", "1")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (6, 1))
    assert accelerator.is_fp16_supported() is True


# AW234: ZeRO-3 saved through accelerate or the Trainer without the 16-bit gather
HF_Z3 = '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3%s}}'
YAML_Z3 = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 3\n"


@pytest.mark.parametrize("gather", ["", ', "stage3_gather_16bit_weights_on_model_save": false',
                                    ', "stage3_gather_16bit_weights_on_model_save": "auto"'])
def test_zero3_json_without_gather_warns(write, gather):
    found = [d for d in diagnostics(write("ds.json", HF_Z3 % gather)) if d.code == "AW234"]
    assert len(found) == 1 and found[0].severity is Severity.WARNING


def test_zero3_yaml_without_zero3_save_16bit_model_warns(write):
    assert "AW234" in codes(write("a.yaml", YAML_Z3))
    assert "AW234" in codes(write("a.yaml", YAML_Z3 + "  zero3_save_16bit_model: false\n"))


def test_zero3_json_for_the_trainer_without_gather_warns(write):
    from accelwiz.config.training_args import parse_argv

    path = write("ds.json", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}')
    assert "AW234" in codes(path, training_args=parse_argv(["--deepspeed", str(path)]))


@pytest.mark.parametrize("files", [
    {"ds.json": HF_Z3 % ', "stage3_gather_16bit_weights_on_model_save": true'},
    {"ds.json": HF_Z3 % ', "stage3_gather_fp16_weights_on_model_save": true'},  # the deprecated spelling
    {"a.yaml": YAML_Z3 + "  zero3_save_16bit_model: true\n"},
    {"a.yaml": YAML_Z3.replace("zero_stage: 3", "zero_stage: 2")},
    # "auto" filled by accelerate from the YAML's zero3_save_16bit_model
    {"a.yaml": "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
               "  zero3_save_16bit_model: true\n",
     "ds.json": HF_Z3 % ', "stage3_gather_16bit_weights_on_model_save": "auto"'},
    # a JSON for the plain deepspeed launcher: the script saves with the engine's checkpoints
    {"ds.json": '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}'},
])
def test_gathered_save_or_no_hf_save_is_clean(write, files):
    paths = [write(name, text) for name, text in files.items()]
    assert "AW234" not in codes(*paths)


def test_deepspeed_and_accelerate_do_not_gather_by_default():
    """The premise of AW234 in the installed libraries: DeepSpeed's ZeRO config and accelerate's plugin both
    default the 16-bit gather on save to off."""
    from accelerate.utils import DeepSpeedPlugin
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig

    assert DeepSpeedZeroConfig(stage=3).gather_16bit_weights_on_model_save is False
    plugin = DeepSpeedPlugin(zero_stage=3)
    assert plugin.deepspeed_config["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] is False
