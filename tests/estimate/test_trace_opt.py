"""OPT term by term (issue 28): the formulas against the fake-tensor trace of transformers' own modeling_opt.py.

Two shapes at their real widths with 2 layers: opt-125m's (pre-norm, a final LayerNorm, the embedding as wide as
the blocks) and opt-350m's (post-norm, no final norm, the projection pair: a 512-wide embedding and LM head around
1024-wide blocks), both with the configs' residual dropout 0.1. Full fine-tuning and LoRA (PEFT's OPT default
q_proj/v_proj, and every block linear), mixed (autocast over fp32 weights; LoRA over a 16-bit base), pure bf16 and
fp32, SDPA and eager, with and without gradient checkpointing and lora_dropout. Weights, gradients and optimizer
states must equal the trace's to the byte; activations+logits and the allocated peak within 2 %, in the same phase.
Deterministic (fake tensors: no data, no timing). The rows are docs/performance.md's OPT lines of "Formula vs trace".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("peft")

from accelwiz.estimate.activations import layer_activations  # noqa: E402
from accelwiz.estimate.memory import estimate_memory  # noqa: E402
from accelwiz.estimate.strategy import Strategy  # noqa: E402
from accelwiz.estimate.trace import TraceSettings, trace_training_step  # noqa: E402
from accelwiz.estimate.trace_compare import analytic_categories  # noqa: E402
from accelwiz.estimate.trace_model import config_from_dict  # noqa: E402
from accelwiz.estimate.workload import ALL_LINEAR, Workload  # noqa: E402
from accelwiz.modelspec.from_config import spec_from_config  # noqa: E402

TOLERANCE = 0.02
OPT_350M = Path(__file__).resolve().parents[2] / "benchmarks" / "published" / "models" / "opt-350m" / "config.json"
# facebook/opt-125m's config.json, the fields its shape depends on (the rest are OPTConfig's defaults)
OPT_125M = {"model_type": "opt", "vocab_size": 50272, "hidden_size": 768, "ffn_dim": 3072, "num_attention_heads": 12,
            "word_embed_proj_dim": 768, "do_layer_norm_before": True, "dropout": 0.1, "attention_dropout": 0.0,
            "activation_function": "relu", "max_position_embeddings": 2048, "pad_token_id": 1}


def _config(arch: str, layers: int = 2) -> dict[str, Any]:
    config = dict(OPT_125M) if arch == "opt-125m" else json.loads(OPT_350M.read_text())
    return {**config, "num_hidden_layers": layers}


@dataclass(frozen=True)
class Row:
    arch: str
    micro_batch: int
    seq_len: int
    precision: str = "mixed"
    attention: str = "sdpa"
    gradient_checkpointing: bool = False
    lora: tuple[str, ...] = ()  # LoRA r=64 targets; () = full fine-tuning
    lora_dropout: float = 0.0

    @property
    def label(self) -> str:
        targets = "all-linear" if self.lora == ALL_LINEAR else "+".join(t.removesuffix("_proj") for t in self.lora)
        return (f"{self.arch} b{self.micro_batch}×{self.seq_len} {self.precision} {self.attention}"
                + (" gc" if self.gradient_checkpointing else "") + (f" lora {targets}" if self.lora else "")
                + (f" dropout {self.lora_dropout:g}" if self.lora_dropout else ""))

    def workload(self, layers: int = 2) -> Workload:
        spec = spec_from_config(_config(self.arch, layers), name=self.arch, source="test")
        lora = {"regime": "lora", "lora_rank": 64, "lora_targets": self.lora,
                "lora_dropout": self.lora_dropout} if self.lora else {}
        return Workload(spec, micro_batch=self.micro_batch, seq_len=self.seq_len, precision=self.precision,
                        attention=self.attention, gradient_checkpointing=self.gradient_checkpointing,
                        **lora)  # type: ignore[arg-type]


QV = ("q_proj", "v_proj")  # PEFT's default target_modules for OPT (and trl#1376's)
ROWS = [
    Row("opt-125m", 1, 256, "mixed"),
    Row("opt-125m", 2, 256, "bf16", gradient_checkpointing=True),
    Row("opt-125m", 1, 512, "bf16", "eager"),
    Row("opt-125m", 2, 256, "fp32", "eager"),
    Row("opt-125m", 2, 256, "mixed", lora=QV),
    Row("opt-125m", 2, 256, "fp32", lora=QV),
    Row("opt-125m", 2, 256, "mixed", gradient_checkpointing=True, lora=QV),
    Row("opt-350m", 1, 256, "mixed"),
    Row("opt-350m", 2, 256, "bf16", gradient_checkpointing=True),
    Row("opt-350m", 1, 512, "bf16", "eager"),
    Row("opt-350m", 2, 256, "fp32"),
    Row("opt-350m", 2, 256, "mixed", gradient_checkpointing=True),
    Row("opt-350m", 2, 256, "mixed", lora=QV),
    Row("opt-350m", 2, 256, "bf16", lora=ALL_LINEAR),
    Row("opt-350m", 2, 256, "mixed", "eager", lora=("q_proj", "v_proj", "out_proj", "fc2")),
    Row("opt-350m", 2, 256, "bf16", lora=QV, lora_dropout=0.05),
    Row("opt-350m", 2, 256, "mixed", "eager", lora=QV, lora_dropout=0.05),
    Row("opt-350m", 2, 256, "mixed", gradient_checkpointing=True, lora=QV, lora_dropout=0.05),
]


def run(row: Row) -> dict[str, Any]:
    """The row traced and estimated on one GPU: bytes by category, analytic and traced, and the differences."""
    workload = row.workload()
    estimate = estimate_memory(workload, Strategy("single"))
    trace = trace_training_step(config_from_dict(_config(row.arch), source="test"),
                                TraceSettings.from_workload(workload))
    analytic = analytic_categories(estimate)
    traced = {"weights": trace.weights, "gradients": trace.gradients, "optimizer_states": trace.optimizer_states,
              "activations": trace.activations, "peak": trace.peak}
    return {"setting": row.label, "analytic": analytic, "traced": traced,
            "error": {key: (analytic[key] - traced[key]) / traced[key] if traced[key] else 0.0 for key in traced},
            "analytic_phase": estimate.peak_phase, "traced_phase": trace.peak_phase}


def test_opt_350m_config_reads_as_an_exact_family() -> None:
    """The projection pair's 512-wide embedding is not the blocks' width: hidden 1024, ffn_dim 4096, head_dim 64."""
    spec = spec_from_config(json.loads(OPT_350M.read_text()), name="opt-350m", source=str(OPT_350M))
    assert (spec.hidden_size, spec.intermediate_size, spec.head_dim) == (1024, 4096, 64)
    assert (spec.word_embed_proj_dim, spec.embedding_width, spec.final_norm) == (512, 512, False)
    assert spec.residual_dropout == 0.1 and spec.relu_mlp and spec.layernorm
    assert spec.analytic_activations, spec.activations_note
    assert spec.num_parameters == 331_196_416  # model.num_parameters() of facebook/opt-350m
    # LoRA r=64 on q_proj and v_proj: trl#1376 prints 6,291,456 trainable parameters
    assert spec.lora_parameters(64, ("q_proj", "v_proj")) == 6_291_456
    pre = spec_from_config(_config("opt-125m", 12), name="opt-125m", source="test")
    assert (pre.hidden_size, pre.word_embed_proj_dim, pre.final_norm) == (768, None, True)


def test_opt_blocks_with_another_activation_stay_approximate() -> None:
    """facebook/galactica-* are model_type opt with `activation_function` gelu, which keeps its input where ReLU keeps
    its output: the ReLU formula is not claimed for them."""
    spec = spec_from_config({**_config("opt-125m", 12), "activation_function": "gelu"}, name="galactica", source="t")
    assert not spec.analytic_activations and "`gelu` MLP" in spec.activations_note


@pytest.mark.parametrize("arch", ["opt-125m", "opt-350m"])
@pytest.mark.parametrize("precision", ["mixed", "bf16", "fp32"])
def test_one_layer_is_what_the_trace_adds_per_layer(arch: str, precision: str) -> None:
    """The layer terms alone: a second traced layer adds exactly one `layer_activations` (less 2 % for the LayerNorm
    statistics, which CPU keeps in the input's dtype where CUDA keeps fp32)."""
    row = Row(arch, 2, 256, precision)
    settings = TraceSettings.from_workload(row.workload())
    one, two = (trace_training_step(config_from_dict(_config(arch, n), source="test"), settings) for n in (1, 2))
    autocast = precision == "mixed"
    per_layer = layer_activations(row.workload(), autocast=autocast).total
    assert per_layer == pytest.approx(two.activations - one.activations, rel=0.002)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.label.replace(" ", "-"))
