"""`accelwiz convert` carries the plan init wrote: the converted YAML gets its own plan (file names, paths
rebased, the estimate recomputed for the new backend), so `check` judges it as launched (SLURM supplies the
rendezvous: no AW104) and the memory table uses the plan's workload and machine."""

from __future__ import annotations

import pytest
import yaml


@pytest.fixture()
def slurm_zero3(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("init", "--system", "2x8xH100", "--model", "llama-3.1-70b", "--strategy", "zero3", "--defaults")
    assert result.exit_code == 0, result.stderr
    return tmp_path


def _plan(path):
    return yaml.safe_load(path.read_text())


def test_converted_files_get_the_plan_and_check_without_aw104(cli, slurm_zero3):
    result = cli("convert", "accelerate.yaml", "--to", "fsdp", "-o", "z3.fsdp.yaml", "--model", "llama-3.1-70b")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "AW104" not in result.stdout + result.stderr
    plan = _plan(slurm_zero3 / "z3.fsdp.plan.yaml")
    source = _plan(slurm_zero3 / "accelerate.plan.yaml")
    assert plan["files"] == {"accelerate": "z3.fsdp.yaml"}
    assert plan["launcher"] == source["launcher"] == {"kind": "slurm", "rdzv_backend": "c10d", "preflight": True}
    assert plan["estimate"]["strategy"].startswith("FSDP2") and source["estimate"]["strategy"].startswith("ZeRO-3")
    assert plan["created_by"].startswith("accelwiz convert")
    checked = cli("check", "z3.fsdp.yaml")
    assert "AW104" not in checked.stdout + checked.stderr and checked.exit_code in (0, 1)


def test_converting_back_carries_the_plan_again(cli, slurm_zero3):
    assert cli("convert", "accelerate.yaml", "--to", "fsdp", "-o", "z3.fsdp.yaml").exit_code == 0
    back = cli("convert", "z3.fsdp.yaml", "--to", "deepspeed", "-o", "back.yaml")
    assert back.exit_code == 0, back.stdout + back.stderr
    plan = _plan(slurm_zero3 / "back.plan.yaml")
    assert plan["files"] == {"accelerate": "back.yaml", "deepspeed": "back.ds.json"}
    assert plan["estimate"]["strategy"].startswith("ZeRO-3")
    assert "AW104" not in cli("check", "back.yaml").stdout


def test_without_model_or_system_the_table_uses_the_plan(cli, slurm_zero3):
    result = cli("convert", "accelerate.yaml", "--to", "fsdp", "-o", "z3.fsdp.yaml")
    table = result.stdout
    assert "before and after the conversion" in table and "workload: llama-3.1-70b" in table
    rows = [line for line in table.splitlines() if line.startswith(("ZeRO-3", "FSDP2"))]
    assert len(rows) == 2 and all(not row.rstrip().endswith("?") for row in rows)


def test_an_existing_plan_output_needs_force(cli, slurm_zero3):
    (slurm_zero3 / "z3.fsdp.plan.yaml").write_text("keep me\n")
    result = cli("convert", "accelerate.yaml", "--to", "fsdp", "-o", "z3.fsdp.yaml")
    assert result.exit_code == 2 and "z3.fsdp.plan.yaml exists" in result.stderr
    assert not (slurm_zero3 / "z3.fsdp.yaml").exists()
    assert (slurm_zero3 / "z3.fsdp.plan.yaml").read_text() == "keep me\n"


def test_a_plan_in_another_folder_is_rebased(cli, slurm_zero3):
    (slurm_zero3 / "out").mkdir()
    (slurm_zero3 / "model").mkdir()
    (slurm_zero3 / "model" / "config.json").write_text(
        '{"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, '
        '"num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000}')
    source = slurm_zero3 / "accelerate.plan.yaml"
    source.write_text(source.read_text().replace("name: llama-3.1-70b", "name: model/config.json"))
    assert cli("convert", "accelerate.yaml", "--to", "fsdp", "-o", "out/z3.yaml").exit_code in (0, 1)
    assert _plan(slurm_zero3 / "out" / "z3.plan.yaml")["model"]["name"] == "../model/config.json"
