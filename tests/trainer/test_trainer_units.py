"""The trainer's pure pieces: options round trip, LR schedule, checkpoint bookkeeping, byte data, presets."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelwiz.launch.run_plan import TrainerFlags
from accelwiz.trainer.checkpoints import (
    TrainerState,
    checkpoint_dir,
    complete_checkpoints,
    latest_checkpoint,
    prune,
    write_state,
)
from accelwiz.trainer.data import DataError, byte_sequences, load_text
from accelwiz.trainer.options import TrainerOptions, parse_args
from accelwiz.trainer.loop import lr_at


def test_options_round_trip_through_argv():
    opts = TrainerOptions(steps=7, lr=0.01, resume=True, output_dir=Path("o"), model="small")
    assert opts.to_argv() == ["--steps", "7", "--lr", "0.01", "--output-dir", "o", "--resume", "--model", "small"]
    assert parse_args(opts.to_argv()) == opts
    assert TrainerOptions().to_argv() == []


def test_run_flags_become_trainer_argv():
    flags = TrainerFlags(steps=5, micro_batch=2, resume=True, data=Path("t.txt"))
    assert flags.given() == ["--steps", "--micro-batch", "--resume", "--data"]
    assert parse_args(flags.to_argv()) == TrainerOptions(steps=5, micro_batch=2, resume=True, data=Path("t.txt"))


def test_lr_warms_up_then_decays_to_a_tenth():
    opts = TrainerOptions(steps=100, lr=1.0, warmup_ratio=0.1)
    assert lr_at(0, opts) == pytest.approx(0.1)
    assert lr_at(9, opts) == pytest.approx(1.0)
    assert lr_at(10, opts) == pytest.approx(1.0)
    values = [lr_at(s, opts) for s in range(10, 100)]
    assert values == sorted(values, reverse=True)
    assert lr_at(100, opts) == pytest.approx(0.1)


def test_latest_checkpoint_ignores_interrupted_saves_and_prune_keeps_the_newest(tmp_path):
    for step in (3, 6, 9):
        checkpoint_dir(tmp_path, step).mkdir(parents=True)
        write_state(checkpoint_dir(tmp_path, step), TrainerState(step, 0, step, step * 10))
    checkpoint_dir(tmp_path, 12).mkdir()  # no trainer_state.json: an interrupted save
    path, state = latest_checkpoint(tmp_path)
    assert path.name == "step-000009" and state == TrainerState(9, 0, 9, 90)
    assert [p.name for p in prune(tmp_path, 2)] == ["step-000003"]
    assert [p.name for p in complete_checkpoints(tmp_path)] == ["step-000006", "step-000009"]
    assert latest_checkpoint(tmp_path / "nothing") is None


def test_checkpoints_are_ordered_by_step_past_six_digits(tmp_path):
    """`step-1000000` sorts before `step-999999` as text: resume would pick, and prune keep, the older one."""
    for step in (999_999, 1_000_000):
        checkpoint_dir(tmp_path, step).mkdir(parents=True)
        write_state(checkpoint_dir(tmp_path, step), TrainerState(step, 0, 0, 0))
    assert latest_checkpoint(tmp_path)[1].step == 1_000_000
    assert [p.name for p in prune(tmp_path, 1)] == ["step-999999"]


def test_byte_sequences_cut_text_into_windows(tmp_path):
    data = byte_sequences(b"abcdefghij", 4)
    assert data.tolist() == [[97, 98, 99, 100], [101, 102, 103, 104]]
    with pytest.raises(DataError, match="fewer than one sequence"):
        byte_sequences(b"abc", 4)
    assert len(load_text(None)) > 4000  # the bundled corpus ships with the package
    with pytest.raises(DataError, match="no such file"):
        load_text(tmp_path / "missing.txt")


def test_model_presets_and_config_json(tmp_path):
    from accelwiz.trainer.models import ModelChoiceError, build_config

    tiny = build_config("tiny")
    assert (tiny.vocab_size, tiny.hidden_size, tiny.num_hidden_layers) == (256, 64, 2)
    with pytest.raises(ModelChoiceError, match="neither a preset"):
        build_config("nope")
    (tmp_path / "config.json").write_text('{"model_type": "gpt2", "vocab_size": 100, "n_layer": 1}')
    with pytest.raises(ModelChoiceError, match="below the 256 byte tokens"):
        build_config(str(tmp_path))


def test_run_report_estimate_counts_the_same_parameters_as_the_model():
    from accelwiz.trainer.models import build_config, build_model
    from accelwiz.trainer.report import estimate_for_run

    config = build_config("tiny")
    counted = sum(p.numel() for p in build_model(config).parameters())
    estimate = estimate_for_run(
        {
            "model": "tiny",
            "model_config": config.to_dict(),
            "distributed_type": "DEEPSPEED",
            "zero_stage": 3,
            "world_size": 2,
            "micro_batch": 4,
            "seq_len": 64,
            "mixed_precision": "bf16",
            "offload_optimizer": "cpu",
            "offload_param": "cpu",
        }
    )
    assert estimate["available"], estimate
    assert estimate["parameters_estimated"] == counted
    assert estimate["strategy"].startswith("ZeRO-3") and estimate["per_rank_allocated_bytes"] > 0
    broken = estimate_for_run({"model": "x", "model_config": {"model_type": "nonesuch"}})
    assert broken["available"] is False and broken["reason"]


def test_workload_options_round_trip_and_a_false_flag_is_said_as_no():
    opts = TrainerOptions(gradient_checkpointing=False, method="lora", lora_targets="q_proj,v_proj",
                          gradient_accumulation=4, micro_batch=2, config=Path("a.yaml"))
    assert "--no-gradient-checkpointing" in opts.to_argv()
    assert parse_args(opts.to_argv()) == opts
    assert parse_args([]).micro_batch is None  # not given: the plan, the JSON or the default decides


def test_report_pieces_for_mfu_and_the_estimate_error():
    import torch

    from accelwiz.trainer.report import error_percent, gpu_peak_flops, model_flops_per_token, parameter_checksum

    assert model_flops_per_token(100, 100, 2, 8, 16) == 6 * 100 + 12 * 2 * 8 * 16  # full: 6N + attention
    assert model_flops_per_token(100, 10, 0, 0, 0) == 4 * 100 + 2 * 10  # LoRA: no weight gradients for frozen N
    assert gpu_peak_flops("NVIDIA H100 80GB HBM3") == (989.4e12, "H100-80GB")
    assert gpu_peak_flops("A GPU not in the table") == (None, None)
    assert error_percent(110, 100) == 10.0 and error_percent(90, 100) == -10.0 and error_percent(5, None) is None
    state = {"w": torch.full((2, 3), 0.5), "b": torch.ones(4, dtype=torch.float64), "steps": torch.tensor([7])}
    assert parameter_checksum(state) == 7.0  # integer buffers are not parameters


@pytest.mark.parametrize(("precision", "method", "expected"), [
    ("bf16", "lora", "bfloat16"), ("fp16", "lora", "float16"), ("no", "lora", None),
    ("bf16", "full", None), ("bf16", "qlora", None),
])
def test_lora_loads_its_frozen_base_in_the_compute_dtype_the_estimate_counts(precision, method, expected):
    """A real Accelerator (CPU): the LoRA base in 16 bits under mixed precision, as the estimate's 2 B/param."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    from accelwiz.trainer.finetune import lora_base_dtype

    try:
        dtype = lora_base_dtype(Accelerator(cpu=True, mixed_precision=precision), method)
    finally:
        AcceleratorState._reset_state(True)
    assert (None if dtype is None else str(dtype).removeprefix("torch.")) == expected
