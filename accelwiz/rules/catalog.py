"""The rule table (ruff's codes.rs): every rule, by code, listed explicitly.

A rule exists because it is listed here. `@rule` (accelwiz/rules/rule.py) only attaches metadata to the check
function; importing a module registers nothing, and listing a rule imports nothing: each module is declared below
as a `RuleModule` with the inputs every one of its rules needs (a machine profile, a workload, the Trainer's or
TRL's arguments, a plan, an Accelerate YAML), and the engine imports it only for a unit that has them.

Adding a rule is a two-line change:
1. in the module of its block, the check function, decorated with `@rule(code, name, severity, fix=...)`
   (`from accelwiz.rules.rule import rule`; `needs=Needs.SYSTEM` / `Needs.WORKLOAD` when it needs a machine
   profile or a workload) and documented with `## What it does`, `## Why is this bad?` and `## Example`;
2. one line here: `"AWnnn": module.function,` (`module` is the module's `RuleModule` below).
A rule in a new module also needs the module's declaration: `module = RuleModule("module", NEEDS...)`, naming
only inputs without which none of its rules can find anything (none: it runs on every unit); never import the
module here. Then regenerate docs/rules.md (`accelwiz rule --all --format markdown > docs/rules.md`).
tests/rules/test_registry.py fails when a decorated function is missing from this table or listed under another
code, tests/rules/test_rule_examples.py runs the rule's `## Example` through the engine and expects the rule to
fire, and tests/rules/test_rule_selection.py fails when an entry is not a `RuleRef` or a module finds something on
a unit without the inputs it declares. Codes are never reused.
"""

from __future__ import annotations

from accelwiz.rules.rule import Needs, RuleModule, RuleRef

ACCELERATE, PLAN, SYSTEM, TRAINER, TRL, WORKLOAD = (
    Needs.ACCELERATE, Needs.PLAN, Needs.SYSTEM, Needs.TRAINER, Needs.TRL, Needs.WORKLOAD)

# Each rule module, and the inputs every rule in it needs (accelwiz.rules.rule.Needs): the engine imports a
# module only for a unit that has them all, so a YAML-only check never loads the Trainer, TRL, memory or
# hardware rules. No inputs: any unit. Declared, never inferred: tests/rules/test_rule_selection.py checks
# on the corpus that no module finds anything on a unit without the inputs it declares.
dead_keys = RuleModule("dead_keys")
duplicate_keys = RuleModule("duplicate_keys")
fsdp = RuleModule("fsdp", ACCELERATE)
fsdp_lora = RuleModule("fsdp_lora", ACCELERATE, WORKLOAD)
fsdp_setup = RuleModule("fsdp_setup", ACCELERATE)
fsdp_wrap = RuleModule("fsdp_wrap", ACCELERATE, WORKLOAD)
gpu_ids = RuleModule("gpu_ids", ACCELERATE)
launch_copies = RuleModule("launch_copies", ACCELERATE)
main_process = RuleModule("main_process", ACCELERATE)
memory = RuleModule("memory", WORKLOAD)
memory_host = RuleModule("memory_host", WORKLOAD)
multinode_hostfile = RuleModule("multinode_hostfile", ACCELERATE)
parallelism = RuleModule("parallelism")
placeholders = RuleModule("placeholders", ACCELERATE)
plan_agreement = RuleModule("plan_agreement", PLAN)
precision_settings = RuleModule("precision_settings")
schema_rules = RuleModule("schema_rules")
sharding_advice = RuleModule("sharding_advice", WORKLOAD)
topology = RuleModule("topology", ACCELERATE)
trainer_arguments = RuleModule("trainer_arguments", TRAINER)
trainer_fsdp = RuleModule("trainer_fsdp", TRAINER)
trainer_fsdp_checkpointing = RuleModule("trainer_fsdp_checkpointing", TRAINER)
trainer_hardware = RuleModule("trainer_hardware", TRAINER, SYSTEM)
trainer_optimizer = RuleModule("trainer_optimizer", TRAINER)
trainer_accumulation = RuleModule("trainer_accumulation", TRAINER)
trainer_schedule = RuleModule("trainer_schedule", TRAINER)
trainer_wrapper = RuleModule("trainer_wrapper", TRAINER)
trl_batch = RuleModule("trl_batch", TRL)
trl_devices = RuleModule("trl_devices", TRL, SYSTEM)
trl_generation = RuleModule("trl_generation", TRL)
trl_losses = RuleModule("trl_losses", TRL)
trl_memory = RuleModule("trl_memory", TRL, SYSTEM, WORKLOAD)
trl_removed = RuleModule("trl_removed", TRAINER)
trl_vllm = RuleModule("trl_vllm", TRL)
workload = RuleModule("workload", WORKLOAD)
auto = RuleModule("deepspeed.auto")
batch = RuleModule("deepspeed.batch")
offload = RuleModule("deepspeed.offload")
optimizer = RuleModule("deepspeed.optimizer")
readers = RuleModule("deepspeed.readers")
reference = RuleModule("deepspeed.reference")
zero = RuleModule("deepspeed.zero")
zero3_init = RuleModule("deepspeed.zero3_init")
zero3_save = RuleModule("deepspeed.zero3_save")
zero_flag = RuleModule("deepspeed.zero_flag")
deepspeed_precision = RuleModule("deepspeed.precision")
master_weights = RuleModule("deepspeed.master_weights")
deepspeed_features = RuleModule("hardware.deepspeed_features", SYSTEM)
deepspeed_fp16 = RuleModule("hardware.deepspeed_fp16", SYSTEM)
devices = RuleModule("hardware.devices", SYSTEM)
gpu_precision = RuleModule("hardware.gpu_precision", SYSTEM)
nvme = RuleModule("hardware.nvme", SYSTEM)
versions = RuleModule("hardware.versions", SYSTEM)
visible = RuleModule("hardware.visible")


