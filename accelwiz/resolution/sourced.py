"""One resolved value and where it came from, and the names of the places it can come from (the run summary,
`--explain` and run_report.json say them). Below every resolution module: workload.py and the helpers it calls
(load_dtype.py, collator.py) all build `Sourced` values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT, PLAN, FLAG, TRAINER = "default", "plan", "flag", "trainer arguments"
MODEL = "model"  # the model named on the command line, where the plan was written without one
ENVIRONMENT = "environment"  # a variable the run launches with (PYTORCH_CUDA_ALLOC_CONF: resolution/alloc_conf.py)
# the flag that says how LoRA's frozen base is loaded, a source of its own: a `weights_dtype` it sets is the base's
# (the estimator's base_dtype), not the whole model's load dtype that `--precision` says (source FLAG)
BASE_DTYPE_FLAG = "--base-dtype"


@dataclass(frozen=True)
class Sourced:
    """One resolved value and where it came from."""

    value: Any
    source: str
    note: str = ""
