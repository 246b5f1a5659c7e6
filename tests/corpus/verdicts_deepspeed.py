"""What accelwiz reports for every DeepSpeed JSON in corpus/real (codes AW0xx, AW2xx, AW401-AW419), and why,
wherever that disagrees with the file's `expect=` label.

A label disagrees when the most severe finding is not what the label implies: `valid` allows info only,
`valid-with-warning`, `valid-with-caveat`, `valid-with-deprecation` and `deprecated` a warning, `INVALID` an
error. Each `why` was checked against the DeepSpeed 0.19.8 / accelerate 1.15 / transformers 5 sources.
"""

from __future__ import annotations

from typing import NamedTuple


class Verdict(NamedTuple):
    codes: frozenset[str]
    why: str | None = None


def _v(*codes: str, why: str | None = None) -> Verdict:
    return Verdict(frozenset(codes), why)


# AW234 (a warning) on labelled-valid ZeRO-3 files: they train, but a save through accelerate or the Trainer gets
# no weights, as DeepSpeed does not gather them (stage3_gather_16bit_weights_on_model_save absent, or "auto", which
# accelerate fills with zero3_save_16bit_model, false by default and refused in the YAML beside a JSON file).
_Z3_SAVE_WHY = ("trains; AW234 warns that accelerate's get_state_dict raises and the Trainer's save_model writes no "
                "weights, as the 16-bit gather on save is off (absent, or \"auto\" filled with false)")

