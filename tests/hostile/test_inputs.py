"""Hostile inputs: every one is one line and exit 2 (or a finding), never a traceback or a hang (issue 21).

Commands run in-process under an alarm (tests/hostile/mutants.run_command): a hang fails the test instead of
stopping the suite, and a special file (a real FIFO, /dev/zero, /dev/urandom) is opened for real.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from tests.hostile.mutants import ANSWERS, HF_CONFIG, run_command

HUGE = "9" * 5000


def _all_readers(tmp_path: Path, config: Path, answers: Path, model: Path) -> list[tuple[str, list[str]]]:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return [
        ("check", ["check", str(config)]),
        ("check --format json", ["check", "--format", "json", str(config)]),
        ("check --explain", ["check", "--explain", str(config)]),
        ("check --fix", ["check", "--fix", str(config)]),
        ("convert", ["convert", str(config), "--to", "fsdp", "-o", str(out / "c.yaml")]),
        ("migrate", ["migrate", str(config)]),
        ("estimate --model", ["estimate", "--model", str(model)]),
        ("init --answers", ["init", "--answers", str(answers), "--defaults", "-o", str(out / "i.yaml")]),
    ]


def _run(label: str, argv: list[str]):
    from typer.testing import CliRunner

    from accelwiz.cli import app

    outcome = run_command(label, argv, timeout=60)
    assert outcome.ok and outcome.exit_code is not None, (label, outcome)
    return CliRunner().invoke(app, argv)  # again, for the text: the outcome proved it ends


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "/dev/urandom"])
def test_special_files_are_refused_by_every_reader_without_reading(tmp_path, special):
    """A FIFO blocks `open` until a writer comes; /dev/zero and /dev/urandom have st_size 0 and never end
    (`check --fix /dev/zero` grew to 24 GiB)."""
    path = tmp_path / "pipe.yaml"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path = Path(special)
    for label, argv in _all_readers(tmp_path, path, path, path):
        result = _run(label, argv)
        assert result.exit_code == 2, (label, result.stderr)
        assert "not a regular file; nothing was read" in result.stderr, (label, result.stderr)


@pytest.mark.parametrize("syntax", ["yaml", "json"])
def test_a_5000_digit_integer_is_one_line_in_every_command(tmp_path, syntax):
    config = tmp_path / f"cfg.{syntax}"
    config.write_text(f"distributed_type: MULTI_GPU\nnum_processes: {HUGE}\n" if syntax == "yaml" else
                      f'{{"train_micro_batch_size_per_gpu": {HUGE}, "zero_optimization": {{"stage": 2}}}}')
    answers = tmp_path / "answers.yaml"
    answers.write_text(f"micro_batch: {HUGE}\n")
    model = tmp_path / "config.json"
    model.write_text(HF_CONFIG.replace('"hidden_size": 256', f'"hidden_size": {HUGE}'))
    for label, argv in _all_readers(tmp_path, config, answers, model):
        result = _run(label, argv)
        assert result.exit_code == 2, (label, result.stderr)
        assert "Traceback" not in result.stderr and HUGE[:100] not in result.stderr
        if label == "check --format json":
            assert json.loads(result.stdout) == []  # --format json still prints JSON


def test_a_count_above_any_machine_is_a_finding_not_an_overflow(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("distributed_type: MULTI_GPU\nnum_processes: 100000000000\n")
    result = cli("check", "a.yaml")
    assert result.exit_code == 1 and "AW004" in result.stdout and "100000000000" in result.stdout
    (tmp_path / "train.py").write_text("print(1)\n")
    run = cli("run", "--config", "a.yaml", "--dry-run", "train.py")
    assert run.exit_code != 0 and "AW004" in run.stdout + run.stderr
    (tmp_path / "b.yaml").write_text(f"distributed_type: MULTI_GPU\nnum_processes: {10**100}\n")
    result = cli("check", "b.yaml")
    assert result.exit_code == 2 and "101-digit number is larger than any integer" in result.stderr


@pytest.mark.parametrize("name,data,needle", [
    ("latin1", "micro_batch: 4 # caf\xe9\n".encode("latin-1"), "not UTF-8"),
    ("utf16", ANSWERS.encode("utf-16"), "UTF-16"),
    ("utf16-no-bom", ANSWERS.encode("utf-16-le"), "UTF-16"),
    ("binary", bytes(range(256)) * 4, "binary"),
    ("deep", ("model: " + "[" * 10_000 + "]" * 10_000 + "\n").encode(), "nesting"),
    ("deep-mapping", ("a:\n" + "".join(" " * i + "b:\n" for i in range(1, 3000))).encode(), "nesting"),
])
def test_unreadable_answers_and_model_files(tmp_path, name, data, needle):
    for label, path, argv in (
        ("init --answers", tmp_path / "answers.yaml", ["init", "--answers", "{}", "--defaults", "--dry-run"]),
        ("estimate --model", tmp_path / "config.json", ["estimate", "--model", "{}"]),
    ):
        path.write_bytes(data if label.startswith("init") or name != "deep" else
                         b'{"a": ' + b"[" * 10_000 + b"]" * 10_000 + b"}")
        result = _run(label, [a.replace("{}", str(path)) for a in argv])
        assert result.exit_code == 2, (label, result.stderr)
        expected = needle if label.startswith("init") or needle != "nesting" or name == "deep" else "JSON"
        assert expected in result.stderr, (label, result.stderr)


def test_an_alias_bomb_under_model_and_a_50_mb_answers_file(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{c}: &{c} [{','.join(['*' + p] * 9)}]" for p, c in zip("abcdef", "bcdefg", strict=True)]
    bomb.write_text("\n".join(lines).replace("a: &a", "model: &a", 1).replace("*a", "*a") + "\n")
    assert len(bomb.read_bytes()) < 400
    result = _run("init --answers", ["init", "--answers", str(bomb), "--defaults", "--dry-run"])
    assert result.exit_code == 2 and "alias bomb" in result.stderr
    big = tmp_path / "big.yaml"
    with big.open("wb") as stream:
        stream.write(ANSWERS.encode())
        stream.write(b"#" * (50 * 2**20))
    result = _run("init --answers", ["init", "--answers", str(big), "--defaults", "--dry-run"])
    assert result.exit_code == 2 and "too large" in result.stderr


def test_an_empty_deepspeed_config_file_fails_check_and_convert(cli, tmp_path, monkeypatch):
    """accelerate exports it, `DeepSpeedPlugin` takes any string but "none" as a file, and
    `HfDeepSpeedConfig("")` raises in every worker."""
    from accelerate.utils.deepspeed import HfDeepSpeedConfig

    with pytest.raises(ValueError, match="Expected a string path"):
        HfDeepSpeedConfig("")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("distributed_type: DEEPSPEED\nnum_processes: 2\n"
                                     "deepspeed_config:\n  deepspeed_config_file: ''\n")
    result = cli("check", "a.yaml")
    assert result.exit_code == 1 and "AW202" in result.stdout
    result = cli("convert", "a.yaml", "--to", "fsdp")
    assert result.exit_code == 2 and "`deepspeed_config_file` is ''" in result.stderr
    assert not (tmp_path / "a.fsdp.yaml").exists()


def test_deepspeed_config_as_a_string_is_not_converted_as_zero2(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config: zero3\n")
    result = cli("convert", "a.yaml", "--to", "fsdp")
    assert result.exit_code == 2 and "not a mapping" in result.stderr
    assert not (tmp_path / "a.fsdp.yaml").exists()
    assert "AW003" in cli("check", "a.yaml").stdout


@pytest.mark.parametrize("text", [
    "num_processes: 2\nnum_processes: 8\n",  # duplicate: the last wins
    "a:\n  b: 1\na:\n  c: 2\n",
    "a: {b: 1}\na: 3\n",
    "x: &x {b: 1}\ny:\n  <<: *x\n  b: 2\n",
    "a: 1 # c\n",
    "a: 1\r\nb: 2\r\n",
    "a: 017\nb: 0o17\nc: 1_000\nd: 1:30\ne: 0x1f\n",  # YAML 1.1 integers
    "a: 1e8\nb: 1.0e+8\nc: .inf\n",  # 1e8 is a string in YAML 1.1
    "a:\tb\n",  # a tab after a colon: PyYAML refuses it
    "num_processes:\t8\n",
    "\ta: 1\n",
    "a: b\t# c\n",
])
def test_yaml_is_read_as_accelerates_yaml_safe_load_reads_it(text):
    """accelerate reads its config with yaml.safe_load (commands/config/config_args.py, load_config_from_file):
    the data, duplicates and tabs included, is what it reads, and what it refuses is refused."""
    from accelwiz.document.yaml_reader import read_yaml
    from accelwiz.errors import InputError

    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        with pytest.raises(InputError) as refused:
            read_yaml(text)
        if "\t" in text:
            assert "replace the tab with spaces" in (refused.value.hint or "")
        return
    assert read_yaml(text)[0] == expected


def test_a_duplicate_key_is_read_last_wins_and_warned(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("distributed_type: MULTI_GPU\nnum_processes: 2\nnum_processes: 10000000\n")
    result = cli("check", "a.yaml")
    assert "AW012" in result.stdout and "AW004" in result.stdout  # the last value is the one judged


@pytest.mark.parametrize("text", ['{"distributed_type":\t"MULTI_GPU", "num_processes": 2}',
                                  '{"distributed_type": "FSDP", "fsdp_config": {"fsdp_min_num_params": 1e8}}'])
def test_a_json_looking_accelerate_yaml_is_read_as_yaml_as_accelerate_reads_it(text):
    """accelerate reads an Accelerate config not named *.json with yaml.safe_load (load_config_from_file), so
    the tab is refused and 1e8 is a string there; a *.json config is read with json.load."""
    from accelwiz.document.load import parse_text
    from accelwiz.errors import InputError

    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        with pytest.raises(InputError, match="tab|'\\\\t'"):
            parse_text(text, Path("accelerate.yaml"))
    else:
        assert parse_text(text, Path("accelerate.yaml")).data == expected
    assert parse_text(text, Path("accelerate.json")).data == json.loads(text)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_special_files_as_a_machine_profile_or_training_arguments(tmp_path, special):
    path = tmp_path / "pipe.json"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path = Path(special)
    config = tmp_path / "a.yaml"
    config.write_text("distributed_type: MULTI_GPU\nnum_processes: 2\n")
    for label, argv in (("check --system", ["check", str(config), "--system", str(path)]),
                        ("check --training-args", ["check", str(config), "--training-args", str(path)])):
        result = _run(label, argv)
        assert result.exit_code == 2 and "not a regular file" in result.stderr, (label, result.stderr)


def test_a_model_name_too_long_for_a_path_is_an_unknown_model(tmp_path):
    """`--model` is tried as a path first: a 5,000-character name makes stat() fail with ENAMETOOLONG."""
    name = "llama-3-8" + "x" * 5000 + "b"
    result = _run("estimate --model", ["estimate", "--model", name])
    assert result.exit_code == 2 and "unknown model" in result.stderr
    answers = tmp_path / "answers.yaml"
    answers.write_text(ANSWERS.replace("model: llama-3-8b", f"model: {name}"))
    result = _run("init --answers", ["init", "--answers", str(answers), "--defaults", "--dry-run"])
    assert result.exit_code == 2 and "Traceback" not in result.stderr


def test_a_file_name_too_long_for_the_file_system(tmp_path, monkeypatch):
    """NAME_MAX is 255: stat() fails with ENAMETOOLONG, which Path.exists() does not swallow."""
    monkeypatch.chdir(tmp_path)
    name = "y" * 300 + ".yaml"
    for label, argv in (("check", ["check", name]), ("check --fix", ["check", "--fix", name]),
                        ("migrate", ["migrate", name]), ("convert", ["convert", name, "--to", "fsdp"]),
                        ("init -o", ["init", "--defaults", "-o", name])):
        result = _run(label, argv)
        assert result.exit_code == 2 and "error: " in result.stderr, (label, result.stderr)
        assert "internal error" not in result.stderr, label
