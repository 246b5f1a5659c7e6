"""Rules judge values as the libraries read them (ctx.effective), so a spelling the library accepts is judged as
the run sees it: each case below was a miss or a false error while the rule read the document raw.

- DeepSpeed's pydantic blocks (zero_optimization, fp16, bf16) read "true"/"False" strings as booleans;
- `gradient_allreduce_op` and `communication_data_type` are lower-cased (runtime/config.py);
- `prescale_gradients` is tested for truth, so the string "false" prescales (engine.postscale_gradients);
- the launcher lower-cases an Accelerate YAML's `mixed_precision` and offload devices and passes
  `zero3_init_flag` through `str(value).lower()` and `str_to_bool` (accelerate/utils/launch.py);
- fp8_config keys may carry the `fp8_` prefix the launcher adds (accelerate/commands/launch.py);
- fsdp_config, parallelism_config and megatron_lm_config values reach the workers as `str(value)` and are read
  back with `str_to_bool`, `.upper()` or `int()` (FullyShardedDataParallelPlugin, ParallelismConfig,
  MegatronLMPlugin).
"""

from __future__ import annotations

import json

import pytest

from accelwiz.effective import EffectiveConfig, EffectiveValue, resolve
from accelwiz.effective_settings import NAMES
from accelwiz.probe.profiles import load_system
from tests.rules.helpers import codes, diagnostics
from tests.rules.test_hardware import SYSTEMS

YAML_DS = "distributed_type: DEEPSPEED\nnum_processes: 2\n"


def ds(stage: int = 2, zero: dict | None = None, **top) -> str:
    return json.dumps({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": stage, **(zero or {})},
                       **top})


def fsdp(version: int, *lines: str, processes: int = 2, extra: str = "") -> str:
    return (f"distributed_type: FSDP\nnum_processes: {processes}\nfsdp_config:\n  fsdp_version: {version}\n"
            + "".join(f"  {line}\n" for line in lines) + extra)


def inline(*settings: str) -> str:
    return YAML_DS + "deepspeed_config:\n" + "".join(f"  {s}\n" for s in settings)


# (code, file name, text, whether the rule fires): each spelling below is one DeepSpeed or accelerate reads as
# the canonical value
CASES = [
    ("AW216", "a.yaml", inline("zero_stage: 2", 'zero3_init_flag: "True"'), True),
    ("AW217", "a.yaml", inline("zero_stage: 3", "zero3_init_flag: 'false'"), True),
    ("AW219", "d.json", ds(3, gradient_allreduce_op="SUM"), True),
    ("AW219", "d.json", ds(2, {"zenflow": {}}, gradient_allreduce_op="sum"), True),  # zenflow is not None
    ("AW220", "d.json", ds(3, {"compute_grad_norm": "false"}), True),
    ("AW230", "d.json", ds(1, {"legacy_stage1": "true"}), True),
    ("AW231", "d.json", ds(2, prescale_gradients="false"), True),  # a non-empty string is true to DeepSpeed
    ("AW231", "d.json", ds(2, {"reduce_scatter": "false"}, prescale_gradients=True), False),
    ("AW404", "d.json", ds(2, communication_data_type="FP16", bf16={"enabled": True}), True),
    ("AW406", "d.json", ds(2, bf16={"enabled": True, "bf16_optimizer_states": "true"}), True),
    ("AW407", "d.json", ds(0, fp16={"enabled": True, "fp16_master_weights_and_grads": "True"}), True),
    ("AW207", "a.yaml", inline("zero_stage: 3", "offload_param_device: NVME"), True),
    ("AW206", "a.yaml", inline("zero_stage: 2", "offload_param_device: NONE"), False),
    # fsdp_config: flags through str_to_bool, names upper-cased, sizes through int() (FullyShardedDataParallelPlugin)
    ("AW303", "a.yaml", fsdp(2, "fsdp_state_dict_type: local_state_dict"), True),
    ("AW307", "a.yaml", fsdp(1, "fsdp_auto_wrap_policy: size_based_wrap", "fsdp_min_num_params: '0'"), True),
    ("AW308", "a.yaml", fsdp(1, "fsdp_auto_wrap_policy: no_wrap"), True),
    ("AW309", "a.yaml", fsdp(1, "fsdp_activation_checkpointing_offload: 'True'",
                             "fsdp_activation_checkpointing: 'True'"), True),  # needs FSDP2
    ("AW309", "a.yaml", fsdp(2, "fsdp_activation_checkpointing_offload: true",
                             "fsdp_activation_checkpointing: 'true'"), False),
    # parallelism_config sizes and Megatron-LM degrees: exported with str() and read back with int()
    ("AW310", "a.yaml", fsdp(2, processes=8, extra="parallelism_config:\n  parallelism_config_dp_shard_size: '2'\n"
                                                   "  parallelism_config_tp_size: 2\n"), True),
    ("AW315", "a.yaml", "distributed_type: MEGATRON_LM\nnum_processes: 8\nmegatron_lm_config:\n"
                        "  megatron_lm_tp_degree: '3'\n", True),
]


