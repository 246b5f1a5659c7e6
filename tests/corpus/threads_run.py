"""Run `accelwiz check` on one case of tests/corpus/threads/cases*.yaml, as the case says the user ran it: the
files, the --system machine, the --model, the Trainer's command line, --num-processes and the environment."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml

THREADS = Path(__file__).resolve().parent / "threads"
# the cases, in manifests by source (cases.yaml, then cases-<source>.yaml), read in name order
MANIFESTS = "cases*.yaml"
# the table of trackers -> set (design or frozen), the one place a source's set is kept
TRACKERS = THREADS / "trackers.yaml"
SETS = ("design", "frozen")
ENVIRONMENT = ("CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS")


@dataclass(frozen=True)
class Case:
    id: str
    url: str
    title: str
    files: tuple[str, ...]
    provenance: str
    root_cause: str
    verdict: str  # "broken": the config (with its command line) fails or misbehaves today; "valid": it does not
    reported: tuple[str, ...]  # error and warning codes accelwiz reports (recorded; the test keeps it true)
    codes: tuple[str, ...] = ()  # broken and caught: the codes that name the root cause
    missed: str | None = None  # broken and not caught: why
    false_alarm: str | None = None  # valid, yet an error is reported: why
    system: str | None = None
    model: str | None = None
    workload: dict[str, Any] = field(default_factory=dict)  # Workload fields beside the model: seq_len, regime...
    trainer_args: tuple[str, ...] | None = None
    kind: str | None = None  # dpo or grpo: the arguments are TRL's (check --kind), which turns on the AW8xx rules
    trl: bool = False  # the arguments are an SFTConfig's (check --trl): TRL's defaults (bf16 unless fp16 ...)
    training_args_file: str | None = None  # a recipe YAML the script reads (check --training-args FILE)
    num_processes: int | None = None
    env: dict[str, str] = field(default_factory=dict)
    out_of_reach: str | None = None  # broken: why no static check of the files can see the problem
    dissent: str | None = None  # a later reader's disagreement with the label, and why (the label stands)

    @property
    def tracker(self) -> str:
        """The source: the GitHub repository of the case's thread or commit."""
        owner, name = self.url.removeprefix("https://github.com/").split("/")[:2]
        return f"{owner}/{name}"

    @property
    def set(self) -> str:
        return tracker_sets()[self.tracker.lower()]

    @property
    def outcome(self) -> str:
        if self.verdict == "broken":
            return "missed" if self.missed else "caught"
        return "false alarm" if self.false_alarm else "clean"


@cache
def load_trackers() -> dict:
    return yaml.safe_load(TRACKERS.read_text())


@cache
def tracker_sets() -> dict[str, str]:
    """owner/name (lower case) -> design or frozen."""
    return {name.lower(): which for name, which in load_trackers()["trackers"].items()}


def load_cases() -> list[Case]:
    raw = [entry for manifest in sorted(THREADS.glob(MANIFESTS)) for entry in yaml.safe_load(manifest.read_text())]
    cases = []
    for entry in raw:
        entry = dict(entry)
        for key in ("files", "reported", "codes", "trainer_args"):
            if entry.get(key) is not None:
                entry[key] = tuple(entry[key])
        cases.append(Case(**entry))
    return cases


@contextmanager
def _environment(values: dict[str, str]):
    saved = {name: os.environ.get(name) for name in ENVIRONMENT}
    cwd = Path.cwd()
    try:
        for name in ENVIRONMENT:
            os.environ.pop(name, None)
        os.environ.update(values)
        os.chdir(THREADS)  # --deepspeed names in the Trainer's command line are opened from here
        yield
    finally:
        os.chdir(cwd)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


SHARED = "corpus/"  # a file name that starts so is a file of the shared config corpus (ACCELWIZ_CORPUS)


def needs_corpus(case: Case) -> bool:
    return any(f.startswith(SHARED) for f in (*case.files, *(case.trainer_args or ())))


def _path(name: str) -> str:
    if name.startswith(SHARED):
        from tests.conftest import corpus_dir

        return str(corpus_dir() / name.removeprefix(SHARED))  # type: ignore[operator]
    return name


def _training_args(case: Case) -> Any:
    """The Trainer's (and TRL's) arguments, as `check [--trl | --kind KIND] --training-args FILE -- ARGS` reads
    them (cli/check.py, cli/trainer_args.py trainer_inputs)."""
    from accelwiz.config.training_args import load_training_arguments, parse_argv

    argv = [_path(a) for a in case.trainer_args or ()]
    file = THREADS / case.training_args_file if case.training_args_file else None
    args = load_training_arguments(file, argv) or parse_argv([])
    args = replace(args, world_size=case.num_processes) if case.num_processes else args
    if case.trl:
        from accelwiz.config.trl_arguments import with_trl_defaults

        args = with_trl_defaults(args, sft=True)
    if case.kind:
        from accelwiz.config.trl_arguments import with_trl

        args = with_trl(args, case.kind, file, argv)
    return args


def run_case(case: Case) -> Any:
    """The CheckResult for a case."""
    from accelwiz.rules.engine import check_paths
    from accelwiz.rules.registry import select_rules

    context: dict[str, Any] = {}
    if case.system:
        from accelwiz.probe.profiles import load_system

        context["system"] = load_system(case.system)
    if case.model:
        from accelwiz.modelspec.lookup import resolve_model

        model = str(THREADS / case.model) if (THREADS / case.model).exists() else case.model
        # as check's --model and workload flags: each unit resolves its workload (without --micro-batch the run's
        # own batch, the Trainer's or the JSON's, is used)
        context["model"] = resolve_model(model)
        context["workload_flags"] = dict(case.workload)
    if case.trainer_args is not None or case.training_args_file is not None:
        context["training_args"] = _training_args(case)
    if case.num_processes:  # check --num-processes: the Trainer's world and the launch's count (cli/check.py)
        context["launch_flags"] = {"num_processes": case.num_processes}
    with _environment(case.env):
        return check_paths([THREADS / _path(f) for f in case.files], select_rules(), **context)


INPUT_ERROR = "input error"  # check refused to read a file (exit 2): as blocking as an error


def reported_codes(result: Any) -> tuple[str, ...]:
    codes = {d.code for d in result.diagnostics if d.severity.value in ("error", "warning")}
    return tuple(sorted(codes | ({INPUT_ERROR} if result.input_errors else set())))
