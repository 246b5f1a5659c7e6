"""Issue 21.1: hostile values never become code. File names, YAML values and script arguments reach the sbatch
script, the printed node commands and comments as quoted words (bash gets back exactly the value), values the
launcher would refuse are one line and exit 2 (with --force too), a placeholder-looking argument is not
rewritten, and no control character reaches the terminal raw."""

from __future__ import annotations

import shlex
import subprocess
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelwiz.launch.shell import printable, quote
from accelwiz.plan_file import PlanFile, PlanFiles, PlanLauncher, PlanModel, PlanSystem, PlanTraining, dump_plan
from tests.apt import ensure_programs

TWO_NODES = "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 2\nmain_process_port: 29500\n"
# bash prints each argument accelerate would get on its own line, as `%q` (unambiguous, one line each)
FAKE_ACCELERATE = 'accelerate() { printf "%q\\n" "$@"; }\nexport -f accelerate\n'
HOSTILE_ARGS = ["@@MAIN_PROCESS_IP@@", '"$SLURM_NODEID"', "$(touch pwned)", "a;b|c&d", "\x1b]52;c;ZXZpbA==\x07",
                "\x1b[2J\x1b[H", "line\nbreak", "it's \\ quoted"]


def bash_words(line: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> list[str]:
    """Run `line` with `accelerate` faked; the arguments it received, decoded."""
    done = subprocess.run(["bash", "-c", FAKE_ACCELERATE + line], capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", **(env or {})}, cwd=cwd)
    return [bash_value(word) for word in done.stdout.splitlines()]


def bash_value(word: str, env: dict[str, str] | None = None) -> str:
    """What bash makes of one quoted word (bytes decoded as UTF-8: no newline translation)."""
    done = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True, env=env)
    return done.stdout.decode("utf-8")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=30))
def test_quote_gives_bash_back_the_exact_value_and_prints_no_control_character(word):
    assert bash_value(quote(word)) == word
    assert bash_value(quote(word), env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}) == word  # whatever the locale
    for shown in (quote(word), printable(word)):  # what a terminal gets: no control or format character
        assert not any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in shown), ascii(shown)


def cpu_plan(directory: Path) -> None:
    (directory / "accelerate.plan.yaml").write_text(dump_plan(PlanFile(
        files=PlanFiles(accelerate="accelerate.yaml"),
        system=PlanSystem(name="cpu-pair", machines=2, gpus_per_machine=0, host_memory_bytes=8 * 2**30),
        launcher=PlanLauncher(kind="slurm"), model=PlanModel(name="tiny"),
        training=PlanTraining(micro_batch=2, sequence_length=32, precision="fp32"))))


