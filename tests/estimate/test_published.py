"""Published model-state numbers, reproduced: the ZeRO paper (Fig. 1, Table 1), DeepSpeed's estimators."""

from __future__ import annotations

import pytest

from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.published import (
    deepspeed_zero2_model_states,
    deepspeed_zero3_model_states,
    zero_paper_model_states,
)
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.workload import Workload

GB, GIB = 1e9, 2**30


def test_zero_figure_1():
    """§5.1-5.3: Ψ = 7.5B, N_d = 64: 120 GB (DDP), 31.4 (P_os), 16.6 (P_os+g), 1.9 (P_os+g+p)."""
    figures = [round(zero_paper_model_states(7.5e9, 64, stage) / GB, 1) for stage in range(4)]
    assert figures == [120.0, 31.4, 16.6, 1.9]


# Table 1: per-device model-state GB by DP degree; columns: 7.5B, 128B, 1T × (P_os, P_os+g, P_os+g+p)
TABLE_1 = {
    1: (120, 120, 120, 2048, 2048, 2048, 16000, 16000, 16000),
    4: (52.5, 41.3, 30, 896, 704, 512, 7000, 5500, 4000),
    16: (35.6, 21.6, 7.5, 608, 368, 128, 4750, 2875, 1000),
    64: (31.4, 16.6, 1.88, 536, 284, 32, 4187, 2218, 250),
    256: (30.4, 15.4, 0.47, 518, 263, 8, 4046, 2054, 62.5),
    1024: (30.1, 15.1, 0.12, 513, 257, 2, 4011, 2013, 15.6),
}


