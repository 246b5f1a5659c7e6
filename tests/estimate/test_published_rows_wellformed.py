"""Every published row is well formed (benchmarks/published/): a URL, a quote that contains the printed figure, and
an argv the real `accelwiz estimate` command parses (options and types, through click), or a reason it has none.

The sources added for issue 28 are held to more: a URL pinned to a commit, a measured figure that is the printed
one in the unit the source prints (divided over the GPUs where the source prints a sum), and model config.json
files (stand-ins for models transformers cannot build) that give the real model's parameter count.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import click
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.published import ROWS, SOURCES  # noqa: E402

# The new sources and the unit each prints its figures in (bytes per printed unit).
NEW_SOURCES = {"qwen-readme-profiling": 1e9, "ms-swift-benchmark-2024": 2**30, "chatglm3-finetune-demo": 2**20,
               "unsloth-readme-context": None, "universal-llm-trainer-gpu-test": 2**30,
               "torchtune-lora-qlora-tutorials": 1e9, "litgpt-resource-tables": 1e9,
               # verdict rows only (OOM or not, a largest batch that ran): nothing printed in bytes
               "hf-blog-4bit-qlora": None, "hf-blog-pytorch-fsdp": None, "hf-blog-accelerate-deepspeed": None,
               "raschka-lora-insights-2023": 1e9, "torchtune-llama3-tutorial": 1e9, "hf-blog-llama2-70b-fsdp": None,
               "trl-docs-sft-llama2-t4": None,
               "glm4-finetune-demo": 2**20, "minicpm-finetune": 2**20,
               # verdict rows only (a run stated to train on named hardware): nothing printed in bytes
               "stanford-alpaca-readme": None, "fastchat-training": None, "qlora-guanaco-readme": None,
               "alignment-handbook-zephyr": None,
               "rocm-blogs-llama-mi300x": 2**30, "rocm-blogs-llama2-mi250": 2**30,
               "databricks-ml-examples": None,
               # issue threads (users' own figures; the LLaMA-Factory and OpenRLHF rows are verdicts)
               "trl-issues-memory-reports": 2**30, "llamafactory-issues-memory-reports": None,
               "openrlhf-issues-memory-reports": None}
# framework benchmark pages: Liger prints MiB ("MB", callback.py), torchao torchtune's GiB ("GB")
NEW_SOURCES.update({"liger-kernel-hf-example": 2**20, "torchao-low-bit-optim-llama2": 2**30})
# cloud and GPU vendors' pages (issue 28, ninth round); verdict rows print no bytes
# (Vertex's notebook prints "~11G": GiB assumed, as the trl issue's "20.5G")
NEW_SOURCES.update({"openshift-ai-ray-deepspeed": None, "vertex-model-garden-peft-2023": 2**30})
# Lambda's guide logs torch.cuda.memory_stats x 1e-9 ("GB")
NEW_SOURCES.update({"lambda-training-guide-405b": 1e9})
# Hugging Face's pages: the copilot post's "GB" read as GiB; the launch posts and the cookbook are verdicts
NEW_SOURCES.update({"hf-blog-personal-copilot": 2**30, "hf-blog-launch-trl-qlora": None,
                    "hf-cookbook-code-llm-single-gpu": None, "alignment-handbook-recipes-2024": None})
# PR and issue threads (tenth round): llama-recipes' MemoryTrace prints int(bytes / 2**30) as "GB"
# fms-acceleration#14's CSV prints the Trainer's peak in bytes
NEW_SOURCES.update({"llama-recipes-threads": 2**30, "fms-acceleration-pr14-bench": 1})
# framework docs and recipes outside HF (tenth round): axolotl's and ms-swift's 'GB' read as GiB
NEW_SOURCES.update({"axolotl-examples": 2**30, "ms-swift-example-scripts": 2**30})
# PR and issue threads (eleventh round): axolotl#602's 'gb' of VRAM read as GiB
NEW_SOURCES.update({"axolotl-pr602-openllama-3b": 2**30})
# lit-gpt#275's 'Training Memory' is max_memory_allocated / 1e9 ('GB')
NEW_SOURCES.update({"litgpt-pr275-qlora": 1e9})
# torchtune's PR threads (twelfth round): its memory logs print bytes / 1e9 as 'GB'
NEW_SOURCES.update({"torchtune-memory-prs": 1e9})
# open-instruct's issue thread: verdict rows, nothing printed in bytes
NEW_SOURCES.update({"open-instruct-issues": None})
# independent blog posts (eleventh round): Schmid's FSDP post's '22 GB/GPU' read as GiB; his guides are verdicts
NEW_SOURCES.update({"philschmid-fsdp-qlora-llama3-2024": 2**30, "philschmid-llms-2025-guide": None,
                    "philschmid-llms-2024-guide": None, "philschmid-llama2-qlora-2023": None,
                    "philschmid-gemma-chatml-2024": None})
# model vendors' READMEs (twelfth round): Dolly's and Yi's are verdict rows
NEW_SOURCES.update({"dolly-readme-training": None, "yi-finetune-readme": None})
# fine-tuning frameworks' own docs (thirteenth round): ms-swift's pages' 'GB' per GPU read as GiB
NEW_SOURCES.update({"ms-swift-self-cognition-best-practice": 2**30, "ms-swift-qwen1.5-best-practice": 2**30,
                    "ms-swift-llm-finetune-doc": 2**30, "ms-swift-vllm-lora-doc": 2**30,
                    "ms-swift-agent-best-practice": 2**30})
# xtuner's docs (thirteenth round): verdict rows (a TGS printed, or OOM), nothing printed in bytes
NEW_SOURCES.update({"xtuner-speed-benchmark-2024": None, "xtuner-long-sequence-zero3-oom": None})
# H2O LLM Studio's performance page: verdict rows (a train time printed, or OOM)
NEW_SOURCES.update({"h2o-llmstudio-performance-2023": None})
# companies' engineering docs (thirteenth round): ArcticTraining logs pynvml used memory / 2**30 as "NV x GB";
# brev.dev's notebooks are verdicts
NEW_SOURCES.update({"snowflake-arctic-alst-2025": 2**30, "brevdev-notebooks-2023": None})
# library PR and issue threads (thirteenth round, helper B): peft#76's TorchTracemalloc prints MiB; the DeepSpeed
# threads print 10^9 (PR #7999's trainer) and GiB (DeepSpeed's ThroughputTimer), so each of those rows names its unit
NEW_SOURCES.update({"peft-issues-memory-reports": 2**20, "deepspeed-threads-memory": None})
# individual engineers' write-ups (fourteenth round, helper G): Raschka's training-speed page prints
# torch.cuda.memory_reserved() / 1024**3 as 'GB'
NEW_SOURCES.update({"raschka-llms-from-scratch": 2**30})
# George Sung's post's '~14GB' read as GiB; Xirider's guide: verdict rows
NEW_SOURCES.update({"georgesung-qlora-openllama-2023": 2**30, "xirider-finetune-gpt2xl-2021": None})
NEW_SOURCES.update({"mlabonne-axolotl-guide-2023": None})  # Labonne's axolotl guide: a verdict row
# the libraries' own example notebooks (fourteenth round, helper F): TRL's print round(max_memory_reserved() / 1024**3,
# 3) as "GB"; their authors' "~GB VRAM" notes are read in the same unit
NEW_SOURCES.update({"trl-notebook-sft-lora-qlora-2025": 2**30, "trl-notebook-grpo-lora-qlora-2025": 2**30})
# DeepSpeed's ZeRO tutorials: verdict rows (their nvidia-smi screenshots show the cards full)
NEW_SOURCES.update({"deepspeed-tutorials-zero-2020": None})
# Chinese model vendors' docs (fourteenth round): Yuan 2.0's tables print 'G' per GPU, 10^9 bytes (47G on a
# 46,068 MiB L40S rules out GiB)
NEW_SOURCES.update({"yuan2-llama-factory-doc-2024": 1e9, "yuan2-fastchat-doc-2024": 1e9})
# Qwen2.5's LLaMA-Factory example prints 'GB', read as GiB (as ms-swift's pages)
NEW_SOURCES.update({"qwen2-llama-factory-example-2024": 2**30})
# LitGPT's Thunder page prints max_memory_allocated() / 1e9 as "Memory (GB)" (fifteenth round, helper D)
NEW_SOURCES.update({"litgpt-thunder-benchmark-2024": 1e9})
# torchao's float8nocompile page prints torchtitan's max reserved GiB as "GB"; lit-gpt's tutorial prints
# max_memory_allocated() / 1e9; lit-llama's guides are verdicts
NEW_SOURCES.update({"torchao-float8nocompile-2025": 2**30, "litgpt-prepare-dataset-falcon-2023": 1e9,
                    "lit-llama-howto-2023": None})
# the Gemma cookbook's LitGPT run prints litgpt's max_memory_allocated() / 1e9 as "GB"
NEW_SOURCES.update({"gemma-cookbook-litgpt-2025": 1e9})
# fine-tuning repositories' own tables (fifteenth round, helper C): liucongg/ChatGLM-Finetuning prints 'G' per GPU,
# 10^9 bytes (45G on a 46,068 MiB A40 rules out GiB)
NEW_SOURCES.update({"liucongg-chatglm-finetuning-2023": 1e9, "liucongg-chatglm-finetuning-v0.1-2023": 1e9})
# issue threads (fifteenth round, helper G): litgpt's lora.py prints max_memory_allocated / 1e9 as 'GB'
NEW_SOURCES.update({"litgpt-issues-memory": 1e9, "deepspeedexamples-issues-memory": None})
# committed training logs (fifteenth round, helper J): DeepSpeed's ThroughputTimer prints max_memory_allocated() /
# 1024**3 as "MaxMemAllocated=..GB"
NEW_SOURCES.update({"deepspeedexamples-dschat-training-logs": 2**30})
# DeepSpeedExamples' bf16_master_weight train.py prints max_memory_allocated() / 1024**3 as "GB"
NEW_SOURCES.update({"deepspeedexamples-bf16-master-weight-2025": 2**30})
# llm-chi's scripts print torch.cuda.memory_reserved() / 1024**3 as "GB"
NEW_SOURCES.update({"llm-chi-litgpt-lightning-2025": 2**30})
# memory-saving methods' repositories, their standard baselines (fifteenth round, helper M): GaLore #6 prints
# nvidia-smi-like 'GB' read as GiB; MeZO's README is a verdict
NEW_SOURCES.update({"galore-issue6-8bit-adamw-baseline": 2**30, "mezo-readme-adam-ft-verdicts": None})
# issue threads (sixteenth round, helper E2): FastChat#407's 'about 30G on each card' read as GiB; Alpaca's
# threads are verdicts
NEW_SOURCES.update({"fastchat-issues-memory": 2**30, "stanford-alpaca-issues": None,
                    "transformers-issues-run-clm-gpt2": None})
# libraries' docs and READMEs (sixteenth round, helper E1): ChatGLM-Efficient-Tuning's 'GB', nvidia-smi read as GiB
NEW_SOURCES.update({"chatglm-efficient-tuning-readme-2023": 2**30, "open-r1-readme-recipes-2025": None})
# the Gemma cookbook's axolotl notebook prints axolotl's torch.cuda counters / 1024**3 as "GB"
NEW_SOURCES.update({"gemma-cookbook-axolotl-2024": 2**30})
# Asia-based projects' issue threads (seventeenth round, helper C2): ToolBench's '20G/卡' read as nvidia-smi GiB
NEW_SOURCES.update({"toolbench-issues-memory-2023": 2**30, "firefly-qlora-v100-2023": None,
                    "llamafactory-issue4772-glm4-2024": 2**30})
# English framework docs, blogs and notebooks (seventeenth round, helper C1): TRL's tool-calling notebook prints
# round(max_memory_reserved() / 1024**3, 3) as "GB"; DeepSpeed's Muon blog prints GiB
NEW_SOURCES.update({"trl-notebook-sft-tool-calling-2026": 2**30, "deepspeed-blog-muon-2026": 2**30})
NEW_SOURCES.update({"peft-example-lorafa-2025": None})  # PEFT's LoRA-FA README: verdict rows
# projects' own fine-tuning scripts' issue trackers (seventeenth round, helper C3): ChatGLM-6B#938's '62G /单张' and
# Qwen#366's '45G' read as nvidia-smi GiB; Baichuan2's and torchtune's rows are verdicts (torchtune prints GB, 1e9)
NEW_SOURCES.update({"chatglm6b-issues-memory-2023": 2**30, "qwen-issues-memory-2023": 2**30,
                    "baichuan2-issues-verdicts-2023": None, "torchtune-issues-2024": 1e9})
NEW_SOURCES.update({"yi-issues-memory-2023": 2**30})  # Yi#249's '接近80G' read as nvidia-smi GiB
NEW_SOURCES.update({"deepseek-coder-issues-memory-2024": 2**30})  # DeepSeek-Coder#103's '30G', GiB
NEW = [row for row in ROWS if row["source"] in NEW_SOURCES]
PINNED = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/")


def _estimate_command() -> click.Command:
    from typer.main import get_command

    from accelwiz.cli import app

    return get_command(app).commands["estimate"]


@pytest.mark.parametrize("row", ROWS, ids=[row["key"] for row in ROWS])
def test_each_row_quotes_its_source_and_says_how_it_runs(row):
    assert row["url"].startswith("https://"), row["url"]
    assert row["printed"] in row["quote"], f"{row['key']}: {row['printed']!r} not in {row['quote']!r}"
    assert row["source"] in SOURCES and row["metric"] in ("nvidia-smi", "reserved", "allocated")
    if row.get("argv"):
        argv = shlex.split(row["argv"])
        assert argv[0] == "estimate" and argv[-2:] == ["--format", "json"], row["argv"]
        _estimate_command().make_context("estimate", argv[1:])  # raises click.UsageError on an option it refuses
    else:
        assert row.get("not_expressible"), f"{row['key']}: no argv and no reason"
    assert row.get("measured_bytes") or row.get("ran") is not None or row.get("not_expressible"), row["key"]


def test_the_keys_are_unique():
    keys = [row["key"] for row in ROWS]
    assert len(keys) == len(set(keys)), sorted(key for key in keys if keys.count(key) > 1)


def _gpus(argv: str) -> int:
    """GPUs the argv plans for: `--system NxMxGPU` (nodes x GPUs) or `--system NxGPU`, else `--gpus N`, else 1."""
    system = re.search(r"--system (\d+)x(?:(\d+)x)?[A-Za-z]", argv)
    if system:
        return int(system.group(1)) * int(system.group(2) or 1)
    gpus = re.search(r"--gpus (\d+)", argv)
    return int(gpus.group(1)) if gpus else 1


@pytest.mark.parametrize("row", NEW, ids=[row["key"] for row in NEW])
def test_new_rows_are_pinned_and_measure_what_they_print(row):
    # An article outside any repository (a blog post) cannot be pinned: its row pins the code it ran instead.
    pinned = row["url"] if "code_url" not in row else row["code_url"]
    assert PINNED.match(pinned), f"{row['key']}: not pinned to a commit: {pinned}"
    assert row.get("assumptions"), row["key"]
    unit = row.get("printed_unit", NEW_SOURCES[row["source"]])  # a row may print in its own unit
    if not row.get("measured_bytes") or not row.get("argv"):
        return
    # a figure printed as parts (axolotl's "2.940GB (+8.185GB cache": allocated plus the reserve beside it) is summed
    parts = re.findall(r"\d+(?:\.\d+)?", row["printed"]) if row.get("printed_sum") else []
    value = sum(map(float, parts)) if parts else float(re.match(r"[\d.]+", row["printed"]).group())
    summed = row.get("printed_gpus", 1)  # a figure printed as the sum over the run's GPUs
    assert summed in (1, _gpus(row["argv"])), (row["key"], summed, row["argv"])
    per_gpu = value * unit / summed
    assert abs(row["measured_bytes"] - per_gpu) <= 1, (row["key"], row["measured_bytes"], per_gpu)


def test_model_paths_in_new_rows_exist_from_the_repository_root():
    paths = {re.search(r"--model (\S+)", row["argv"]).group(1) for row in NEW if row.get("argv")}
    local = {path for path in paths if path.endswith("config.json")}
    assert local, "the new rows name no stand-in config.json"
    assert all((REPO / path).is_file() for path in local), sorted(p for p in local if not (REPO / p).is_file())


def test_the_qwen_7b_stand_in_has_qwens_parameter_count():
    """ms-swift's benchmark prints qwen-7b-chat's trainable parameters in a full fine-tune: 7721.3245 M."""
    from accelwiz.modelspec.lookup import resolve_model

    spec = resolve_model(str(REPO / "benchmarks/published/models/qwen-7b/config.json"))
    assert round(spec.num_parameters / 1e6, 4) == 7721.3245
