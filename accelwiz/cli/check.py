"""`accelwiz check`: the strict validator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from accelwiz.cli.common import (FormatOption, MethodOption, OutputFormat, SystemOption, exit_on_error,
                                 get_console, split_codes)
from accelwiz.cli.fixes import DiffOption, FixOption, UnsafeFixesOption
from accelwiz.cli.trainer_args import NumProcessesOption, TrainingArgsOption, TrlOption, trainer_argv

EPILOG = """\
Examples:

  $ accelwiz check accelerate.yaml
  accelerate.yaml:9:3: AW001 error unknown key `deepspeed_config.zero_stgae`;
  did you mean `zero_stage`?        (one line on the terminal)
    help: rename it to `zero_stage`  [unknown-key]
  1 error.

  $ accelwiz check accelerate.yaml ds_config.json --explain
  $ accelwiz check accelerate.yaml --system 8xH100-80GB --model llama-8b \\
      --micro-batch 4 --seq-len 4096
  $ accelwiz check accelerate.yaml ds.json -- --bf16 \\
      --per_device_train_batch_size 4    # the Trainer's arguments
  $ accelwiz check ds_config.json --num-processes 8 \\
      --system 4xA100-40GB               # a JSON for the deepspeed launcher
  $ accelwiz check accelerate.yaml --kind grpo -- --num_generations 8 \\
      --use_vllm --vllm_mode colocate
