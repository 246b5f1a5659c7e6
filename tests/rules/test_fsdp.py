"""AW3xx and AW420-AW449: each rule fires on a config with the mistake and stays quiet on a close one without
it; the broken corpus cases these rules are responsible for are caught."""

from __future__ import annotations

import pytest

from tests.rules.helpers import codes, diagnostics

OWN = ("AW3", "AW42", "AW43", "AW44")


def fsdp(version: int, *lines: str, processes: int = 2, extra: str = "") -> str:
    body = "".join(f"  {line}\n" for line in lines)
    return (
        f"distributed_type: FSDP\nnum_processes: {processes}\nfsdp_config:\n  fsdp_version: {version}\n"
        f"{body}{extra}"
    )


def parallel(**sizes: int) -> str:
    return "parallelism_config:\n" + "".join(
        f"  parallelism_config_{k}_size: {v}\n" for k, v in sizes.items()
    )


FP8 = "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp8\n"


@pytest.mark.parametrize(
    "code,bad,good",
    [
        (
            "AW301",
            fsdp(2, "fsdp_sharding_strategy: SHARD_GRAD_OP"),
            fsdp(1, "fsdp_sharding_strategy: SHARD_GRAD_OP"),
        ),
        ("AW301", fsdp(2, "sharding_strategy: 3"), fsdp(2, "fsdp_reshard_after_forward: false")),
        ("AW302", fsdp(2, "fsdp_forward_prefetch: true"), fsdp(1, "fsdp_forward_prefetch: true")),
        ("AW302", fsdp(2, "fsdp_sharding_strategy: FULL_SHARD"), fsdp(2, "fsdp_reshard_after_forward: true")),
        (
            "AW303",
            fsdp(2, "fsdp_state_dict_type: LOCAL_STATE_DICT"),
            fsdp(1, "fsdp_state_dict_type: LOCAL_STATE_DICT"),
        ),
        (
            "AW304",
            fsdp(2, "fsdp_reshard_after_forward: FULL_SHARD"),
            fsdp(2, "fsdp_reshard_after_forward: true"),
        ),
        (
            "AW305",
            fsdp(1, "fsdp_reshard_after_forward: SHARD_GRAD_OP"),
            fsdp(1, "fsdp_reshard_after_forward: FULL_SHARD"),
        ),
        (
            "AW305",
            fsdp(1, "fsdp_reshard_after_forward: SHARD_GRAD_OP", "fsdp_sharding_strategy: NO_SHARD"),
            fsdp(1, "fsdp_reshard_after_forward: SHARD_GRAD_OP", "fsdp_sharding_strategy: 2"),
        ),
        (
            "AW306",
            fsdp(1, "fsdp_sync_module_states: false"),
            fsdp(1, "fsdp_sync_module_states: false", "fsdp_cpu_ram_efficient_loading: false"),
        ),
        ("AW306", fsdp(2, "fsdp_sync_module_states: false"), fsdp(2, "fsdp_cpu_ram_efficient_loading: true")),
        (
            "AW307",
            fsdp(1, "fsdp_auto_wrap_policy: SIZE_BASED_WRAP", "fsdp_min_num_params: 0"),
            fsdp(1, "fsdp_auto_wrap_policy: SIZE_BASED_WRAP", "fsdp_min_num_params: 1000000"),
        ),
        (
            "AW308",
            fsdp(1, "fsdp_auto_wrap_policy: NO_WRAP"),
            fsdp(1, "fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP"),
        ),
        ("AW308", fsdp(2), fsdp(2, "fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP")),
        (
            "AW309",
            fsdp(2, "fsdp_activation_checkpointing_offload: true"),
            fsdp(2, "fsdp_activation_checkpointing_offload: true", "fsdp_activation_checkpointing: true"),
        ),
        (
            "AW309",
            fsdp(1, "fsdp_activation_checkpointing_offload: true", "fsdp_activation_checkpointing: true"),
            fsdp(2, "fsdp_activation_checkpointing_offload: false"),
        ),
        (
            "AW310",
            fsdp(2, processes=8, extra=parallel(dp_shard=2, tp=2)),
            fsdp(2, processes=8, extra=parallel(dp_shard=4, tp=2)),
        ),
        (
            "AW311",
            fsdp(2, processes=4, extra=parallel(cp=2, sp=2)),
            fsdp(2, processes=4, extra=parallel(cp=2, dp_shard=2)),
        ),
        (
            "AW312",
            fsdp(2, processes=4, extra=parallel(dp_replicate=2, tp=2)),
            fsdp(2, processes=4, extra=parallel(dp_shard=2, tp=2)),
        ),
        (
            "AW313",
            fsdp(1, processes=4, extra=parallel(dp_shard=2, tp=2)),
            fsdp(2, processes=4, extra=parallel(dp_shard=2, tp=2)),
        ),
        (
            "AW313",
            "distributed_type: MULTI_GPU\nnum_processes: 2\n" + parallel(cp=2),
            "distributed_type: MULTI_GPU\nnum_processes: 2\n" + parallel(tp=2),
        ),
        ("AW314", fsdp(2, extra=parallel(tp=2)), fsdp(2, extra=parallel(dp_shard=2))),
        (
            "AW315",
            "distributed_type: MEGATRON_LM\nnum_processes: 6\nmegatron_lm_config:\n  megatron_lm_tp_degree: 2\n"
            "  megatron_lm_pp_degree: 2\n",
            "distributed_type: MEGATRON_LM\nnum_processes: 8\nmegatron_lm_config:\n  megatron_lm_tp_degree: 2\n"
            "  megatron_lm_pp_degree: 2\n",
        ),
        ("AW420", FP8, FP8 + "fp8_config:\n  backend: TE\n"),
        (
            "AW421",
            FP8 + "fp8_config:\n  backend: TE\n  amax_history_length: 16\n",
            FP8 + "fp8_config:\n  backend: TE\n  amax_history_len: 16\n",
        ),
        (
            "AW421",
            FP8 + "fp8_config:\n  backend: MSAMP\n  optimization_level: O1\n",
            FP8 + "fp8_config:\n  backend: MSAMP\n  opt_level: O1\n",
        ),
        (
            "AW422",
            "distributed_type: 'NO'\nmixed_precision: bf16\nfp8_config:\n  backend: TE\n",
            "distributed_type: 'NO'\nmixed_precision: fp8\nfp8_config:\n  backend: TE\n",
        ),
        (
            "AW423",
            FP8 + "fp8_config:\n  backend: TE\n  override_linear_precision: (false, false, false)\n",
            FP8 + "fp8_config:\n  backend: TE\n  override_linear_precision: [false, false, false]\n",
        ),
        (
            "AW424",
            fsdp(1, extra="mixed_precision: fp8\nfp8_config:\n  backend: MSAMP\n"),
            fsdp(1, extra="mixed_precision: fp8\nfp8_config:\n  backend: TE\n"),
        ),
        (
            "AW424",
            fsdp(2, extra="mixed_precision: fp8\nfp8_config:\n  backend: AO\n"),
            fsdp(
                2,
                "fsdp_cpu_ram_efficient_loading: false",
                extra="mixed_precision: fp8\nfp8_config:\n  backend: AO\n",
            ),
        ),
        (
            "AW425",
            "distributed_type: 'NO'\ndynamo_config:\n  dynamo_mode: max-autotune\n",
            "distributed_type: 'NO'\ndynamo_config:\n  dynamo_backend: INDUCTOR\n  dynamo_mode: max-autotune\n",
        ),
        (
            "AW425",  # `no` is the launcher's NO: the options do nothing
            "distributed_type: 'NO'\ndynamo_config:\n  dynamo_backend: 'no'\n  dynamo_mode: max-autotune\n",
            "distributed_type: 'NO'\ndynamo_config:\n  dynamo_backend: inductor\n  dynamo_mode: max-autotune\n",
        ),
    ],
)
def test_rule_fires_on_the_mistake_only(write, code, bad, good):
    assert code in codes(write("bad.yaml", bad), select=OWN)
    assert code not in codes(write("good.yaml", good), select=OWN)


