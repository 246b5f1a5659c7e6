"""AW5xx memory rules, through the real engine with inline configs, presets and hand-made machine profiles."""

from __future__ import annotations

import pytest

from accelwiz.modelspec.lookup import resolve_model
from accelwiz.probe.model import MachineProfile
from accelwiz.probe.profiles import load_system
from accelwiz.estimate.resolved import workload_from_options
from tests.profiles import machine
from tests.rules.helpers import codes, diagnostics

H100_NODE = load_system("8xH100-80GB")
LLAMA_4K = workload_from_options(model="llama-8b", micro_batch=4, seq_len=4096)
LLAMA_4K_GC = workload_from_options(
    model="llama-8b", micro_batch=4, seq_len=4096, gradient_checkpointing=True
)
GPT2 = workload_from_options(model="gpt2", micro_batch=8, seq_len=1024)

DDP = "distributed_type: MULTI_GPU\nnum_processes: 8\nnum_machines: 1\nmixed_precision: bf16\n"
ZERO = (
    "distributed_type: DEEPSPEED\nnum_processes: 8\nnum_machines: 1\n"
    "deepspeed_config:\n  zero_stage: {stage}\n"
)


def node(*, gpus: int = 8, gpu_gib: int = 80, ram_gib: int = 2048) -> MachineProfile:
    return machine(gpus, "H100-80GB", gpu_gib=gpu_gib, ram_gib=ram_gib)


def test_memory_rules_need_a_workload(write):
    assert not codes(write("a.yaml", DDP), select=("AW5",), system=H100_NODE)


def test_aw501_ddp_llama_does_not_fit(write):
    found = diagnostics(write("a.yaml", DDP), select=("AW501",), system=H100_NODE, workload=LLAMA_4K_GC)
    assert [d.code for d in found] == ["AW501"]
    message = found[0].message
    assert "GiB per GPU with DDP over 8 GPU(s)" in message and "79.2 GiB CUDA can allocate on" in message
    assert found[0].fix.startswith("Use ZeRO-1")  # the fastest that fits, computed for this workload
    assert found[0].path == ("distributed_type",)


def test_aw501_zero3_fits(write):
    assert not codes(
        write("a.yaml", ZERO.format(stage=3)), select=("AW501",), system=H100_NODE, workload=LLAMA_4K_GC
    )


def test_aw501_skips_silently_without_a_system(write):
    assert not codes(write("a.yaml", DDP), select=("AW501", "AW502", "AW503"), workload=LLAMA_4K)


def test_aw501_points_at_the_deepspeed_stage(write):
    yaml = write(
        "a.yaml",
        "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n"
        "  deepspeed_config_file: ds.json\n",
    )
    write("ds.json", '{"zero_optimization": {"stage": 1}}')
    found = diagnostics(yaml, select=("AW501",), system=node(gpu_gib=40), workload=LLAMA_4K_GC)
    assert [(d.code, d.path) for d in found] == [("AW501", ("zero_optimization", "stage"))]
    assert found[0].file.endswith("ds.json")


def test_aw502_offload_exceeds_host_ram(write):
    yaml = write(
        "a.yaml", ZERO.format(stage=3) + "  offload_optimizer_device: cpu\n  offload_param_device: cpu\n"
    )
    found = diagnostics(yaml, select=("AW502",), system=node(ram_gib=128), workload=LLAMA_4K_GC)
    assert [d.code for d in found] == ["AW502"]
    assert "of host RAM per node for offloaded states" in found[0].message and "128.0 GiB" in found[0].message
    assert not codes(yaml, select=("AW502",), system=node(ram_gib=1024), workload=LLAMA_4K_GC)


def test_aw503_offload_not_needed(write):
    yaml = write("a.yaml", ZERO.format(stage=3) + "  offload_optimizer_device: cpu\n")
    found = diagnostics(yaml, select=("AW503",), system=H100_NODE, workload=GPT2)
    assert [d.code for d in found] == ["AW503"]
    assert found[0].message.startswith("ZeRO-3 + CPU offload (optimizer) is slower than needed: DDP fits in")
    assert found[0].path == ("deepspeed_config", "zero_stage")


def test_aw503_quiet_when_the_stage_is_needed(write):
    for stage in (1, 2, 3):  # ZeRO-1 is the fastest strategy that fits this workload: ZeRO-2 and 3 are flagged
        found = codes(
            write("a.yaml", ZERO.format(stage=stage)),
            select=("AW503",),
            system=H100_NODE,
            workload=LLAMA_4K_GC,
        )
        assert found == (set() if stage == 1 else {"AW503"})
    assert not codes(write("b.yaml", DDP), select=("AW503",), system=H100_NODE, workload=GPT2)


