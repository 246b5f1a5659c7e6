"""The loss kernel (`loss_kernel`: standard or Liger's fused linear cross-entropy) is a field of the one
resolution: the HF Trainer's `use_liger_kernel` gives Liger's fused loss, TRL 1.16's trainers turn it off
(SFTTrainer sets fused_linear_cross_entropy False for its own chunked LM head), and `--loss-kernel` replaces both."""

from __future__ import annotations

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
    assert "memory rules skipped: --loss-kernel liger under ZeRO-3 with qwen2.5-7b's untied lm_head" in said.stderr
