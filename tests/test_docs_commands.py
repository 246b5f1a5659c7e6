"""Every command README.md and docs/*.md document runs as written (tests/doc_pages.py reads them from the pages).

A page's commands run in page order in one fresh folder, as a reader pasting them would (a `cd` at the end of a
line moves the next ones), through bash, with the installed `accelwiz`. Each must exit with the code its line
shows (0 unless a `# exit N` comment says so) and print the output lines the page quotes under it. The few that
cannot run here are in NOT_RUN, each with its reason; a command that is neither run nor listed fails the test, so a
new documented command cannot hide, and a NOT_RUN entry no page has any more fails it too.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.doc_pages import REPO, Command, commands, loose, pages

pytestmark = pytest.mark.skipif(shutil.which("accelwiz") is None, reason="the accelwiz script is not installed")

# The documented commands this CPU machine cannot run, by page and exact command text, and why. A page named with
# the command None: every command of that page.
NOT_RUN: dict[tuple[str, str | None], str] = {
    ("README.md", "pip install torch==2.13.0 && pip install -e '.[train,deepspeed,qlora,test]' && python -m pytest "
                  "-q -n 2"): "the test suite itself (.ci/run runs exactly this line)",
    ("README.md", "accelwiz init                     # questions pre-filled from the probe and the estimator"):
        "interactive: needs a terminal; tests/wizard/test_terminal.py answers it in a real pseudo-terminal",
    ("README.md", "accelwiz run --slurm job.sbatch train.py && sbatch job.sbatch"):
        "SLURM: no sbatch here; tests/launch run the script on a two-node SLURM cluster",
    ("doctor.md", "PYTHONPATH=fake-site:$PYTHONPATH accelwiz doctor --nodes 2 --node-rank 1 --main-address 127.0.0.1 "
                  "--main-port 46277"): "multi-node: node 0 must run beside it; tests/doctor/ runs both on loopback",
    ("rules.md", None): "each rule's example is run by tests/rules/test_rule_examples.py, from the rule docs this "
                        "page is generated from",
}

# The pip installs before the quickstart: the environment under test is the installed one (a reinstall from a test
# would change every other test's environment); the rest of the line runs as written.
INSTALL = re.compile(r"^(?:pip install [^&]+&&\s*)+")

# Files the pages name as the reader's own (their config, their script), written into the page's folder before its
# first command. EXAMPLE stands for what `accelwiz example` makes (built once per session).
EXAMPLE = "the files of `accelwiz example`"
GIVEN: dict[str, dict[str, str]] = {
    "README.md": {
        "fsdp.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nmixed_precision: bf16\n"
                     "num_machines: 1\nnum_processes: 8\nfsdp_config:\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
                     "  fsdp_backward_prefetch: BACKWARD_PRE\n  fsdp_sharding_strategy: FULL_SHARD\n"
                     "  fsdp_state_dict_type: SHARDED_STATE_DICT\n  fsdp_use_orig_params: true\n",
        "old.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nfp16: true\n"
                    "dynamo_backend: INDUCTOR\nnum_machines: 1\nnum_processes: 2\n",
        "train.py": "import sys\n\nprint('train.py', sys.argv[1:])\n",
    },
    "posttraining.md": {
        EXAMPLE: "",
        "accelerate.yaml": "distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 3\nmixed_precision: bf16\n",
        "recipe.yaml": "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\nnum_generations: 8\nbf16: true\n",
    },
}

# Pages whose commands start real training (accelerate launch): marked slow, still run in CI.
TRAINS = {"README.md", "posttraining.md"}


def documented(page: Path) -> list[Command]:
    return commands(page.read_text(), page.name)


def listed(command: Command) -> str | None:
    return NOT_RUN.get((command.page, command.line)) or NOT_RUN.get((command.page, None))


def run_page(page: Path, folder: Path, example: Path | None) -> list[str]:
    """Runs the page's commands in order in `folder`; returns what went wrong, one entry per command."""
    for name, text in GIVEN.get(page.name, {}).items():
        if name == EXAMPLE:
            shutil.copytree(example, folder, dirs_exist_ok=True)
        else:
            (folder / name).write_text(text)
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "HF_HUB_OFFLINE": "1"}
    problems = []
    for command in documented(page):
        if listed(command):
            continue
        result = subprocess.run(["bash", "-c", INSTALL.sub("", command.line)], cwd=folder, env=env,
                                capture_output=True, text=True, timeout=600)
        printed = result.stdout + result.stderr
        where = f"{command.page}:{command.number}: `{command.line}`"
        if result.returncode != command.exit_code:
            problems.append(f"{where} exited {result.returncode}, the page says {command.exit_code}:\n"
                            f"{printed[-2000:]}")
        problems += [f"{where} did not print `{quoted}`:\n{printed[-2000:]}"
                     for quoted in command.quoted if not loose(quoted).search(printed)]
        moved = re.search(r"(?:^|&&)\s*cd\s+(\S+)\s*$", command.line)
        if moved:
            folder = folder / shlex.split(moved.group(1))[0]
    return problems


