"""`accelwiz check`: the strict validator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from accelwiz.cli.common import FormatOption, OutputFormat, SystemOption, exit_on_error, get_console, split_codes
from accelwiz.cli.fixes import DiffOption, FixOption, UnsafeFixesOption
from accelwiz.cli.trainer_args import (
    NumProcessesOption,
    TrainingArgsOption,
    TrlOption,
    trainer_argv,
    trainer_inputs,
)

EPILOG = """\
Examples:

  $ accelwiz check accelerate.yaml
  accelerate.yaml:9:3: AW001 error unknown key `deepspeed_config.zero_stgae`; did you mean `zero_stage`?
    help: rename it to `zero_stage`  [unknown-key]
  1 error.

  $ accelwiz check accelerate.yaml ds_config.json --explain
  $ accelwiz check accelerate.yaml --system 8xH100-80GB --model llama-8b --micro-batch 4 --seq-len 4096
  $ accelwiz check accelerate.yaml ds.json -- --bf16 --per_device_train_batch_size 4   # the Trainer's arguments
  $ accelwiz check ds_config.json --num-processes 8 --system 4xA100-40GB   # a JSON for the deepspeed launcher
  $ accelwiz check accelerate.yaml --kind grpo -- --num_generations 8 --use_vllm --vllm_mode colocate
