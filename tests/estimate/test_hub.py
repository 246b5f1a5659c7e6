"""Hub ids of any spelling resolve their config.json through a real huggingface_hub cache laid out by the test.

The layout is huggingface_hub's own (models--org--name/refs/main naming a commit, snapshots/<commit>/config.json
linking into blobs/); `try_to_load_from_cache` reads it, HF_HUB_CACHE points at it. No test touches the network:
the not-cached case runs with HF_HUB_OFFLINE=1.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.errors import InputError, UsageError
from accelwiz.modelspec.hub import hub_cache_dir, is_hub_id, resolve_hub_config
from accelwiz.modelspec.lookup import MODEL_PRESETS, resolve_model

pytest.importorskip("huggingface_hub")

# Qwen/Qwen3-8B-Base's config.json as published (architecture fields; Qwen3-8B has the same shape)
QWEN3_8B = {
    "architectures": ["Qwen3ForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "eos_token_id": 151643,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 12288,
    "max_position_embeddings": 32768,
    "max_window_layers": 36,
    "model_type": "qwen3",
    "num_attention_heads": 32,
    "num_hidden_layers": 36,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 1000000,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936,
}
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _cache(root: Path, repo: str, config: dict, *, commit: str = COMMIT, ref: str = "main") -> Path:
    """Lay out one cached config.json exactly as huggingface_hub writes it (blob + snapshot symlink + ref)."""
    folder = root / ("models--" + repo.replace("/", "--"))
    blob = folder / "blobs" / "4f1e2d3c"
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_text(json.dumps(config, indent=2))
    snapshot = folder / "snapshots" / commit / "config.json"
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    snapshot.symlink_to(Path("..", "..", "blobs", blob.name))
    (folder / "refs").mkdir(exist_ok=True)
    (folder / "refs" / ref).write_text(commit)
    return snapshot


@pytest.fixture()
def hub_cache(tmp_path, monkeypatch):
    root = tmp_path / "hub"
    root.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never the network, whatever the test resolves
    return root


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Qwen/Qwen3-8B", True),
        ("meta-llama/Llama-3.1-8B-Instruct", True),
        ("deepseek-ai/DeepSeek-V2-Lite@main", True),
        ("./models/config.json", False),
        ("/abs/path", False),
        ("llama-8b", False),
        ("org/name/extra", False),
        ("../up/x", False),
    ],
)
def test_is_hub_id(text, expected):
    assert is_hub_id(text) is expected


def test_cached_config_resolves_and_builds_the_model(hub_cache):
    _cache(hub_cache, "Qwen/Qwen3-8B", QWEN3_8B)
    spec = resolve_model("Qwen/Qwen3-8B")
    assert spec.name == "Qwen/Qwen3-8B" and spec.family == "qwen3"
    assert spec.num_parameters == 8_190_735_360  # the model card's "8.2B"; sum over the meta model
    assert (spec.num_layers, spec.num_heads, spec.num_kv_heads, spec.head_dim) == (36, 32, 8, 128)
    assert not spec.tie_word_embeddings
    assert "huggingface.co/Qwen/Qwen3-8B" in spec.source and str(hub_cache) in spec.source


def test_revision_after_at_reads_that_ref(hub_cache):
    small = QWEN3_8B | {"num_hidden_layers": 2}
    _cache(hub_cache, "Qwen/Qwen3-8B", small, commit="f" * 40, ref="v2")
    config, _ = resolve_hub_config("Qwen/Qwen3-8B@v2")
    assert config["num_hidden_layers"] == 2
    with pytest.raises(UsageError, match="HF_HUB_OFFLINE"):  # main is not cached
        resolve_hub_config("Qwen/Qwen3-8B")


def test_offline_and_not_cached_is_one_line_naming_the_id_and_the_fix(hub_cache):
    with pytest.raises(UsageError) as info:
        resolve_model("Qwen/Qwen3-8B")
    assert "Qwen/Qwen3-8B" in info.value.message and "\n" not in info.value.message
    assert "hf download Qwen/Qwen3-8B config.json" in info.value.hint
    assert "huggingface-cli" not in info.value.hint


def test_the_download_hint_names_the_cli_the_installed_huggingface_hub_ships(hub_cache):
    """huggingface_hub >= 1.0 ships `hf` and no longer `huggingface-cli`; the hint must name a command that exists
    (and the same one the trainer names)."""
    from importlib.metadata import distribution

    scripts = {ep.name for ep in distribution("huggingface_hub").entry_points if ep.group == "console_scripts"}
    with pytest.raises(UsageError) as info:
        resolve_model("Qwen/Qwen3-8B")
    command = info.value.hint.split("(", 1)[1].split()[0]
    assert command in scripts, (command, scripts)


def test_cli_exit_2_offline_and_estimate_from_cache(cli, hub_cache):
    result = cli("estimate", "--model", "Qwen/Qwen3-8B", "--gpu-memory", "80GiB")
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "Qwen/Qwen3-8B" in result.stderr
    _cache(hub_cache, "Qwen/Qwen3-8B", QWEN3_8B)
    result = cli("estimate", "--model", "Qwen/Qwen3-8B", "--gpu-memory", "80GiB", "--format", "json")
    assert result.exit_code in (0, 1), result.stderr  # fits or not: an estimate either way
    assert json.loads(result.stdout)["model"]["parameters"] == 8_190_735_360


def test_a_cached_non_object_is_an_input_error(hub_cache):
    _cache(hub_cache, "org/listy", [1, 2])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not a JSON object"):
        resolve_model("org/listy")


@pytest.mark.parametrize(
    ("hub_id", "preset"),
    [
        ("Qwen/Qwen2.5-7B", "qwen2.5-7b"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("meta-llama/llama-3.1-8b-instruct", "llama-3.1-8b"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
    ],
)
def test_preset_repos_and_their_instruct_releases_take_the_fast_path(hub_cache, hub_id, preset):
    assert resolve_model(hub_id) is MODEL_PRESETS[preset]  # offline, nothing cached: no hub needed


def test_presets_never_import_torch_or_huggingface_hub():
    code = (
        "import sys; from accelwiz.modelspec.lookup import resolve_model; "
        "resolve_model('Qwen/Qwen2.5-7B-Instruct'); resolve_model('llama-8b'); "
        "print(sorted(m for m in ('torch', 'transformers', 'huggingface_hub') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hub_cache_dir() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert hub_cache_dir() == tmp_path / "elsewhere"
