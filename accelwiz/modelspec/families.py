"""What each model family's blocks and head do differently, as named features (the one family table).

The formulas read these features from `ModelSpec` (`spec.softcapped_logits`, `spec.norms_per_block`, ...)
instead of branching on the family name, so a family joins by adding its features here, and a formula says
which property of the model it depends on. Each table is keyed by HF `model_type`.
"""

from __future__ import annotations

# Decoders whose blocks are "RMSNorm, rotary attention with q/k/v/o projections, gated MLP": activations.py
# applies its gated-MLP formula to them. The first six are what that formula was written and checked for; the
# others share the layout but add terms it lacks (q/k norms, 4 norms per block, shared experts, MLA), so their
# specs carry `analytic_activations=False` with the reason (architecture.py decides).
GATED_FAMILIES = frozenset(
    {"llama", "mistral", "qwen2", "gemma2", "phi3", "mixtral"}
    | {"gemma", "gemma3", "gemma3_text", "qwen3", "qwen3_moe", "qwen2_moe", "deepseek_v2", "deepseek_v3"}
    | {"olmo2", "granite", "ministral", "mistral3", "llama4_text", "smollm3", "glm", "glm4", "helium"}
)

# The LayerNorm blocks of GPT-2 and BERT, which activations.py models with Korthikanti's 34sbh per layer.
LAYERNORM_BLOCK_FAMILIES = frozenset({"gpt2", "bert"})

# Decoders whose blocks are "LayerNorm (with bias), learned positions, q/k/v/out projections with biases, an ungated
# fc1 -> ReLU -> fc2 MLP, residual dropout" (OPT: transformers' modeling_opt.py): activations.py writes their
# blocks out term by term (layer_terms.relu_layernorm_terms). Pre- or post-norm (`do_layer_norm_before`) and the
# embedding projection pair (`word_embed_proj_dim`) are stated by each config: ModelSpec fields (from_config.py).
RELU_MLP_FAMILIES = frozenset({"opt"})

# Blocks normalised by nn.LayerNorm (input, mean and rstd kept for backward whatever its weight's requires_grad),
# not by HF's RMSNorm (which keeps its fp32 upcast and, for the weight's gradient, the normalised tensor).
LAYERNORM_FAMILIES = frozenset({"gpt2", "bert", "opt"})

# Encoders without a causal LM head: no logits or loss tail, no LM head reading a tied embedding, no --trace.
ENCODER_FAMILIES = frozenset({"bert"})

# GPT-2's Conv1D layers store their weight (in, out), where nn.Linear stores (out, in).
CONV1D_FAMILIES = frozenset({"gpt2"})

# GPT-2's MLP activation `gelu_new` (0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))) keeps its pow/tanh chain.
GELU_NEW_FAMILIES = frozenset({"gpt2"})

# Fused projections (Phi-3: one qkv_proj, one gate_up_proj): the same parameter count as separate ones, and
# fewer saved casts under autocast (activations.py: 2 sbh per norm instead of 5).
FUSED_PROJECTION_FAMILIES = frozenset({"phi3"})

# Four RMSNorms per block (before and after attention and MLP): Gemma-2 and Gemma-3.
SANDWICH_NORM_FAMILIES = frozenset({"gemma2", "gemma3", "gemma3_text"})

# Gemma's RMSNorm multiplies by `1 + weight` in fp32, so its normalised tensor is kept in fp32.
GEMMA_RMSNORM_PREFIX = "gemma"

# Families whose LM head soft-caps the logits (transformers' Gemma2Config: final_logit_softcapping=30.0).
SOFTCAPPED_LOGITS = frozenset({"gemma2"})

# Families transformers builds without an SDPA path, with its reason (transformers 5, the model class's
# `_supports_sdpa`): from_pretrained(attn_implementation="sdpa") raises for them; without it, eager is used.
NO_SDPA = {
    "gemma2": "Gemma-2's attention logit soft-capping: transformers' Gemma2PreTrainedModel sets "
    "`_supports_sdpa = False  # sdpa does not support softcapping` (models/gemma2/modeling_gemma2.py)",
}

