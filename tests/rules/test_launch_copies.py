"""AW117/AW118: a torchrun type with `use_cpu: true` runs as independent copies under plain `accelerate launch`.

The claim is proven by launching the YAML for real (tests/accelerate_launch.py): as printed, each process is rank 0
of 1; with the environment the rule's fix names, the two processes form one group of 2.
"""

from __future__ import annotations

from accelwiz.document import load_document
from accelwiz.probe.profiles import load_system
from accelwiz.rules.context import LaunchFacts
from accelwiz.rules.engine import check_unit
from tests.accelerate_launch import CPU_TWO_PROCESS_YAML, Rank, cpu_ddp_launches  # noqa: F401 (the fixture)
from tests.profiles import machine
from tests.rules.helpers import diagnostics


def test_plain_launch_is_two_copies_and_the_rule_says_so(cpu_ddp_launches, write):
    # what accelerate really does with the file: two processes, each alone
    assert cpu_ddp_launches["plain"] == [Rank(0, 1, "NO"), Rank(0, 1, "NO")]
    found = [d for d in diagnostics(write("accelerate.yaml", CPU_TWO_PROCESS_YAML)) if d.code == "AW117"]
    assert len(found) == 1 and found[0].path == ("use_cpu",)
    assert "2 unsynchronised copies" in found[0].message and "num_processes 2" in found[0].message
    assert "ACCELERATE_USE_CPU=true" in found[0].fix


def test_the_fix_it_names_gives_one_group_of_two(cpu_ddp_launches, write):
    assert cpu_ddp_launches["use_cpu_env"] == [Rank(0, 2, "MULTI_CPU"), Rank(1, 2, "MULTI_CPU")]
    # ... and a launch that sets it (accelwiz run) has the finding handled, not counted
    unit = check_unit([load_document(write("accelerate.yaml", CPU_TWO_PROCESS_YAML))],
                      launch=LaunchFacts(cpu_fallback=True))
    assert "AW117" not in {d.code for d in unit.diagnostics}
    assert [d.code for d in unit.handled if d.code == "AW117"] == ["AW117"]


def test_on_a_gpu_machine_the_message_says_use_cpu_is_ignored(write):
    found = [d for d in diagnostics(write("a.yaml", CPU_TWO_PROCESS_YAML), system=load_system("2xRTX3090"))
             if d.code == "AW117"]
    assert len(found) == 1 and "which has 2 GPU(s), use_cpu is ignored" in found[0].message


def test_on_a_cpu_machine_it_names_the_machine(write):
    cpu_only = machine(gpus=0)
    found = [d for d in diagnostics(write("a.yaml", CPU_TWO_PROCESS_YAML), system=cpu_only) if d.code == "AW117"]
    assert len(found) == 1 and "which has no GPU, each of the 2 processes runs alone" in found[0].message


def test_shapes_that_do_not_run_as_copies_stay_silent(write):
    quiet = {
        "gpu ddp": "distributed_type: MULTI_GPU\nnum_processes: 2\n",
        "one process": "distributed_type: MULTI_GPU\nnum_processes: 1\nuse_cpu: true\n",
        "simple launcher": "distributed_type: 'NO'\nnum_processes: 1\nuse_cpu: true\n",
        "use_cpu false": "distributed_type: MULTI_GPU\nnum_processes: 2\nuse_cpu: false\n",
    }
    for name, text in quiet.items():
        assert "AW117" not in {d.code for d in diagnostics(write(f"{name}.yaml", text))}, name


def test_fsdp_names_fsdp_s_own_failure(write):
    text = CPU_TWO_PROCESS_YAML.replace("MULTI_GPU", "FSDP")
    found = [d for d in diagnostics(write("f.yaml", text)) if d.code in ("AW117", "AW118")]
    assert [d.code for d in found] == ["AW118"] and found[0].severity.value == "error"
    assert "sync_module_states" in found[0].message and "MULTI_GPU" in found[0].fix


def test_the_copies_are_a_warning_the_gpu_only_backends_an_error(write):
    # the MULTI_GPU file is right for CPU DDP when the launch sets the variable (accelwiz run, init's lines): it
    # warns; DeepSpeed with use_cpu hangs however it is launched: an error, and no launch variable handles it
    copies = [d for d in diagnostics(write("m.yaml", CPU_TWO_PROCESS_YAML)) if d.code == "AW117"]
    assert copies[0].severity.value == "warning"
    deepspeed = CPU_TWO_PROCESS_YAML.replace("MULTI_GPU", "DEEPSPEED")
    unit = check_unit([load_document(write("d.yaml", deepspeed))], launch=LaunchFacts(cpu_fallback=True))
    assert [d.code for d in unit.diagnostics if d.code in ("AW117", "AW118")] == ["AW118"]
