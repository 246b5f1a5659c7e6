"""What accelwiz reports for every Accelerate YAML in corpus/real/, from the schema rules (AW0xx), the topology
rules (AW1xx), the FSDP/parallelism rules (AW3xx) and the fp8/dynamo rules (AW420-AW449).

`why` says, in one line, why the verdict differs from the `expect=` label in index.tsv (or clarifies it). Each
disagreement was checked against accelerate 1.15's source (`commands/launch.py`, `utils/launch.py`,
`utils/dataclasses.py`), not taken from the label or from accelwiz.
"""

from __future__ import annotations

from typing import NamedTuple


class Verdict(NamedTuple):
    codes: frozenset[str]
    why: str = ""


def verdict(*codes: str, why: str = "") -> Verdict:
    return Verdict(frozenset(codes), why)


CLEAN = verdict()

VERDICTS: dict[str, Verdict] = {
    "huggingface__accelerate__examples__config_yaml_templates__deepspeed.yaml": CLEAN,
    "huggingface__accelerate__examples__config_yaml_templates__fp8.yaml": CLEAN,
    "huggingface__accelerate__examples__config_yaml_templates__fsdp.yaml": CLEAN,
    "huggingface__accelerate__examples__config_yaml_templates__multi_gpu.yaml": CLEAN,
    "huggingface__accelerate__examples__config_yaml_templates__multi_node.yaml": verdict(
        "AW105", why="agrees with 'valid-ish': main_process_ip '1234' is a placeholder, not an address"
    ),
    "huggingface__accelerate__examples__config_yaml_templates__multi_xpu.yaml": CLEAN,
    "huggingface__accelerate__examples__config_yaml_templates__single_accelerator.yaml": CLEAN,
    "huggingface__accelerate__examples__slurm__fsdp_config.yaml": verdict(
        "AW111",
        why="info only: without num_processes, `accelerate launch` needs --num_processes (the SLURM "
        "script passes it), so the file is valid as a template",
    ),
    "huggingface__accelerate__examples__torch_native_parallelism__configs__tp_hsdp.yaml": CLEAN,
    "huggingface__accelerate__examples__torch_native_parallelism__configs__cp.yaml": CLEAN,
    "huggingface__accelerate__examples__alst_ulysses_sequence_parallelism__sp-alst.accelerate-config.yml": CLEAN,
    "huggingface__accelerate__tests__test_configs__0_11_0.yaml": CLEAN,
    "huggingface__accelerate__tests__test_configs__0_12_0.yaml": CLEAN,
    "huggingface__accelerate__tests__test_configs__0_28_0_mpi.yaml": CLEAN,
    "huggingface__accelerate__tests__test_configs__0_30_0_sagemaker.yaml": verdict("AW007", "AW012"),
    "huggingface__accelerate__tests__test_configs__0_34_0_fp8.yaml": verdict(
        "AW423",
        why="label says valid, but the launcher exports value[0..2] of the string '(false, false, "
        "false)', i.e. '(', 'f', 'a', and the TE recipe's str_to_bool('(') raises ValueError; "
        "accelerate's test only loads the file",
    ),
    "huggingface__accelerate__tests__test_configs__invalid_keys.yaml": verdict("AW001"),
    "huggingface__accelerate__tests__test_configs__latest.yaml": CLEAN,
    "huggingface__accelerate__tests__test_configs__latest_fsdp.yaml": CLEAN,
    "huggingface__accelerate__tests__test_configs__validate_launch_cmd.yaml": verdict(
        "AW113",
        why="label says valid (a launcher test fixture); with distributed_type NO the fsdp_config and "
        "deepspeed_config sections are never used, which is what the fixture tests",
    ),
    "huggingface__accelerate__tests__tp__fsdp2_tp_preparation_config.yaml": CLEAN,
    "huggingface__trl__examples__accelerate_configs__alst_ulysses_4gpu.yaml": verdict(
        "AW002",
        why="agrees with the label: seq_parallel_communication_data_type is a DeepSpeed JSON key that "
        "accelerate never reads from deepspeed_config",
    ),
    "huggingface__trl__examples__accelerate_configs__context_parallel_2gpu.yaml": CLEAN,
    "huggingface__trl__examples__accelerate_configs__deepspeed_zero1.yaml": CLEAN,
    "huggingface__trl__examples__accelerate_configs__deepspeed_zero2.yaml": CLEAN,
    "huggingface__trl__examples__accelerate_configs__deepspeed_zero3.yaml": CLEAN,
    "huggingface__trl__examples__accelerate_configs__fsdp1.yaml": verdict(
        why="fsdp_reshard_after_forward: FULL_SHARD is in fact ignored (the launcher always exports "
        "FSDP_SHARDING_STRATEGY, which FSDP1 prefers), but it names the strategy that runs anyway"
    ),
    "huggingface__trl__examples__accelerate_configs__fsdp2.yaml": CLEAN,
    "huggingface__trl__examples__accelerate_configs__multi_gpu.yaml": CLEAN,
    "huggingface__trl__examples__accelerate_configs__single_gpu.yaml": CLEAN,
    "huggingface__trl__trl__accelerate_configs__single_gpu.yaml": verdict(
        "AW112",
        why="agrees it is wrong, not why: with a config file, NO always uses the simple launcher and "
        "starts ONE process; the 'More than one GPU... enabling multi-GPU' switch happens only "
        "when no config file is used",
    ),
    "huggingface__trl__tests__distributed__data__accelerate_configs__ddp.yaml": CLEAN,
    "huggingface__trl__tests__distributed__data__accelerate_configs__fsdp2.yaml": verdict(
        "AW308",
        why="a warning beside 'valid': it runs, but with no fsdp_auto_wrap_policy accelerate's plugin wraps nothing "
        "(FSDP_AUTO_WRAP_POLICY unset reads NO_WRAP), so FSDP2 shards the root alone: fine for TRL's tiny test "
        "models, the whole model gathered at once for a real one",
    ),
    "huggingface__trl__tests__distributed__data__accelerate_configs__zero2.yaml": CLEAN,
    "huggingface__trl__tests__distributed__data__accelerate_configs__zero3.yaml": CLEAN,
    "huggingface__alignment-handbook__recipes__accelerate_configs__ddp.yaml": CLEAN,
    "huggingface__alignment-handbook__recipes__accelerate_configs__fsdp.yaml": CLEAN,
    "huggingface__alignment-handbook__recipes__accelerate_configs__zero3.yaml": CLEAN,
    "huggingface__peft__examples__causal_language_modeling__accelerate_ds_zero3_cpu_offload_config.yaml": verdict(
        "AW009",
        why="label says valid; top-level dynamo_backend: 'NO' is the legacy form that accelerate "
        "converts into dynamo_config (a deprecation, not an error)",
    ),
    "huggingface__peft__examples__sft__configs__deepspeed_config.yaml": CLEAN,
    "huggingface__peft__examples__sft__configs__deepspeed_config_z3_qlora.yaml": CLEAN,
    "huggingface__peft__examples__sft__configs__fsdp_config.yaml": CLEAN,
    "huggingface__peft__examples__sft__configs__fsdp_config_qlora.yaml": CLEAN,
    "huggingface__peft__tests__training__fsdp2_config.yaml": CLEAN,
    "hiyouga__LLaMA-Factory__examples__accelerate__fsdp_config.yaml": CLEAN,
    "hiyouga__LLaMA-Factory__examples__accelerate__fsdp2_config.yaml": CLEAN,
    "hiyouga__LLaMA-Factory__examples__accelerate__fsdp_config_multiple_nodes.yaml": CLEAN,
    "hiyouga__LLaMA-Factory__examples__accelerate__fsdp_config_offload.yaml": CLEAN,
    "tatsu-lab__alpaca_farm__examples__accelerate_configs__rlhf_ppo_fsdp_llama_8gpu.yaml": verdict(
        "AW002",
        "AW009",
        why="label says valid (legacy); fsdp_backward_prefetch_policy is silently ignored "
        "today (backward prefetch stays off) and dynamo_backend is the legacy form",
    ),
    "tatsu-lab__alpaca_farm__examples__accelerate_configs__rlhf_ppo_fsdp_llama_4gpu.yaml": verdict(
        "AW002",
        "AW009",
        why="as the 8-GPU sibling: ignored fsdp_backward_prefetch_policy, legacy dynamo_backend",
    ),
    "huggingface__diffusers__examples__research_projects__flux_lora_quantization__accelerate.yaml": verdict(
        "AW007",
        "AW110",
        why="agrees: unquoted NO, and enable_cpu_affinity: true is never applied by "
        "accelerate launch (argparse default False shadows it)",
    ),
    "deepspeedai__DeepSpeedExamples__benchmarks__autosp__configs__autosp_config.yaml": CLEAN,
    "CarperAI__trlx__configs__accelerate__zero2-bf16.yaml": CLEAN,
    "CarperAI__trlx__configs__accelerate__zero2-fp16.yaml": CLEAN,
    "CarperAI__trlx__configs__accelerate__zero3.yaml": CLEAN,
    "CarperAI__trlx__configs__accelerate__ddp.yaml": CLEAN,
    "CarperAI__trlx__examples__summarize_rlhf__configs__default_accelerate_config.yaml": CLEAN,
    "allenai__open-instruct__configs__ds_configs__deepspeed_zero3.yaml": CLEAN,
    "huggingface__open-r1__recipes__accelerate_configs__fsdp.yaml": CLEAN,
    "huggingface__open-r1__recipes__accelerate_configs__zero2.yaml": CLEAN,
    "huggingface__accelerate__docs__source__usage_guides__megatron_lm.md__block_megatron_gpt_config.yaml": CLEAN,
    "huggingface__accelerate__docs__source__usage_guides__intel_cpu.md__block_single_cpu.yaml": CLEAN,
    "huggingface__accelerate__docs__source__usage_guides__intel_cpu.md__block_multi_cpu.yaml": CLEAN,
    "huggingface__accelerate__docs__source__usage_guides__sagemaker.md__block_sagemaker_ddp.yaml": CLEAN,
    "huggingface__accelerate__docs__source__usage_guides__fsdp.md__block_fsdp_bert.yaml": verdict(
        "AW002",
        why="agrees a finding is due; AW002 is an error because the renamed key silently leaves "
        "backward prefetch unset",
    ),
    "huggingface__accelerate__docs__source__usage_guides__deepspeed.md__block_zero2_plugin.yaml": verdict(
        why="the label's warning (zero3_init_flag at ZeRO-2) is a DeepSpeed rule (AW2xx), outside these ranges"
    ),
    "huggingface__accelerate__docs__source__usage_guides__deepspeed.md__block_zero3_cpu_offload_plugin.yaml": CLEAN,
    "huggingface__accelerate__docs__source__usage_guides__deepspeed.md__block_zero2_config_file.yaml": verdict(
        why="the label's error (deepspeed_config_file together with mixed_precision) is a DeepSpeed rule "
        "(AW2xx), outside these ranges"
    ),
    "axolotl-ai-cloud__axolotl__docs__multi-node.qmd__block_multinode_fsdp.yaml": CLEAN,
    "GoogleCloudPlatform__ml-testing-accelerators__tests__pytorch__nightly__common.libsonnet__block_accelerate_tpu"
    ".yaml": verdict("AW004", why="agrees: TPU was renamed XLA in accelerate 0.28 and is refused today"),
    "Bihan__tpu-examples__README.md__block_accelerate_xla.yaml": CLEAN,
    "mahiratmis__ProbLoRA__my_config_pix2pix.sh": verdict(
        "AW101",
        "AW108",
        why="agrees: MULTI_GPU with one process, and gpu_ids 1,3 leaves one GPU idle; "
        "downcast_bf16 'yes' is not reported because only the TPU launcher reads it",
    ),
}