@pytest.fixture()
def work(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(TWO_NODES + "main_process_ip: 10.0.0.1\n")
    (tmp_path / "train.py").write_text("print('ok')\n")
    cpu_plan(tmp_path)
    return tmp_path


def test_node_commands_pass_hostile_arguments_unchanged_and_print_no_control_characters(cli, work):
    result = cli("run", "--print-node-commands", "--no-preflight", "train.py", "--", *HOSTILE_ARGS)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\x1b" not in result.stderr
    for rank, line in enumerate(lines):
        words = bash_words(line, cwd=work)
        assert words[-len(HOSTILE_ARGS):] == HOSTILE_ARGS  # not rewritten, not expanded, not split
        assert words[words.index("--machine_rank") + 1] == str(rank)
        assert words[words.index("--main_process_ip") + 1] == "10.0.0.1"
    assert not (work / "pwned").exists()


def test_sbatch_keeps_hostile_names_and_arguments_one_word(cli, work):
    """A config whose name has shell metacharacters (not control characters) and hostile script arguments:
    the script parses, shellcheck accepts it, and each srun task gets back exactly those words."""
    name = "c $(touch pwned) ';x'.yaml"
    (work / "accelerate.yaml").rename(work / name)
    (work / "accelerate.plan.yaml").write_text((work / "accelerate.plan.yaml").read_text()
                                               .replace("accelerate: accelerate.yaml", f"accelerate: {name!r}"))
    (work / "c $(touch pwned) ';x'.plan.yaml").write_text((work / "accelerate.plan.yaml").read_text())
    result = cli("run", "--config", name, "--slurm", "job.sbatch", "--no-preflight", "train.py", "--", *HOSTILE_ARGS)
    assert result.exit_code == 0, result.stderr
    job = work / "job.sbatch"
    subprocess.run(["bash", "-n", str(job)], check=True)
    text = job.read_text()
    assert "\x1b" not in text and all(line.startswith("#") for line in text.splitlines() if "touch" in line
                                      and not line.startswith("srun "))
    fake = ('scontrol() { if [ "$2" = node ]; then echo "NodeName=$3 NodeAddr=10.9.9.9"; else echo n1; fi; }\n'
            'srun() { shift 3; for id in 0 1; do SLURM_NODEID=$id "$@"; done; }\n')
    ran = subprocess.run(["bash", "-c", FAKE_ACCELERATE + fake + text.replace("#!/bin/bash", "", 1)],
                         capture_output=True, text=True, check=True, cwd=work,
                         env={"PATH": "/usr/bin:/bin", "SLURM_JOB_NODELIST": "n1", "SLURM_SUBMIT_DIR": str(work),
                              "SLURM_JOB_ID": "1"})
    printed = ran.stdout.splitlines()
    tasks = [printed[: len(printed) // 2], printed[len(printed) // 2:]]
    for rank, words in enumerate(tasks):
        decoded = [bash_value(word) for word in words]
        assert decoded[decoded.index("--config_file") + 1] == name
        assert decoded[decoded.index("--machine_rank") + 1] == str(rank)
        assert decoded[-len(HOSTILE_ARGS):] == HOSTILE_ARGS
    assert not (work / "pwned").exists()
    ensure_programs(["shellcheck"], ["shellcheck"])
    checked = subprocess.run(["shellcheck", str(job)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize(("key", "value"), [
    ("main_process_ip", "10.0.0.1\nrm -rf ~"),
    ("main_process_ip", "10.0.0.1; touch pwned"),
    ("main_process_ip", "\x1b]52;c;ZXZpbA==\x07"),
    ("rdzv_backend", "c10d\ntouch pwned"),
    ("rdzv_backend", "c10d $(touch pwned)"),
])
@pytest.mark.parametrize("how", [("--print-node-commands",), ("--slurm", "job.sbatch"), ("--dry-run",)])
def test_values_the_launcher_refuses_are_one_line_and_exit_2_even_with_force(cli, work, key, value, how):
    (work / "accelerate.yaml").write_text(TWO_NODES + f"{key}: {value!r}\n".replace("'", '"').replace("\\x1b", "\\e")
                                          .replace("\\x07", "\\a"))
    for force in ((), ("--force",)):
        result = cli("run", *how, *force)
        assert result.exit_code == 2, result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and key in errors[0], result.stderr
        assert result.stdout == "" and "\x1b" not in result.stderr and "\x07" not in result.stderr
        assert not (work / "job.sbatch").exists() and not (work / "pwned").exists()


@pytest.mark.parametrize("name", ["a\nb.yaml", "\x1b[2Jc.yaml"])
def test_a_config_name_with_a_control_character_is_refused(cli, work, name):
    (work / name).write_text(TWO_NODES)
    for how in (("--print-node-commands",), ("--slurm", "job.sbatch")):
        result = cli("run", "--config", name, *how, "--force")
        assert result.exit_code == 2 and "control character" in result.stderr
        assert "\x1b" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2  # error + hint
        assert not (work / "job.sbatch").exists()


def test_an_escape_sequence_in_another_yaml_value_is_shown_escaped(cli, work):
    """A value run does not pass on (mixed_precision) still appears in the findings and the summary: escaped."""
    (work / "accelerate.yaml").write_text(TWO_NODES + 'main_process_ip: 10.0.0.1\nmixed_precision: "\\e[2J\\e]0;x\\a"\n')
    result = cli("run", "--print-node-commands", "--force")
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "[2J" in result.stderr  # shown, as an escape (`\\x1b[2J` in the finding, `\\e[2J` in the summary)
    assert all(shlex.split(line) for line in result.stdout.splitlines())
