"""Effective values: what a run will actually use, and where each value comes from. The one reader of config
values: every command (check's rules, `--explain`, `run`'s launch spec, the estimator, the trainer) reads them
here, so that one command cannot see a value another reads differently. Values are read with `coerce`.

The precedence encoded here is accelerate 1.15 + DeepSpeed 0.19.8:
- topology and launcher keys come from the Accelerate YAML, with `ClusterConfig`'s defaults; an unquoted
  `distributed_type: NO` loads as the boolean false, which the launcher runs as NO (but `process_config` gives
  it num_processes -1, not 1);
- with a DeepSpeed JSON (`deepspeed_config_file`, or a JSON checked beside the YAML) the JSON owns the ZeRO
  stage, offload, gradient accumulation, clipping and precision; `"auto"` in it is filled the way accelerate
  fills it (`DeepSpeedPlugin.__post_init__`, `Accelerator._prepare_deepspeed`): stage -> 2, offload -> none,
  GA -> the Accelerator's value, clipping -> 1.0, precision -> the launcher's `mixed_precision`;
- a JSON checked alone may be for the plain `deepspeed` launcher, which drops `"auto"` in its pydantic blocks
  (stage -> 0) and never fills the top-level ones;
- with the inline `deepspeed_config` of the YAML, accelerate builds the JSON itself: zero_stage 2, offload
  none, GA from the YAML (else the Accelerator's), clipping "auto" -> 1.0 (accelerate#3807);
- `fsdp_config` keys may be written with or without the `fsdp_` prefix (the launcher adds it); FSDP1 always
  gets `FSDP_SHARDING_STRATEGY` from the launcher (FULL_SHARD unless written), FSDP2 reads only
  `reshard_after_forward` (true = full shard, false = shard-grad-op);
- the plan file (`accelwiz init`) is a third, optional input: it alone knows the sequence length, activation
  checkpointing, fine-tuning method and attention, and it supplies the micro-batch and gradient accumulation
  where no file owns them (the DataLoader's batch size, `Accelerator(gradient_accumulation_steps=...)`);
- the world size is `num_processes` (all machines together).

Each value records what was written (`written`) and whether that has the type the schema asks for
(`invalid`): the schema rules report an invalid value, so rules read `strict` and stay silent on it, while
the launcher and the estimator use `value`, the way the libraries read it.

`resolve` never raises: a value the libraries cannot read resolves to None with source "unset".

The launcher's values of the YAML (distributed type, topology, rendezvous, devices, precision) are read in
effective_launch.py, the DeepSpeed values in effective_deepspeed.py, the FSDP ones in effective_fsdp.py, the other
settings in effective_settings.py, what the plan adds in effective_plan.py; effective_reader.py is the typed reader
they share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from accelwiz import effective_launch
from accelwiz.effective_deepspeed import from_inline, from_json, json_batch
from accelwiz.effective_fsdp import fsdp_values
from accelwiz.effective_plan import from_plan
from accelwiz.effective_reader import DocumentReader
from accelwiz.effective_value import (  # re-exported: accelwiz.effective is where every command reads them
    NOT_WRITTEN,
    UNSET,
    EffectiveValue,
    Role,
    Source,
    fsdp_entry,
    section_entry,
)

__all__ = ["NOT_WRITTEN", "UNSET", "EffectiveConfig", "EffectiveValue", "Role", "Source", "fsdp_entry",
           "named_deepspeed_file", "resolve", "section_entry", "with_trainer"]

if TYPE_CHECKING:
    from accelwiz.document import Document
    from accelwiz.plan_file import PlanFile

@dataclass(frozen=True)
class EffectiveConfig:
    """The settings of one check unit (an Accelerate YAML, its DeepSpeed JSON, or both, and maybe a plan)."""

    # topology and launcher keys (the Accelerate YAML)
    distributed_type: EffectiveValue = UNSET
    num_processes: EffectiveValue = UNSET
    num_machines: EffectiveValue = UNSET
    processes_per_machine: EffectiveValue = UNSET
    machine_rank: EffectiveValue = UNSET
    main_process_ip: EffectiveValue = UNSET
    main_process_port: EffectiveValue = UNSET
    rdzv_backend: EffectiveValue = UNSET
    same_network: EffectiveValue = UNSET
    use_cpu: EffectiveValue = UNSET
    gpu_ids: EffectiveValue = UNSET
    deepspeed_multinode_launcher: EffectiveValue = UNSET
    # precision and sharding
    mixed_precision: EffectiveValue = UNSET  # what the run computes in (a DeepSpeed JSON's fp16/bf16 first)
    launcher_mixed_precision: EffectiveValue = UNSET  # the YAML's mixed_precision, as `accelerate launch` passes it
    zero_stage: EffectiveValue = UNSET
    offload_optimizer: EffectiveValue = UNSET
    offload_param: EffectiveValue = UNSET
    # ZeRO-3's parameter coordinator, where a DeepSpeed JSON writes them (the estimator's gathered-parameter term)
    zero3_max_live_parameters: EffectiveValue = UNSET
    zero3_max_reuse_distance: EffectiveValue = UNSET
    zero3_prefetch_bucket_size: EffectiveValue = UNSET
    zero3_param_persistence_threshold: EffectiveValue = UNSET
    zero_reduce_bucket_size: EffectiveValue = UNSET  # ZeRO's reduce bucket (elements), any stage
    bf16_master_weights_and_grads: EffectiveValue = UNSET  # the JSON's bf16 section: the ZeRO master copy in bf16
    bf16_optimizer_states: EffectiveValue = UNSET  # ... and its optimizer states
    fsdp_version: EffectiveValue = UNSET
    fsdp_sharding: EffectiveValue = UNSET
    fsdp_offload_params: EffectiveValue = UNSET
    fsdp_use_orig_params: EffectiveValue = UNSET
    fsdp_backward_prefetch: EffectiveValue = UNSET
    fsdp_state_dict_type: EffectiveValue = UNSET
    fsdp_auto_wrap_policy: EffectiveValue = UNSET
    fsdp_min_num_params: EffectiveValue = UNSET
    fsdp_activation_checkpointing: EffectiveValue = UNSET
    fsdp_activation_checkpointing_offload: EffectiveValue = UNSET
    fsdp_sync_module_states: EffectiveValue = UNSET
    fsdp_cpu_ram_efficient_loading: EffectiveValue = UNSET
    parallelism_dp_replicate_size: EffectiveValue = UNSET
    parallelism_dp_shard_size: EffectiveValue = UNSET
    parallelism_tp_size: EffectiveValue = UNSET
    parallelism_cp_size: EffectiveValue = UNSET
    parallelism_sp_size: EffectiveValue = UNSET
    parallelism_sp_backend: EffectiveValue = UNSET
    megatron_tp_degree: EffectiveValue = UNSET
    megatron_pp_degree: EffectiveValue = UNSET
    # batch and optimizer step
    micro_batch: EffectiveValue = UNSET
    gradient_accumulation: EffectiveValue = UNSET
    global_batch: EffectiveValue = UNSET
    gradient_clipping: EffectiveValue = UNSET
    # only the plan knows these
    sequence_length: EffectiveValue = UNSET
    gradient_checkpointing: EffectiveValue = UNSET
    fine_tuning_method: EffectiveValue = UNSET
    attention: EffectiveValue = UNSET
    # what else the rules judge, written in a file (accelwiz.effective_settings reads them; UNSET when not written)
    zero3_init_flag: EffectiveValue = UNSET
    zero_reduce_bucket_size: EffectiveValue = UNSET
    zero_compute_grad_norm: EffectiveValue = UNSET
    zero_reduce_scatter: EffectiveValue = UNSET
    zero_legacy_stage1: EffectiveValue = UNSET
    zenflow: EffectiveValue = UNSET
    gradient_allreduce_op: EffectiveValue = UNSET
    prescale_gradients: EffectiveValue = UNSET
    gradient_predivide_factor: EffectiveValue = UNSET
    fp16_enabled: EffectiveValue = UNSET  # the JSON's fp16.enabled
    bf16_enabled: EffectiveValue = UNSET  # the JSON's bf16.enabled (or bfloat16.enabled without a bf16 block)
    fp16_master_weights_and_grads: EffectiveValue = UNSET
    offload_optimizer_ratio: EffectiveValue = UNSET
    offload_optimizer_nvme_path: EffectiveValue = UNSET
    offload_param_nvme_path: EffectiveValue = UNSET
    sequence_parallel_size: EffectiveValue = UNSET
    communication_data_type: EffectiveValue = UNSET
    param_dtype: EffectiveValue = UNSET
    fp8_backend: EffectiveValue = UNSET
    moe_layer_cls_names: EffectiveValue = UNSET
    zero3_save_16bit_model: EffectiveValue = UNSET  # the YAML's deepspeed_config.zero3_save_16bit_model
    deepspeed_hostfile: EffectiveValue = UNSET  # the YAML's deepspeed_config.deepspeed_hostfile
    zero_gather_16bit_weights: EffectiveValue = UNSET  # the JSON's stage3_gather_16bit_weights_on_model_save
    fp16_loss_scale: EffectiveValue = UNSET
    fp16_loss_scale_window: EffectiveValue = UNSET
    fp16_min_loss_scale: EffectiveValue = UNSET
    optimizer_type: EffectiveValue = UNSET
    scheduler_type: EffectiveValue = UNSET
    named_deepspeed_file: str | None = None  # the JSON the YAML's deepspeed_config_file names (named_deepspeed_file)
    uses_deepspeed: bool = False
    json_alone: bool = False  # a DeepSpeed JSON without an Accelerate YAML: the launcher is unknown
    has_yaml: bool = False  # an Accelerate YAML is part of the unit
    is_sagemaker: bool = False  # compute_environment AMAZON_SAGEMAKER: another launcher, other keys

    def items(self) -> list[tuple[str, EffectiveValue]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self)
                if isinstance(getattr(self, f.name), EffectiveValue)]

    @property
    def is_fsdp(self) -> bool:
        return self.distributed_type.value == "FSDP"

    @property
    def launch_needs_num_processes(self) -> bool:
        """`accelerate launch` stops with "You need to manually pass in `--num_processes`" (the count is -1)."""
        processes = self.num_processes
        return processes.value == -1 or (processes.value is None and processes.source == "accelerate default")

    @property
    def gpu_id_list(self) -> list[int] | None:
        """`gpu_ids` as device indices; None for absent, "all", or anything that is not a list of indices."""
        text = self.gpu_ids.value
        if text is None or text == "all":
            return None
        parts = [p.strip() for p in text.split(",") if p.strip()]
        return [int(p) for p in parts] if parts and all(p.isascii() and p.isdigit() for p in parts) else None

    @property
    def gpu_id_count(self) -> int | None:
        """How many devices `gpu_ids` names (well-formed or not); None for absent or "all"."""
        text = self.gpu_ids.value
        if text is None or text == "all":
            return None
        return len([p for p in text.split(",") if p.strip()])


def resolve(accelerate_doc: Document | None, deepspeed_doc: Document | None,
            plan: PlanFile | None = None, launch_flags: Mapping[str, int | None] | None = None) -> EffectiveConfig:
    """The effective values of a unit; never raises on malformed input. `launch_flags` (check's --num-processes,
    --num-machines) win over the YAML's counts, as `accelerate launch`'s own flags do (effective_flags.py)."""
    from accelwiz.effective_flags import with_launch_flags

    yaml = DocumentReader(accelerate_doc, "accelerate")
    json = DocumentReader(deepspeed_doc, "deepspeed")
    distributed_type = effective_launch.distributed_type(yaml)
    uses_deepspeed = deepspeed_doc is not None or distributed_type.value == "DEEPSPEED"
    topology = with_launch_flags(effective_launch.topology(yaml), launch_flags or {})
    world = topology["num_processes"].value if "num_processes" in topology else None
    if deepspeed_doc is not None:
        deepspeed = from_json(json, accelerate_doc is None)
        batch = json_batch(json, deepspeed["gradient_accumulation"], world)
    elif named_deepspeed_file(accelerate_doc) is not None:
        # The JSON owns these settings, and it could not be read: say so rather than show inline defaults.
        missing = EffectiveValue(None, "unset", note="set in the deepspeed_config_file, which was not found")
        owned = ("zero_stage", "offload_optimizer", "offload_param", "gradient_accumulation",
                 "gradient_clipping", "micro_batch")
        deepspeed = dict.fromkeys(owned, missing)
        batch = {}
    elif uses_deepspeed:
        deepspeed = from_inline(yaml)
        batch = {"micro_batch": EffectiveValue(None, "unset", note="the DataLoader's batch_size")}
    else:
        deepspeed, batch = {}, {}
    values: dict[str, EffectiveValue] = {
        "distributed_type": distributed_type, **topology, **effective_launch.launcher(yaml), **deepspeed, **batch,
        "mixed_precision": effective_launch.precision(yaml, json, accelerate_doc is None),
        "launcher_mixed_precision": effective_launch.launcher_precision(yaml),
        **fsdp_values(yaml, distributed_type.value),
    }
    from accelwiz.effective_settings import settings

    values.update(settings(yaml, json, uses_deepspeed=uses_deepspeed, fsdp=distributed_type.value == "FSDP"))
    if plan is not None:
        values.update(from_plan(plan, values, world))
    return EffectiveConfig(
        **values, uses_deepspeed=uses_deepspeed, named_deepspeed_file=named_deepspeed_file(accelerate_doc),
        json_alone=accelerate_doc is None and deepspeed_doc is not None,
        is_sagemaker=yaml.raw("compute_environment") == "AMAZON_SAGEMAKER", has_yaml=accelerate_doc is not None,
    )


def named_deepspeed_file(accelerate_doc: Document | None) -> str | None:
    """The JSON path `deepspeed_config.deepspeed_config_file` names, stripped, or None when the YAML names none:
    absent, empty, or the string "none" (which `accelerate config` writes and the launcher reads as unset).
    The one answer to "does this YAML name a JSON" for every command."""
    if accelerate_doc is None:
        return None
    written = accelerate_doc.get("deepspeed_config", "deepspeed_config_file")
    if not isinstance(written, str) or written.strip().lower() in ("", "none"):
        return None
    return written.strip()


def with_trainer(config: EffectiveConfig, values: dict[str, tuple[Any, str]]) -> EffectiveConfig:
    """`config` with the values the HF Trainer's arguments set (`check --training-args` / `-- ARGS`), source
    "trainer": what it fills in a DeepSpeed config's "auto", and without DeepSpeed the batch, accumulation,
    clipping and precision it owns. accelwiz.rules.trainer_arguments decides which values those are."""
    from dataclasses import replace

    known = {f.name for f in fields(config)}
    return replace(config, **{name: EffectiveValue(value, "trainer", note=note)
                              for name, (value, note) in values.items() if name in known})
