"""What the HF Trainer will do with a unit (`trainer_view`): its arguments, the DeepSpeed config it fills and where
that config comes from (its --deepspeed, the launcher's JSON, or the YAML's inline keys), computed once per unit.
The AW7xx rules (trainer_arguments.py, trainer_optimizer.py, ...) and the effective values the Trainer sets
(trainer_effective.py) read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.rules.diagnostic import Role

if TYPE_CHECKING:  # CheckContext.effective calls trainer_effective: a runtime import back would be a cycle
    from accelwiz.config.trainer_deepspeed import TrainerResolution
    from accelwiz.config.training_args import TrainerArguments
    from accelwiz.rules.context import CheckContext

_CACHE_KEY = "_accelwiz_trainer_view"


@dataclass(frozen=True)
class TrainerView:
    """What the Trainer will do with this unit: its arguments, the DeepSpeed config it fills (and how it got it)."""

    args: TrainerArguments
    path: str | None  # "trainer" (--deepspeed), "launcher" (the YAML's JSON), "inline" (the YAML's keys), None
    json_role: Role | None  # the document the DeepSpeed values are written in, when it is one of the unit's
    json_name: str | None  # the file the Trainer's DeepSpeed config comes from
    resolution: TrainerResolution | None
    world_size: int | None
    problem: str | None = None  # the --deepspeed file cannot be read
    written: dict[str, Any] | None = None  # the DeepSpeed config as written, before the Trainer and accelerate fill it


def _written_precision(ctx: CheckContext) -> str | None:
    """The YAML's mixed_precision as the launcher passes it (lower-cased), None when the YAML does not set it."""
    written = ctx.files_effective.launcher_mixed_precision
    return written.value if written.is_written else None


def _distributed_type(ctx: CheckContext) -> str | None:
    """The YAML's distributed_type as the launcher runs it (an unquoted NO, YAML false, is NO)."""
    return ctx.files_effective.distributed_type.value if ctx.accelerate is not None else None


def _inline_section(ctx: CheckContext) -> dict[str, Any]:
    """The YAML's inline `deepspeed_config` keys: the text `inline_config` builds the Trainer's DeepSpeed config
    from (accelwiz.config.trainer_deepspeed reads each key as accelerate does), and what AW705 lists."""
    return ctx.accelerate.section("deepspeed_config") if ctx.accelerate is not None else {}


def deepspeed_argument_path(args: TrainerArguments) -> Path | None:
    """The JSON file `--deepspeed` names, resolved as the worker opens it: from the working directory, else beside
    the arguments file."""
    written = args.deepspeed
    if not isinstance(written, str) or not written.strip():
        return None
    candidate = Path(written.strip())
    if not candidate.is_absolute() and not candidate.is_file() and args.path is not None:
        beside = args.path.parent / candidate
        if beside.is_file():
            return beside
    return candidate


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def trainer_view(ctx: CheckContext) -> TrainerView | None:
    """The Trainer's view of the unit, computed once per unit; None without Trainer arguments."""
    args: TrainerArguments | None = getattr(ctx, "training_args", None)
    if args is None:
        return None
    # imported here: every `accelwiz check` loads this module, only checks with Trainer arguments need these
    from accelwiz.config.trainer_deepspeed import inline_config, resolve_for_trainer
    cached = ctx.__dict__.get(_CACHE_KEY)
    if cached is not None:
        return cached
    # the world size from the files (ctx.effective already holds the Trainer's values, built from this view)
    world = ctx.files_effective.num_processes.value if ctx.accelerate is not None else None
    world = world if isinstance(world, int) and world > 0 else None
    if args.world_size is not None:  # check's --num-processes: the launch's count, as --num_processes overrides
        world = args.world_size
    launcher_precision = _written_precision(ctx)
    config: Any = None
    path = json_role = json_name = problem = None
    if isinstance(args.deepspeed, dict):
        config, path, json_name = args.deepspeed, "trainer", "the --deepspeed mapping"
    elif isinstance(args.deepspeed, str) and args.deepspeed.strip():
        file = deepspeed_argument_path(args)
        path, json_name = "trainer", str(file)
        if ctx.deepspeed is not None and file is not None and _same_file(file, ctx.deepspeed.path):
            config, json_role = ctx.deepspeed.data, "deepspeed"
        elif ctx.accelerate is None and ctx.deepspeed is not None:
            config, json_role = ctx.deepspeed.data, "deepspeed"  # the JSON given is the one the Trainer reads
            problem = _missing(file)  # ... and yet the name the Trainer opens must exist where the script runs
        else:
            config, problem = _read_json(file)
    elif ctx.deepspeed is not None and (ctx.accelerate is None or _distributed_type(ctx) == "DEEPSPEED"):
        # A JSON alone is what a Trainer started by torchrun/deepspeed receives with --deepspeed; beside a
        # DEEPSPEED YAML, accelerate hands the YAML's JSON to the Trainer.
        path = "trainer" if ctx.accelerate is None else "launcher"
        config, json_role, json_name = ctx.deepspeed.data, "deepspeed", ctx.deepspeed.name
    elif _distributed_type(ctx) == "DEEPSPEED" and ctx.files_effective.named_deepspeed_file is None:
        # no JSON named: accelerate builds the DeepSpeed config from the YAML's keys
        config = inline_config(_inline_section(ctx))
        path, json_role, json_name = "inline", "accelerate", ctx.accelerate.name
    resolution = None
    if isinstance(config, dict):
        resolution = resolve_for_trainer(config, args, world_size=world, path=path or "trainer",
                                         launcher_precision=launcher_precision)
    view = TrainerView(args, path, json_role, json_name, resolution, world, problem,
                       config if isinstance(config, dict) else None)
    ctx.__dict__[_CACHE_KEY] = view
    return view


