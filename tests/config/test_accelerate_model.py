"""The Accelerate config model: it covers every key accelerate's own dataclasses have, accepts the shapes
accelerate really accepts, and rejects (with the right kind of issue) what accelerate ignores or refuses."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from accelwiz.config.accelerate import AccelerateConfig, SageMakerConfig
from accelwiz.config.models import model_for
from accelwiz.config.validate import schema_issues
from accelwiz.document import parse_text

BASE = "distributed_type: FSDP\nnum_processes: 2\n"


def issues(text: str):
    document = parse_text(text, Path("a.yaml"))
    return schema_issues(document, model_for(document))


def kinds(text: str) -> set[tuple[str, tuple]]:
    return {(issue.kind, issue.path) for issue in issues(text)}


@pytest.mark.parametrize(
    "ours,theirs", [(AccelerateConfig, "ClusterConfig"), (SageMakerConfig, "SageMakerConfig")]
)
def test_every_key_of_accelerates_own_dataclass_is_modelled(ours, theirs):
    from accelerate.commands.config import config_args

    fields = {f.name for f in dataclasses.fields(getattr(config_args, theirs))}
    assert fields <= set(ours.model_fields), fields - set(ours.model_fields)
    assert set(ours.model_fields) <= fields, set(ours.model_fields) - fields


def _models(model: type[BaseModel]) -> typing.Iterator[type[BaseModel]]:
    yield model
    for info in model.model_fields.values():
        for arg in typing.get_args(info.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                yield from _models(arg)


@pytest.mark.parametrize("root", [AccelerateConfig, SageMakerConfig])
def test_every_key_has_a_description(root):
    for model in _models(root):
        for name, info in model.model_fields.items():
            assert info.description, f"{model.__name__}.{name}"


@pytest.mark.parametrize(
    "text",
    [
        "distributed_type: MULTI_GPU\ngpu_ids: 0,1\nnum_processes: 2\n",
        "distributed_type: 'NO'\nmain_process_ip: null\nmain_process_port: null\ncommands: null\n",
        "distributed_type: MULTI_GPU\nnum_processes: -1\n",
        "distributed_type: XLA\ntpu_vm: [vm-1]\ntpu_env: []\ntpu_use_sudo: 'no'\ndowncast_bf16: 'no'\n",
        "distributed_type: 'NO'\ndeepspeed_config: {}\nfsdp_config: {}\nmegatron_lm_config: {}\ndynamo_config: {}\n",
        BASE + "fsdp_config:\n  fsdp_sharding_strategy: 1\n  fsdp_backward_prefetch: BACKWARD_PRE\n",
        BASE + "fsdp_config:\n  fsdp_version: 1\n  fsdp_reshard_after_forward: FULL_SHARD\n",
        BASE + "fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: false\n",
        BASE + "fsdp_config:\n  version: 2\n  offload_params: true\n",  # the launcher adds the fsdp_ prefix
        "distributed_type: 'NO'\nmixed_precision: fp8\nfp8_config:\n  backend: TE\n"
        "  override_linear_precision: [false, false, false]\n  fp8_format: E4M3\n  amax_history_len: 1024\n",
        "distributed_type: 'NO'\nmixed_precision: fp8\nfp8_config:\n  fp8_backend: AO\n  pad_inner_dim: true\n",
        "distributed_type: 'NO'\ndynamo_config:\n  dynamo_backend: INDUCTOR\n  mode: max-autotune\n",
        # the launcher upper-cases the backend (`DynamoBackend(args.dynamo_backend.upper())`), and its own
        # `--dynamo_backend` flag takes only lower case, so `inductor` copied from a command line works
        "distributed_type: 'NO'\ndynamo_config:\n  dynamo_backend: inductor\n",
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  gradient_accumulation_steps: auto\n"
        "  gradient_clipping: 1\n  offload_param_device: nvme\n  offload_param_nvme_path: /nvme\n",
        "distributed_type: MULTI_CPU\nmpirun_config:\n  mpirun_hostfile: hosts\n",
        "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: DATA_PARALLEL\nec2_instance_type: ml.p3.16xlarge\n"
        "iam_role_name: role\nadditional_args: {max_run: 3600}\n",
    ],
)
def test_accepts_what_accelerate_accepts(text):
    assert not issues(text)


@pytest.mark.parametrize(
    "text,kind,path",
    [
        # accelerate 0.28 renamed TPU to XLA; today the loader raises "'TPU' is not a valid DistributedType".
        ("distributed_type: TPU\n", "invalid-value", ("distributed_type",)),
        # `gpu_ids: 0` is an int: `accelerate launch` calls gpu_ids.split(",") and fails with AttributeError.
        ("distributed_type: 'NO'\ngpu_ids: 0\n", "wrong-type", ("gpu_ids",)),
        (
            "distributed_type: DEEPSPEED\ndeepspeed_config:\n  bf16:enabled: true\n",
            "unknown-key",
            ("deepspeed_config", "bf16:enabled"),
        ),
        (
            "distributed_type: DEEPSPEED\ndeepspeed_config:\n  train_micro_batch_size_per_gpu: 4\n",
            "misplaced-key",
            ("deepspeed_config", "train_micro_batch_size_per_gpu"),
        ),
        (
            BASE + "fsdp_config:\n  fsdp_backward_prefetch_policy: BACKWARD_PRE\n",
            "misplaced-key",
            ("fsdp_config", "fsdp_backward_prefetch_policy"),
        ),
        (BASE + "parallelism_config:\n  tp_size: 2\n", "misplaced-key", ("parallelism_config", "tp_size")),
        (
            "distributed_type: MEGATRON_LM\nmegatron_lm_config:\n  tp_degree: 2\n",
            "misplaced-key",
            ("megatron_lm_config", "tp_degree"),
        ),
        (
            "distributed_type: MULTI_CPU\nmpirun_config:\n  hostfile: hosts\n",
            "misplaced-key",
            ("mpirun_config", "hostfile"),
        ),
        ("distributed_type: 'NO'\nipex_config:\n  ipex: true\n", "removed-key", ("ipex_config",)),
        ("distributed_type: 'NO'\nfp16: true\n", "legacy-key", ("fp16",)),
        ("distributed_type: 'NO'\ndynamo_backend: 'NO'\n", "legacy-key", ("dynamo_backend",)),
        (
            BASE + "fsdp_config:\n  fsdp_sharding_strategy: 6\n",
            "invalid-value",
            ("fsdp_config", "fsdp_sharding_strategy"),
        ),
        (BASE + "fsdp_config:\n  fsdp_version: 3\n", "invalid-value", ("fsdp_config", "fsdp_version")),
        ("distributed_type: MULTI_GPU\nnum_machines: 0\n", "invalid-value", ("num_machines",)),
        ("distributed_type: MULTI_GPU\nzero_stage: 3\n", "misplaced-key", ("zero_stage",)),
    ],
)
def test_rejects_with_the_right_kind(text, kind, path):
    assert (kind, path) in kinds(text), kinds(text)


def test_json_schema_uses_the_canonical_spellings():
    schema = AccelerateConfig.model_json_schema(by_alias=True)
    assert "fsdp_version" in schema["$defs"]["FsdpSection"]["properties"]
    assert "backend" in schema["$defs"]["Fp8Section"]["properties"]


def test_effective_values_read_malformed_values_as_invalid():
    from accelwiz.effective import fsdp_entry, resolve

    document = parse_text(
        "distributed_type: NO\nnum_processes: 'two'\nnum_machines: true\nfsdp_config:\n  version: 2\n",
        Path("a.yaml"),
    )
    effective = resolve(document, None)
    assert effective.distributed_type.value == "NO"  # YAML's false, which accelerate runs as NO
    assert effective.num_processes.strict is None and effective.num_machines.strict is None
    assert effective.num_processes.invalid and effective.num_machines.written is True
    assert fsdp_entry(document, "fsdp_version") == (("fsdp_config", "version"), 2)