def test_aw504_small_model_sharded(write):
    found = diagnostics(write("a.yaml", ZERO.format(stage=3)), select=("AW504",), workload=GPT2)
    assert [d.code for d in found] == ["AW504"]
    assert "gpt2 (124M parameters): plain DDP needs only" in found[0].message


@pytest.mark.parametrize(
    ("yaml", "workload", "system"),
    [
        (ZERO.format(stage=3), LLAMA_4K, None),  # a big model: sharding is needed
        (DDP, GPT2, None),  # already DDP
        (ZERO.format(stage=3), GPT2, H100_NODE),  # with a system AW503 judges instead
        ("distributed_type: DEEPSPEED\nnum_processes: 1\ndeepspeed_config:\n  zero_stage: 3\n", GPT2, None),
    ],
)
def test_aw504_quiet(write, yaml, workload, system):
    assert not codes(write("a.yaml", yaml), select=("AW504",), workload=workload, system=system)


@pytest.mark.parametrize(
    "yaml",
    [
        "distributed_type: DEEPSPEED\nnum_processes: [8]\ndeepspeed_config: 3\n",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: {a: 1}\n  fsdp_version: x\n",
        "distributed_type: 5\n",
        "just a string\n",
        "num_processes: 0\n",
    ],
)
def test_malformed_configs_do_not_crash(write, yaml):
    codes(write("a.yaml", yaml), select=("AW5",), workload=LLAMA_4K, system=node(ram_gib=1))


def test_deepspeed_json_alone(write):
    found = codes(
        write("ds.json", '{"zero_optimization": {"stage": 0}}'),
        select=("AW5",),
        workload=LLAMA_4K,
        system=node(gpus=1),
    )
    assert found == {"AW501"}


def test_fp32_config_needs_more_memory(write):
    """mixed_precision: 'no' trains in fp32: 16 B/param and 4-byte activations instead of mixed precision. On
    22 GiB the mixed-precision tensors fit (its reserve would not: tight, the allocator retries); fp32's do not."""
    one_gpu = "distributed_type: 'NO'\nnum_processes: 1\n"
    small = node(gpus=1, gpu_gib=22)
    # as `check --model qwen2.5-0.5b --micro-batch 4 --seq-len 1024` resolves it: the YAML's precision is read
    qwen = {"model": resolve_model("qwen2.5-0.5b"), "workload_flags": {"micro_batch": 4, "seq_len": 1024}}
    assert not codes(write("mixed.yaml", one_gpu + "mixed_precision: bf16\n"), select=("AW501",), system=small,
                     **qwen)
    assert codes(write("fp32.yaml", one_gpu + "mixed_precision: 'no'\n"), select=("AW501",), system=small,
                 **qwen) == {"AW501"}


def test_micro_batch_comes_from_the_deepspeed_json_when_not_given(write):
    yaml = write(
        "a.yaml",
        "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n"
        "  deepspeed_config_file: ds.json\n",
    )
    write("ds.json", '{"train_micro_batch_size_per_gpu": 64, "zero_optimization": {"stage": 3}}')
    # as `check a.yaml --model llama-8b --seq-len 4096` resolves it: the JSON's micro-batch, not the default 1
    llama = resolve_model("llama-8b")
    found = diagnostics(yaml, select=("AW501",), system=H100_NODE, model=llama, workload_flags={"seq_len": 4096})
    assert [d.code for d in found] == ["AW501"] and "micro-batch 64 × 4096" in found[0].message
    small = write("b.yaml", "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n"
                            "  deepspeed_config_file: ds1.json\n")
    write("ds1.json", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}')
    assert not codes(small, select=("AW501",), system=H100_NODE, model=llama,
                     workload_flags={"seq_len": 4096, "gradient_checkpointing": True})


def test_a_lone_json_runs_on_the_launchers_world(write):
    """A JSON alone is launched by `deepspeed` (every GPU of the node) or torchrun (check's --num-processes): ZeRO-3
    shards over that world, not over one GPU (LLaMA-Factory#5977: 8B full fine-tune on 8 x RTX 3090)."""
    from dataclasses import replace

    from accelwiz.config.training_args import parse_argv

    path = write("ds.json", '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}')
    workload = workload_from_options(model="llama-3.1-8b", micro_batch=1, seq_len=1024, gradient_checkpointing=True)
    on_the_node = diagnostics(path, select=("AW501",), workload=workload, system=load_system("8xRTX3090"))
    assert "over 8 GPU(s)" in on_the_node[0].message
    two = replace(parse_argv([]), world_size=2)
    on_two = diagnostics(path, select=("AW501",), workload=workload, system=load_system("8xRTX3090"),
                         training_args=two)
    assert "over 2 GPU(s)" in on_two[0].message
