"""`accelwiz migrate --to-accelerate VERSION`: each release change is judged by accelerate 1.15's own config loader
(`ClusterConfig.from_yaml_file`, which converts the old forms itself): the migrated file loads to the same config
as the original, with the old key gone; a removed key that 1.15 refuses is gone and the file loads; a change the
target release does not read yet is kept."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from accelwiz.config.accelerate import AccelerateConfig
from accelwiz.migrate.accelerate_releases import CHANGES, migrate_to_accelerate, parse_version
from tests.conftest import corpus_dir

HEAD = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 2\n"
LATEST = (1, 15, 0)


def loaded(path: Path) -> dict:
    """What accelerate's launcher reads from the file (the loader `accelerate launch --config_file` uses)."""
    from accelerate.commands.config.config_args import ClusterConfig

    return dataclasses.asdict(ClusterConfig.from_yaml_file(path))


def test_every_change_is_a_key_the_schema_calls_legacy_or_removed():
    """One owner: the schema says which keys are legacy or removed; the release table only dates them."""
    for change in (c for c in CHANGES if c.kind == "rewrite"):
        assert change.key in AccelerateConfig.LEGACY_KEYS | AccelerateConfig.REMOVED_KEYS, change.key
        assert change.since <= LATEST and "PR #" in change.source


@pytest.mark.parametrize("body", [
    "fp16: true  # the old switch\n",
    "fp16: false\n",
    "fp16: true\nmixed_precision: bf16\n",  # a written mixed_precision wins; fp16 is ignored
    "dynamo_backend: INDUCTOR\n",
    "fp16: 'no'\n",  # a non-empty string is true to accelerate: this file runs fp16, and says so once migrated
    "dynamo_backend: NO\n",  # YAML 1.1 (PyYAML, accelerate) reads a boolean: not a backend name, left alone
    "dynamo_backend: 'NO'\n",
    "dynamo_backend: eager\ndynamo_config:\n  dynamo_backend: INDUCTOR\n",  # the top-level key replaces it
    "fp16: true\ndynamo_backend: INDUCTOR\nmain_training_function: main\n",
])
def test_migrated_file_loads_to_the_same_config_in_accelerate(body, tmp_path):
    source, target = tmp_path / "old.yaml", tmp_path / "new.yaml"
    source.write_text(HEAD + body)
    migrated, notes = migrate_to_accelerate(source.read_text(), LATEST)
    target.write_text(migrated)
    old_keys = {c.key for c in CHANGES} & set(yaml.safe_load(body))
    written = yaml.safe_load(migrated)
    if any(not isinstance(v, str) for k, v in yaml.safe_load(body).items() if k == "dynamo_backend"):
        # PyYAML reads `NO` as False: accelerate makes {"dynamo_backend": False} of it; not a backend, left alone
        assert migrated == source.read_text() and any("not a backend name" in n for n in notes)
        return
    assert not old_keys & set(written), migrated
    assert loaded(target) == loaded(source)
    assert all("PR #" in note for note in notes) and len(notes) >= len(old_keys)
    if "#" in body:
        assert "# the old switch" in migrated


def test_ipex_config_is_removed_for_1_13_and_kept_for_1_12(tmp_path):
    source, target = tmp_path / "old.yaml", tmp_path / "new.yaml"
    source.write_text(HEAD + "ipex_config:\n  ipex: true\n")
    with pytest.raises(ValueError, match="unknown keys"):
        loaded(source)  # accelerate 1.15 refuses the file as it is
    migrated, notes = migrate_to_accelerate(source.read_text(), (1, 13, 0))
    target.write_text(migrated)
    assert "ipex" not in migrated and loaded(target)["distributed_type"] == "MULTI_GPU"
    assert any("ipex.optimize" in note and "PR #3883" in note for note in notes)
    kept, notes = migrate_to_accelerate(source.read_text(), (1, 12, 0))
    assert kept == source.read_text() and notes == [
        "ipex_config kept: accelerate 1.12.0 does not read its new form yet [accelerate 1.13.0, PR #3883]"]


def test_a_change_is_applied_only_from_its_release_on():
    text = HEAD + "fp16: true\ndynamo_backend: INDUCTOR\n"
    for version, moved in (((0, 5, 0), set()), ((0, 16, 0), {"fp16"}), ((0, 17, 0), {"fp16", "dynamo_backend"})):
        migrated, _ = migrate_to_accelerate(text, version)
        assert {"fp16", "dynamo_backend"} - set(yaml.safe_load(migrated)) == moved, version


def test_a_target_newer_than_the_checked_release_says_so():
    _, notes = migrate_to_accelerate(HEAD, (2, 0, 0))
    assert notes == ["changes after accelerate 1.15.0 are not known to this accelwiz"]


@pytest.mark.parametrize(("text", "expected"), [("1.15", (1, 15, 0)), ("v1.13.0", (1, 13, 0)), ("0.17.1", (0, 17, 1))])
def test_parse_version(text, expected):
    assert parse_version(text) == expected


