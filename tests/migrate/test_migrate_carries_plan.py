"""Issue 30/31: `accelwiz migrate OLD.yaml -o NEW.yaml` carries the plan beside OLD (as `convert` does, through
accelwiz/convert/carried_plan.py), so `run --config NEW.yaml` trains what OLD's plan says instead of having no model
and other defaults. Judged from the argv a user types: `run --dry-run`'s line, and the run the launched trainer
resolves from it."""

from __future__ import annotations

import shlex

import pytest
import yaml

# the plan's workload differs from every default (micro-batch 1, sequence 256 for tiny)
ANSWERS = "micro_batch: 2\nseq_len: 64\n"
FSDP1 = ("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_machines: 1\nnum_processes: 2\n"
         "use_cpu: true\nmixed_precision: 'no'\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
         "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n")


@pytest.fixture()
def planned(cli, tmp_path, monkeypatch):
    """old.yaml and old.plan.yaml as init wrote them (two CPU processes, micro-batch 2, sequence 64)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ans.yaml").write_text(ANSWERS)
    result = cli("init", "--model", "tiny", "--system", "local", "--processes", "2", "--answers", "ans.yaml",
                 "--defaults", "-o", "old.yaml")
    assert result.exit_code == 0, result.stderr
    return tmp_path


def _trainer_run(cli, config: str, *flags: str):
    """What the trainer that `run --config CONFIG --dry-run` would launch resolves: model, workload, post."""
    from accelwiz.trainer.options import parse_args
    from accelwiz.trainer.settings import resolve_settings

    result = cli("run", "--config", config, "--dry-run", *flags)
    assert result.exit_code == 0, result.stderr
    words = shlex.split(result.stdout)
    assert words[words.index("--config_file") + 1] == config
    run = resolve_settings(parse_args(words[words.index("accelwiz.trainer.train") + 1:]))
    return run.model, run.workload, run.post


@pytest.mark.parametrize(("old_text", "migrate_flags", "run_flags"), [
    # a legacy key rewritten for today's accelerate: the YAML stays valid here
    (None, ("--to-accelerate", "1.15"), ()),
    # FSDP1 -> FSDP2; FSDP on CPUs is AW118 (an error), so the dry run, which launches nothing, needs --force
    (FSDP1, (), ("--force",)),
], ids=["to-accelerate", "fsdp1"])
def test_run_of_the_migrated_file_resolves_the_same_workload(cli, planned, old_text, migrate_flags, run_flags):
    old = planned / "old.yaml"
    old.write_text(old_text if old_text is not None else old.read_text() + "dynamo_backend: 'NO'\n")
    before = _trainer_run(cli, "old.yaml", *run_flags)
    migrated = cli("migrate", "old.yaml", "-o", "new.yaml", *migrate_flags)
    assert migrated.exit_code in (0, 1), migrated.stderr
    assert "old.plan.yaml) carried to new.plan.yaml" in migrated.stderr
    after = _trainer_run(cli, "new.yaml", *run_flags)
    assert after == before
    model, workload, _ = after
    assert (model.value, model.source) == ("tiny", "plan")
    assert (workload.micro_batch.value, workload.seq_len.value, workload.seq_len.source) == (2, 64, "plan")
    plan = yaml.safe_load((planned / "new.plan.yaml").read_text())
    assert plan["files"] == {"accelerate": "new.yaml"}
    assert plan["created_by"] == shlex.join(["accelwiz", "migrate", "old.yaml", "-o", "new.yaml", *migrate_flags])
    if old_text is None:  # init's header, rewritten for the new file (a hand-written YAML gets none)
        assert "Written by: accelwiz migrate old.yaml -o new.yaml" in (planned / "new.yaml").read_text()


def test_the_migrated_file_is_checked_with_its_plan(cli, planned):
    """`check new.yaml` reads new.plan.yaml; migrate's own check of what it wrote agrees with it."""
    (planned / "old.yaml").write_text(FSDP1)
    migrated = cli("migrate", "old.yaml", "-o", "new.yaml")
    checked = cli("check", "new.yaml")
    assert migrated.exit_code == checked.exit_code == 1  # AW118, from both
    assert "AW118" in migrated.stdout and "AW118" in checked.stdout


def test_without_a_plan_nothing_is_carried(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("f.yaml", FSDP1)
    migrated = cli("migrate", "f.yaml", "-o", "g.yaml")
    assert migrated.exit_code in (0, 1), migrated.stderr
    assert "carried" not in migrated.stderr and not (tmp_path / "g.plan.yaml").exists()


def test_a_plan_carried_to_another_folder_names_its_files_from_there(cli, planned):
    (planned / "old.yaml").write_text(FSDP1)
    (planned / "out").mkdir()
    assert cli("migrate", "old.yaml", "-o", "out/new.yaml").exit_code in (0, 1)
    plan = yaml.safe_load((planned / "out" / "new.plan.yaml").read_text())
    assert plan["files"] == {"accelerate": "new.yaml"} and plan["model"]["name"] == "tiny"


def test_diff_writes_no_plan(cli, planned):
    (planned / "old.yaml").write_text(FSDP1)
    assert cli("migrate", "old.yaml", "-o", "new.yaml", "--diff").exit_code == 1
    assert not (planned / "new.plan.yaml").exists() and not (planned / "new.yaml").exists()


def test_a_link_at_the_plan_name_is_refused_and_nothing_is_written(cli, planned):
    (planned / "old.yaml").write_text(FSDP1)
    (planned / "elsewhere.yaml").write_text("keep me\n")
    (planned / "new.plan.yaml").symlink_to(planned / "elsewhere.yaml")
    refused = cli("migrate", "old.yaml", "-o", "new.yaml")
    assert refused.exit_code == 2 and "new.plan.yaml" in refused.stderr, refused.stderr
    assert not (planned / "new.yaml").exists() and (planned / "elsewhere.yaml").read_text() == "keep me\n"


def test_a_deepspeed_plan_keeps_naming_the_json_the_yaml_uses(cli, tmp_path, monkeypatch):
    """migrate writes no JSON: the carried plan names the source's, from the output's folder, and its estimate
    is the estimator's for that JSON's strategy."""
    monkeypatch.chdir(tmp_path)
    made = cli("init", "--model", "llama-3.2-1b", "--system", "2xA100-40GB", "--strategy", "zero2", "--defaults",
               "-o", "old.yaml")
    assert made.exit_code == 0, made.stderr
    with (tmp_path / "old.yaml").open("a") as old:
        old.write("dynamo_backend: 'NO'\n")
    (tmp_path / "out").mkdir()
    migrated = cli("migrate", "old.yaml", "--to-accelerate", "1.15", "-o", "out/new.yaml")
    plan = yaml.safe_load((tmp_path / "out" / "new.plan.yaml").read_text())
    assert plan["files"] == {"accelerate": "new.yaml", "deepspeed": "../old.ds.json"}
    assert plan["estimate"]["strategy"].startswith("ZeRO-2")
    checked = cli("check", "out/new.yaml")
    assert migrated.exit_code == checked.exit_code and "AW50" in checked.stdout  # the plan's workload is judged
