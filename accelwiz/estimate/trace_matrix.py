"""The formulas against the trace: a matrix of settings over eight architectures at their real widths.

Each architecture is its published config's shape (hidden size, heads, kv heads, head dim, intermediate size,
vocabulary, ties, experts) with 2 layers, built with transformers' own config classes (no network); each row
traces one training step on CPU (trace.py) and computes the analytic estimate (memory.py) for the same
workload on one GPU, by category. Used by tests/estimate/test_trace_matrix.py (weights, gradients and
optimizer states equal; activations+logits and the peak within 10%) and benchmarks/formula_vs_trace.py (the
table in docs/performance.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LAYERS = 2
TOLERANCE = 0.10

# Real widths of the published configs (config.json of each hub repo), at LAYERS layers.
ARCHITECTURES: dict[str, tuple[str, dict[str, Any]]] = {
    "gpt2": ("GPT2Config", {"n_layer": LAYERS}),
    "llama-3-8b": ("LlamaConfig", {
        "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
        "num_key_value_heads": 8, "rope_theta": 500000.0, "tie_word_embeddings": False}),
    "llama-3.2-1b": ("LlamaConfig", {
        "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 64, "tie_word_embeddings": True}),
    "qwen2.5-7b": ("Qwen2Config", {
        "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
        "num_key_value_heads": 4, "tie_word_embeddings": False}),
    "qwen3-1.7b": ("Qwen3Config", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_attention_heads": 16,
        "num_key_value_heads": 8, "head_dim": 128, "tie_word_embeddings": True}),
    "gemma-3-1b": ("Gemma3TextConfig", {
        "vocab_size": 262144, "hidden_size": 1152, "intermediate_size": 6912, "num_attention_heads": 4,
        "num_key_value_heads": 1, "head_dim": 256, "sliding_window": 512}),
    "phi-3-mini": ("Phi3Config", {
        "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192, "num_attention_heads": 32,
        "num_key_value_heads": 32, "pad_token_id": 32000}),
    "mistral-7b": ("MistralConfig", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
        "num_key_value_heads": 8, "sliding_window": None}),
    "mixtral-8x7b": ("MixtralConfig", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
        "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2}),
    # Qwen1.5-MoE-A2.7B: 60 routed experts (4 per token) and a shared expert 4x their width
    "qwen2-moe-a2.7b": ("Qwen2MoeConfig", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632, "num_attention_heads": 16, "num_key_value_heads": 16,
        "num_experts": 60, "num_experts_per_tok": 4, "tie_word_embeddings": False}),
}


@dataclass(frozen=True)
class Setting:
    arch: str
    micro_batch: int
    seq_len: int
    precision: str = "mixed"  # fp32 | mixed (autocast bf16) | bf16
    attention: str = "sdpa"
    gradient_checkpointing: bool = False
    lora: bool = False
    lora_dropout: float = 0.0  # PEFT's lora_dropout (LoRA rows only)

    @property
    def label(self) -> str:
        return (
            f"{self.arch} b{self.micro_batch}×{self.seq_len} {self.precision} {self.attention}"
            + (" gc" if self.gradient_checkpointing else "")
            + (" lora" if self.lora else "")
            + (f" dropout {self.lora_dropout:g}" if self.lora_dropout else "")
        )


def matrix() -> list[Setting]:
    """52 settings: every architecture in several precisions, attentions, batch shapes, checkpointing, LoRA."""
    rows: list[Setting] = []
    for arch in ARCHITECTURES:
        rows += [
            Setting(arch, 1, 256, "mixed", "sdpa"),
            Setting(arch, 2, 256, "bf16", "sdpa", gradient_checkpointing=True),
            Setting(arch, 1, 512, "bf16", "eager"),
        ]
    rows += [
        Setting("gpt2", 4, 512, "fp32", "eager"),
        Setting("gpt2", 2, 512, "mixed", "eager", gradient_checkpointing=True),
        Setting("gpt2", 2, 256, "mixed", "sdpa", lora=True),
        Setting("llama-3-8b", 1, 512, "mixed", "sdpa", gradient_checkpointing=True),
        Setting("llama-3-8b", 1, 256, "mixed", "sdpa", lora=True),
        Setting("llama-3.2-1b", 2, 512, "fp32", "eager"),
        Setting("llama-3.2-1b", 4, 256, "mixed", "eager", gradient_checkpointing=True),
        Setting("qwen2.5-7b", 1, 256, "bf16", "sdpa", lora=True),
        Setting("qwen3-1.7b", 2, 512, "mixed", "sdpa", gradient_checkpointing=True, lora=True),
        Setting("phi-3-mini", 2, 256, "mixed", "eager"),
        Setting("mistral-7b", 2, 512, "mixed", "sdpa"),
        Setting("gemma-3-1b", 1, 256, "mixed", "sdpa", lora=True),
        Setting("mixtral-8x7b", 1, 256, "mixed", "sdpa", gradient_checkpointing=True),
        Setting("qwen2.5-7b", 2, 256, "mixed", "eager", gradient_checkpointing=True),
        Setting("llama-3.2-1b", 1, 1024, "mixed", "sdpa"),
        Setting("mistral-7b", 1, 256, "fp32", "eager"),
        Setting("gpt2", 8, 128, "bf16", "eager"),
        Setting("llama-3.2-1b", 2, 512, "fp32", "sdpa"),
        Setting("qwen2-moe-a2.7b", 2, 512, "mixed", "sdpa", lora=True),
        # PEFT's and Answer.AI's lora_dropout 0.1: masks and dropped inputs (activations_lora.py)
        Setting("llama-3.2-1b", 2, 512, "bf16", "sdpa", lora=True, lora_dropout=0.1),
        Setting("mistral-7b", 1, 512, "mixed", "eager", lora=True, lora_dropout=0.1),
        Setting("qwen3-1.7b", 2, 256, "bf16", "sdpa", gradient_checkpointing=True, lora=True, lora_dropout=0.1),
    ]
    return rows


def build_config(arch: str) -> Any:
    import transformers

    class_name, fields = ARCHITECTURES[arch]
    return getattr(transformers, class_name)(num_hidden_layers=LAYERS, **fields) if class_name != "GPT2Config" \
        else transformers.GPT2Config(**fields)


def run(setting: Setting) -> dict[str, Any]:
    """Trace `setting` and estimate it; bytes by category, analytic and traced, and relative differences."""
    from accelwiz.estimate.memory import estimate_memory
    from accelwiz.modelspec.lookup import spec_from_hf_config
    from accelwiz.estimate.strategy import Strategy
    from accelwiz.estimate.trace import TraceSettings, trace_training_step
    from accelwiz.estimate.trace_compare import analytic_categories
    from accelwiz.estimate.workload import Workload

    config = build_config(setting.arch)
    spec = spec_from_hf_config(config.to_dict(), name=setting.arch, source=f"transformers {type(config).__name__}")
    workload = Workload(
        spec,
        micro_batch=setting.micro_batch,
        seq_len=setting.seq_len,
        regime="lora" if setting.lora else "full",
        lora_dropout=setting.lora_dropout,
        precision=setting.precision,  # type: ignore[arg-type]
        attention=setting.attention,  # type: ignore[arg-type]
        gradient_checkpointing=setting.gradient_checkpointing,
    )
    estimate = estimate_memory(workload, Strategy("single"))
    trace = trace_training_step(config, TraceSettings.from_workload(workload))
    analytic = analytic_categories(estimate)
    traced = {
        "weights": trace.weights,
        "gradients": trace.gradients,
        "optimizer_states": trace.optimizer_states,
        "activations": trace.activations,
        "peak": trace.peak,
        "reserved": trace.reserved,  # the caching-allocator replay of the traced stream (allocator.py)
    }
    return {
        "setting": setting.label,
        "analytic": analytic,
        "traced": traced,
        "error": {key: (analytic[key] - traced[key]) / traced[key] if traced[key] else 0.0 for key in analytic},
        "analytic_phase": estimate.peak_phase,
        "traced_phase": trace.peak_phase,
        "trace_seconds": round(trace.seconds, 2),
    }
