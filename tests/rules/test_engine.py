"""check_unit, the one way into the rule engine, and the launch facts that reach the rules through it."""

from __future__ import annotations

from accelwiz.document import parse_text
from accelwiz.estimate.resolved import workload_from_options
from accelwiz.rules.context import LaunchFacts
from accelwiz.rules.engine import check_unit
from tests.profiles import machine

MULTI_GPU = "distributed_type: MULTI_GPU\nnum_processes: 2\nnum_machines: 1\n"
TWO_NODES = "distributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\ndeepspeed_config:\n  zero_stage: 2\n"


def yaml(text: str, name: str = "accelerate.yaml"):
    return parse_text(text, name)


def codes(result) -> set[str]:
    return {d.code for d in result.diagnostics}


def test_a_gpu_type_on_a_cpu_machine_is_an_error_unless_the_launch_falls_back_to_cpu():
    cpu = machine()
    plain = check_unit([yaml(MULTI_GPU)], system=cpu)
    assert "AW601" in codes(plain) and not plain.handled
    fallback = check_unit([yaml(MULTI_GPU)], system=cpu, launch=LaunchFacts(cpu_fallback=True))
    assert "AW601" not in codes(fallback)
    [note] = fallback.handled
    assert note.code == "AW601" and "ACCELERATE_USE_CPU=true" in note.handled


def test_deepspeed_on_cpu_is_handled_only_for_the_builtin_trainer():
    deepspeed = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 2\n"
    cpu = machine()
    # the CPU fallback variable does nothing for DeepSpeed: a user script still fails
    assert "AW601" in codes(check_unit([yaml(deepspeed)], system=cpu, launch=LaunchFacts(cpu_fallback=True)))
    builtin = check_unit([yaml(deepspeed)], system=cpu, launch=LaunchFacts(builtin_trainer=True))
    assert "AW601" not in codes(builtin) and [d.code for d in builtin.handled] == ["AW601"]


def test_per_node_commands_supply_the_rendezvous():
    assert "AW104" in codes(check_unit([yaml(TWO_NODES)]))
    per_node = check_unit([yaml(TWO_NODES)], launch=LaunchFacts(supplies_rendezvous=True))
    assert "AW104" not in codes(per_node)
    # AW116 too: each node's command runs accelerate launch with the standard DeepSpeed launcher
    assert {d.code for d in per_node.handled} == {"AW104", "AW116"}
    assert all("--main_process_ip" in d.handled for d in per_node.handled if d.code == "AW104")
    assert all("--deepspeed_multinode_launcher standard" in d.handled for d in per_node.handled if d.code == "AW116")


def test_memory_is_judged_on_the_machines_as_launched():
    """Under SLURM the YAML describes one node of 8 and srun starts the others: ZeRO-3 of a 70B model does not
    fit one node of 8 x 80 GiB, and does fit 4 of them."""
    one_node = ("distributed_type: DEEPSPEED\nnum_processes: 8\nnum_machines: 1\n"
                "deepspeed_config:\n  zero_stage: 3\n")
    node = machine(8, "H100-80GB", ram_gib=2048)
    workload = workload_from_options(model="llama-3.1-70b", micro_batch=1, seq_len=2048,
                                     gradient_checkpointing=True)
    alone = check_unit([yaml(one_node)], system=node, workload=workload)
    assert "AW501" in codes(alone)
    launched = check_unit([yaml(one_node)], system=node, workload=workload,
                          launch=LaunchFacts(supplies_rendezvous=True, machines_as_launched=4))
    assert "AW501" not in codes(launched)


def test_the_json_is_paired_with_the_yaml_that_names_it():
    pair = check_unit([
        yaml("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
             "  deepspeed_config_file: ds.json\n  zero_stage: 3\n"),
        parse_text('{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}}', "ds.json",
                   kind="deepspeed"),
    ])
    assert pair.context.deepspeed is not None and pair.context.deepspeed_reference.written == "ds.json"
    assert "AW201" in codes(pair)  # zero_stage beside deepspeed_config_file: only seen with both files


def test_the_plan_reaches_the_rules():
    from accelwiz.plan_file import PlanFile

    plan = PlanFile.model_validate({
        "files": {"accelerate": "accelerate.yaml"}, "system": {"name": "2x8xH100", "machines": 2,
                                                               "gpus_per_machine": 8},
        "model": {"name": "llama-8b"}, "training": {"micro_batch": 1, "sequence_length": 2048},
    })
    result = check_unit([yaml("distributed_type: MULTI_GPU\nnum_processes: 8\nnum_machines: 1\n")], plan=plan)
    assert result.context.plan is plan and "AW114" in codes(result)
