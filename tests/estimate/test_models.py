"""The registry reproduces published parameter counts exactly; names, config.json files and counts resolve."""

from __future__ import annotations

import json

import pytest

from accelwiz.errors import InputError, UsageError
from accelwiz.modelspec.lookup import MODEL_PRESETS, list_models, parse_count, resolve_model

# deepspeed-and-memory.md §6 (verified there against the published totals)
PUBLISHED = {
    "gpt2": 124_439_808,
    "llama-2-7b": 6_738_415_616,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704,
    "qwen2.5-7b": 7_615_616_512,
    "gemma-2-9b": 9_241_705_984,
    "phi-3-mini": 3_821_079_552,
}
# The other presets: the totals HF model cards and `model.num_parameters()` report for their config.json.
OTHERS = {
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3.2-1b": 1_235_814_400,
    "llama-3.2-3b": 3_212_749_824,
    "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-1.5b": 1_543_714_304,
    "qwen2.5-3b": 3_085_938_688,
    "qwen2.5-14b": 14_770_033_664,
    "qwen2.5-32b": 32_763_876_352,
    "qwen2.5-72b": 72_706_203_648,
    "gemma-2-2b": 2_614_341_888,
    "gemma-2-27b": 27_227_128_320,
    "bert-base": 109_482_240,
    "bert-large": 335_141_888,
}
# The bundled configs (presets_remote.py), each total from a published source (test_remote_code.py names them).
BUNDLED = {
    "qwen1-1.8b": 1_836_828_672,
    "qwen1-7b": 7_721_324_544,
    "qwen1-14b": 14_167_290_880,
    "qwen1-72b": 72_287_920_128,
    "qwen1.5-7b": 7_721_324_544,  # Qwen-7B's tensors under transformers' qwen2
    "qwen2-7b": 7_615_616_512,  # Qwen2.5-7B's shape
    "chatglm2-6b": 6_243_584_000,
    "chatglm3-6b": 6_243_584_000,
    "glm-4-9b-chat": 9_399_951_360,
    "baichuan2-7b": 7_505_973_248,
    "baichuan2-13b": 13_896_668_160,
    "internlm2-7b": 7_737_708_544,
    "internlm2-20b": 19_861_149_696,
}


@pytest.mark.parametrize(("name", "count"), sorted({**PUBLISHED, **OTHERS, **BUNDLED}.items()))
def test_parameter_counts_match_published(name, count):
    assert MODEL_PRESETS[name].num_parameters == count


def test_every_preset_is_pinned_and_has_a_source():
    assert set(MODEL_PRESETS) == set(PUBLISHED) | set(OTHERS) | set(BUNDLED)
    for spec in MODEL_PRESETS.values():
        url, _, remote = spec.source.partition("; ")  # a remote-code model says what was estimated in its place
        assert url.startswith("https://huggingface.co/") and url.endswith("config.json")
        assert (remote != "") == (spec.name in BUNDLED and not spec.name.startswith(("qwen1.5", "qwen2")))


def test_qwen_non_embedding_count_matches_model_card():
    spec = MODEL_PRESETS["qwen2.5-7b"]
    assert spec.num_parameters - 2 * spec.vocab_size * spec.hidden_size == 6_525_621_760  # "6.53B"


def test_mixtral_active_parameters():
    assert MODEL_PRESETS["mixtral-8x7b"].active_parameters == 12_879_925_248
    assert MODEL_PRESETS["llama-3.1-8b"].active_parameters == 8_030_261_248


def test_largest_layer_is_the_embedding_as_deepspeed_counts_it():
    assert MODEL_PRESETS["llama-3.1-8b"].largest_layer_parameters == 525_336_576
    assert MODEL_PRESETS["gemma-2-9b"].largest_layer_parameters == 917_504_000


