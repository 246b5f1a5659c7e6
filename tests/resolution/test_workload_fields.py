"""Issue 28: batches of varying length, the loss dtype and PEFT's k-bit preparation are fields of the one
resolution (accelwiz/resolution/workload.py), each with its source: the defaults are the built-in trainer's, the
trainer layer says what a Trainer or TRL run does, and `estimate`/`check` flags replace them."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from accelwiz.cli import app
from accelwiz.config.training_args import parse_argv
from accelwiz.config.trl_arguments import with_trl_defaults
from accelwiz.resolution.run import Run
from accelwiz.resolution.workload import DEFAULT, FLAG, TRAINER, Sourced, resolve_workload

NEW = ("varying_lengths", "loss_dtype", "kbit_prepared")


def _sft(*argv: str) -> object:
    return with_trl_defaults(parse_argv(list(argv)), sft=True)


def test_the_defaults_are_the_built_in_trainers_with_why() -> None:
    workload = resolve_workload(flags={"method": "qlora"})
    assert [(workload.value(n), getattr(workload, n).source) for n in NEW] == [(False, DEFAULT), ("fp32", DEFAULT),
                                                                              (True, DEFAULT)]
    assert "packs" in workload.varying_lengths.note and "ForCausalLMLoss" in workload.loss_dtype.note
    assert "prepare_model_for_kbit_training" in workload.kbit_prepared.note


def test_trl_sft_without_packing_varies_and_a_plain_trainer_is_not_read() -> None:
    sft = resolve_workload(trainer_args=_sft("--bf16"), flags={"method": "qlora"})
    assert (sft.value("varying_lengths"), sft.varying_lengths.source) == (True, TRAINER)
    assert "packing" in sft.varying_lengths.note
    assert (sft.value("kbit_prepared"), sft.kbit_prepared.source) == (False, TRAINER)
    packed = resolve_workload(trainer_args=_sft("--packing"))
    plain = resolve_workload(trainer_args=parse_argv(["--bf16"]))
    assert packed.varying_lengths.source == plain.varying_lengths.source == DEFAULT
    assert plain.value("varying_lengths") is False and plain.value("kbit_prepared") is False


def test_flags_replace_the_trainer_layer() -> None:
    flags = {"varying_lengths": False, "loss_dtype": "bf16", "kbit_prepared": True, "method": "qlora"}
    workload = resolve_workload(trainer_args=_sft(), flags=flags)
    assert [(workload.value(n), getattr(workload, n).source) for n in NEW] == [(False, FLAG), ("bf16", FLAG),
                                                                              (True, FLAG)]


def test_the_run_summary_and_report_show_them_with_their_source() -> None:
    qlora = Run(model=Sourced("tiny", FLAG), workload=resolve_workload(flags={"method": "qlora"}))
    line = qlora.summary()
    assert "varying lengths false (default)" in line and "loss dtype fp32 (default)" in line
    assert "kbit prepared true (default)" in line
    assert qlora.for_report()["loss_dtype"]["source"] == DEFAULT
    full = Run(model=Sourced("tiny", FLAG), workload=resolve_workload())
    assert "kbit prepared" not in full.summary()  # k-bit preparation is QLoRA's only


def _estimate(*extra: str) -> object:
    return CliRunner().invoke(app, ["estimate", "--model", "qwen2.5-7b", "--system", "1xA100-80GB", "--strategy",
                                    "single", "--qlora", "--format", "json", *extra])


def test_estimate_flags_reach_the_estimate_through_the_resolution() -> None:
    fixed, varying = _estimate(), _estimate("--varying-lengths")
    assert fixed.exit_code == varying.exit_code == 0, fixed.output + varying.output
    reserved = [json.loads(r.stdout)["estimate"]["peak"]["reserved"] for r in (fixed, varying)]
    assert reserved[1] > reserved[0]  # the cache's growth over batches of varying length (varying_lengths.py)
    kept, prepared = _estimate("--no-kbit-prepare"), _estimate("--kbit-prepare")
    assert json.loads(kept.stdout)["estimate"]["per_gpu_bytes"]["weights"] < \
        json.loads(prepared.stdout)["estimate"]["per_gpu_bytes"]["weights"]
    refused = _estimate("--lora", "--kbit-prepare")
    assert refused.exit_code == 2 and "Traceback" not in refused.output


def test_check_takes_them_for_its_memory_rules(tmp_path) -> None:
    config = tmp_path / "accelerate.yaml"
    config.write_text("distributed_type: 'NO'\nmixed_precision: bf16\nnum_processes: 1\n")

    def said(*extra: str) -> str:
        result = CliRunner().invoke(app, ["check", str(config), "--model", "qwen2.5-7b", "--system", "1xRTX4090",
                                          "--qlora", "--seq-len", "4096", "--trl", *extra])
        return result.output

    # the memory rules read the resolution `--explain` shows; varying lengths no longer move the need (the cache's
    # growth is a bound beside it, varying_lengths.py), so the flag is seen there, and the loss dtype moves the need
    varying, fixed = said("--explain"), said("--fixed-lengths", "--explain")
    assert "varying_lengths           true" in varying and "varying_lengths           false" in fixed
    wide, narrow = said("--loss-kernel", "standard"), said("--loss-kernel", "standard", "--loss-dtype", "bf16")
    assert "AW501" in wide and wide != narrow
    refused = CliRunner().invoke(app, ["check", str(config), "--model", "qwen2.5-7b", "--loss-dtype", "fp8"])
    assert refused.exit_code == 2 and "invalid loss_dtype `fp8`" in refused.output


def test_explain_and_runs_summary_list_them_with_their_source(tmp_path, monkeypatch, cli) -> None:
    """`check --explain` shows the values no file writes from the same resolution as the memory rules; `run`'s
    table shows the built-in trainer's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("distributed_type: 'NO'\nmixed_precision: bf16\nnum_processes: 1\n")
    checked = cli("check", "a.yaml", "--explain", "--model", "qwen2.5-7b", "--qlora", "--trl", "--", "--bf16")
    rows = {line.split()[0]: line.split()[1:] for line in checked.stdout.splitlines() if line.startswith("  ")}
    assert rows["varying_lengths"][:3] == ["true", "trainer", "arguments"]
    assert rows["kbit_prepared"][:3] == ["false", "trainer", "arguments"]
    assert rows["loss_dtype"][:2] == ["fp32", "default"]
    assert cli("init", "--model", "tiny", "--defaults", "-o", "b.yaml").exit_code == 0
    ran = cli("run", "--config", "b.yaml", "--explain", "--dry-run")
    assert ran.exit_code == 0, ran.stderr
    assert re.search(r"^  varying_lengths\s+false\s+default\s+the built-in trainer packs", ran.stderr, re.M)


def test_check_judges_the_loss_dtype_against_the_files_engine(tmp_path, cli) -> None:
    """The same refusal as `estimate`'s, where check's files name the engine: a 16-bit loss under DDP's autocast
    skips the memory rules with torch's reason; under DeepSpeed (no autocast) it is estimated."""
    ddp, zero2 = tmp_path / "ddp.yaml", tmp_path / "zero2.yaml"
    ddp.write_text("distributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_processes: 2\n")
    zero2.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\nmixed_precision: bf16\n"
                     "num_processes: 2\n")
    said = {path.stem: cli("check", str(path), "--model", "qwen2.5-7b", "--system", "2xA100-80GB", "--qlora",
                           "--loss-dtype", "fp16").stderr for path in (ddp, zero2)}
    assert "memory rules skipped: --loss-dtype fp16 with --precision mixed under ddp: under autocast" in said["ddp"]
    assert "memory rules skipped" not in said["zero2"]