def test_opt_formulas_match_the_trace(row: Row) -> None:
    result = run(row)
    analytic, traced = result["analytic"], result["traced"]
    for exact in ("weights", "gradients", "optimizer_states"):
        assert analytic[exact] == traced[exact], (exact, analytic[exact], traced[exact])
    assert abs(result["error"]["activations"]) <= TOLERANCE, result
    assert abs(result["error"]["peak"]) <= TOLERANCE, result
    assert result["analytic_phase"] == result["traced_phase"], result


def test_the_command_line_sizes_opt_term_by_term(cli) -> None:
    """What a user types: opt-350m's config.json is no longer 'activations approximate'; the per-layer terms are
    modeling_opt.py's, at the blocks' width (24 layers x 1,024, not the embedding's 512)."""
    result = cli("estimate", "--model", str(OPT_350M), "--gpu-memory", "80GiB", "--strategy", "single",
                 "--precision", "bf16", "--micro-batch", "2", "--seq-len", "256", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assumptions = json.loads(result.stdout)["estimate"]["assumptions"]
    assert not [a for a in assumptions if "approximate" in a], assumptions
    layer = next(a for a in assumptions if a.startswith("activations per layer"))
    # 2 x 256 tokens x 4,096 ffn x 2 B of ReLU output = 4 MiB; 2 residual dropout masks, 1 B x 1,024 each = 1 MiB
    assert "ReLU output (fc2 reads it) 4 MiB" in layer and "residual dropout masks 1 MiB" in layer, layer
