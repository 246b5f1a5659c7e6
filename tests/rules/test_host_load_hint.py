"""issue 31: AW502/AW506 say what fills the host (offloaded states, or the weights each process loads on the CPU
before moving them to its GPU) with a hint that is true for it, and `run` says in one line when the machine it
judges is not the one the plan was made for (was: "27.1 GiB ... for model loading ... exceeds the node's 23.5 GiB",
help "Offload less (optimizer only, or none)" for a LoRA plan with no offload)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CPU_ONLY = Path(__file__).parents[1] / "fixtures" / "systems" / "cpu_only.json"  # 32 GiB of RAM, no GPU


def _cpu_box(folder: Path, ram_gib: float) -> str:
    data = json.loads(CPU_ONLY.read_text())
    data["host"]["memory_total_bytes"] = int(ram_gib * 2**30)
    path = folder / "box.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.fixture()
def r7b(cli, tmp_path, monkeypatch) -> Path:
    """The newcomer's LoRA plan for one RTX 4090: no offload."""
    monkeypatch.chdir(tmp_path)
    made = cli("init", "--model", "llama-2-7b", "--system", "1xRTX4090", "--defaults", "-o", "r7b.yaml")
    assert made.exit_code == 0, made.stderr
    return tmp_path / "r7b.yaml"


def _aw502(cli, *args: str) -> dict:
    found = cli("check", *args, "--select", "AW502", "--format", "json")
    findings = json.loads(found.stdout)
    assert [f["code"] for f in findings] == ["AW502"], found.stdout
    return findings[0]


def test_the_load_is_named_with_a_true_hint_and_the_planned_machine(cli, r7b, tmp_path):
    unjudged = cli("check", "r7b.yaml")  # no machine given: nothing to judge the host RAM against
    assert unjudged.exit_code == 0 and "No problems found." in unjudged.output
    finding = _aw502(cli, "r7b.yaml", "--system", _cpu_box(tmp_path, 16))
    message, fix = finding["message"], finding["fix"]
    assert "for the weights as loaded on the CPU before they move to the GPU (" in message
    assert "every process materialises the model on the CPU" in message and "+ 1 process(es) x 2.0 GiB" in message
    assert "the plan is for 1xRTX4090 (1 x 1 GPU(s)) and this machine has no GPU" in message
    assert "Offload less" not in fix and "low_cpu_mem_usage" in fix and "fewer processes per node" in fix
    assert "accelwiz check r7b.yaml --system 1xRTX4090" in fix  # the file judged, pasteable


def test_a_ddp_load_on_its_own_gpu_machine_gets_the_load_hint_alone(cli, tmp_path, monkeypatch):
    from accelwiz.probe.profiles import load_system

    monkeypatch.chdir(tmp_path)
    node = json.loads(load_system("8xH100-80GB").model_dump_json())
    node["host"]["memory_total_bytes"] = 64 * 2**30  # 8 ranks x a 7B in fp32 do not fit 64 GiB
    Path("node.json").write_text(json.dumps(node))
    Path("ddp.yaml").write_text("distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n")
    finding = _aw502(cli, "ddp.yaml", "--system", "node.json", "--model", "llama-2-7b")
    assert "for the weights as loaded on the CPU before they move to the GPU" in finding["message"]
    assert "+ 8 process(es) x 2.0 GiB" in finding["message"]
    assert "planned for another machine" not in finding["message"]
    assert finding["fix"].startswith("Load fewer copies") and "Offload less" not in finding["fix"]


def test_offloaded_states_keep_the_offload_hint(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("z.yaml").write_text("distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n  zero_stage: 3\n"
                              "  offload_optimizer_device: cpu\n  offload_param_device: cpu\n")
    finding = _aw502(cli, "z.yaml", "--system", "4xA100-40GB", "--model", "llama-3.1-70b")
    assert "for offloaded states" in finding["message"] and finding["fix"].startswith("Offload less")


def test_machine_line_names_the_plans_machine_and_this_one(r7b, tmp_path):
    from accelwiz.launch.machine_line import machine_line
    from accelwiz.plan_file import load_plan
    from accelwiz.probe.profiles import load_system

    plan = load_plan(r7b.with_name("r7b.plan.yaml"))
    assert machine_line(plan, load_system(_cpu_box(tmp_path, 16))) == (
        "the plan was made for 1xRTX4090 (1 x 1 NVIDIA GeForce RTX 4090); this machine has no GPU: the checks "
        "below judge this machine")
    assert machine_line(plan, load_system("1xRTX4090")) is None
    assert "this machine has 8 x NVIDIA H100" in machine_line(plan, load_system("8xH100-80GB"))


def test_run_says_it_in_one_line_here(cli, r7b):
    from accelwiz.probe.profiles import load_system

    if load_system("local").gpus:
        pytest.skip("this machine has GPUs")
    ran = cli("run", "--config", "r7b.yaml", "--dry-run")
    lines = [line for line in ran.stderr.splitlines() if "the plan was made for 1xRTX4090" in line]
    assert len(lines) == 1 and "this machine has no GPU" in lines[0], ran.stderr


def test_a_tight_load_gets_the_load_hint_too(cli, r7b, tmp_path):
    # 27.1 GiB of load on a 29 GiB box: AW506, whose hint was "Offload less" for a plan without offload
    found = cli("check", "r7b.yaml", "--system", _cpu_box(tmp_path, 29), "--select", "AW502,AW506", "--format",
                "json")
    findings = json.loads(found.stdout)
    assert [f["code"] for f in findings] == ["AW506"], found.stdout
    assert "for the weights as loaded on the CPU" in findings[0]["message"]
    assert "Offload less" not in findings[0]["fix"] and "low_cpu_mem_usage" in findings[0]["fix"]
