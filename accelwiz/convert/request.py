"""`accelwiz convert` as a function: a `ConvertRequest` in, a `Converted` (the files written, what was carried and
not, the check of the output, the memory table) out. The command parses its flags and renders the result.

The memory table's workload is resolved as every command resolves it (accelwiz.resolution.workload): the source
plan, the source files (a micro-batch its DeepSpeed JSON writes, the precision it computes in), then --micro-batch
and --seq-len; a flag against a number the files write is refused in one line, as `check` and `run` refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from accelwiz.errors import InputError, UsageError

if TYPE_CHECKING:
    from accelwiz.effective import EffectiveConfig
    from accelwiz.estimate.workload import Workload
    from accelwiz.plan_file import PlanFile
    from accelwiz.rules.engine import CheckResult


@dataclass(frozen=True)
class ConvertRequest:
    file: Path
    to: Literal["deepspeed", "fsdp"]
    output: Path | None = None
    force: bool = False
    model: str | None = None  # --model: turns on the memory table
    system: str | None = None
    workload_flags: dict[str, Any] = field(default_factory=dict)  # micro_batch, seq_len (None: not given)


@dataclass
class Converted:
    output: Path
    json_path: Path | None
    plan_path: Path | None
    source_plan: Path | None
    carried: list[str]
    not_carried: list[str]
    check: CheckResult
    memory: str | None  # the before/after table, or None without a model


def convert_files(request: ConvertRequest) -> Converted:
    """Convert, write the files (all or none), check them as `accelwiz check OUT` would, and size both sides."""
    before = _source_unit(request)
    from accelwiz.convert.carried_plan import source_plan as plan_beside

    source_plan = plan_beside(request.file)  # what init planned: the launcher, the machine, the workload
    out = request.output or request.file.with_name(f"{request.file.stem}.{request.to}.yaml")
    if out.resolve() == request.file.resolve():
        raise UsageError("the output would replace the input", hint="pass -o with another name")
    # the workload before anything is written: a refused flag leaves no file behind
    workload = _workload(request, source_plan, before.effective)
    yaml_text, json_text, conversion = _converted_text(request.file, request.to, out)
    json_path = out.with_name(out.stem + ".ds.json") if json_text is not None else None
    from accelwiz.launch import shell

    # what wrote these files (the memory options do not change them): the plan's created_by and the header's
    command = shell.join(["accelwiz", "convert", str(request.file), "--to", request.to, "-o", str(out)])
    plan_path = plan_text = new_plan = None
    if source_plan is not None:
        from accelwiz.defaults import plan_path_for
        from accelwiz.plan_file import dump_plan

        plan_path = plan_path_for(out)
        new_plan = _carried_plan(source_plan, out, yaml_text, json_path, json_text, command)
        plan_text = dump_plan(new_plan)
    yaml_text = _with_header(yaml_text, request, out, command, (source_plan, new_plan))
    for path in (out, json_path, plan_path):
        if path is not None and path.exists() and not request.force:
            raise UsageError(f"{path} exists", hint="pass --force to overwrite it, or -o another name")
    from accelwiz.convert.files import write_all

    # the JSON and the plan first, and all or none: never a YAML naming a JSON that could not be written
    write_all([(p, t) for p, t in ((json_path, json_text), (plan_path, plan_text), (out, yaml_text))
               if p is not None and t is not None], force=request.force)
    from accelwiz.rules.engine import check_with_plans
    from accelwiz.rules.registry import select_rules

    result = check_with_plans([out] + ([json_path] if json_path else []), select_rules())  # with the new plan
    memory = None
    if workload is not None and result.units:
        from accelwiz.convert.memory import compare_memory

        machine = _machine(request.system, source_plan)
        memory = compare_memory(before.effective, result.units[0].effective, workload, machine)
    return Converted(out, json_path, plan_path, source_plan.path if source_plan is not None else None,
                     list(conversion.carried), list(conversion.not_carried), result, memory)


def _source_unit(request: ConvertRequest) -> Any:
    """The YAML and the JSON it names, refused unless it is a DeepSpeed or FSDP config of the other backend."""
    from accelwiz.convert.unit import load_unit
    from accelwiz.document import load_document

    if load_document(request.file).kind != "accelerate":
        raise InputError(f"{request.file} is not an Accelerate YAML", hint="pass the YAML (it names the JSON)")
    unit = load_unit(request.file)  # exit 2 when the JSON it names is missing
    current = unit.effective.distributed_type.value or ""  # read as the launcher reads it (an unquoted NO)
    wanted = "DEEPSPEED" if request.to == "deepspeed" else "FSDP"
    if current == wanted:
        raise UsageError(f"{request.file} already uses {current}", hint="nothing to convert")
    if current not in ("DEEPSPEED", "FSDP"):
        raise UsageError(f"{request.file} uses {current or 'no distributed_type'}, not DeepSpeed or FSDP",
                         hint="convert works between DEEPSPEED and FSDP configs")
    return unit


def _converted_text(file: Path, to: Literal["deepspeed", "fsdp"], out: Path) -> Any:
    from accelwiz.convert.mapping import convert
    from accelwiz.fix.edits import EditError

    try:
        return convert(file, to, out)
    except EditError as exc:  # a duplicate key, a layout the round-trip editor cannot keep
        raise InputError(f"cannot convert {file}: {exc}",
                         hint="remove duplicate keys and use plain two-space indentation, then convert again") from None


def _carried_plan(source: PlanFile, out: Path, yaml_text: str, json_path: Path | None, json_text: str | None,
                  command: str) -> PlanFile:
    from accelwiz.convert.carried_plan import converted_plan

    return converted_plan(source, yaml_path=out, yaml_text=yaml_text, json_path=json_path, json_text=json_text,
                          command=command)


def _with_header(yaml_text: str, request: ConvertRequest, out: Path, command: str,
                 plans: tuple[PlanFile | None, PlanFile | None]) -> str:
    """The converted YAML with a header naming the convert command and launch lines for `out`, not the source's."""
    import yaml

    from accelwiz.convert.header import converted_header

    accelerate = yaml.safe_load(yaml_text)
    system = None
    if plans[0] is not None:
        from accelwiz.plan_file import plan_system

        system = plan_system(plans[0])
    return converted_header(yaml_text, command=command, source=request.file, out=out, to=request.to, plans=plans,
                            accelerate=accelerate if isinstance(accelerate, dict) else {}, system=system)