"""


FilesArgument = Annotated[list[Path] | None, typer.Argument(
    help="Accelerate YAML and/or DeepSpeed JSON files (any extension); default: accelerate.yaml, as `run` "
         "takes it.", show_default=False)]
SelectOption = Annotated[list[str] | None, typer.Option(help="Only these code prefixes, e.g. AW2,AW101.")]
IgnoreOption = Annotated[list[str] | None, typer.Option(help="Skip these code prefixes.")]
StrictOption = Annotated[bool, typer.Option(help="Exit 1 on warnings too.")]
ExplainOption = Annotated[bool, typer.Option(help="Print the values the run will actually use, and their source.")]
ModelOption = Annotated[str | None, typer.Option(help="Model preset, config.json or parameter count: turns on the "
                                                      "memory rules (AW5xx).", rich_help_panel="Memory")]
MicroBatchOption = Annotated[int | None, typer.Option(min=1, help="Micro-batch per GPU (default: the plan's, the "
                                                                  "config's, else 1).", rich_help_panel="Memory")]
SeqLenOption = Annotated[int | None, typer.Option(min=1, help="Sequence length (default: the plan's, else 2048).",
                                                  rich_help_panel="Memory", show_default=False)]
GradientCheckpointingOption = Annotated[bool | None, typer.Option(
    help="Activations are recomputed in backward (default: the plan's, else off).", rich_help_panel="Memory",
    show_default=False)]
LoraOption = Annotated[bool, typer.Option(help="Short for --method lora.", rich_help_panel="Memory")]
QloraOption = Annotated[bool, typer.Option(help="Short for --method qlora (LoRA on a 4-bit base).",
                                           rich_help_panel="Memory")]
LoraDropoutOption = Annotated[float | None, typer.Option(
    min=0.0, rich_help_panel="Memory", show_default=False,
    help="PEFT's lora_dropout (default: the plan's, else 0.0).")]
VaryingLengthsOption = Annotated[bool | None, typer.Option(
    "--varying-lengths/--fixed-lengths", rich_help_panel="Memory", show_default=False,
    help="Batches padded to their own longest sample (default: TRL SFT without packing varies, else fixed).")]
ExpandableSegmentsOption = Annotated[bool | None, typer.Option(
    "--expandable-segments/--no-expandable-segments", rich_help_panel="Memory", show_default=False,
    help="The caching allocator with expandable_segments:True (default: PYTORCH_CUDA_ALLOC_CONF's, else off).")]
LossDtypeOption = Annotated[str | None, typer.Option(
    metavar="fp32|bf16|fp16", rich_help_panel="Memory", show_default=False,
    help="The dtype the loss runs in (default fp32, transformers' loss; `estimate --help`).")]
LossKernelOption = Annotated[str | None, typer.Option(
    metavar="standard|liger|trl-fused-head", rich_help_panel="Memory", show_default=False,
    help="standard (default), liger or trl-fused-head: fused losses, no logits (`estimate --help`).")]
KbitPrepareOption = Annotated[bool | None, typer.Option(
    rich_help_panel="Memory", show_default=False,
    help="QLoRA: PEFT's prepare_model_for_kbit_training ran (default: the built-in trainer's yes; a Trainer/TRL "
         "run's no).")]
StackOption = Annotated[list[str] | None, typer.Option(
    metavar="NAME==VERSION", rich_help_panel="Memory", show_default=False,
    help="A library version the run trains with, repeatable: transformers, bitsandbytes, accelerate, torch, "
         "trl, litgpt (default: a --system probe's, else the installed; TRL and LitGPT only where said).")]
PlanOption = Annotated[Path | None, typer.Option(help="The plan file `accelwiz init` wrote (default: the one beside "
                                                      "the YAML, accelerate.plan.yaml for accelerate.yaml).",
                                                 rich_help_panel="Memory", show_default=False)]
AttentionOption = Annotated[str | None, typer.Option(help="eager, sdpa or flash (default: the plan's, else sdpa).",
                                                     rich_help_panel="Memory", show_default=False)]
NumMachinesOption = Annotated[int | None, typer.Option(
    "--num-machines", min=1, metavar="N", show_default=False, rich_help_panel="Launch",
    help="The machines the run spans (accelerate launch --num_machines, torchrun --nnodes): wins over the "
         "YAML's num_machines.")]
KindOption = Annotated[str | None, typer.Option(
    metavar="sft|dpo|grpo", rich_help_panel="HF Trainer", show_default=False,
    help="dpo or grpo: the arguments are TRL's DPOConfig/GRPOConfig "
         "(num_generations, use_vllm, beta ...): turns on the AW8xx rules "
         "(default: the plan's training.kind, else sft).")]


def check(
    ctx: typer.Context,
    files: FilesArgument = None,
    output_format: FormatOption = OutputFormat.text,
    select: SelectOption = None, ignore: IgnoreOption = None,
    strict: StrictOption = False, explain: ExplainOption = False,
    system: SystemOption = None,
    model: ModelOption = None,
    micro_batch: MicroBatchOption = None, seq_len: SeqLenOption = None,
    gradient_checkpointing: GradientCheckpointingOption = None,
    method: MethodOption = None, lora: LoraOption = False, qlora: QloraOption = False,
    lora_dropout: LoraDropoutOption = None,
    varying_lengths: VaryingLengthsOption = None, expandable_segments: ExpandableSegmentsOption = None,
    loss_dtype: LossDtypeOption = None,
    loss_kernel: LossKernelOption = None,
    kbit_prepare: KbitPrepareOption = None,
    stack: StackOption = None,
    plan: PlanOption = None,
    attention: AttentionOption = None,
    training_args: TrainingArgsOption = None, trl: TrlOption = False,
    num_processes: NumProcessesOption = None, num_machines: NumMachinesOption = None,
    kind: KindOption = None,
    fix: FixOption = False, unsafe_fixes: UnsafeFixesOption = False, diff: DiffOption = False,
) -> None:
    """Check Accelerate and DeepSpeed configs for what the libraries let through (AW rules)."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.cli.check_request import CheckRequest, check_files
        from accelwiz.cli.common import workload_flags

        # each flag given replaces one field of the plan's workload (or of the defaults under --model)
        flags = workload_flags(micro_batch=micro_batch, seq_len=seq_len, gradient_checkpointing=gradient_checkpointing,
                               method=method, lora=lora, qlora=qlora, attention=attention,
                               lora_dropout=lora_dropout, varying_lengths=varying_lengths, loss_dtype=loss_dtype,
                               loss_kernel=loss_kernel, kbit_prepared=kbit_prepare, stack=stack,
                               expandable_segments=expandable_segments)
        checked = check_files(CheckRequest(
            files or [_default_config()], split_codes(select), split_codes(ignore), system, model, plan, flags,
            training_args, trainer_argv(ctx), trl, kind, {"num_processes": num_processes, "num_machines": num_machines},
            fix, unsafe_fixes, diff), say=console.info, console=console)
        if checked.diff_exit is not None:
            raise typer.Exit(checked.diff_exit)
        _render(console, checked, output_format, explain)
    raise typer.Exit(checked.result.exit_code(strict=strict))


def _default_config() -> Path:
    """accelerate.yaml in this folder, the file `init` writes and `run` takes when none is named."""
    default = Path("accelerate.yaml")
    if not default.is_file():
        from accelwiz.errors import UsageError

        raise UsageError("no file to check: none was named and there is no accelerate.yaml here",
                         hint="pass the files (`accelwiz check my.yaml ds.json`), or write one with `accelwiz init`")
    return default


def _render(console: Any, checked: Any, output_format: OutputFormat, explain: bool) -> None:
    from accelwiz.rules.report import render_explanation, render_github, render_json, render_text, summary

    result = checked.result
    for error in result.input_errors:
        console.error(error.message, hint=error.hint)
    for note in result.skipped:
        console.info(f"note: {note}")
    if explain:
        for unit in result.units:
            console.data(render_explanation(unit))
    if output_format is OutputFormat.json:
        console.data(render_json(result.diagnostics))
    elif output_format is OutputFormat.github:
        if result.diagnostics:
            console.data(render_github(result.diagnostics))
    else:
        if result.diagnostics:
            console.data(render_text(result.diagnostics, color=console.color))
        console.info(summary(result.diagnostics, unreadable=len(result.input_errors)))
        if result.units and all(u.system is None for u in result.units) and checked.hardware_rules:
            console.info("note: hardware rules skipped; pass --system local|PRESET|FILE to check against a machine")