def _missing(file: Path | None) -> str | None:
    """A --deepspeed name that is no file: TrainingArguments hands it to accelerate's HfDeepSpeedConfig, which
    refuses it ("Expected a string path to an existing deepspeed config, or a dictionary, or a base64 encoded
    string. Received: ..."; a relative name is opened from the directory the script runs in)."""
    from accelwiz.document.read import exists

    if file is None or exists(file) or file.is_symlink():
        return None
    where = "" if file.is_absolute() else f" (relative to {Path.cwd()}, where check runs)"
    return (f"--deepspeed names `{file}`, which does not exist{where}: the Trainer stops with \"Expected a string "
            f"path to an existing deepspeed config ... Received: {file}\"; the JSON checked beside it is not the "
            "file it opens")


def _read_json(file: Path | None) -> tuple[Any, str | None]:
    if file is None:
        return None, None
    import json

    from accelwiz.document.read import exists, read_text
    from accelwiz.errors import InputError

    if not exists(file) and not file.is_symlink():
        return None, f"--deepspeed names `{file}`, which does not exist"
    try:  # the bounded reader: a FIFO or /dev/zero is named, never read (it blocked, or ran out of memory)
        return json.loads(read_text(file, what="the DeepSpeed JSON file")), None
    except InputError as exc:
        return None, f"--deepspeed names `{file}`, which cannot be read: {exc.message.removeprefix(f'{file}: ')}"
    except (ValueError, RecursionError) as exc:
        return None, f"--deepspeed names `{file}`, which cannot be read as JSON: {str(exc).splitlines()[0]}"


def _key_path(dotted: str) -> tuple[str, ...]:
    return tuple(dotted.split("."))


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _inline_path(dotted: str) -> tuple[str, ...]:
    """Where an inline-built DeepSpeed key is written in the YAML's deepspeed_config."""
    names = {"gradient_accumulation_steps": "gradient_accumulation_steps", "gradient_clipping": "gradient_clipping",
             "zero_optimization.stage": "zero_stage"}
    return ("deepspeed_config", names.get(dotted, dotted))


def config_location(view: TrainerView, dotted: str) -> tuple[Role | None, tuple[str, ...]]:
    if view.json_role == "deepspeed":
        return "deepspeed", _key_path(dotted)
    if view.json_role == "accelerate":
        return "accelerate", _inline_path(dotted)
    return None, ()