def _workload(request: ConvertRequest, plan: PlanFile | None, effective: EffectiveConfig) -> Workload | None:
    """The workload both sides are sized with: --model, else the plan's model (None: no table); one
    `resolve_workload` over the plan, the source files and the flags."""
    from accelwiz.resolution.options import flags_from_options
    from accelwiz.estimate.resolved import to_workload
    from accelwiz.resolution.workload import resolve_workload

    spec = _model(request.model, plan)
    if spec is None:
        return None
    flags = {k: v for k, v in flags_from_options(**request.workload_flags).items() if v is not None}
    resolved = resolve_workload(plan=plan, effective=effective, flags=flags,
                                max_positions=spec.max_position_embeddings)
    from accelwiz.resolution.given import refuse_flags_against_files

    refuse_flags_against_files(resolved, effective)
    return to_workload(resolved, spec)


def _model(model: str | None, plan: PlanFile | None) -> Any:
    if model is not None:
        from accelwiz.modelspec.lookup import resolve_model

        return resolve_model(model)
    if plan is None:
        return None
    from accelwiz.modelspec.lookup import plan_model

    return plan_model(plan)[0]  # a plan whose model cannot be sized here: no table, as before


def _machine(system: str | None, plan: PlanFile | None) -> Any:
    if system is not None:
        from accelwiz.probe.profiles import load_system

        return load_system(system)
    if plan is None:
        return None
    from accelwiz.plan_file import plan_system

    return plan_system(plan)
