"""The converted YAML's header: what wrote it, and launch lines that start the written file.

The YAML is converted by editing the source text (comments kept), so without this the header `init` wrote above
the source would be carried as is: "Written by: accelwiz init ... -o zero3.yaml", a memory line for the old
strategy and launch lines naming the source file, which a user copying them would run instead (issue 31).
The header is rewritten: the convert command, where the file came from (and what wrote that), the source's lines
that stay true (hardware, multi-node, TrainingArguments, post-training settings), the memory line from the
carried plan's estimate for the new strategy, and the launch lines for the written file. A source without an
accelwiz header keeps its own comments, below a new header that says the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from accelwiz.plan_file import PlanFile

_WRITTEN_BY = "# Written by: "
# the source header's lines that are about the old backend or the old files, rewritten here
_REPLACED = ("Written by:", "Converted from:", "Migrated from:", "Hardware:", "Memory:", "Launch:", "Estimate by phase",
             "Schema for editors:")
GIB = 1024**3


def converted_header(yaml_text: str, *, command: str, source: Path, out: Path,
                     to: Literal["deepspeed", "fsdp"] | None, plans: tuple[PlanFile | None, PlanFile | None],
                     accelerate: dict[str, Any], system: Any) -> str:
    """`yaml_text` (the converted YAML, the source's comments still in it) with the header rewritten; `plans` is
    (the source plan, the plan written with the output), either None where there is none. `to` None: the same
    backend rewritten (`migrate -o`), whose memory line and training line stay as the source's header says."""
    from accelwiz.launch.copyable import launch_lines
    from accelwiz.wizard.render import Header, describe_hardware, header_text

    source_plan, new_plan = plans
    comments, body = _split_header(yaml_text)
    old = [line[2:] if line.startswith("# ") else line[1:] for line in comments]
    ours = bool(comments) and comments[0].startswith(_WRITTEN_BY)
    said = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in old if ours and ":" in line}
    origin = f"{'Migrated' if to is None else 'Converted'} from: {source}"
    origin += f" (written by: {said['Written by']})" if ours else ""
    hardware = said.get("Hardware") or (describe_hardware(system) if system is not None
                                        else "not recorded (no plan beside the source)")
    memory = _memory(new_plan) if to is not None or "Memory" not in said else said["Memory"]
    renamed = _renames(source, out, source_plan)
    trainer = "TrainingArguments" in said
    kept = [_training(_renamed(line, renamed), to, trainer) for line in old[1:] if ours
            and not line.startswith(_REPLACED) and not line.startswith("  ")]  # "  accelwiz run ...": old launch
    launcher = new_plan.launcher.kind if new_plan is not None else "local"
    header = Header(command=command, hardware=hardware, estimate=memory, extra=[origin, *kept],
                    launch=launch_lines(accelerate, out, launcher=launcher, system=system))
    return header_text(header) + ("" if ours else "".join(line + "\n" for line in comments)) + body


def has_header(yaml_text: str) -> bool:
    """Whether the text starts with the header accelwiz writes (init, convert, migrate -o)."""
    return yaml_text.startswith(_WRITTEN_BY)


def _split_header(text: str) -> tuple[list[str], str]:
    """(the leading comment lines, the rest of the text)."""
    lines = text.splitlines(keepends=True)
    count = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    return [line.rstrip("\n") for line in lines[:count]], "".join(lines[count:])


def _renames(source: Path, out: Path, source_plan: PlanFile | None) -> dict[str, str]:
    """The source's plan as its header names it -> the output's (the plan path in a GRPO reward TODO line)."""
    from accelwiz.defaults import plan_path_for

    names = {str(plan_path_for(source)): str(plan_path_for(out))}
    if source_plan is not None and source_plan.path is not None:
        names[str(source_plan.path)] = str(plan_path_for(out))
    return names


def _renamed(line: str, renamed: dict[str, str]) -> str:
    for old, new in renamed.items():
        line = line.replace(old, new)
    return line


def _training(line: str, to: Literal["deepspeed", "fsdp"] | None, trainer: bool) -> str:
    """The Training line's "where": after a conversion the script (or the Trainer) sets batch, accumulation and
    clipping: convert leaves them "auto" in a new DeepSpeed JSON and names them not carried to FSDP."""
    if to is None or not line.startswith("Training: ") or not line.endswith(")"):
        return line
    settings = line[: line.rindex(" (")]
    if trainer:
        where = "(the HF Trainer's arguments below" + ("; the new JSON says \"auto\")" if to == "deepspeed" else ")")
    else:
        where = ("(give these to the training script; the new JSON says \"auto\")" if to == "deepspeed"
                 else "(give these to the training script: FSDP reads no DeepSpeed JSON)")
    return f"{settings} {where}"


def _memory(plan: PlanFile | None) -> str:
    """The carried plan's estimate for the converted strategy (accelwiz.convert.carried_plan), as init words it."""
    if plan is None or plan.estimate is None:
        return "not estimated for the converted files (no plan with a model beside the source; " \
               "`accelwiz convert ... --model NAME` prints both sides)"
    estimate, system, training = plan.estimate, plan.system, plan.training
    gpu = f" of {system.gpu_capacity_bytes / GIB:.1f}" if system.gpu_capacity_bytes else ""
    host = f" of {system.host_memory_bytes / GIB:.1f}" if system.host_memory_bytes else ""
    return (f"{estimate.strategy}: GPU memory {estimate.per_gpu_bytes / GIB:.1f}{gpu} GiB per GPU; host RAM "
            f"{estimate.host_bytes / GIB:.1f}{host} GiB per machine; {estimate.verdict} ({plan.model.name}, "
            f"{plan.fine_tuning.method}, seq {training.sequence_length}, micro-batch {training.micro_batch})")
