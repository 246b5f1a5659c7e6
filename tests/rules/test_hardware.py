"""AW6xx: each hardware rule fires for a machine that cannot do what the config asks, and stays quiet on a
close case that can. Profiles come from tests/fixtures/systems (saved probes) and the presets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelwiz.probe.host import disk_info
from accelwiz.probe.profiles import load_system
from tests.rules.helpers import codes, diagnostics

SYSTEMS = Path(__file__).resolve().parent.parent / "fixtures" / "systems"
HARDWARE = ("AW6",)


def system(name: str):
    """A fixture file (`x.json`) or a preset name."""
    return load_system(str(SYSTEMS / name) if name.endswith(".json") else name)


def hw_codes(write, text: str, machine: str, name: str = "accelerate.yaml", **context) -> set[str]:
    return codes(write(name, text), select=HARDWARE, system=system(machine), **context)


MULTI_GPU_2 = "distributed_type: MULTI_GPU\nnum_processes: 2\n"


@pytest.mark.parametrize("code,config,bad_machine,good_machine", [
    ("AW601", MULTI_GPU_2, "cpu_only.json", "1xT4"),
    ("AW601", "distributed_type: FSDP\nnum_processes: 2\n", "cpu_only.json", "mixed_4090_3090.json"),
    ("AW602", "distributed_type: MULTI_GPU\nnum_processes: 8\n", "4xA100-40GB", "8xH100-80GB.json"),
    ("AW602", "distributed_type: MULTI_GPU\nnum_processes: 2\n", "1xRTX4090", "2xV100-16GB"),
    ("AW603", "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 0,1\n", "1x4090.json", "2xV100-16GB"),
    ("AW604", "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n", "8xV100-32GB.json",
     "8xA100-80GB"),
    ("AW604", "distributed_type: 'NO'\nmixed_precision: bf16\n", "1xT4", "1xA10G"),
    ("AW605", "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: fp8\n", "8xA100-80GB",
     "8xH200"),
    ("AW605", "distributed_type: 'NO'\nmixed_precision: fp8\n", "1xA10G", "1xL4"),
    ("AW606", "distributed_type: 'NO'\nmixed_precision: fp8\n", "1x4090.json", "1xRTX4090"),
    ("AW608", MULTI_GPU_2, "mixed_4090_3090.json", "1x4090.json"),
    ("AW612", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n", "cpu_only.json",
     "1x4090.json"),
    ("AW613", "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n",
     "8xV100-32GB.json", "8xH100-80GB.json"),
    ("AW614", "distributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 16\ndeepspeed_config:\n"
              "  deepspeed_multinode_launcher: nossh\n", "8xV100-32GB.json", "8xH100-80GB.json"),
    ("AW615", "distributed_type: DEEPSPEED\ndeepspeed_config:\n"
              "  deepspeed_moe_layer_cls_names: MixtralSparseMoeBlock\n",
     "8xV100-32GB.json", "8xH100-80GB.json"),
    ("AW616", "distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 8\n", "2x8xH100", "8xH100-80GB"),
])
def test_same_config_on_a_machine_that_cannot_and_one_that_can(write, code, config, bad_machine,
                                                               good_machine):
    assert code in hw_codes(write, config, bad_machine)
    assert code not in hw_codes(write, config, good_machine)


@pytest.mark.parametrize("code,machine,bad,good", [
    ("AW601", "cpu_only.json", MULTI_GPU_2, "distributed_type: MULTI_CPU\nnum_processes: 2\nuse_cpu: true\n"),
    ("AW602", "8xH100-80GB.json", "distributed_type: MULTI_GPU\nnum_processes: 4\ngpu_ids: 0,1\n",
     "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 0,1\n"),
    ("AW602", "1x4090.json", MULTI_GPU_2, "distributed_type: MULTI_CPU\nnum_processes: 2\n"),
    ("AW603", "8xH100-80GB.json", "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 7,8\n",
     "distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: all\n"),
    ("AW604", "8xV100-32GB.json", "distributed_type: 'NO'\nmixed_precision: bf16\n",
     "distributed_type: 'NO'\nmixed_precision: fp16\n"),
    ("AW604", "1xT4", "distributed_type: 'NO'\nmixed_precision: bf16\n",
     "distributed_type: 'NO'\nmixed_precision: bf16\nuse_cpu: true\n"),
    ("AW608", "mixed_4090_3090.json", MULTI_GPU_2,
     "distributed_type: MULTI_GPU\nnum_processes: 1\ngpu_ids: 0\n"),
    ("AW613", "8xV100-32GB.json", "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: '2'\n",
     "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 1\n"),
    ("AW614", "8xV100-32GB.json", "distributed_type: DEEPSPEED\ndeepspeed_config:\n"
                                  "  deepspeed_multinode_launcher: nossh\n",
     "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_multinode_launcher: standard\n"),
    ("AW616", "2x8xH100", "distributed_type: MULTI_GPU\nnum_processes: 8\n",
     "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\n"),
])
def test_close_configs_on_one_machine(write, code, machine, bad, good):
    assert code in hw_codes(write, bad, machine, "bad.yaml")
    assert code not in hw_codes(write, good, machine, "good.yaml")


def test_messages_carry_the_actual_values(write):
    found = diagnostics(write("a.yaml", "distributed_type: MULTI_GPU\nnum_processes: 16\n"
                                        "mixed_precision: bf16\ngpu_ids: 0,1,9\n"),
                        select=HARDWARE, system=system("8xV100-32GB.json"))
    by_code = {d.code: d for d in found}
    assert "16 processes per machine" in by_code["AW602"].message
    assert "selects 3 GPU(s)" in by_code["AW602"].message
    assert by_code["AW602"].fix == "Set `num_processes: 3`"
    assert "GPU 9" in by_code["AW603"].message and "GPUs 0, 1, 2, 3, 4, 5, 6, 7" in by_code["AW603"].message
    assert "Tesla V100-SXM2-32GB (compute capability 7.0, 8 GPU(s))" in by_code["AW604"].message
    assert (by_code["AW604"].line, by_code["AW604"].path) == (3, ("mixed_precision",))


def test_deepspeed_json_precision_and_gpu_types_without_a_yaml(write):
    bf16 = write("ds.json", '{"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}')
    found = diagnostics(bf16, select=HARDWARE, system=system("8xV100-32GB.json"))
    assert [(d.code, d.path) for d in found] == [("AW604", ("bf16", "enabled"))]
    auto = write("auto.json", '{"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}')
    assert "AW604" not in codes(auto, select=HARDWARE, system=system("8xV100-32GB.json"))
    on_cpu = diagnostics(bf16, select=HARDWARE, system=system("cpu_only.json"))
    assert {d.code for d in on_cpu} == {"AW601", "AW612"}
    assert any("gloo" in d.message for d in on_cpu)


def test_fp8_backend_named_in_fp8_config_must_be_installed(write, tmp_path):
    data = json.loads((SYSTEMS / "1x4090.json").read_text())
    data["packages"]["transformer_engine"] = "2.4.0"
    with_te = tmp_path / "te.json"
    with_te.write_text(json.dumps(data))
    machine = load_system(str(with_te))
    auto = write("auto.yaml", "distributed_type: 'NO'\nmixed_precision: fp8\n")
    assert "AW606" not in codes(auto, select=HARDWARE, system=machine)
    te = write("te.yaml", "distributed_type: 'NO'\nmixed_precision: fp8\nfp8_config:\n  backend: TE\n")
    assert "AW606" not in codes(te, select=HARDWARE, system=machine)
    ao = write("ao.yaml", "distributed_type: 'NO'\nmixed_precision: fp8\nfp8_config:\n  backend: AO\n")
    [finding] = [d for d in diagnostics(ao, select=HARDWARE, system=machine) if d.code == "AW606"]
    assert finding.path == ("fp8_config", "backend") and "`torchao`" in finding.message


def test_fp16_on_a_gpu_without_tensor_cores(write, tmp_path):
    data = json.loads((SYSTEMS / "1x4090.json").read_text())
    data["gpus"][0].update(name="Tesla P100-PCIE-16GB", compute_capability=[6, 0])
    pascal = tmp_path / "p100.json"
    pascal.write_text(json.dumps(data))
    machine = load_system(str(pascal))
    fp16 = write("fp16.yaml", "distributed_type: 'NO'\nmixed_precision: fp16\n")
    assert "AW607" in codes(fp16, select=HARDWARE, system=machine)
    assert "AW607" not in codes(fp16, select=HARDWARE, system=system("1xT4"))
    fp32 = write("fp32.yaml", "distributed_type: 'NO'\nmixed_precision: 'no'\n")
    assert "AW607" not in codes(fp32, select=HARDWARE, system=machine)


def nvme_json(write, path: str, device: str = "nvme"):
    return write("ds.json", json.dumps({"zero_optimization": {"stage": 3, "offload_optimizer": {
        "device": device, "nvme_path": path}}}))


def test_missing_nvme_path_on_this_machine(write, tmp_path):
    local = load_system("local")
    missing = diagnostics(nvme_json(write, str(tmp_path / "nvme" / "swap")), select=("AW609",), system=local)
    assert [d.code for d in missing] == ["AW609"]
    assert f"would create it under {tmp_path}" in missing[0].message
    assert missing[0].path == ("zero_optimization", "offload_optimizer", "nvme_path")
    assert not codes(nvme_json(write, str(tmp_path)), select=("AW609",), system=local)
    assert not codes(nvme_json(write, str(tmp_path / "x"), device="cpu"), select=("AW609",), system=local)
    # a preset cannot know the disks of a machine it has never seen
    assert not codes(nvme_json(write, str(tmp_path / "x")), select=("AW609",), system=system("8xH100-80GB"))


def test_nvme_path_off_nvme_on_this_machine_follows_the_real_device(write, tmp_path):
    expected = disk_info(tmp_path).is_nvme is False
    found = codes(nvme_json(write, str(tmp_path)), select=("AW610",), system=load_system("local"))
    assert ("AW610" in found) is expected


def test_nvme_path_checks_against_a_saved_profile_disk(write):
    workstation = system("1x4090.json")  # /home is a SATA disk with 4 GiB free
    on_home = write("a.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"
                              "  offload_optimizer_device: nvme\n"
                              "  offload_optimizer_nvme_path: /home/me/swap\n")
    assert {"AW610", "AW611"} <= codes(on_home, select=HARDWARE, system=workstation)
    elsewhere = write("b.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"
                                "  offload_optimizer_device: nvme\n  offload_optimizer_nvme_path: /scratch\n")
    assert not {"AW609", "AW610", "AW611"} & codes(elsewhere, select=HARDWARE, system=workstation)
    p5 = system("8xH100-80GB.json")  # /opt/dlami/nvme: a RAID of NVMe drives (md0, so is_nvme unknown)
    assert not {"AW610", "AW611"} & codes(nvme_json(write, "/opt/dlami/nvme/ds"), select=HARDWARE, system=p5)


def test_nvme_space_uses_the_model_size_when_one_is_given(write):
    from accelwiz.estimate.resolved import workload_from_options

    workstation = system("1x4090.json")
    offload = nvme_json(write, "/home/me/swap")
    small = workload_from_options(model="1e8", micro_batch=None, seq_len=2048)  # ~1.1 GiB of optimizer states
    assert "AW611" not in codes(offload, select=("AW611",), system=workstation, workload=small)
    big = workload_from_options(model="7e9", micro_batch=None, seq_len=2048)
    [finding] = diagnostics(offload, select=("AW611",), system=workstation, workload=big)
    assert "writes about 78.2 GiB" in finding.message


def test_num_machines_is_compared_only_with_profiles_that_describe_a_cluster(write):
    two_nodes = write("a.yaml", "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\n")
    one_probed_node = system("8xH100-80GB.json")
    assert "AW616" not in codes(two_nodes, select=HARDWARE, system=one_probed_node)
    assert "AW616" not in codes(two_nodes, select=HARDWARE, system=load_system("local"))
    assert "AW616" in codes(two_nodes, select=HARDWARE, system=system("8xH100-80GB"))
    one_node = write("b.yaml", "distributed_type: MULTI_GPU\nnum_processes: 8\n")
    assert "AW616" in codes(one_node, select=HARDWARE, system=system("2x8xH100.json"))


def test_version_rules_stay_silent_when_packages_are_unknown(write):
    config = write("a.yaml", "distributed_type: DEEPSPEED\nmixed_precision: fp8\nfsdp_config:\n"
                             "  fsdp_version: 2\ndeepspeed_config:\n  deepspeed_multinode_launcher: nossh\n")
    assert not {"AW606", "AW612", "AW613", "AW614", "AW615"} & codes(config, select=HARDWARE,
                                                                      system=system("8xH100-80GB"))


def test_hardware_rules_need_a_system(write):
    config = write("a.yaml", MULTI_GPU_2 + "mixed_precision: bf16\ngpu_ids: 0,1,2\n")
    assert not codes(config, select=HARDWARE)


@pytest.mark.parametrize("text", [
    "distributed_type: MULTI_GPU\nnum_processes: '16'\nnum_machines: zero\ngpu_ids: [0, 1]\n"
    "mixed_precision: 5\n",
    "distributed_type: [FSDP]\nfsdp_config: [1, 2]\ndeepspeed_config: fast\nfp8_config:\n  backend: [TE]\n",
    "distributed_type: DEEPSPEED\nnum_processes: true\ngpu_ids: null\ndeepspeed_config:\n"
    "  offload_optimizer_device: nvme\n  offload_optimizer_nvme_path: 12\n"
    "  deepspeed_moe_layer_cls_names: []\n",
    "distributed_type: MULTI_GPU\nnum_processes: 8\nnum_machines: 0\ngpu_ids: -1\n",
])
@pytest.mark.parametrize("machine", ["cpu_only.json", "8xV100-32GB.json", "2x8xH100", "mixed_4090_3090.json"])
def test_malformed_values_never_crash(write, text, machine):
    codes(write("bad.yaml", text), select=HARDWARE, system=system(machine))


@pytest.mark.parametrize("text", [
    '{"bf16": [true], "zero_optimization": {"offload_param": {"device": "nvme", "nvme_path": ["x"]}}}',
    '{"zero_optimization": "stage3", "fp16": {"enabled": "true"}}',
])
def test_malformed_deepspeed_json_never_crashes(write, text):
    codes(write("ds.json", text), select=HARDWARE, system=load_system("local"))


def test_cli_check_with_a_saved_profile(cli, write):
    config = write("a.yaml", "distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n")
    result = cli("check", str(config), "--select", "AW6", "--system", str(SYSTEMS / "8xV100-32GB.json"))
    assert result.exit_code == 0  # a warning only
    assert "AW604" in result.stdout and "emulated-bf16" in result.stdout
    failing = cli("check", str(config), "--select", "AW6", "--system", str(SYSTEMS / "cpu_only.json"))
    assert failing.exit_code == 1 and "AW601" in failing.stdout


def test_cli_check_with_an_unknown_system_is_a_usage_error(cli, write):
    result = cli("check", str(write("a.yaml", MULTI_GPU_2)), "--system", "8xH100-80G")  # 8xH100 is a machine now
    assert result.exit_code == 2 and "8xH100-80GB" in result.stderr