# Families whose block layout activations.py models term by term (see its docstring).
EXACT_FAMILIES = frozenset({"llama", "mistral", "qwen2", "gemma2", "phi3", "mixtral", "gpt2", "bert"}
                           | {"qwen3", "gemma3", "gemma3_text"}  # per-head q/k norms: activations.head_norm_bytes
                           | RELU_MLP_FAMILIES)  # OPT: layer_terms.relu_layernorm_terms


class FamilyFeatures:
    """The features ModelSpec derives from its family through the tables above (ModelSpec inherits them).

    Features a config states itself (`softcapped_logits`, `sdpa_refusal`) are ModelSpec fields instead,
    set by architecture.py from the config and the built model, and from these tables for the presets.
    """

    family: str
    tie_word_embeddings: bool

    @property
    def gated_decoder(self) -> bool:
        """RMSNorm, rotary attention with q/k/v/o projections and a gated MLP (Llama's block layout)."""
        return self.family in GATED_FAMILIES

    @property
    def layernorm_block(self) -> bool:
        """GPT-2's or BERT's LayerNorm block, which the activation formula takes as Korthikanti's 34sbh."""
        return self.family in LAYERNORM_BLOCK_FAMILIES

    @property
    def relu_mlp(self) -> bool:
        """An ungated fc1 -> ReLU -> fc2 MLP: ReLU keeps only its output, which fc2 reads (OPT)."""
        return self.family in RELU_MLP_FAMILIES

    @property
    def layernorm(self) -> bool:
        """nn.LayerNorm blocks: the norm keeps its input whether or not its weight trains; no RMSNorm upcast."""
        return self.family in LAYERNORM_FAMILIES

    @property
    def causal_lm(self) -> bool:
        """A causal LM head and its loss; False for encoders (BERT), which the estimate trains without logits."""
        return self.family not in ENCODER_FAMILIES

    @property
    def tied_lm_head(self) -> bool:
        """The LM head reads the token embedding (`tie_word_embeddings` in a causal LM)."""
        return self.tie_word_embeddings and self.causal_lm

    @property
    def conv1d_weights(self) -> bool:
        """Block weights stored (in, out) as GPT-2's Conv1D, not (out, in) as nn.Linear."""
        return self.family in CONV1D_FAMILIES

    @property
    def gelu_new_mlp(self) -> bool:
        """GPT-2's tanh-approximated GELU written out (`gelu_new`, its config's default), whose intermediates are
        kept for backward; a config naming `gelu_pytorch_tanh` or `gelu` runs one fused kernel that keeps its input
        only (tests/estimate/test_gpt2_activation.py, against the trace)."""
        return self.family in GELU_NEW_FAMILIES and self.mlp_activation in ("", "gelu_new")

    @property
    def gelu_new_replaced(self) -> bool:
        """A GPT-2 config naming a fused GELU instead of its family's `gelu_new` (a from-scratch GPT's
        nn.GELU(approximate="tanh")): no pow/tanh chain, in any dtype."""
        return self.family in GELU_NEW_FAMILIES and not self.gelu_new_mlp

    @property
    def fused_projections(self) -> bool:
        """One qkv_proj and one gate_up_proj per block (Phi-3) instead of separate projections."""
        return self.family in FUSED_PROJECTION_FAMILIES

    @property
    def norms_per_block(self) -> int:
        """RMSNorms per block: 4 with sandwich norms around attention and MLP (Gemma-2, Gemma-3), else 2."""
        return 4 if self.family in SANDWICH_NORM_FAMILIES else 2

    @property
    def fp32_normalised_norm(self) -> bool:
        """Gemma's RMSNorm multiplies by `1 + weight` in fp32, so it keeps an fp32 normalised tensor."""
        return self.family.startswith(GEMMA_RMSNORM_PREFIX)

    @property
    def term_by_term_activations(self) -> bool:
        """activations.py's formula was written and checked against the trace for this block layout."""
        return self.family in EXACT_FAMILIES
