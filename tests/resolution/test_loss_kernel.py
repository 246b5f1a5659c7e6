"""The loss kernel (`loss_kernel`: standard, Liger's fused linear cross-entropy or TRL's fused LM head) is a field
of the one resolution: the HF Trainer's `use_liger_kernel` gives Liger's fused loss, TRL 1.16's trainers turn it off
(SFTTrainer, DPOTrainer and GRPOTrainer set fused_linear_cross_entropy False for their own fused LM head), and
`--loss-kernel` replaces both, except where TRL's DPO/GRPO trainer cannot run what it asks (refused)."""

from __future__ import annotations

import pytest

from accelwiz.config.training_args import parse_argv, parse_file
from accelwiz.config.trl_arguments import with_trl_defaults
from accelwiz.resolution.workload import DEFAULT, FLAG, TRAINER, resolve_workload


def test_the_default_is_the_standard_loss() -> None:
    kernel = resolve_workload().loss_kernel
    assert (kernel.value, kernel.source) == ("standard", DEFAULT) and "full logits" in kernel.note


def test_a_trainer_command_line_with_use_liger_kernel_runs_ligers_fused_loss() -> None:
    kernel = resolve_workload(trainer_args=parse_argv(["--bf16", "--use_liger_kernel"])).loss_kernel
    assert (kernel.value, kernel.source) == ("liger", TRAINER) and "--use_liger_kernel" in kernel.note
    off = resolve_workload(trainer_args=parse_argv(["--use_liger_kernel", "false"])).loss_kernel
    assert (off.value, off.source) == ("standard", TRAINER)
    assert resolve_workload(trainer_args=parse_argv(["--bf16"])).loss_kernel.source == DEFAULT


def test_liger_kernel_config_can_turn_the_fused_loss_off(tmp_path) -> None:
    args = tmp_path / "args.yaml"
    args.write_text("bf16: true\nuse_liger_kernel: true\nliger_kernel_config:\n  fused_linear_cross_entropy: false\n"
                    "  rms_norm: true\n")
    kernel = resolve_workload(trainer_args=parse_file(args)).loss_kernel
    assert (kernel.value, kernel.source) == ("standard", TRAINER) and "fused_linear_cross_entropy false" in kernel.note


def test_a_trl_sft_yaml_runs_trls_fused_lm_head_with_or_without_liger(tmp_path) -> None:
    """TRL 1.16's SFTTrainer patches the model with add_fused_lm_head and turns Liger's fused loss off: its loss
    comes from chunked log-probabilities whatever use_liger_kernel says."""
    recipe = tmp_path / "config_demo.yaml"  # open-r1's SFT recipes write it so
    recipe.write_text("bf16: true\nuse_liger_kernel: true\nper_device_train_batch_size: 4\nmax_length: 8192\n")
    for text in (recipe.read_text(), "bf16: true\nper_device_train_batch_size: 4\n"):
        recipe.write_text(text)
        kernel = resolve_workload(trainer_args=with_trl_defaults(parse_file(recipe), sft=True)).loss_kernel
        assert (kernel.value, kernel.source) == ("trl-fused-head", TRAINER) and "add_fused_lm_head" in kernel.note


def test_the_flag_replaces_the_trainer_layer() -> None:
    kernel = resolve_workload(trainer_args=parse_argv(["--use_liger_kernel"]), flags={"loss_kernel": "standard"})
    assert (kernel.loss_kernel.value, kernel.loss_kernel.source) == ("standard", FLAG)