@pytest.mark.parametrize("code,name,text,fires", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_spelling_the_library_accepts_is_judged_as_it_runs(write, code, name, text, fires):
    assert (code in codes(write(name, text), select=(code,))) is fires


def test_launcher_precision_is_compared_lower_cased(write):
    """`mixed_precision: BF16` is bf16 to the launcher: it agrees with a JSON that enables bf16 (no AW402),
    and disagrees with one that enables fp16."""
    for enabled, expected in (("bf16", set()), ("fp16", {"AW402"})):
        json_path = write("ds.json", ds(2, **{enabled: {"enabled": True}}))
        yaml = write("a.yaml", f"{YAML_DS}mixed_precision: BF16\ndeepspeed_config:\n"
                               f"  deepspeed_config_file: {json_path}\n")
        assert codes(yaml, select=("AW402",)) == expected


def test_fp8_config_message_names_the_precision_as_launched(write):
    [finding] = diagnostics(write("a.yaml", "distributed_type: 'NO'\nmixed_precision: BF16\n"
                                            "fp8_config:\n  backend: TE\n"), select=("AW422",))
    assert "'bf16'" in finding.message


def test_fp8_backend_written_with_the_launcher_prefix(write):
    """`fp8_config: {fp8_backend: AO}` is the backend the launcher passes: torchao must be installed."""
    machine = load_system(str(SYSTEMS / "1x4090.json"))
    yaml = write("a.yaml", "distributed_type: 'NO'\nmixed_precision: fp8\nfp8_config:\n  fp8_backend: AO\n")
    [finding] = [d for d in diagnostics(yaml, select=("AW606",), system=machine)]
    assert finding.path == ("fp8_config", "fp8_backend") and "`torchao`" in finding.message


def test_nvme_offload_device_in_capitals_is_checked_on_this_machine(write, tmp_path):
    """The launcher lower-cases `offload_optimizer_device: NVME`, so its path is checked (AW609)."""
    yaml = write("a.yaml", inline("zero_stage: 3", "offload_optimizer_device: NVME",
                                  f"offload_optimizer_nvme_path: {tmp_path / 'nvme' / 'swap'}"))
    found = diagnostics(yaml, select=("AW609",), system=load_system("local"))
    assert [d.path for d in found] == [("deepspeed_config", "offload_optimizer_nvme_path")]


def test_every_setting_is_a_field_of_the_effective_config():
    """accelwiz.effective_settings computes each of its NAMES, and EffectiveConfig declares each of them."""
    fields = {name for name, _ in EffectiveConfig().items()}
    assert set(NAMES) <= fields


def test_settings_are_read_once_with_where_they_are_written(write):
    """A written setting carries its file, key and written spelling (for --explain and file:line:col)."""
    from accelwiz.document import load_document

    doc = load_document(write("d.json", ds(3, {"compute_grad_norm": "false"}, gradient_allreduce_op="SUM")))
    config = resolve(None, doc)
    assert config.zero_compute_grad_norm == EffectiveValue(False, "json", "deepspeed",
                                                           ("zero_optimization", "compute_grad_norm"),
                                                           written="false", invalid=True)
    assert (config.gradient_allreduce_op.value, config.gradient_allreduce_op.written) == ("sum", "SUM")
    assert not config.zero_legacy_stage1.is_written and config.zero_legacy_stage1.value is None