@pytest.mark.parametrize("dp", sorted(TABLE_1))
def test_zero_table_1(dp):
    for column, expected in enumerate(TABLE_1[dp]):
        psi = (7.5e9, 128e9, 1e12)[column // 3]
        value = zero_paper_model_states(psi, dp, column % 3 + 1) / GB
        # the paper prints 3 significant digits, truncating at times (4187.5 -> 4187, 2218.75 -> 2218)
        assert value == pytest.approx(expected, rel=6e-3, abs=0.006), (dp, column, value)


@pytest.mark.parametrize(("kind", "stage"), [("ddp", 0), ("zero1", 1), ("zero2", 2), ("zero3", 3)])
def test_estimate_memory_model_states_follow_the_zero_paper(kind, stage):
    """The full estimator's DeepSpeed accounting is the paper's 2 + 2 + 12 bytes/param, sharded by stage."""
    workload = Workload(resolve_model("7.5e9"))
    estimate = estimate_memory(workload, Strategy(kind, gpus_per_node=8, nodes=8))
    expected = zero_paper_model_states(7.5e9, 64, stage)
    if kind == "ddp":  # torch-native DDP under autocast: fp32 weights + 16-bit copies + fp32 grads + Adam
        expected = 18 * 7.5e9
    assert estimate.model_states == pytest.approx(expected, abs=2)


def test_deepspeed_docs_table_a_t5_3b_on_8_gpus():
    """memory.rst: t5-3b, 1 node × 8 GPUs ("GB" = GiB)."""
    p, ll = int(2851e6), int(32e6)
    cpu, gpu = deepspeed_zero2_model_states(p, 8, 1, cpu_offload=True)
    assert (round(cpu / GIB, 2), round(gpu / GIB, 2)) == (127.45, 5.31)
    cpu, gpu = deepspeed_zero2_model_states(p, 8, 1, cpu_offload=False, legacy=True)
    assert (round(cpu / GIB, 2), round(gpu / GIB, 2)) == (127.45, 15.93)  # the docs' (pre-0.14.3) row
    assert (
        round(deepspeed_zero2_model_states(p, 8, 1, cpu_offload=False)[1] / GIB, 2) == 11.28
    )  # current code
    rows = [
        ((True, True, True), (71.69, 0.12)),
        ((True, True, False), (127.45, 0.12)),
        ((True, False, True), (63.72, 0.78)),
        ((True, False, False), (127.45, 0.78)),
        ((False, False, True), (1.43, 6.09)),
        ((False, False, False), (127.45, 6.09)),
    ]
    for (opt, param, init), expected in rows:
        cpu, gpu, _ = deepspeed_zero3_model_states(
            p, ll, 8, 1, cpu_offload=opt, cpu_offload_params=param, zero_init=init
        )
        assert (round(cpu / GIB, 2), round(gpu / GIB, 2)) == expected


def test_deepspeed_docs_t5_large_on_4_gpus():
    """memory.rst, t5-large, 4 GPUs: 3291 / 125 / 477 MB (>> 20)."""
    p, ll = int(737.67e6), int(32.90e6)
    gpus = [
        deepspeed_zero3_model_states(p, ll, 4, 1, cpu_offload=o, cpu_offload_params=q)[1] >> 20
        for o, q in ((False, False), (True, True), (True, False))
    ]
    assert gpus == [3291, 125, 477]


def test_transformers_docs_table_b_t0_3b_on_1_gpu():
    """transformers deepspeed.md: bigscience/T0_3B, 1 GPU; the live model has slightly more parameters."""
    p, ll = int(2783e6), int(65.8e6)
    rows = [
        ((True, True, True), (70.00, 0.25)),
        ((True, False, True), (62.23, 5.43)),
        ((False, False, True), (0.37, 46.91)),
        ((False, False, False), (15.56, 46.91)),
    ]
    for (opt, param, init), (cpu_expected, gpu_expected) in rows:
        cpu, gpu, _ = deepspeed_zero3_model_states(
            p, ll, 1, 1, cpu_offload=opt, cpu_offload_params=param, zero_init=init
        )
        assert cpu / GIB == pytest.approx(cpu_expected, abs=0.05)
        assert gpu / GIB == pytest.approx(gpu_expected, abs=0.05)


CASES = [
    (int(2851e6), int(32e6), 8, 1),
    (8_030_261_248, 525_336_576, 8, 2),
    (124_439_808, 38_597_376, 1, 1),
    (405_853_388_800, 2_101_346_304, 8, 16),
]


@pytest.mark.parametrize(("p", "ll", "gpn", "nodes"), CASES)
def test_same_as_installed_deepspeed(p, ll, gpn, nodes):
    stage_1_and_2 = pytest.importorskip("deepspeed.runtime.zero.stage_1_and_2")
    from deepspeed.runtime.zero import stage3

    for offload in (True, False):
        assert deepspeed_zero2_model_states(
            p, gpn, nodes, cpu_offload=offload
        ) == stage_1_and_2.estimate_zero2_model_states_mem_needs(p, gpn, nodes, cpu_offload=offload)
        for params in (True, False):
            for init in (True, False):
                ours = deepspeed_zero3_model_states(
                    p, ll, gpn, nodes, cpu_offload=offload, cpu_offload_params=params, zero_init=init
                )
                theirs = stage3.estimate_zero3_model_states_mem_needs(
                    p, ll, gpn, nodes, cpu_offload=offload, cpu_offload_params=params, zero_init=init
                )
                assert ours == tuple(int(x) for x in theirs)


# -- published measurements, through the command a user types (benchmarks/published/; estimator_vs_published.py) --


def _benchmark():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "estimator_vs_published.py"
    spec = importlib.util.spec_from_file_location("estimator_vs_published", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def published_benchmark():
    return _benchmark()


def test_rows_are_sourced_and_split_by_whole_source(published_benchmark):
    """Every row: an https URL, the printed figure inside its quote, a source with one set; the argv a user types
    (starting with `estimate`, asking for JSON) or the reason the command line cannot say it."""
    from benchmarks.published import ROWS, SOURCES

    assert len({r["key"] for r in ROWS}) == len(ROWS)
    for row in ROWS:
        assert row["url"].startswith("https://") and row["printed"] in row["quote"], row["key"]
        assert row["set"] == SOURCES[row["source"]][0] in ("design", "frozen"), row["key"]
        assert row["metric"] in ("nvidia-smi", "reserved", "allocated") and row["assumptions"], row["key"]
        if row.get("argv"):
            assert row["argv"].startswith("estimate ") and row["argv"].endswith("--format json"), row["key"]
        else:
            assert len(row["not_expressible"]) > 20, row["key"]
    design = [r for r in ROWS if r["set"] == "design"]
    frozen_sources = {r["source"] for r in ROWS if r["set"] == "frozen"}
    assert len(design) >= 30 and len(frozen_sources) >= 3
    assert {r["source"] for r in design}.isdisjoint(frozen_sources)


@pytest.fixture(scope="module")
def design_rows(published_benchmark):
    from benchmarks.published import ROWS

    return {r["key"]: published_benchmark.compare(r) for r in ROWS if r["set"] == "design"}


def test_design_rows_run_through_the_cli_and_no_verdict_contradicts_a_measured_run(design_rows):
    """Each design row runs as `accelwiz estimate ARGV --format json` (with `--config` of its YAML) and no verdict
    says "does not fit" for a setting the source measured to run."""
    for key, result in design_rows.items():
        if "not_expressible" in result:  # a moved source's rows the command line cannot say (they name why)
            assert result["not_expressible"], key
            continue
        assert result["estimate_gib"] > 0 and result["verdict"] in ("fits", "tight", "does not fit", None), key
    # llama-recipes#37 moved to design with its source (the plain-FSDP finding): a Llama-2-13B LoRA run out of
    # memory on 8 x A10G at batch 1 that the estimate says fits; a maintainer named torch 2.0.1's FSDP1 not
    # resharding frozen parameters in backward, not modelled (issue 28). TRL's GRPO notebook moved with its source
    # (the warmup block, Liger's GRPO loss): naive fp16 full fine-tuning of Qwen2-7B measured at 62 GB on an
    # A100-80GB; its table marks checkpointing off, as the argv says, but GRPOConfig 0.26 defaults
    # gradient_checkpointing=True (-0.5% with it): the row's reading, owed a check, not a retune. Both open.
    # Two runs became "does not fit" when verdicts moved to CUDA's total (docs/gpu-cuda-totals.md): allocated +
    # runtime estimated above the card's CUDA total, which NVML's hid: Yi-34B QLoRA 22.12 GiB vs the A10G's 21.98
    # (the source's nvidia-smi read 21 GiB in all), Qwen3-14B QLoRA 14.94 GiB vs the T4's 14.57 (the notebook
    # printed 14.741 GB total, 14.04 GB peak reserved): over-estimates near the card's size, open.
    assert sorted(k for k, r in design_rows.items() if r.get("verdict_contradiction")) == [
        "llamarecipes37-llama2-13b-lora-fsdp1-8xa10g-batch1-oom", "swift-script-yi-34b-chat-qlora-default-a10",
        "trl-nb-grpo-qwen2-7b-full-fp16-a100-80gb", "trl-nb-sft-qwen3-14b-bnb4bit-t4"]


HF_BERT_LARGE_KEYS = [
    "hf-bert-large-b4-fp32-adamw",
    "hf-bert-large-b1-fp32-adamw",
    "hf-bert-large-b4-mixed-adamw",
    "hf-bert-large-b4-fp32-adafactor",
    "hf-bert-large-b1-mixed-adafactor-gc",
    "hf-bert-large-b4-fp32-adamw8bit",
    "hf-bert-large-b1-mixed-adamw8bit-gc",
]


@pytest.mark.parametrize("key", HF_BERT_LARGE_KEYS)
def test_within_fifteen_percent_of_hf_bert_large_measurements(key, design_rows):
    """HF "Efficient training on a single GPU" (design set): bert-large-uncased, seq 512, V100 16 GB, through the
    argv; nvidia-smi MiB, compared with the CLI's total with the page's own measured CUDA 11 context in place of
    the CLI's. The two AdamW rows with checkpointing are not here: the 2022 Trainer's reentrant checkpointing and
    in-place zero_grad are what the argv cannot say (+23%, +32% through it)."""
    assert abs(design_rows[key]["error_percent"]) <= 15, design_rows[key]


def test_frozen_rows_run_through_the_cli_or_say_why_not(published_benchmark):
    """The frozen set is scored in docs/performance.md, never asserted on numerically: each row either runs
    through the command line with a verdict or names what the command line lacks."""
    from benchmarks.published import ROWS

    for row in (r for r in ROWS if r["set"] == "frozen"):
        result = published_benchmark.compare(row)
        assert "not_expressible" in result or result["verdict"] in ("fits", "tight", "does not fit"), row["key"]
