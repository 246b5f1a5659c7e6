"""A config.json's spec is built by transformers once, then read from the cache without torch or transformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.modelspec import cache as spec_cache
from accelwiz.modelspec.from_config import spec_from_config

QWEN2_SMALL = {
    "model_type": "qwen2", "vocab_size": 32000, "hidden_size": 512, "intermediate_size": 1376,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "max_position_embeddings": 4096,
    "tie_word_embeddings": True, "rms_norm_eps": 1e-6, "rope_theta": 1e6,
}


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ACCELWIZ_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_cached_spec_equals_the_built_one_under_any_name(cache: Path) -> None:
    canonical = json.dumps(QWEN2_SMALL, sort_keys=True)
    assert spec_cache.load(canonical, "a", "a.json") is None
    built = spec_from_config(QWEN2_SMALL, name="a", source="a/config.json")
    assert len(list((cache / "specs").glob("*.json"))) == 1
    read = spec_cache.load(canonical, "b", "b/config.json")
    assert read == spec_from_config(dict(QWEN2_SMALL), name="b", source="b/config.json")
    assert (read.name, read.source) == ("b", "b/config.json")
    assert read.built_tensors == built.built_tensors and read.num_parameters == built.num_parameters


def test_another_config_or_transformers_version_is_another_entry(cache: Path, monkeypatch) -> None:
    canonical = json.dumps(QWEN2_SMALL, sort_keys=True)
    key = spec_cache.cache_key(canonical)
    assert spec_cache.cache_key(json.dumps({**QWEN2_SMALL, "num_hidden_layers": 5}, sort_keys=True)) != key
    monkeypatch.setattr(spec_cache, "_transformers_version", lambda: "0.0.1")
    assert spec_cache.cache_key(canonical) != key


def test_a_damaged_entry_is_built_again(cache: Path) -> None:
    canonical = json.dumps(QWEN2_SMALL, sort_keys=True)
    path = cache / "specs" / f"{spec_cache.cache_key(canonical)}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    spec = spec_from_config(QWEN2_SMALL, name="x", source="x/config.json")
    assert spec.num_layers == 4 and json.loads(path.read_text())["num_layers"] == 4


def test_a_second_estimate_of_a_config_json_imports_no_transformers(tmp_path: Path) -> None:
    config = tmp_path / "model" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(QWEN2_SMALL))
    probe = (
        "import sys\nfrom accelwiz.cli import app\n"
        f"try:\n    app(['estimate', '--model', {str(config)!r}, '--gpu-memory', '24GiB'], standalone_mode=False)\n"
        "finally:\n    print('HEAVY=' + ','.join(m for m in ('torch', 'transformers') if m in sys.modules),"
        " file=sys.stderr)\n"
    )
    env = {**os.environ, "ACCELWIZ_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
            for _ in range(2)]
    first, second = (run.stderr.strip().splitlines()[-1] for run in runs)
    assert first == "HEAVY=torch,transformers" and second == "HEAVY="
    assert runs[0].stdout == runs[1].stdout and "parameters" in runs[1].stdout
