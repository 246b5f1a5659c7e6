"""Names shared by `init` (which writes them) and `run` (which reads them)."""

from pathlib import Path

# `accelwiz init` writes here by default and `accelwiz run` reads from here when --config is not given, so that
# `accelwiz init --defaults && accelwiz run` is a complete first experience. Never the global
# ~/.cache/huggingface/accelerate/default_config.yaml, which accelerate applies silently (accelerate#1133).
DEFAULT_CONFIG = Path("accelerate.yaml")
# The DeepSpeed JSON that `init` writes beside the YAML for DeepSpeed strategies.
DEFAULT_DEEPSPEED_CONFIG = Path("ds_config.json")
# The plan `init` writes beside the YAML (accelerate.yaml -> accelerate.plan.yaml; accelwiz/plan_file.py reads
# it). Here, not in plan_file.py, so that looking for one costs no pydantic import when there is none.
PLAN_SUFFIX = ".plan.yaml"


def plan_path_for(config: Path) -> Path:
    """Where `init` writes the plan of an Accelerate YAML, and where `check` and `run` look for it."""
    return config.with_name(config.stem + PLAN_SUFFIX)


def find_plan(config: Path) -> Path | None:
    """The plan beside `config`, if there is one."""
    from accelwiz.document.read import is_file

    candidate = plan_path_for(config)
    return candidate if is_file(candidate) else None