def test_tied_embeddings_count_once():
    tied = MODEL_PRESETS["llama-3.2-1b"]
    assert tied.tie_word_embeddings
    assert tied.num_parameters == 1_235_814_400  # litgpt's untied count would be 1,498,482,688


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("llama-8b", "llama-3.1-8b"),
        ("LLAMA-3-8B", "llama-3.1-8b"),
        ("meta-llama/Llama-3.1-8B", "llama-3.1-8b"),
        ("mixtral", "mixtral-8x7b"),
        ("qwen-3b", "qwen2.5-3b"),  # only Qwen2.5 has a 3B; qwen-7b is refused (test_ambiguous_alias.py)
    ],
)
def test_aliases(alias, name):
    assert resolve_model(alias).name == name


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("7e9", 7_000_000_000),
        ("7B", 7_000_000_000),
        ("125M", 125_000_000),
        ("1.5b", 1_500_000_000),
        ("42", 42),
    ],
)
def test_parse_count(text, count):
    assert parse_count(text) == count
    assert resolve_model(text).num_parameters == count


def test_parameter_count_borrows_a_shape_and_keeps_the_count():
    spec = resolve_model("7e9")
    assert spec.num_parameters == 7_000_000_000
    assert spec.family in ("llama", "mistral", "qwen2")
    assert 0 < spec.largest_layer_parameters < spec.num_parameters


def test_unknown_name_suggests_close_ones():
    with pytest.raises(UsageError) as info:
        resolve_model("lama-8b")
    assert "llama-8b" in info.value.hint


def test_list_models_smallest_first():
    counts = [s.num_parameters for s in list_models()]
    assert counts == sorted(counts) and len(counts) == len(MODEL_PRESETS)


def _hf_config(spec) -> dict:
    """A config.json as HF writes it for a preset."""
    if spec.family == "gpt2":
        return {
            "model_type": "gpt2",
            "vocab_size": spec.vocab_size,
            "n_embd": spec.hidden_size,
            "n_layer": spec.num_layers,
            "n_head": spec.num_heads,
            "n_inner": None,
            "n_positions": 1024,
        }
    config = {
        "model_type": spec.family,
        "vocab_size": spec.vocab_size,
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_hidden_layers": spec.num_layers,
        "num_attention_heads": spec.num_heads,
        "num_key_value_heads": spec.num_kv_heads,
        "head_dim": spec.head_dim,
        "tie_word_embeddings": spec.tie_word_embeddings,
        "max_position_embeddings": spec.max_position_embeddings,
    }
    if spec.family == "mixtral":
        config |= {"num_local_experts": spec.num_experts, "num_experts_per_tok": spec.experts_per_token}
    if spec.family == "bert":
        del config["num_key_value_heads"], config["head_dim"]
    return config


@pytest.mark.parametrize(
    "name",
    [
        "gpt2",
        "llama-3.2-1b",
        "mistral-7b",
        "mixtral-8x7b",
        "qwen2.5-0.5b",
        "gemma-2-9b",
        "phi-3-mini",
        "bert-base",
    ],
)
def test_local_config_json(tmp_path, name):
    preset = MODEL_PRESETS[name]
    path = tmp_path / name / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(_hf_config(preset)))
    for given in (path, path.parent):
        spec = resolve_model(str(given))
        assert spec.num_parameters == preset.num_parameters
        assert spec.active_parameters == preset.active_parameters


def test_missing_config_json(tmp_path):
    with pytest.raises(InputError, match="no config.json"):
        resolve_model(str(tmp_path / "nope" / "config.json"))
    with pytest.raises(InputError, match="no config.json"):
        resolve_model(str(tmp_path))  # a folder without one


def test_unknown_model_type_names_close_ones(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "lama", "hidden_size": 512}))
    with pytest.raises(UsageError, match="model_type `lama`") as info:
        resolve_model(str(path))
    assert "llama" in info.value.hint


def test_broken_config_json(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("{not json")
    with pytest.raises(InputError):
        resolve_model(str(path))
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="not a JSON object"):
        resolve_model(str(path))
    # transformers would fill the rest with Llama-2-7B's defaults: another model, silently
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))
    with pytest.raises(UsageError, match="missing field.*num_hidden_layers"):
        resolve_model(str(path))


@pytest.mark.parametrize(
    "fields",
    [{"num_attention_heads": 0}, {"hidden_size": -8}, {"num_hidden_layers": "many"}, {"vocab_size": [1]}],
)
def test_invalid_config_values(tmp_path, fields):
    config = _hf_config(MODEL_PRESETS["llama-3.2-1b"]) | {"model_type": "llama"} | fields
    config.pop("head_dim")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(UsageError):
        resolve_model(str(path))