def test_fsdp1_strategy_rule_names_the_strategy_that_runs(write):
    [found] = diagnostics(
        write("a.yaml", fsdp(1, "fsdp_reshard_after_forward: SHARD_GRAD_OP")), select=("AW305",)
    )
    assert found.message == (
        "FSDP1 ignores fsdp_reshard_after_forward (SHARD_GRAD_OP): the run uses FULL_SHARD "
        "from the launcher default"
    )
    assert found.fix == "set `fsdp_sharding_strategy: SHARD_GRAD_OP` and remove fsdp_reshard_after_forward"


def test_sync_module_states_is_reported_once_under_fsdp2(write):
    wrapped = "fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP"  # an unwritten policy is AW308's
    found = codes(write("a.yaml", fsdp(2, "fsdp_sync_module_states: false", wrapped)), select=OWN)
    assert found == {"AW306"}


@pytest.mark.parametrize(
    "text",
    [
        fsdp(
            2,
            "fsdp_sharding_strategy: [SHARD_GRAD_OP]",
            "fsdp_state_dict_type: 7",
            "fsdp_min_num_params: 1e8",
            "fsdp_auto_wrap_policy: SIZE_BASED_WRAP",  # written: an unwritten policy is AW308's, not malformed
        ),
        "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: '2'\n  fsdp_reshard_after_forward: x\n",
        # a size int() cannot read ('2' is read as 2 by accelerate, so it is judged: tests/rules/test_effective_spellings)
        "distributed_type: FSDP\nnum_processes: eight\nparallelism_config:\n  parallelism_config_tp_size: 'two'\n",
        "distributed_type: FSDP\nfsdp_config: [1, 2]\nparallelism_config: 3\nfp8_config: yes\nmixed_precision: fp8\n",
    ],
)
def test_malformed_values_are_left_to_the_schema_rules(write, text):
    found = codes(write("a.yaml", text), select=("AW0", *OWN))
    assert found and all(code.startswith("AW0") or code == "AW420" for code in found), found


@pytest.mark.parametrize(
    "case,expected",
    [
        # TP-only parallelism_config under FSDP2: ValueError in 1.15, KeyError 'dp_shard_cp' before PR #3986.
        ("huggingface-accelerate__3798.yaml", {"AW314"}),
        # The legacy fsdp_backward_prefetch_policy is reported by AW002 (misplaced key, with the new name). The
        # real failure, a wrap class (GPT2Block) that is not in the model, needs the model and is not static.
        ("huggingface-accelerate__1943.yaml", set()),
    ],
)
def test_broken_cases(corpus, case, expected):
    assert codes(corpus / "broken" / case, select=OWN) == expected


def test_legacy_backward_prefetch_name_in_1943_is_reported_with_its_new_name(corpus):
    [found] = [
        d
        for d in diagnostics(corpus / "broken" / "huggingface-accelerate__1943.yaml", select=("AW0",))
        if d.code == "AW002"
    ]
    assert found.path == ("fsdp_config", "fsdp_backward_prefetch_policy")
    assert "fsdp_backward_prefetch" in (found.fix or "")