@pytest.fixture(scope="session")
def example_files(tmp_path_factory) -> Path:
    """`accelwiz example`'s files, made once for every page that takes them as the reader's own."""
    folder = tmp_path_factory.mktemp("example") / "made"
    made = subprocess.run(["accelwiz", "example", str(folder)], check=True, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=600)
    # its own two lines only: no library warning about a missing GPU, no progress bar
    assert [line.split(":")[0] for line in made.stderr.splitlines()] == [f"wrote {folder}", "next"], made.stderr
    (folder / ".accelwiz-example").unlink()  # a reader's own files, not an example folder
    return folder


@pytest.mark.parametrize("page", [pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.name in TRAINS else [])
                                  for p in pages()])
def test_every_documented_command_runs_as_written(page, tmp_path, request):
    needs_example = EXAMPLE in GIVEN.get(page.name, {})
    problems = run_page(page, tmp_path, request.getfixturevalue("example_files") if needs_example else None)
    assert not problems, "\n\n".join(problems)


def test_every_documented_command_is_run_or_listed():
    """Every command is run by the test above unless NOT_RUN lists it (then with a reason), and every entry of
    NOT_RUN is still a documented command, so the table cannot outlive what it excuses."""
    found = {(c.page, c.line) for p in pages() for c in documented(p)}
    stale = [key for key in NOT_RUN if key[1] is not None and key not in found
             or key[1] is None and not any(page == key[0] for page, _ in found)]
    assert not stale, f"NOT_RUN lists commands no page documents: {stale}"
    assert all(reason.strip() for reason in NOT_RUN.values())
    run = [line for page, line in found if (page, line) not in NOT_RUN and (page, None) not in NOT_RUN]
    assert any("accelwiz run" in line for line in run), "the pages' training commands must run here"


def test_the_reader_understands_a_page_as_the_test_does():
    """The parser on a page fragment: `$ ` lines, a continuation, quoted output, the exit code a comment shows,
    bash blocks, and yaml blocks left alone."""
    text = ("```console\n$ accelwiz check a.yaml  # exit 1: an error\na.yaml:1:1: AW001 error x\n...\n"
            "$ accelwiz estimate --model tiny \\\n    --seq-len 64\n```\n\n```yaml\n$ not: a command\n```\n\n"
            "```bash\n# a comment\npip install x && accelwiz run\n```\n")
    found = commands(text, "p.md")
    assert [(c.line, c.exit_code, c.quoted) for c in found] == [
        ("accelwiz check a.yaml  # exit 1: an error", 1, ["a.yaml:1:1: AW001 error x"]),
        ("accelwiz estimate --model tiny --seq-len 64", 0, []),
        ("pip install x && accelwiz run", 0, []),
    ]
    assert INSTALL.sub("", found[2].line) == "accelwiz run"
    assert listed(found[0]) is None and REPO.is_dir()