"""


def check(
    ctx: typer.Context,
    files: Annotated[list[Path], typer.Argument(help="Accelerate YAML and/or DeepSpeed JSON files (any extension).",
                                                show_default=False)],
    output_format: FormatOption = OutputFormat.text,
    select: Annotated[list[str] | None, typer.Option(help="Only these code prefixes, e.g. AW2,AW101.")] = None,
    ignore: Annotated[list[str] | None, typer.Option(help="Skip these code prefixes.")] = None,
    strict: Annotated[bool, typer.Option(help="Exit 1 on warnings too.")] = False,
    explain: Annotated[bool, typer.Option(help="Print the values the run will actually use, and their source.")]
    = False,
    system: SystemOption = None,
    model: Annotated[str | None, typer.Option(help="Model preset, config.json or parameter count: turns on the "
                                                   "memory rules (AW5xx).", rich_help_panel="Memory")] = None,
    micro_batch: Annotated[int | None, typer.Option(min=1, help="Micro-batch per GPU (default: the plan's, the "
                                                                "config's, else 1).", rich_help_panel="Memory")] = None,
    seq_len: Annotated[int | None, typer.Option(min=1, help="Sequence length (default: the plan's, else 2048).",
                                                rich_help_panel="Memory", show_default=False)] = None,
    gradient_checkpointing: Annotated[bool | None, typer.Option(
        help="Activations are recomputed in backward (default: the plan's, else off).", rich_help_panel="Memory",
        show_default=False)] = None,
    lora: Annotated[bool, typer.Option(help="LoRA fine-tuning instead of full.", rich_help_panel="Memory")] = False,
    qlora: Annotated[bool, typer.Option(help="QLoRA: LoRA on a 4-bit base.", rich_help_panel="Memory")] = False,
    lora_dropout: Annotated[float | None, typer.Option(
        min=0.0, rich_help_panel="Memory", show_default=False,
        help="PEFT's lora_dropout (default: the plan's, else 0.0).")] = None,
    plan: Annotated[Path | None, typer.Option(help="The plan file `accelwiz init` wrote (default: the one beside "
                                                   "the YAML, accelerate.plan.yaml for accelerate.yaml).",
                                              rich_help_panel="Memory", show_default=False)] = None,
    attention: Annotated[str | None, typer.Option(help="eager, sdpa or flash (default: the plan's, else sdpa).",
                                                  rich_help_panel="Memory", show_default=False)] = None,
    training_args: TrainingArgsOption = None,
    trl: TrlOption = False,
    num_processes: NumProcessesOption = None,
    num_machines: Annotated[int | None, typer.Option(
        "--num-machines", min=1, metavar="N", show_default=False, rich_help_panel="Launch",
        help="The machines the run spans (accelerate launch --num_machines, torchrun --nnodes): wins over the "
             "YAML's num_machines.")] = None,
    kind: Annotated[str | None, typer.Option(metavar="sft|dpo|grpo", rich_help_panel="HF Trainer", show_default=False,
                                             help="dpo or grpo: the arguments are TRL's DPOConfig/GRPOConfig "
                                                  "(num_generations, use_vllm, beta ...): turns on the AW8xx rules "
                                                  "(default: the plan's training.kind, else sft).")] = None,
    fix: FixOption = False,
    unsafe_fixes: UnsafeFixesOption = False,
    diff: DiffOption = False,
) -> None:
    """Check Accelerate and DeepSpeed configs for what the libraries let through (AW rules)."""
    console = get_console()
    with exit_on_error(console):
        from accelwiz.errors import UsageError
        from accelwiz.rules.engine import check_with_plans
        from accelwiz.rules.registry import select_rules
        from accelwiz.rules.report import render_github, render_json, render_text, summary
        from accelwiz.rules.rule import Needs

        rules = select_rules(split_codes(select), split_codes(ignore))
        machine = None
        if system is not None:
            from accelwiz.probe.profiles import load_system

            machine = load_system(system)
        if lora and qlora:
            raise UsageError("--lora and --qlora exclude each other", hint="QLoRA is LoRA on a 4-bit base: pass one")
        # The workload flags given, field by field: each replaces one field of the plan's workload (the plan is
        # the base), or of the defaults when there is no plan and --model names the model.
        flags = {name: value for name, value in (
            ("micro_batch", micro_batch), ("seq_len", seq_len), ("gradient_checkpointing", gradient_checkpointing),
            ("regime", "qlora" if qlora else "lora" if lora else None), ("attention", attention),
            ("lora_dropout", lora_dropout)) if value is not None}
        if lora_dropout is not None and not lora_dropout < 1.0:
            raise UsageError(f"--lora-dropout {lora_dropout}: a dropout probability is below 1", hint="pass 0.1")
        if flags.get("attention") not in (None, "eager", "sdpa", "flash"):
            raise UsageError(f"invalid attention `{attention}`", hint="choose one of eager, sdpa, flash")
        spec = None  # --model: each unit resolves its workload with it (the plan, the files, the flags)
        if model is not None:
            from accelwiz.estimate.models import resolve_model

            spec = resolve_model(model)
        # the plan beside each YAML (or --plan) gives the memory and hardware rules its workload and system
        planned = _plan_of(files, plan)
        kind_given, kind = kind, kind or (planned.training.kind if planned is not None else "sft")
        if kind not in ("sft", "dpo", "grpo"):
            raise UsageError(f"invalid --kind {kind}", hint="choose sft, dpo or grpo")
        # AW7xx; with --kind dpo|grpo the notes wait for TRL's own arguments (AW8xx), read beside the Trainer's
        trainer, files = trainer_inputs(training_args, trainer_argv(ctx), files, console if kind == "sft" else None,
                                        trl=trl, num_processes=num_processes)
        if kind != "sft":
            from accelwiz.config.trl_arguments import planned_trl_arguments, with_trl

            argv = trainer_argv(ctx)
            # a DPO/GRPO plan checked with no arguments: those the plan records, or the built-in trainer's
            built_in = planned_trl_arguments(planned) if planned is not None and kind_given is None \
                and training_args is None and not argv else None
            trainer = built_in or with_trl(trainer, kind, training_args, argv)
            if built_in is not None:
                whose = "the plan records" if planned.training.owner == "trainer" else \
                    "the built-in trainer hands TRL"
                console.info(f"note: the plan's {kind} run is checked with the arguments {whose}: "
                             f"{' '.join([*built_in.given.values(), *built_in.trl_given.values()])}")
            for note in trainer.notes:
                console.info(f"note: Trainer arguments ({trainer.source}): {note}")
        if fix or diff:  # ruff's model: mend what is unambiguous, then report what remains
            from accelwiz.cli.fixes import run_fixes

            code = run_fixes(console, files, rules, unsafe=unsafe_fixes, diff=diff, system=machine, model=spec,
                             workload_flags=flags, training_args=trainer)
            if code is not None:
                raise typer.Exit(code)
        # the launch's counts join the files' before any rule runs (accelwiz/effective_flags.py)
        launch_flags = {"num_processes": num_processes, "num_machines": num_machines}
        result = check_with_plans(files, rules, system=machine, model=spec, plan=plan, training_args=trainer,
                                  workload_flags=flags, launch_flags=launch_flags)
        for error in result.input_errors:
            console.error(error.message, hint=error.hint)
        for note in result.skipped:
            console.info(f"note: {note}")
        if explain:
            from accelwiz.rules.report import render_explanation

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
            # the modules' declared inputs (the catalog), not each rule's `needs`: reading those would import
            # every rule module, the start-up cost the declaration saves
            hardware_rules = any(Needs.SYSTEM in r.inputs for r in rules)
            if result.units and all(u.system is None for u in result.units) and hardware_rules:
                console.info("note: hardware rules skipped; pass --system local|PRESET|FILE to check against a machine")
    raise typer.Exit(result.exit_code(strict=strict))


def _plan_of(files: list[Path], plan: Path | None) -> Any:
    """The plan (--plan, else the one beside the first YAML that has one), loaded; None without one, or when it
    does not load (the check itself reports why). Its kind of training decides which rules run: a DPO or GRPO plan
    is checked with TRL's, as `run` trains it."""
    from accelwiz.defaults import find_plan
    from accelwiz.errors import AccelwizError

    path = plan or next((found for found in map(find_plan, files) if found is not None), None)
    if path is None:
        return None
    from accelwiz.plan_file import load_plan

    try:
        return load_plan(path)
    except AccelwizError:
        return None