def test_check_explains_it_and_estimates_with_it(tmp_path, cli) -> None:
    """`check --explain` shows the kernel the Trainer's command line gives; the memory rules estimate with it (a
    128K-vocabulary model at 8K tokens: the fused loss is under the full loss tail)."""
    config = tmp_path / "a.yaml"
    config.write_text("distributed_type: 'NO'\nmixed_precision: bf16\nnum_processes: 1\n")
    checked = cli("check", str(config), "--explain", "--model", "llama-3.1-8b", "--lora", "--", "--bf16",
                  "--use_liger_kernel", "--per_device_train_batch_size", "1")
    rows = {line.split()[0]: line.split()[1:] for line in checked.stdout.splitlines() if line.startswith("  ")}
    assert rows["loss_kernel"][:3] == ["liger", "trainer", "arguments"]
    refused = cli("check", str(config), "--model", "qwen2.5-7b", "--loss-kernel", "fused")
    assert refused.exit_code == 2 and "invalid loss_kernel `fused`" in refused.stderr
    zero3 = tmp_path / "zero3.yaml"
    zero3.write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\nmixed_precision: bf16\n"
                     "num_processes: 2\n")
    said = cli("check", str(zero3), "--model", "qwen2.5-7b", "--system", "2xA100-80GB", "--loss-kernel", "liger")
    # under ZeRO-3 an untied head is gathered inside the engine's forward (fused_loss.py): the memory rules run
    assert "memory rules skipped" not in said.stderr and said.exit_code in (0, 1), said.stderr


@pytest.mark.parametrize(("kind", "trainer"), [("dpo", "DPOTrainer"), ("grpo", "GRPOTrainer")])
def test_a_dpo_or_grpo_run_resolves_to_trls_fused_head(kind, trainer, tmp_path, cli) -> None:
    """TRL 1.16's DPOTrainer and GRPOTrainer patch the policy with add_fused_lm_head as SFTTrainer does: the
    trainer layer says so for `check --kind` (TRL's arguments carry the kind), and the run's resolution for `run`,
    `estimate --config` and the run summary, with or without use_liger_kernel (Liger's layer kernels only)."""
    from accelwiz.config.trl_arguments import with_trl
    from accelwiz.resolution.run import resolve_run

    config = tmp_path / "a.yaml"
    config.write_text("distributed_type: 'NO'\nmixed_precision: bf16\nnum_processes: 1\n")
    checked = cli("check", str(config), "--explain", "--model", "llama-3.2-1b", "--kind", kind)
    row = next(line for line in checked.stdout.splitlines() if line.split()[:1] == ["loss_kernel"])
    assert row.split()[1:4] == ["trl-fused-head", "trainer", "arguments"] and f"TRL 1.16's {trainer}" in row
    run = resolve_run(None, model="llama-3.2-1b", flags={"kind": kind})
    assert (run.loss_kernel.value, run.loss_kernel.source) == ("trl-fused-head", TRAINER)
    assert "loss kernel trl-fused-head (trainer arguments)" in run.summary()
    liger = with_trl(parse_argv(["--use_liger_kernel"]), kind, None, [])
    assert resolve_workload(trainer_args=liger).loss_kernel.value == "trl-fused-head"
    assert resolve_run(None, model="llama-3.2-1b", flags={"kind": "sft"}).loss_kernel.value == "standard"


@pytest.mark.parametrize("command", ["estimate", "check"])
@pytest.mark.parametrize(("kernel", "why"), [("standard", "the log-probabilities always come from add_fused_lm_head"),
                                             ("liger", "Liger's fused loss is off")])
def test_a_loss_kernel_trl_does_not_run_is_refused_for_dpo_and_grpo(command, kernel, why, tmp_path, cli) -> None:
    config = tmp_path / "a.yaml"
    config.write_text("distributed_type: 'NO'\nmixed_precision: bf16\nnum_processes: 1\n")
    where = [str(config)] if command == "check" else ["--gpu-memory", "80GiB"]
    for kind, trainer in (("dpo", "DPOTrainer"), ("grpo", "GRPOTrainer")):
        result = cli(command, *where, "--model", "llama-3.2-1b", "--kind", kind, "--loss-kernel", kernel)
        assert result.exit_code == 2, result.output
        said = [line for line in result.stderr.splitlines() if not line.startswith("note:")]  # check's notes first
        assert said[0].startswith(f"error: --loss-kernel {kernel} with --kind {kind}: in TRL 1.16's {trainer} ")
        assert why in said[0], said
        assert "drop --loss-kernel" in said[1] and "Traceback" not in result.output
    asked = cli(command, *where, "--model", "llama-3.2-1b", "--kind", "dpo", "--loss-kernel", "trl-fused-head")
    assert asked.exit_code in (0, 1), asked.output  # what TRL runs: accepted
