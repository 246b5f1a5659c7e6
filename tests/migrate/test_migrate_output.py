"""`migrate -o` into a folder that does not exist is refused, like `run --slurm`: one line and a hint, exit 2,
nothing written and no folder created (a mistyped path must not become a new directory tree)."""

from __future__ import annotations

FSDP1 = "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"


def test_output_in_a_missing_folder_is_refused_and_nothing_is_created(cli, write, tmp_path):
    source = write("f.yaml", FSDP1)
    missing = tmp_path / "nope" / "deeper"
    result = cli("migrate", str(source), "-o", str(missing / "x.yaml"))
    assert result.exit_code == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"the folder {missing} does not exist" in result.stderr and "mkdir -p" in result.stderr
    assert not (tmp_path / "nope").exists()
    assert source.read_text() == FSDP1 and not (tmp_path / "f.yaml.bak").exists()


def test_output_in_an_existing_folder_is_written(cli, write, tmp_path):
    source = write("f.yaml", FSDP1)
    (tmp_path / "out").mkdir()
    result = cli("migrate", str(source), "-o", str(tmp_path / "out" / "x.yaml"))
    assert result.exit_code == 0, result.stderr
    assert "fsdp_reshard_after_forward: true" in (tmp_path / "out" / "x.yaml").read_text()
    assert source.read_text() == FSDP1
