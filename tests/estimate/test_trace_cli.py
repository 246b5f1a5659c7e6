"""`accelwiz estimate --trace`: the traced step beside the estimate, and its refusals (one line, exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from accelwiz.errors import UsageError
from accelwiz.modelspec.lookup import MODEL_PRESETS
from accelwiz.estimate.trace import TraceSettings, check_trace_input, estimated_seconds

pytest.importorskip("transformers")

# A 2-layer Llama (GQA 4:1, untied head): a second's trace, and every formula term present.
TINY_LLAMA = {
    "model_type": "llama", "vocab_size": 4096, "hidden_size": 256, "intermediate_size": 704,
    "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 32,
    "tie_word_embeddings": False, "max_position_embeddings": 2048,
}


@pytest.fixture()
def tiny_config(tmp_path):
    path = tmp_path / "tiny" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(TINY_LLAMA))
    return path


def test_json_carries_the_trace_beside_the_estimate(cli, tiny_config):
    result = cli("estimate", "--model", str(tiny_config), "--strategy", "single", "--seq-len", "256",
                 "--micro-batch", "2", "--trace", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    trace = data["trace"]
    for exact in ("weights", "gradients", "optimizer_states"):
        assert trace["analytic"][exact] == trace["traced"][exact] > 0
    assert abs(trace["difference"]["activations"]) <= 0.10
    assert trace["traced_peak_phase"] == data["estimate"]["peak_phase"] == trace["analytic_peak_phase"]
    assert trace["trace"]["layers_traced"] == trace["trace"]["layers"] == 2
    per_gpu = data["estimate"]["per_gpu_bytes"]
    assert per_gpu["total"] == sum(v for k, v in per_gpu.items() if k != "total")


def test_text_shows_the_table_and_zero3_shards_the_trace(cli, tiny_config):
    result = cli("estimate", "--model", str(tiny_config), "--strategy", "zero3", "--gpus", "4",
                 "--seq-len", "128", "--trace")
    assert result.exit_code == 0, result.stderr
    assert "traced (llama, 2 of 2 layers traced" in result.stdout
    assert "sharding over 4: parameters, gradients, optimizer divided" in result.stdout
    assert "fp32 master + Adam (12 B/param)" in result.stdout
    weights = next(line for line in result.stdout.splitlines() if line.strip().startswith("weights")
                   and "%" in line)
    assert weights.split()[1] == weights.split()[2]  # analytic == traced


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--params", "7e9", "--trace"), "--trace needs a model"),
        (("--model", "gpt2", "--layers", "3"), "--layers is for --trace"),
        (("--model", "gpt2", "--trace", "--layers", "40"), "must be between 2 and the model's 12 layers"),
        (("--model", "gpt2", "--trace", "--qlora"), "cannot trace QLoRA"),
        (("--model", "gpt2", "--trace", "--optimizer", "sgd"), "traces torch.optim.AdamW"),
        # within the model's positions (a longer sequence is refused before, by the resolution), past 4M tokens
        (("--model", "llama-3.1-8b", "--trace", "--micro-batch", "64", "--seq-len", "131072"), "beyond any GPU"),
        (("--model", "bert-base", "--trace"), "BERT is an encoder"),
    ],
)
def test_bad_trace_input_is_one_line_and_exit_2(cli, args, message):
    result = cli("estimate", "--strategy", "single", *args)
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_config_transformers_cannot_build_is_one_line(cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TINY_LLAMA, "num_attention_heads": 7}))  # 256 is not a multiple of 7 heads
    result = cli("estimate", "--model", str(path), "--strategy", "single", "--trace")
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2  # the line and its hint


def test_a_trace_over_the_time_limit_asks_for_layers():
    spec = MODEL_PRESETS["llama-3.1-405b"]
    settings = TraceSettings(micro_batch=1, seq_len=4096)
    assert estimated_seconds(spec.num_layers) > 10
    with pytest.raises(UsageError) as refused:
        check_trace_input(spec, settings, None, time_limit=10)
    assert "--layers" in refused.value.hint
    assert check_trace_input(spec, settings, 4, time_limit=10) == 4


def test_estimate_without_trace_imports_no_torch():
    code = (
        "import sys; from accelwiz.cli.estimate import estimate; "
        "import accelwiz.estimate.trace, accelwiz.estimate.trace_compare, accelwiz.estimate.target; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_layers_scaling_extrapolates_exactly_what_grows_linearly():
    """--layers: traced with 1 and N layers and scaled; parameters, gradients and states are linear in depth."""
    from transformers import LlamaConfig

    from accelwiz.estimate.trace import trace_training_step

    fields = {k: v for k, v in TINY_LLAMA.items() if k != "model_type"}
    config = LlamaConfig(**{**fields, "num_hidden_layers": 4})
    settings = TraceSettings(micro_batch=1, seq_len=128)
    full = trace_training_step(config, settings)
    scaled = trace_training_step(config, settings, layers=2)
    assert (scaled.layers, scaled.layers_traced, full.layers_traced) == (4, 2, 4)
    assert (scaled.weights, scaled.gradients, scaled.optimizer_states) == (
        full.weights, full.gradients, full.optimizer_states)
    assert scaled.activations == pytest.approx(full.activations, rel=0.02)
    assert scaled.peak == pytest.approx(full.peak, rel=0.02) and scaled.peak_phase == full.peak_phase
    assert any("scaled linearly" in note for note in scaled.notes)


def test_fsdp_traced_reserve_keeps_fsdps_streams_and_wrap_cache(cli, tiny_config):
    """The traced step is one stream; under FSDP the traced reserve adds FSDP's gathered units at their size and
    never drops below the cache wrapping leaves, as the analytic path does (fsdp_reserve.py). The two agree
    within 20% on this 2-layer model, whose own replay fragments more (2 MiB small-pool segments weigh here)."""
    result = cli("estimate", "--model", str(tiny_config), "--strategy", "fsdp_full", "--gpus", "2", "--lora",
                 "--seq-len", "128", "--trace", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    traced, analytic = data["trace"]["traced"], data["trace"]["analytic"]
    assert traced["reserved"] > traced["peak"]
    assert abs(traced["reserved"] - analytic["reserved"]) <= 0.20 * analytic["reserved"]
    assert any("FSDP: its gathered units" in note for note in data["trace"]["notes"])