def test_cli_to_accelerate(cli, write):
    path = write("old.yaml", HEAD + "fp16: true\nipex_config:\n  ipex: false\n")
    original = path.read_text()
    preview = cli("migrate", str(path), "--to-accelerate", "1.15", "--diff")
    assert preview.exit_code == 1 and "+mixed_precision: fp16" in preview.stdout and path.read_text() == original
    result = cli("migrate", str(path), "--to-accelerate", "1.15")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert path.read_text() == HEAD + "mixed_precision: fp16\n"
    assert (path.parent / "old.yaml.bak").read_text() == original
    assert "PR #247" in result.stderr and "PR #3883" in result.stderr
    assert "nothing to migrate" in cli("migrate", str(path), "--to-accelerate", "1.15").stderr


def test_cli_to_accelerate_refuses_a_bad_version_and_a_deepspeed_json(cli, write):
    path = write("old.yaml", HEAD + "fp16: true\n")
    bad = cli("migrate", str(path), "--to-accelerate", "latest")
    assert bad.exit_code == 2 and "not a release number" in bad.stderr and "Traceback" not in bad.stderr
    json_path = write("ds.json", '{"train_micro_batch_size_per_gpu": 1}\n')
    refused = cli("migrate", str(json_path), "--to-accelerate", "1.15")
    assert refused.exit_code == 2 and "Accelerate YAML" in refused.stderr


@pytest.mark.parametrize(("key", "strategy"), [("fsdp_sharding_strategy", "SHARD_GRAD_OP"),
                                               ("fsdp_reshard_after_forward", "FULL_SHARD")])
def test_why_fsdp1_sharding_strategy_is_not_renamed(key, strategy, tmp_path, monkeypatch):
    """accelerate 1.6.0 (PR #3394) deprecates `sharding_strategy` for `reshard_after_forward`, but under
    `accelerate launch` an FSDP1 run that writes SHARD_GRAD_OP under the new name runs FULL_SHARD: the launcher
    always exports FSDP_SHARDING_STRATEGY (default FULL_SHARD) and the plugin prefers it. So no rename; plain
    `accelwiz migrate` (FSDP2) is the way off the deprecated key."""
    from tests.convert.test_convert_accepted import fsdp_plugin

    path = tmp_path / "fsdp1.yaml"
    # sync_module_states and cpu_ram_efficient_loading off: the FSDP1 plugin then builds without a GPU
    path.write_text("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 1\n"
                    f"  {key}: SHARD_GRAD_OP\n  fsdp_sync_module_states: false\n"
                    "  fsdp_cpu_ram_efficient_loading: false\n")
    plugin = fsdp_plugin(path, monkeypatch)
    # what Accelerator.prepare hands FSDP1: `fsdp_plugin.sharding_strategy or fsdp_plugin.reshard_after_forward`
    assert (plugin.sharding_strategy or plugin.reshard_after_forward).name == strategy
    assert migrate_to_accelerate(path.read_text(), LATEST)[0] == path.read_text()


DEEPSPEED_INLINE = "distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n  zero_stage: 2\n"


def test_an_unset_gradient_clipping_is_auto_in_accelerate_and_migrate_says_so(tmp_path, monkeypatch):
    """0.30.0 (PR #2649): an inline deepspeed_config without gradient_clipping reaches DeepSpeed as "auto", which
    the Accelerator fills with 1.0; a note (the run's author decides), no edit, and only from 0.30.0 on."""
    from tests.convert.test_convert_accepted import deepspeed_plugin

    path = tmp_path / "ds.yaml"
    path.write_text(DEEPSPEED_INLINE)
    assert deepspeed_plugin(path, monkeypatch).deepspeed_config["gradient_clipping"] == "auto"
    migrated, notes = migrate_to_accelerate(DEEPSPEED_INLINE, LATEST)
    assert migrated == DEEPSPEED_INLINE and len(notes) == 1
    assert "clips at norm 1.0" in notes[0] and "PR #2649" in notes[0]
    assert migrate_to_accelerate(DEEPSPEED_INLINE, (0, 29, 0)) == (DEEPSPEED_INLINE, [])
    for written in ("  gradient_clipping: 0.0\n", "  deepspeed_config_file: ds.json\n"):
        assert migrate_to_accelerate(DEEPSPEED_INLINE + written, LATEST) == (DEEPSPEED_INLINE + written, [])


def test_every_corpus_config_means_the_same_to_accelerate_after_migration(tmp_path):
    """Every Accelerate YAML of the corpus migrated for 1.15: unchanged, or loading to the same config (the
    corpus's old-form keys are the top-level `dynamo_backend: 'NO'` of accelerate < 0.17 templates)."""
    from accelwiz.document import load_document

    corpus = corpus_dir()
    if corpus is None:
        pytest.skip("corpus not found: set ACCELWIZ_CORPUS")
    changed = 0
    for path in sorted(corpus.rglob("*")):
        if path.suffix not in (".yaml", ".yml"):
            continue
        try:
            if load_document(path).kind != "accelerate":
                continue
        except Exception:  # unreadable corpus files are other tests' business
            continue
        text = path.read_text()
        migrated, _ = migrate_to_accelerate(text, LATEST)
        if migrated == text:
            continue
        changed += 1
        source, target = tmp_path / "old.yaml", tmp_path / "new.yaml"
        source.write_text(text)
        target.write_text(migrated)
        assert loaded(target) == loaded(source), path.name
        assert "dynamo_backend" not in yaml.safe_load(migrated), path.name
    assert changed >= 5
