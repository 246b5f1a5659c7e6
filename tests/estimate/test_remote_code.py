"""Remote-code models (trust_remote_code: Qwen-1, ChatGLM2/3, GLM-4, Baichuan2, InternLM2) are sized offline from
their config.json, each translation proved by the published parameter count (issue 28).

The fixtures under remote_configs/ are the published config.json files, read from GitHub mirrors of the HF
repositories: Qwen-7B (zhangningboo/Qwen-7B ffe04dd), Qwen-72B (mapengAdam/qianwen-72B c677f29), chatglm3-6b
(czk1997/chatglm3-copy 456aa87), chatglm2-6b (syjjhl/chatglm2-6b 8fd7fba), Baichuan2-13B-Chat
(jrd77/Baichuan2-13B-Chat d022d72), internlm2-chat-7b (NanSang2000/S1mpleAgent 4275caa).

The published counts: Qwen-7B 15,442,649,088 and Qwen-72B 144,575,840,256 bytes of bf16 in their
model.safetensors.index.json (total_size / 2); Baichuan2-13B-Chat 27,793,336,320 bytes in its
pytorch_model.bin.index.json; chatglm2/3-6b 12,487,168,064 bytes, i.e. 6,243,584,032 elements of which 32 are
the rotary `inv_freq` buffer, and `model.num_parameters()` 6,243,584,000 as printed in public training logs;
internlm2-7b 7,737,708,544 `total_parameters` of a loaded-weights report (embeddings 758,120,448); Qwen-1.8B
3,673,657,344 weight bytes; Qwen-14B 14,167,290,880 (llama.cpp's n_params of a model of its shapes,
5120/13696/40 layers/152064); glm-4-9b-chat 9,399,951,360 (benchmarks/published/glm4_finetune.py); internlm2-20b
19,861,149,696 (a model-size table's internlm2_5-20b-chat, the same shapes 6144/16384/48 layers/8 kv heads).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accelwiz.cli import app
from accelwiz.errors import UsageError
from accelwiz.modelspec import cache as spec_cache
from accelwiz.modelspec.from_config import spec_from_config
from accelwiz.modelspec.lookup import named_model, resolve_model
from accelwiz.modelspec.preset_names import AMBIGUOUS_ALIASES
from accelwiz.modelspec.presets_remote import BUNDLED

CONFIGS = Path(__file__).parent / "remote_configs"
PUBLISHED = {
    "Qwen-7B": 15_442_649_088 // 2,
    "Qwen-72B": 144_575_840_256 // 2,
    "chatglm3-6b": 12_487_168_064 // 2 - 32,
    "chatglm2-6b": 12_487_168_064 // 2 - 32,
    "Baichuan2-13B-Chat": 27_793_336_320 // 2,
    "internlm2-chat-7b": 7_737_708_544,
}
# what each family's own code does (remote_code.py cites the lines): its loss on fp32 logits, SDPA or not
FEATURES = {
    "Qwen-7B": (False, False), "Qwen-72B": (False, False), "chatglm3-6b": (True, False),
    "chatglm2-6b": (True, False), "Baichuan2-13B-Chat": (False, True), "internlm2-chat-7b": (True, True),
}


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ACCELWIZ_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.parametrize(("folder", "count"), sorted(PUBLISHED.items()))
def test_a_published_config_json_has_the_published_count(cache: Path, folder: str, count: int) -> None:
    spec = resolve_model(str(CONFIGS / folder))
    assert spec.num_parameters == count
    upcasts, no_sdpa = FEATURES[folder]
    assert spec.loss_upcasts_logits is upcasts and bool(spec.sdpa_refusal) is no_sdpa
    assert "remote code" in spec.source and str(CONFIGS / folder) in spec.source


def test_the_blocks_carry_the_remote_codes_own_modules(cache: Path) -> None:
    qwen = resolve_model(str(CONFIGS / "Qwen-7B"))
    linears = {t.kind: t.shape for t in qwen.block_linears()}
    assert linears == {"c_attn": (3 * 4096, 4096), "c_proj": (4096, 11008), "w1": (11008, 4096),
                       "w2": (11008, 4096)}  # attn.c_proj (4096, 4096) shares the kind; the MLP's is listed last
    assert {t.module for t in qwen.tensors() if t.module.startswith("layers.0.attn")} == {
        "layers.0.attn.c_attn", "layers.0.attn.c_proj"}
    # Qwen's finetune.py adapts c_attn, c_proj, w1, w2: one adapter on the fused c_attn, r x (4096 + 12288)
    assert qwen.lora_parameters(8, {"c_attn"}) == 32 * 8 * (4096 + 3 * 4096)
    glm = resolve_model(str(CONFIGS / "chatglm3-6b"))
    assert {t.kind: t.shape for t in glm.block_linears()}["query_key_value"] == (4096 + 2 * 2 * 128, 4096)
    assert {t.kind: t.shape for t in glm.block_linears()}["dense_h_to_4h"] == (2 * 13696, 4096)


@pytest.mark.parametrize(("name", "repo", "config", "aliases"), BUNDLED, ids=[entry[0] for entry in BUNDLED])
def test_a_bundled_preset_is_its_config_built_by_transformers(cache: Path, name, repo, config, aliases) -> None:
    """The preset (derived without torch) and the same config.json built on the meta device agree."""
    preset = named_model(name)
    built = spec_from_config(dict(config), name=name, source=f"{name}/config.json")
    assert preset is not None and preset.num_parameters == built.num_parameters
    assert preset.block_linears() == built.block_linears()
    assert preset.largest_layer_parameters == built.largest_layer_parameters
    assert (preset.loss_upcasts_logits, preset.sdpa_refusal, preset.activations_note) == (
        built.loss_upcasts_logits, built.sdpa_refusal, built.activations_note)
    assert named_model(repo) is preset


def test_every_candidate_of_qwen_7b_resolves_offline(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    names = {resolve_model(candidate).name for candidate in AMBIGUOUS_ALIASES["qwen-7b"]}
    assert names == {"qwen2.5-7b", "qwen2-7b", "qwen1.5-7b", "qwen1-7b"}
    assert resolve_model("Qwen/Qwen-7B-Chat").num_parameters == 7_721_324_544


def test_baichuan_alibi_is_said_not_hidden() -> None:
    spec = named_model("baichuan2-13b")
    assert spec is not None and not spec.analytic_activations and "ALiBi" in spec.activations_note
    assert "eager" in spec.sdpa_refusal
    rotary = named_model("baichuan2-7b")
    assert rotary is not None and rotary.analytic_activations and rotary.sdpa_refusal == ""


def test_each_family_config_json_estimates(cache: Path) -> None:
    runner = CliRunner()
    for folder in ("Qwen-7B", "chatglm3-6b", "Baichuan2-13B-Chat", "internlm2-chat-7b"):
        result = runner.invoke(app, ["estimate", "--model", str(CONFIGS / folder / "config.json"), "--system",
                                     "1xA100-80GB", "--lora", "--seq-len", "1024"])
        assert result.exit_code == 0, result.output
        assert f"{PUBLISHED[folder]:,} parameters" in result.output


def test_sdpa_is_refused_where_the_remote_code_has_none() -> None:
    result = CliRunner().invoke(app, ["estimate", "--model", "internlm/internlm2-chat-7b", "--system",
                                      "1xA100-80GB", "--attention", "sdpa"])
    assert result.exit_code == 2 and "INTERNLM2_ATTENTION_CLASSES" in result.output
    assert "Traceback" not in result.output


def test_an_unknown_remote_code_type_is_one_line_naming_the_families(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "yuan", "auto_map": {"AutoModelForCausalLM": "yuan_hf_model.Yuan"},
                                "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16}))
    result = CliRunner().invoke(app, ["estimate", "--model", str(path), "--system", "1xA100-80GB"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "model_type `yuan`" in result.output and "qwen, chatglm, baichuan, internlm2" in result.output


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"model_type": "qwen", "hidden_size": 4096, "num_hidden_layers": 32}, "missing field(s) num_attention_heads"),
        ({"model_type": "qwen", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
          "intermediate_size": 22016, "vocab_size": 151936, "no_bias": False}, "no_bias false"),
        ({"model_type": "chatglm", "hidden_size": 4096, "num_layers": 28, "num_attention_heads": 32,
          "inner_hidden_size": 16384, "vocab_size": 130528}, "first ChatGLM-6B"),
        ({**json.loads((CONFIGS / "chatglm3-6b" / "config.json").read_text()), "pre_seq_len": 128}, "P-Tuning v2"),
        ({"model_type": "internlm2", "hidden_size": 4096, "num_hidden_layers": "32", "num_attention_heads": 32,
          "intermediate_size": 14336, "vocab_size": 92544}, "num_hidden_layers must be a positive integer"),
    ],
)
def test_a_config_the_translation_cannot_express_is_refused(cache: Path, config: dict, says: str) -> None:
    with pytest.raises(UsageError, match=says.replace("(", r"\(").replace(")", r"\)")):
        spec_from_config(config, name="m", source="m/config.json")


def test_the_cache_keeps_a_remote_spec_and_reads_it_without_transformers(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ACCELWIZ_CACHE_DIR", str(tmp_path / "cache"))
    env = dict(os.environ)
    path = CONFIGS / "Qwen-7B" / "config.json"
    check = ("import sys; from accelwiz.modelspec.lookup import resolve_model; s = resolve_model(sys.argv[1]); "
             "print(s.num_parameters, s.loss_upcasts_logits, sorted({t.kind for t in s.block_linears()}), "
             "'remote code' in s.source, 'transformers' in sys.modules)")
    first = subprocess.run([sys.executable, "-c", check, str(path)], env=env, capture_output=True, text=True)
    second = subprocess.run([sys.executable, "-c", check, str(path)], env=env, capture_output=True, text=True)
    assert first.stdout.split()[-1] == "True"  # built by transformers once
    assert second.stdout.rsplit(" ", 1)[0] == first.stdout.rsplit(" ", 1)[0]  # the same spec, read back
    assert second.stdout.split()[-1] == "False" and "7721324544 False" in second.stdout
    assert len(list((tmp_path / "cache" / "specs").glob("*.json"))) == 1
    key = json.dumps(json.loads(path.read_text()), sort_keys=True, default=str)
    assert spec_cache.load(key, "x", "x").loss_upcasts_logits is False


def test_a_bundled_name_imports_no_torch() -> None:
    check = ("import sys; from accelwiz.modelspec.lookup import resolve_model; "
             "print(resolve_model('THUDM/chatglm3-6b').num_parameters, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["6243584000", "False"]