CATALOG: dict[str, RuleRef] = {
    # AW0xx: schema (keys, types, values)
    "AW001": schema_rules.unknown_key,
    "AW002": schema_rules.misplaced_key,
    "AW003": schema_rules.wrong_type,
    "AW004": schema_rules.invalid_value,
    "AW005": schema_rules.numeric_string,
    "AW006": schema_rules.float_for_int,
    "AW007": schema_rules.unquoted_no_distributed_type,
    "AW008": schema_rules.yaml_boolean_for_string,
    "AW009": schema_rules.legacy_key,
    "AW010": schema_rules.removed_key,
    "AW011": schema_rules.missing_required_key,
    "AW012": duplicate_keys.duplicate_yaml_key,
    "AW013": duplicate_keys.duplicate_json_key,
    "AW014": dead_keys.dead_key_without_effect,
    "AW015": readers.consumer_refuses_json,
    "AW016": readers.json_readers_disagree,
    "AW017": dead_keys.ignored_unknown_key,
    # AW1xx: processes, machines, ranks, launcher keys, the plan file
    "AW101": topology.multi_device_single_process,
    "AW102": topology.processes_not_divisible_by_machines,
    "AW103": main_process.machine_rank_out_of_range,
    "AW104": main_process.multi_node_without_main_process,
    "AW105": main_process.placeholder_main_process_ip,
    "AW106": gpu_ids.too_few_gpu_ids_for_multi_gpu,
    "AW107": gpu_ids.fewer_gpu_ids_than_processes,
    "AW108": gpu_ids.more_gpu_ids_than_processes,
    "AW109": topology.multi_cpu_without_hostfile,
    "AW110": topology.launcher_ignored_key,
    "AW111": topology.num_processes_unset,
    "AW112": topology.single_process_type_with_many_processes,
    "AW113": topology.section_for_another_distributed_type,
    "AW114": plan_agreement.plan_disagrees_with_config,
    "AW115": plan_agreement.plan_names_missing_file,
    "AW116": multinode_hostfile.deepspeed_multinode_without_hostfile,
    "AW117": launch_copies.cpu_run_launched_as_copies,
    "AW118": launch_copies.cpu_run_on_gpu_only_backend,
    # AW150: template placeholders in launch values (addresses, ports, ranks, counts)
    "AW150": placeholders.placeholder_launch_value,
    # AW2xx: DeepSpeed (the JSON, the YAML's deepspeed_config, their agreement, "auto")
    "AW201": reference.deepspeed_file_with_accelerate_fields,
    "AW202": reference.deepspeed_file_not_found,
    "AW203": reference.deepspeed_file_relative_to_yaml,
    "AW204": reference.zero_optimization_missing,
    "AW205": reference.zero_optimization_missing_for_accelerate,
    "AW206": offload.param_offload_below_zero3,
    "AW207": offload.nvme_offload_without_path,
    "AW208": offload.nvme_optimizer_offload_below_zero3,
    "AW209": offload.partial_offload_below_zero3,
    "AW210": offload.partial_offload_to_nvme,
    "AW211": offload.optimizer_offload_at_stage0,
    "AW212": batch.batch_size_mismatch,
    "AW213": batch.batch_size_missing,
    "AW214": batch.gradient_accumulation_disagreement,
    "AW215": batch.hardcoded_gradient_accumulation,
    "AW216": zero3_init.zero3_init_flag_below_zero3,
    "AW217": zero3_init.zero3_without_init_flag,
    "AW218": zero.reduce_bucket_size_zero,
    "AW219": zero.gradient_allreduce_sum_with_zero3,
    "AW220": zero.compute_grad_norm_disabled_unsupported,
    "AW221": optimizer.optimizer_max_grad_norm,
    "AW222": optimizer.unknown_optimizer_type,
    "AW223": optimizer.unknown_scheduler_type,
    "AW224": zero.pipeline_with_zero_partitioned_gradients,
    "AW225": auto.auto_without_resolver,
    "AW226": auto.auto_dropped_by_deepspeed,
    "AW227": auto.auto_needs_trainer,
    "AW228": auto.implicit_gradient_clipping,
    "AW229": zero.stage3_key_given_twice,
    "AW230": zero.legacy_stage1,
    "AW231": zero.gradient_prescale_with_zero,
    "AW232": auto.hidden_size_auto_below_zero3,
    "AW233": optimizer.autotuning_arg_mapping_unknown_key,
    "AW234": zero3_save.zero3_save_without_16bit_gather,
    "AW235": zero_flag.zero_optimization_boolean,
    "AW236": zero_flag.zero_optimization_boolean_with_hf,
    "AW237": optimizer.offload_without_optimizer_block,
    # AW3xx: FSDP1/FSDP2 settings, N-D parallelism, Megatron-LM
    "AW301": fsdp.fsdp2_ignored_sharding_strategy,
    "AW302": fsdp.fsdp2_obsolete_option,
    "AW303": fsdp.fsdp2_local_state_dict,
    "AW304": fsdp.fsdp2_strategy_in_reshard_after_forward,
    "AW305": fsdp.fsdp1_reshard_after_forward_ignored,
    "AW306": fsdp_setup.ram_efficient_loading_without_sync,
    "AW307": fsdp_setup.size_based_wrap_disabled,
    "AW308": fsdp_setup.fsdp_no_wrap,
    "AW309": fsdp_setup.activation_checkpointing_offload_requirements,
    "AW310": parallelism.parallelism_size_mismatch,
    "AW311": parallelism.context_and_sequence_parallel,
    "AW312": parallelism.model_parallel_with_pure_replication,
    "AW313": parallelism.parallelism_unsupported_distributed_type,
    "AW314": parallelism.fsdp_without_shard_dimension,
    "AW315": parallelism.megatron_degrees_do_not_divide_processes,
    "AW316": fsdp_wrap.fsdp_wrap_class_not_in_model,
    "AW317": fsdp_lora.fsdp1_lora_frozen_base_gradients,
    # AW4xx: precision (DeepSpeed fp16/bf16, fp8) and compilation
    "AW401": deepspeed_precision.fp16_and_bf16_enabled,
    "AW402": deepspeed_precision.mixed_precision_disagrees_with_deepspeed,
    "AW403": deepspeed_precision.hardcoded_deepspeed_precision,
    "AW404": deepspeed_precision.communication_dtype_differs_from_training,
    "AW405": deepspeed_precision.bf16_with_zero_stage0,
    "AW406": master_weights.bf16_optimizer_states_without_master_weights,
    "AW407": master_weights.master_weights_without_zero,
    "AW408": deepspeed_precision.fp16_loss_scale_invalid,
    "AW409": deepspeed_precision.param_dtype_conflicts_with_precision,
    "AW420": precision_settings.fp8_without_backend,
    "AW421": precision_settings.fp8_wizard_key_ignored,
    "AW422": precision_settings.fp8_config_without_fp8,
    "AW423": precision_settings.fp8_override_precision_not_three_booleans,
    "AW424": precision_settings.fp8_backend_incompatible,
    "AW425": precision_settings.dynamo_options_without_backend,
    # AW5xx: memory, against an estimate (needs a workload: --model)
    "AW501": memory.estimate_exceeds_gpu_memory,
    "AW502": memory_host.offload_exceeds_host_memory,
    "AW503": sharding_advice.sharding_beyond_need,
    "AW504": sharding_advice.sharding_small_model,
    "AW505": memory.estimate_near_gpu_memory,
    "AW506": memory_host.host_memory_tight,
    "AW507": workload.sequence_exceeds_positions,
    # AW6xx: hardware, against a machine profile (needs --system)
    "AW601": devices.gpu_distribution_without_gpu,
    "AW602": devices.processes_exceed_gpus,
    "AW603": devices.absent_gpu_ids,
    "AW604": gpu_precision.emulated_bf16,
    "AW605": gpu_precision.fp8_without_fp8_gpu,
    "AW606": gpu_precision.fp8_backend_not_installed,
    "AW607": gpu_precision.fp16_without_tensor_cores,
    "AW608": gpu_precision.mixed_gpu_models,
    "AW609": nvme.missing_nvme_offload_path,
    "AW610": nvme.nvme_offload_off_nvme,
    "AW611": nvme.nvme_offload_low_space,
    "AW612": versions.deepspeed_not_installed,
    "AW613": versions.fsdp2_with_old_torch,
    "AW614": versions.nossh_launcher_with_old_deepspeed,
    "AW615": versions.moe_layer_names_with_old_deepspeed,
    "AW616": versions.num_machines_differs_from_system,
    "AW617": visible.gpu_ids_not_visible_here,  # the environment check runs in; no --system needed
    "AW618": deepspeed_fp16.deepspeed_fp16_before_volta,
    "AW619": deepspeed_features.deepspeed_key_newer_than_installed,
    "AW620": visible.processes_exceed_visible_gpus,  # the environment check runs in, joined with the launch's count
    # AW7xx: the HF Trainer's arguments against the YAML and JSON
    "AW701": trainer_arguments.trainer_argument_invalid,
    "AW702": trainer_arguments.trainer_deepspeed_mismatch,
    "AW703": trainer_arguments.trainer_bf16_without_native_support,
    "AW704": trainer_arguments.trainer_precision_differs_from_yaml,
    "AW705": trainer_arguments.trainer_deepspeed_differs_from_yaml,
    "AW706": trainer_optimizer.trainer_optimizer_argument_ignored,
    "AW707": trainer_optimizer.trainer_optimizer_with_offload,
    "AW708": trainer_optimizer.deepspeed_activation_checkpointing_unused,
    "AW709": trainer_schedule.trainer_best_model_schedule_mismatch,
    "AW710": trainer_wrapper.fsdp_and_trainer_activation_checkpointing,
    "AW711": trainer_wrapper.save_only_model_with_sharded_wrapper,
    "AW712": trainer_wrapper.auto_find_batch_size_with_zero3,
    "AW713": trainer_hardware.trainer_tf32_without_ampere,
    "AW714": trainer_fsdp_checkpointing.trainer_fsdp_with_trainer_checkpointing,
    "AW715": trainer_fsdp.trainer_fsdp_refused,
    "AW716": trainer_fsdp.trainer_fsdp_setting_overridden,
    "AW717": trainer_fsdp.trainer_fsdp_config_without_fsdp,
    "AW718": trainer_optimizer.trainer_clipping_not_applied,
    "AW719": trainer_accumulation.trainer_accumulation_not_applied,
    "AW720": trainer_accumulation.trainer_accumulation_batch_assertion,
    # AW8xx: TRL post-training (check --kind dpo|grpo with TRL's arguments)
    "AW801": trl_batch.grpo_generation_batch_not_divisible,
    "AW802": trl_batch.grpo_eval_batch_not_divisible,
    "AW803": trl_batch.grpo_auto_find_batch_size,
    "AW804": trl_batch.reference_sync_without_reference,
    "AW805": trl_losses.grpo_option_value_unknown,
    "AW806": trl_losses.grpo_importance_sampling_bounds,
    "AW807": trl_losses.dpo_loss_type_unknown,
    "AW808": trl_losses.dpo_loss_combination_refused,
    "AW809": trl_devices.trl_one_process_sees_several_gpus,
    "AW810": trl_vllm.vllm_tensor_parallel_not_dividing_processes,
    "AW811": trl_vllm.vllm_server_without_spare_gpu,
    "AW812": trl_vllm.vllm_colocate_share_exceeds_memory,
    "AW813": trl_memory.posttraining_estimate_exceeds_gpu_memory,
    "AW814": trl_generation.zero3_generation_without_gather,
    "AW815": trl_removed.trl_argument_removed,
}
