"""`accelwiz migrate`: every FSDP1 config of the corpus becomes an FSDP2 config with no FSDP1 option left, no new
error, comments kept, and accelerate's own launch path (`_validate_launch_command` -> `prepare_multi_gpu_env` ->
`FullyShardedDataParallelPlugin`) builds an FSDP2 plugin from it. Side by side with `accelerate to-fsdp2`
(`convert_config_to_fsdp2`): the same values wherever it maps a key, and none of the FSDP1 keys and values it
carries over unchanged."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pytest
import yaml

from accelwiz.migrate.fsdp2 import migrate_text
from accelwiz.rules.diagnostic import Severity
from accelwiz.rules.engine import check_paths
from accelwiz.rules.registry import select_rules
from tests.conftest import corpus_dir
from tests.convert.test_convert_accepted import fsdp_plugin  # launched with a free --main_process_port
from tests.migrate.side_by_side import fsdp1_configs

CORPUS = corpus_dir()
FSDP1_ONLY = {"sharding_strategy", "backward_prefetch", "backward_prefetch_policy", "forward_prefetch",
              "use_orig_params", "sync_module_states"}


FSDP1 = fsdp1_configs(CORPUS, folders=("broken", "real"))  # the issue configs too


def errors(path: Path) -> Counter:
    return Counter((d.code, d.path) for d in check_paths([path], select_rules()).diagnostics
                   if d.severity is Severity.ERROR)


def test_the_corpus_has_fsdp1_configs():
    if CORPUS is None:
        pytest.skip("corpus not found: set ACCELWIZ_CORPUS")
    assert len(FSDP1) >= 10


@pytest.mark.parametrize("path", FSDP1, ids=lambda p: p.name[:60])
def test_corpus_fsdp1_config_migrates_to_fsdp2(path, tmp_path, monkeypatch):
    migrated, migration = migrate_text(path.read_text())
    section = yaml.safe_load(migrated)["fsdp_config"]
    assert section.get("fsdp_version", section.get("version")) == 2
    assert not {str(k).removeprefix("fsdp_") for k in section} & FSDP1_ONLY, section
    assert all(not isinstance(v, str) or v.upper() not in ("FULL_SHARD", "SHARD_GRAD_OP")
               for v in section.values())
    comments = [line.strip() for line in path.read_text().splitlines() if line.strip().startswith("#")]
    assert all(comment in migrated for comment in comments)
    target = tmp_path / path.name
    target.write_text(migrated)
    monkeypatch.chdir(tmp_path)
    new_errors = errors(target) - errors(path)
    assert not new_errors and not any(code.startswith("AW30") for code, _ in errors(target)), errors(target)
    plugin = fsdp_plugin(target, monkeypatch)
    assert plugin.fsdp_version == 2


@pytest.mark.parametrize("path", FSDP1, ids=lambda p: p.name[:60])
def test_side_by_side_with_accelerate_to_fsdp2(path):
    from accelerate.commands.to_fsdp2 import convert_config_to_fsdp2

    ours = yaml.safe_load(migrate_text(path.read_text())[0])["fsdp_config"]
    theirs = convert_config_to_fsdp2(copy.deepcopy(yaml.safe_load(path.read_text())))["fsdp_config"]
    for key in set(ours) & set(theirs):
        if isinstance(theirs[key], bool) or not isinstance(ours[key], bool):
            assert repr(ours[key]) == repr(theirs[key]), key
    # what accelerate leaves behind: FSDP1 keys it has no entry for, and strategies it cannot map (a number)
    leaks = {k for k in theirs if str(k).removeprefix("fsdp_") in FSDP1_ONLY} | \
        {k for k, v in theirs.items() if k.endswith("reshard_after_forward") and not isinstance(v, bool)}
    assert not leaks & set(ours) or all(isinstance(ours[k], bool) for k in leaks & set(ours))


def test_accelerate_to_fsdp2_leaks_what_migrate_maps():
    """The concrete leaks, on two corpus shapes: a legacy key, and a strategy written as a number."""
    from accelerate.commands.to_fsdp2 import convert_config_to_fsdp2

    text = ("distributed_type: FSDP\nfsdp_config:\n  fsdp_backward_prefetch_policy: BACKWARD_PRE\n"
            "  fsdp_sharding_strategy: 1\n  fsdp_use_orig_params: true\n")
    theirs = convert_config_to_fsdp2(yaml.safe_load(text))["fsdp_config"]
    assert theirs["fsdp_backward_prefetch_policy"] == "BACKWARD_PRE" and theirs["fsdp_reshard_after_forward"] == 1
    ours = yaml.safe_load(migrate_text(text)[0])["fsdp_config"]
    assert ours == {"fsdp_reshard_after_forward": True, "fsdp_version": 2}


def test_prefixless_keys_and_lost_options_are_named():
    text = "distributed_type: FSDP\nfsdp_config:\n  sharding_strategy: HYBRID_SHARD  # across nodes\n" \
           "  forward_prefetch: true\n  state_dict_type: LOCAL_STATE_DICT\n"
    migrated, migration = migrate_text(text)
    assert "reshard_after_forward: true" in migrated and "# across nodes" in migrated and "version: 2" in migrated
    assert "forward_prefetch" not in migrated and "SHARDED_STATE_DICT" in migrated
    assert any("parallelism_config" in note for note in migration.notes)
    assert any("forward_prefetch removed" in note for note in migration.notes)


def test_cli_migrate_in_place_keeps_a_backup_and_diff_writes_nothing(cli, write):
    path = write("fsdp.yaml", "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n"
                              "  fsdp_sharding_strategy: SHARD_GRAD_OP\n  fsdp_version: 1\n")
    original = path.read_text()
    preview = cli("migrate", str(path), "--diff")
    assert preview.exit_code == 1 and "+  fsdp_reshard_after_forward: false" in preview.stdout
    assert path.read_text() == original
    result = cli("migrate", str(path))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert (path.parent / "fsdp.yaml.bak").read_text() == original
    assert "fsdp_version: 2" in path.read_text()
    again = cli("migrate", str(path))
    assert again.exit_code == 0 and "nothing to migrate" in again.stderr


def test_migrate_mends_legacy_and_removed_keys_of_a_deepspeed_json(cli, write):
    path = write("ds.json", '{\n  "train_micro_batch_size_per_gpu": 4,  // per GPU\n'
                            '  "zero_optimization": {"stage": 2, "cpu_offload": true},\n  "sparse_gradients": true\n}\n')
    result = cli("migrate", str(path))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert path.read_text() == ('{\n  "train_micro_batch_size_per_gpu": 4,  // per GPU\n'
                                '  "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}\n}\n')
    assert "AW009" in result.stderr and "AW010" in result.stderr
