"""The header of a file `convert` (or `migrate -o`) writes says what wrote it, and every launch line in it starts the
written file (issue 31): the source header's "Written by: accelwiz init ... -o zero3.yaml" and its launch lines
naming zero3.yaml were carried into zero3.fsdp.yaml, so a copied line ran the source. Each launch line is read as a
shell reads it (shlex), and its --config is given to `accelwiz run --dry-run`, whose printed command must launch the
written file."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml


def header(path: Path) -> list[str]:
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[2:])
    return lines


def launch_lines(path: Path) -> list[list[str]]:
    lines = header(path)
    start = lines.index("Launch:") + 1
    return [shlex.split(line, comments=True) for line in lines[start:] if line.startswith("  ")]


def config_of(argv: list[str]) -> str:
    flag = "--config" if "--config" in argv else "--config_file"
    return argv[argv.index(flag) + 1]


def written_by(path: Path) -> list[str]:
    line = next(line for line in header(path) if line.startswith("Written by: "))
    return shlex.split(line[len("Written by: "):])


def dry_run_config(cli, config: str) -> str:
    """The --config_file of the command `accelwiz run --config CONFIG train.py --dry-run` prints."""
    Path("train.py").touch()
    result = cli("run", "--config", config, "train.py", "--dry-run", "--force")
    assert result.exit_code == 0, result.stderr
    return config_of(shlex.split(result.stdout.strip().splitlines()[-1]))


@pytest.fixture()
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative names, as a user types them
    return tmp_path


@pytest.mark.parametrize(("strategy", "to", "output"), [
    ("zero3", "fsdp", None),
    ("fsdp_full", "deepspeed", "my run/ds config.yaml"),  # a folder and a name with spaces: quoted
])
def test_converted_header_names_the_written_file(cli, here, strategy, to, output):
    made = cli("init", "--model", "llama-8b", "--system", "8xA100-80GB", "--strategy", strategy, "--defaults",
               "-o", "src.yaml")
    assert made.exit_code == 0, made.stderr
    argv = ["convert", "src.yaml", "--to", to] + (["-o", output] if output else [])
    if output:
        Path(output).parent.mkdir()
    result = cli(*argv)
    assert result.exit_code == 0, result.stderr
    out = Path(output or f"src.{to}.yaml")
    assert written_by(out) == ["accelwiz", "convert", "src.yaml", "--to", to, "-o", str(out)]
    assert any(line.startswith("Converted from: src.yaml (written by: accelwiz init") for line in header(out))
    lines = launch_lines(out)
    assert len(lines) == 3
    for argv in lines:
        assert config_of(argv) == str(out), argv
    assert dry_run_config(cli, config_of(lines[0])) == str(out)
    plan = yaml.safe_load(Path(str(out)[: -len(".yaml")] + ".plan.yaml").read_text())
    assert shlex.split(plan["created_by"]) == written_by(out)
    memory = next(line for line in header(out) if line.startswith("Memory: "))
    assert memory.startswith(f"Memory: {plan['estimate']['strategy']}: "), memory


def test_multi_node_header_keeps_the_launcher_and_names_the_written_file(cli, here):
    made = cli("init", "--model", "llama-8b", "--system", "2x8xA100-80GB", "--machines", "2", "--strategy", "zero3",
               "--for", "trainer", "--defaults", "-o", "t.yaml")
    assert made.exit_code == 0, made.stderr
    assert cli("convert", "t.yaml", "--to", "fsdp").exit_code == 0
    out = Path("t.fsdp.yaml")
    (line,) = launch_lines(out)
    assert line[:6] == ["accelwiz", "run", "--config", "t.fsdp.yaml", "--slurm", "job.sbatch"], line
    said = header(out)
    assert any(text.startswith("TrainingArguments: --per_device_train_batch_size 1") for text in said), said
    assert not any("DeepSpeed JSON)" in text for text in said), said  # FSDP reads none


def test_a_source_without_our_header_keeps_its_comments_under_a_new_header(cli, here):
    Path("ds.json").write_text('{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}\n')
    Path("mine.yaml").write_text("# my ZeRO-3 setup\ndistributed_type: DEEPSPEED\nnum_machines: 1\n"
                                 "num_processes: 4\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n")
    assert cli("convert", "mine.yaml", "--to", "fsdp").exit_code == 0
    said = header(Path("mine.fsdp.yaml"))
    assert said[0] == "Written by: accelwiz convert mine.yaml --to fsdp -o mine.fsdp.yaml"
    assert "Converted from: mine.yaml" in said and "my ZeRO-3 setup" in said
    assert {config_of(argv) for argv in launch_lines(Path("mine.fsdp.yaml"))} == {"mine.fsdp.yaml"}


def test_migrate_to_a_new_file_names_it(cli, here):
    made = cli("init", "--model", "llama-8b", "--system", "8xA100-80GB", "--strategy", "fsdp_full", "--defaults",
               "-o", "f.yaml")
    assert made.exit_code == 0, made.stderr
    text = Path("f.yaml").read_text()
    assert "fsdp_version: 2" in text
    Path("f.yaml").write_text(text.replace("fsdp_version: 2", "fsdp_version: 1"))  # an FSDP1 config to migrate
    result = cli("migrate", "f.yaml", "-o", "f 2.yaml")
    assert result.exit_code == 0, result.stderr
    out = Path("f 2.yaml")
    assert written_by(out) == ["accelwiz", "migrate", "f.yaml", "-o", "f 2.yaml"]
    assert {config_of(argv) for argv in launch_lines(out)} == {"f 2.yaml"}
    assert "fsdp_version: 2" in out.read_text()
    in_place = cli("migrate", "f.yaml")  # in place the header stays: the file name in it is still right
    assert in_place.exit_code == 0, in_place.stderr
    assert written_by(Path("f.yaml"))[:2] == ["accelwiz", "init"]
