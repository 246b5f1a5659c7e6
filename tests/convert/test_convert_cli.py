"""`accelwiz convert` at the command line: bad input is one line + hint, exit 2, and nothing written (not even a
half pair); the two files are written both or neither; `--model` puts the estimator's per-GPU memory of both
configs side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelwiz.convert.files import write_all
from accelwiz.errors import InputError

ZERO3_JSON = '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}\n'
FSDP_YAML = """\
distributed_type: FSDP
num_machines: 1
num_processes: 4
mixed_precision: bf16
fsdp_config:
  fsdp_version: 2
  fsdp_reshard_after_forward: true
  fsdp_offload_params: false
"""
SYSTEMS = Path(__file__).resolve().parent.parent / "fixtures" / "systems"


def listing(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.is_file()}


def deepspeed_yaml(write, json_name: str = "zero3.json") -> Path:
    return write("zero3.yaml", "distributed_type: DEEPSPEED\nnum_machines: 1\nnum_processes: 4\ndeepspeed_config:\n"
                               f"  deepspeed_config_file: {json_name}\n  zero3_init_flag: true\n")


def refused(result, *words: str) -> None:
    assert result.exit_code == 2, result.stderr + result.stdout
    first, *rest = result.stderr.strip().splitlines()
    assert first.startswith("error:") and all(w in first for w in words), result.stderr
    assert rest and rest[0].strip().startswith("hint:"), result.stderr
    assert "Traceback" not in result.stderr


def test_missing_file(cli, tmp_path):
    refused(cli("convert", str(tmp_path / "none.yaml"), "--to", "fsdp"), "no such file")
    assert listing(tmp_path) == {}


def test_a_deepspeed_json_alone_is_refused(cli, write, tmp_path):
    json_file = write("zero3.json", ZERO3_JSON)
    before = listing(tmp_path)
    refused(cli("convert", str(json_file), "--to", "fsdp"), "zero3.json")
    assert listing(tmp_path) == before


def test_a_config_of_neither_backend_is_refused(cli, write, tmp_path):
    config = write("ddp.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\n")
    refused(cli("convert", str(config), "--to", "deepspeed"), "MULTI_GPU")
    assert sorted(listing(tmp_path)) == ["ddp.yaml"]


def test_a_yaml_naming_a_missing_json_is_refused(cli, write, tmp_path):
    config = deepspeed_yaml(write, "missing.json")
    refused(cli("convert", str(config), "--to", "fsdp"), "missing.json", "not found")
    assert sorted(listing(tmp_path)) == ["zero3.yaml"]


@pytest.mark.parametrize("out", ["a_file/out.yaml", "a_folder"])
def test_an_unwritable_out_writes_nothing(cli, write, tmp_path, out):
    config = write("fsdp.yaml", FSDP_YAML)
    write("a_file", "not a folder")
    (tmp_path / "a_folder").mkdir()
    before = listing(tmp_path)
    refused(cli("convert", str(config), "--to", "deepspeed", "-o", str(tmp_path / out), "--force"), "cannot write")
    assert listing(tmp_path) == before and listing(tmp_path / "a_folder") == {}


def test_an_out_in_a_missing_folder_is_refused_and_creates_nothing(cli, write, tmp_path):
    """As `run --slurm` and `migrate -o`: a mistyped -o leaves no new directory tree behind."""
    config = write("fsdp.yaml", FSDP_YAML)
    before = listing(tmp_path)
    result = cli("convert", str(config), "--to", "deepspeed", "-o", str(tmp_path / "no" / "such" / "out.yaml"))
    refused(result, "does not exist", "nothing was written")
    assert "mkdir -p" in result.stderr and listing(tmp_path) == before


def test_the_second_file_failing_puts_the_first_back(tmp_path):
    kept, new = tmp_path / "kept.json", tmp_path / "new.json"
    kept.write_text("old\n")
    blocked = tmp_path / "file" / "out.yaml"
    (tmp_path / "file").write_text("a file, not a folder")
    with pytest.raises(InputError, match="cannot write .*out.yaml"):
        write_all([(kept, "replaced\n"), (new, "new\n"), (blocked, "yaml\n")])
    assert kept.read_text() == "old\n" and not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "kept.json"]  # no temporary file left


def test_memory_side_by_side(cli, write, tmp_path):
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.resolved import workload_from_options

    write("zero3.json", ZERO3_JSON)
    config = deepspeed_yaml(write)
    result = cli("convert", str(config), "--to", "fsdp", "-o", str(tmp_path / "fsdp.yaml"),
                 "--model", "gpt2", "--seq-len", "512", "--system", str(SYSTEMS / "8xH100-80GB.json"))
    assert result.exit_code == 0, result.stderr + result.stdout
    # the JSON's micro-batch 1 (what DeepSpeed keeps), as check and run resolve it
    workload = workload_from_options(model="gpt2", micro_batch=1, seq_len=512)
    table = result.stdout.splitlines()
    header = next(i for i, line in enumerate(table) if line.startswith("strategy"))
    width = table[header + 1].index(" ")  # the first column's rule
    rows = {line[:width].strip(): line[width:].split() for line in table[header + 2:header + 4]}
    assert list(rows) == ["ZeRO-3", "FSDP2 full"]  # the source first
    for label, strategy in (("ZeRO-3", Strategy("zero3", gpus_per_node=4)),
                            ("FSDP2 full", Strategy("fsdp_full", gpus_per_node=4, fsdp_version=2))):
        *_, total, _host, fits, _as, _asked = rows[label]  # the last column: "as asked" (a conversion changes no workload)
        assert total == f"{estimate_memory(workload, strategy).per_gpu_total / 2**30:.1f}", (label, rows[label])
        assert fits == "yes"  # gpt2 fits an 80 GB GPU either way


def test_a_micro_batch_against_the_json_is_refused_and_nothing_written(cli, write, tmp_path):
    """convert sized --micro-batch 2 while the JSON's 1 is what DeepSpeed trains: refused in one line, as check,
    estimate --config and run refuse it, before any file is written."""
    write("zero3.json", ZERO3_JSON)
    config = deepspeed_yaml(write)
    result = cli("convert", str(config), "--to", "fsdp", "-o", str(tmp_path / "fsdp.yaml"), "--model", "gpt2",
                 "--micro-batch", "2")
    assert result.exit_code == 2
    assert "--micro-batch 2 contradicts the deepspeed json's micro_batch 1" in result.stderr
    assert not (tmp_path / "fsdp.yaml").exists()