VERDICTS: dict[str, Verdict] = {
    "huggingface__accelerate__examples__alst_ulysses_sequence_parallelism__sp-alst.ds-config.json":
        _v("AW215", "AW234", "AW403", why=_Z3_SAVE_WHY),
    "huggingface__accelerate__examples__deepspeed_config_templates__zero_stage1_config.json":
        _v("AW215", "AW403"),
    "huggingface__accelerate__examples__deepspeed_config_templates__zero_stage2_config.json":
        _v("AW215", "AW403"),
    "huggingface__accelerate__examples__deepspeed_config_templates__zero_stage2_offload_config.json":
        _v("AW215", "AW403"),
    "huggingface__accelerate__examples__deepspeed_config_templates__zero_stage3_config.json":
        _v("AW215", "AW234", "AW403", why=_Z3_SAVE_WHY),
    "huggingface__accelerate__examples__deepspeed_config_templates__zero_stage3_offload_config.json":
        _v("AW215", "AW234", "AW403", why=_Z3_SAVE_WHY),
    "huggingface__accelerate__tests__deepspeed__ds_config_zero2.json": _v("AW215"),
    "huggingface__accelerate__tests__deepspeed__ds_config_zero3.json": _v("AW215", "AW234", why=_Z3_SAVE_WHY),
    "huggingface__accelerate__tests__deepspeed__ds_config_zero2_model_only.json": _v("AW215"),
    "huggingface__accelerate__tests__deepspeed__ds_config_zero3_model_only.json": _v(),
    "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z0_config.json": _v(),
    "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z2_config.json": _v(),
    "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z2_offload_config.json": _v(),
    "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z2_autotp_config.json": _v(),
    "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z3_config.json": _v(),
    "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z3_offload_config.json": _v(),
    "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z3_fp8_config.json":
        _v("AW002", why=(
            "DeepSpeed reads neither `monitor_config` nor `comms_config` (its keys are the top-level "
            "`csv_monitor` and `comms_logger`), so the CSV monitor and the comms logging this file asks for "
            "never switch on (AW002)")),
    "axolotl-ai-cloud__axolotl__deepspeed_configs__zero1.json": _v(),
    "axolotl-ai-cloud__axolotl__deepspeed_configs__zero1_torch_compile.json":
        _v("AW010", why=(
            "DeepSpeed 0.19.8's `compile` block is DeepCompile's pydantic CompileConfig (extra=forbid): "
            "`disable` and `backend` make DeepSpeedConfig() fail with extra_forbidden (reproduced in "
            "tests/crosscheck)")),
    "axolotl-ai-cloud__axolotl__deepspeed_configs__zero2.json": _v(),
    "axolotl-ai-cloud__axolotl__deepspeed_configs__zero3.json": _v(),
    "axolotl-ai-cloud__axolotl__deepspeed_configs__zero3_bf16.json": _v("AW403"),
    "axolotl-ai-cloud__axolotl__deepspeed_configs__zero3_bf16_cpuoffload_all.json": _v("AW403"),
    "axolotl-ai-cloud__axolotl__deepspeed_configs__zero3_bf16_cpuoffload_params.json": _v("AW403"),
    "lm-sys__FastChat__playground__deepspeed_config_s2.json": _v(),
    "lm-sys__FastChat__playground__deepspeed_config_s3.json": _v(),
    "deepspeedai__DeepSpeedExamples__inference__sglang__ds_offload_nvme_aio.json":
        _v("AW226", why=(
            "`stage3_max_live_parameters` and `offload_param.buffer_size` are auto, which nothing resolves: "
            "DeepSpeed silently drops them and uses 1e9 and 1e8 (the label's own note), and accelerate would "
            "refuse them (AW226)")),
    "deepspeedai__DeepSpeedExamples__inference__sglang__ds_offload_nvme_gds.json":
        _v("AW226", why=(
            "`stage3_max_live_parameters` and `offload_param.buffer_size` are auto, which nothing resolves: "
            "DeepSpeed silently drops them and uses 1e9 and 1e8, and accelerate would refuse them (AW226)")),
    "deepspeedai__DeepSpeedExamples__inference__sglang__ds_offload_cpu.json":
        _v("AW226", why=(
            "`stage3_max_live_parameters` and `offload_param.buffer_size` are auto, which nothing resolves: "
            "DeepSpeed silently drops them and uses 1e9 and 1e8, and accelerate would refuse them (AW226)")),
    "deepspeedai__DeepSpeedExamples__training__autotuning__hf__dsconfigs__ds_config_tune.json":
        _v("AW205", "AW233"),
    "deepspeedai__DeepSpeedExamples__training__autotuning__hf__dsconfigs__ds_config_fp16_z3.json":
        _v("AW234", "AW403", why=_Z3_SAVE_WHY),
    "deepspeedai__DeepSpeedExamples__training__bf16_master_weight__configs__bf16_full.json": _v("AW403"),
    "deepspeedai__DeepSpeedExamples__training__pipeline_parallelism__ds_config.json": _v("AW205"),
    "deepspeedai__DeepSpeedExamples__training__tensor_parallel__hf_integration__configs__ds_config.json":
        _v(),
    "deepspeedai__DeepSpeedExamples__training__DeepSpeed-ZenFlow__finetuning__zf_config.json": _v("AW403"),
    "deepspeedai__DeepSpeedExamples__training__imagenet__config__ds_fp16_z1_config.json":
        _v("AW017", "AW403"),  # DeepSpeed ignores the unknown top-level `cuda_visible_devices`: a warning
    "deepspeedai__DeepSpeedExamples__training__gan__gan_deepspeed_config.json": _v("AW205"),
    "deepspeedai__DeepSpeedExamples__benchmarks__autosp__configs__autosp_config.json":
        _v("AW215", "AW403", "AW405"),
    # AW237: a lone JSON that offloads the optimizer with no optimizer block; deepspeed.initialize with a client
    # optimizer raises ZeRORuntimeException unless zero_force_ds_cpu_optimizer is false (a warning: accelerate and
    # the Trainer swap in DeepSpeedCPUAdam, and this file may be read through them)
    "deepspeedai__DeepSpeed__tests__model__Megatron_GPT2__ds_config_func_bs8_zero2_offload.json":
        _v("AW009", "AW237", "AW403"),
    "deepspeedai__DeepSpeed__tests__model__Megatron_GPT2__ds_config_func_bs8_zero0_gas3.json": _v("AW403"),
    "deepspeedai__DeepSpeed__tests__model__Megatron_GPT2__ds_config_perf_bs16.json":
        _v("AW403", why=(
            "`disable_allgather` is not legacy: DeepSpeed 0.19.8 still reads it (`get_disable_allgather` in "
            "runtime/config.py), so there is nothing to warn about")),
    "deepspeedai__DeepSpeed__tests__model__BingBertSquad__deepspeed_bsz24_fp16_zero2_config.json":
        _v("AW403"),
    "deepspeedai__DeepSpeed__tests__unit__ds_batch_config.json": _v("AW205", "AW403"),
    "deepspeedai__DeepSpeed__tests__torch_compile__ds_config_z3.json": _v("AW403"),
    "deepspeedai__DeepSpeed__tests__accelerator__ds_config.json": _v("AW205"),
    "deepspeedai__DeepSpeed__deepspeed__autotuning__config_templates__template_zero3.json":
        _v("AW213", why=(
            "an autotuner template fragment without batch keys: on its own DeepSpeed refuses it with 'Either "
            "train_batch_size or train_micro_batch_size_per_gpu needs to be provided' (the label says "
            "partial)")),
    "deepspeedai__DeepSpeed__examples__sdma_allgather__ds_config_zero3.json": _v("AW403"),
    "haotian-liu__LLaVA__scripts__zero2.json": _v(),
    "haotian-liu__LLaVA__scripts__zero3.json": _v(),
    "haotian-liu__LLaVA__scripts__zero3_offload.json":
        _v(why=(
            "the stored file has `bf16.enabled: auto`, not a hard-coded true as the label says, so `--fp16` "
            "cannot enable both precisions; nothing to report")),
    "CarperAI__trlx__examples__summarize_rlhf__configs__ds_config_trlx_gptj_summarize.json":
        _v("AW003", "AW010", "AW206", "AW237", "AW403"),
    "CarperAI__trlx__examples__summarize_rlhf__sft__ds_config_gptj.json": _v("AW010", "AW206", "AW403"),
    "CarperAI__trlx__examples__summarize_rlhf__reward_model__ds_config_gpt_j.json":
        _v("AW010", "AW206", "AW403"),
    "allenai__open-instruct__configs__ds_configs__stage3_offloading_accelerate.conf": _v(),
    "allenai__open-instruct__configs__ds_configs__stage3_no_offloading.conf": _v(),
    "allenai__open-instruct__configs__ds_configs__stage2_no_offloading_accelerate.conf": _v(),
    "huggingface__accelerate__docs__source__usage_guides__deepspeed.md__block_scenario3_all_auto_ds_config.json":
        _v(),
    "huggingface__accelerate__docs__source__usage_guides__deepspeed.md__block_zeropp.json":
        _v("AW213", why=(
            "a docs fragment without batch keys: on its own DeepSpeed refuses it with 'Either "
            "train_batch_size or train_micro_batch_size_per_gpu needs to be provided' (the label says "
            "partial)")),
    "huggingface__transformers__tests__deepspeed__ds_config_zero2.json": _v(),
    "huggingface__transformers__tests__deepspeed__ds_config_zero3.json": _v("AW009"),
    "huggingface__transformers__tests__deepspeed__ds_config_zero2_bf16.json":
        _v("AW009", "AW225", why=(
            "`bfloat16.enabled: auto` is no longer filled: accelerate 1.15 and transformers 5 fill only "
            "`bf16.enabled`, and accelerate's deepspeed_config_process raises '`bfloat16.enabled` not found "
            "in kwargs' (AW225); the file worked with the transformers of its commit")),
    "huggingface__transformers__tests__deepspeed__ds_config_zero3_bf16.json":
        _v("AW009", "AW225", why=(
            "`bfloat16.enabled: auto` is no longer filled: accelerate 1.15 and transformers 5 fill only "
            "`bf16.enabled`, and accelerate's deepspeed_config_process raises '`bfloat16.enabled` not found "
            "in kwargs' (AW225); the file worked with the transformers of its commit")),
}
