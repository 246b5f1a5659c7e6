"""Issue 28: the library versions a run trains with are one field of the resolution (`stack`): the installed ones
from package metadata by default, `--stack NAME==VERSION` in `estimate` and `check --model`, refused in one line
where malformed; the estimate, its JSON, `check --explain` and `run`'s summary all read that one field."""

from __future__ import annotations

import json
import re
from importlib import metadata

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app
from accelwiz.errors import UsageError
from accelwiz.resolution.run import Run
from accelwiz.resolution.stack import INSTALLED, KNOWN, stack_from_flags
from accelwiz.resolution.workload import FLAG, Sourced, resolve_workload


def _installed(name: str) -> tuple[int, int, int] | None:
    try:
        text = metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
    numbers = [int(part) for part in re.match(r"[\d.]+", text).group(0).strip(".").split(".")]
    return tuple((numbers + [0, 0, 0])[:3])  # type: ignore[return-value]


def test_the_default_is_the_installed_versions_named_in_the_note() -> None:
    stack = resolve_workload().stack
    assert stack.source == INSTALLED
    assert (stack.value.transformers, stack.value.bitsandbytes) == (_installed("transformers"),
                                                                    _installed("bitsandbytes"))
    assert f"transformers {metadata.version('transformers').split('+')[0]}" in stack.note


def test_flags_name_versions_and_leave_the_others_installed() -> None:
    stack = stack_from_flags(["bitsandbytes==0.41.1", " Transformers == 4.37 "])
    assert (stack.bitsandbytes, stack.transformers) == ((0, 41, 1), (4, 37, 0))
    only = stack_from_flags(["bitsandbytes==0.42"])
    assert (only.bitsandbytes, only.transformers) == ((0, 42, 0), _installed("transformers"))
    resolved = resolve_workload(flags={"stack": ["bitsandbytes==0.41.1"]}).stack
    assert resolved.source == FLAG and "--stack bitsandbytes==0.41.1" in resolved.note
    assert "bitsandbytes 0.41.1, accelerate" in str(resolved.value)
    old = stack_from_flags(["accelerate==0.28.0", "torch==2.3.1"])
    assert (old.accelerate, old.torch, old.transformers) == ((0, 28, 0), (2, 3, 1), _installed("transformers"))


@pytest.mark.parametrize(("given", "message", "hint"), [
    ("bitsandbytes0.41.1", "expected NAME==VERSION", "transformers, bitsandbytes, accelerate, torch"),
    ("numpy==1.26.4", "no version of `numpy` changes the estimate", "transformers, bitsandbytes, accelerate"),
    ("accelerate==1.x", "`1.x` is not a version major.minor[.patch]", "--stack accelerate==0.28.0"),
    ("torch==2.3.1+cu121", "`2.3.1+cu121` is not a version", "--stack torch==2.3.1"),
    ("bitsandbytes==0.41.x", "`0.41.x` is not a version major.minor[.patch]", "0.41.1"),
    ("transformers==4", "`4` is not a version", "4.37.2"),
    ("transformers==4.37.0.1", "`4.37.0.1` is not a version", "4.37.2"),
])
def test_a_malformed_stack_is_refused_with_a_hint(given: str, message: str, hint: str) -> None:
    with pytest.raises(UsageError) as refused:
        stack_from_flags([given])
    assert message in refused.value.message and hint in refused.value.hint
    assert set(KNOWN) == {"transformers", "bitsandbytes", "accelerate", "torch", "deepspeed", "trl", "peft", "litgpt"}


def test_trl_is_said_never_read_from_what_is_installed() -> None:
    """TRL is the trainer a script runs: an installed TRL says nothing about a plain Trainer script or the built-in
    trainer, so the installed stack has none; --stack trl==X says it (estimate/workload.py trl_bf16_cast_parameters)."""
    from accelwiz.resolution.stack import installed_stack

    assert metadata.version("trl") and installed_stack().trl is None
    assert stack_from_flags(["trl==0.9.6"]).trl == (0, 9, 6)


def test_one_library_given_twice_is_refused() -> None:
    with pytest.raises(UsageError, match="names bitsandbytes twice"):
        stack_from_flags(["bitsandbytes==0.41.1", "bitsandbytes==0.42.0"])
    assert stack_from_flags(["bitsandbytes==0.41.1", "bitsandbytes==0.41.1"]).bitsandbytes == (0, 41, 1)


def _estimate(*extra: str) -> dict:
    result = CliRunner().invoke(app, ["estimate", "--model", "llama-2-7b", "--system", "1xA10G", "--strategy",
                                      "single", "--seq-len", "1024", "--format", "json", *extra])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_estimate_reads_the_stack_from_its_flags() -> None:
    today, old = _estimate("--qlora"), _estimate("--qlora", "--stack", "bitsandbytes==0.41.1",
                                                 "--stack", "transformers==4.37")
    assert old["workload"]["stack"] == {"transformers": "4.37.0", "bitsandbytes": "0.41.1", "trl": None}
    assert today["workload"]["stack"]["bitsandbytes"] == metadata.version("bitsandbytes")
    assert old["estimate"]["peak"]["allocated"] > today["estimate"]["peak"]["allocated"]
    notes = " ".join(old["estimate"]["assumptions"])
    assert "bitsandbytes 0.41.1 keeps each 4-bit linear's input" in notes
    assert "transformers 4.37.0 copies the fp32 logits" in notes
    lora = _estimate("--lora", "--stack", "bitsandbytes==0.41.1")  # no 4-bit linear: nothing changes
    assert lora["estimate"]["peak"] == _estimate("--lora")["estimate"]["peak"]


def test_estimate_refuses_a_bad_stack_in_one_line() -> None:
    result = CliRunner().invoke(app, ["estimate", "--model", "llama-2-7b", "--qlora", "--stack", "safetensors==0.4"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "no version of `safetensors` changes the estimate" in result.output


def test_check_explain_and_the_run_summary_show_the_stack(tmp_path, cli) -> None:
    config = tmp_path / "a.yaml"
    config.write_text("distributed_type: 'NO'\nmixed_precision: bf16\nnum_processes: 1\n")
    flagged = cli("check", str(config), "--explain", "--model", "llama-2-7b", "--qlora",
                  "--stack", "bitsandbytes==0.41.1")
    rows = {line.split()[0]: line for line in flagged.stdout.splitlines() if line.startswith("  ")}
    assert re.search(r"stack\s+transformers \S+, bitsandbytes 0.41.1, accelerate \S+, torch \S+, deepspeed \S+, "
                     r"peft \S+\s+"
                     r"flag\s+--stack bitsandbytes==0.41.1", rows["stack"])
    plain = cli("check", str(config), "--explain", "--model", "llama-2-7b", "--qlora")
    assert re.search(r"^  stack\s+transformers .*\s+installed\s+this environment's package metadata",
                     plain.stdout, re.M)
    refused = cli("check", str(config), "--model", "llama-2-7b", "--stack", "bitsandbytes")
    assert refused.exit_code == 2 and "expected NAME==VERSION" in refused.stderr
    run = Run(model=Sourced("tiny", FLAG), workload=resolve_workload(flags={"stack": ["transformers==4.37"]}))
    assert re.search(r"stack transformers 4\.37\.0, bitsandbytes \S+, accelerate \S+, torch \S+, deepspeed \S+, "
                     r"peft \S+ \(flag\)", run.summary())
    report = json.loads(json.dumps(run.for_report()))  # a JSON value, as run_report.json writes it
    assert report["stack"]["value"]["transformers"] == "4.37.0" and report["stack"]["source"] == FLAG
