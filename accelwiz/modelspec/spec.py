"""A transformer's shape, and its parameter tensors derived from that shape as HF transformers builds them.

Everything the estimator needs from a model comes from `ModelSpec.tensors()`: the parameter count (tied
embeddings counted once, as `model.parameters()` does), the largest module (what DeepSpeed's ZeRO-3 estimator
calls `largest_layer_params`: parameters of one module, `recurse=False`), the linear layers LoRA can
target, and the matrix shapes Adafactor factors. Counting from tensors instead of a closed formula keeps one
source of truth. The presets' tensors are derived from their shape in tensors.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from accelwiz.modelspec import families
from accelwiz.modelspec.peft_moe import (MoeTargets, Version, convertible_names, fused_view, moe_targets,
                                         parameter_matrices)
from accelwiz.modelspec.tensors import Tensor, tensors_of

# A HF `model_type`. The presets use llama, mistral, qwen2, gemma2, phi3, mixtral, gpt2 and bert; a config.json
# or hub id may name any type transformers knows (accelwiz/modelspec/from_config.py builds it on `meta`).
Family = str


# LoRA targets outside the transformer blocks: the output layer and the token embedding, by their HF names.
OUTSIDE_BLOCK_TARGETS = frozenset({"lm_head", "embed_tokens", "wte", "word_embeddings", "embed_in", "embed_out"})


@dataclass(frozen=True)
class ModelSpec(families.FamilyFeatures):
    """The parameter-relevant fields of a HF `config.json`, plus where they were read from."""

    name: str
    family: Family
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    num_experts: int = 1
    experts_per_token: int = 1
    attention_bias: bool = False  # Qwen2: q/k/v biases
    aliases: tuple[str, ...] = ()
    parameters_override: int | None = None  # `--params 7e9`: the count is given, the shape is borrowed
    source: str = ""
    # -- structure beyond the eight preset families (filled by architecture.py from config + meta model) ----
    # MoE: `intermediate_size` is the width of one routed expert; shared experts run for every token on top.
    shared_expert_intermediate_size: int = 0  # total width of the shared expert(s) (Qwen2-MoE, DeepSeek)
    # Multi-head latent attention (DeepSeek-V2/V3): low-rank q (None: a full q_proj) and kv projections.
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    sliding_window: int | None = None  # tokens; None: full attention in every layer
    # The projection pair (OPT's `word_embed_proj_dim`): the token embedding and the LM head are this wide and
    # `project_in`/`project_out` map them to and from the blocks' hidden_size (opt-350m: 512 and 1024). None:
    # no pair, the embedding is hidden_size wide. from_config.py reads it from the built project_in.
    word_embed_proj_dim: int | None = None
    # Whether a norm follows the last block (False for a post-norm model: opt-350m's `do_layer_norm_before`
    # false builds no final_layer_norm); read by the LayerNorm decoders' tail (activations.py).
    final_norm: bool = True
    # The dropout on each block's attention and MLP outputs (OPT's `dropout`, 0.1): CUDA's fused dropout keeps
    # a 1-byte mask per element (trace_dropout.py). Read by the ReLU/LayerNorm decoders' terms only.
    residual_dropout: float = 0.0
    # The MLP's activation as the config names it (`activation_function`, `hidden_act`): the ReLU/LayerNorm formula
    # holds for "relu" only (ReLU keeps its output; GELU keeps its input too: Galactica's OPT blocks), "" unknown.
    mlp_activation: str = ""
    # The LM head soft-caps the logits with tanh before the loss (`final_logit_softcapping`: Gemma-2's 30.0,
    # also set by Gemma-3n/4, VaultGemma...): tanh keeps its output for backward (activations.logits_bytes).
    # architecture.py reads it from the config; None (the presets): the family's (families.SOFTCAPPED_LOGITS).
    softcapped_logits: bool | None = None
    # Why transformers builds this model without SDPA attention (its class's `_supports_sdpa = False`), "" where
    # it has SDPA: the default attention is then eager and `--attention sdpa` is refused (workload.py).
    # architecture.py reads it from the built model's class; None (the presets): the family's (families.NO_SDPA).
    sdpa_refusal: str | None = None
    # Whether the model's own forward computes its loss on fp32 logits: transformers' ForCausalLMLoss does
    # (`logits.float()`), so do ChatGLM's (`lm_logits.to(torch.float32)`) and InternLM2's (`logits.float()`) remote
    # code; Qwen-1's and Baichuan2's call CrossEntropyLoss on the 16-bit logits, with no fp32 [tokens, vocab] copy
    # (remote_code.py cites the lines). Set by remote_code.py; True for every transformers architecture.
    loss_upcasts_logits: bool = True
    # False when activations.py has no exact formula for this block layout; the reason says which terms
    # it lacks, and `--trace` measures the real model instead.
    analytic_activations: bool = True
    activations_note: str = ""
    # The parameters of the model transformers built on the meta device (architecture.py); None for the
    # presets, whose tensors are derived from the shape below.
    built_tensors: tuple[Tensor, ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.softcapped_logits is None:  # set once, so formulas read the feature, never the family
            object.__setattr__(self, "softcapped_logits", self.family in families.SOFTCAPPED_LOGITS)
        if self.sdpa_refusal is None:
            object.__setattr__(self, "sdpa_refusal", families.NO_SDPA.get(self.family, ""))

    @property
    def hub_id(self) -> str | None:
        """The Hugging Face repository a preset's config.json was read from: where its weights are too."""
        marker = "https://huggingface.co/"
        return self.source[len(marker):].split("/blob/")[0] if self.source.startswith(marker) else None

    # -- counts -------------------------------------------------------------------------------------------
    @cached_property
    def override_scale(self) -> float:
        """`--params N`: the given count over the borrowed shape's; every count taken from that shape (a block,
        the block linears QLoRA quantizes, the root unit) is multiplied by it. 1.0 for a real shape."""
        if self.parameters_override is None:
            return 1.0
        return self.parameters_override / sum(t.numel for t in self.tensors())

    def scaled(self, count: float) -> int:
        """`count`, measured on the shape, at the parameter count `--params` gave (itself for a real shape)."""
        return round(count * self.override_scale)

    @cached_property
    def num_parameters(self) -> int:
        """Unique parameters (tied embeddings once), as `sum(p.numel() for p in model.parameters())`."""
        if self.parameters_override is not None:
            return self.parameters_override
        return sum(t.numel for t in self.tensors())

    @cached_property
    def active_parameters(self) -> int:
        """Parameters one token passes through: all of them, except the experts a MoE router does not pick.

        Routed experts are the tensors under an `experts` module (one module per expert, `experts.3.w1`, or
        one fused module whose first dimension is the expert, transformers 5); shared experts always run.
        """
        total = self.num_parameters
        if self.num_experts <= 1:
            return total
        routed = sum(t.numel for t in self.tensors() if ".experts." in f".{t.module}.")
        idle = routed * (self.num_experts - self.experts_per_token) // self.num_experts
        return total - self.scaled(idle)

    @cached_property
    def largest_layer_parameters(self) -> int:
        """Parameters of the largest single module (`recurse=False`), as DeepSpeed's `model_to_params`."""
        per_module: dict[str, int] = {}
        for t in self.tensors():
            per_module[t.module] = per_module.get(t.module, 0) + t.numel
        return self.scaled(max(per_module.values()))

    @cached_property
    def layer_parameters(self) -> int:
        """Parameters of the largest transformer block (the unit FSDP wraps and ZeRO-3 gathers).

        Blocks differ where a model mixes layer kinds (DeepSeek's first dense layers before the MoE ones).
        """
        per_block: dict[str, int] = {}
        for t in self.tensors():
            if t.module.startswith("layers."):
                block = t.module.split(".", 2)[1]
                per_block[block] = per_block.get(block, 0) + t.numel
        return self.scaled(max(per_block.values()))

    @property
    def embedding_width(self) -> int:
        """The token embedding's (and a tied LM head's) width: the projection pair's, else hidden_size."""
        return self.word_embed_proj_dim or self.hidden_size

    @property
    def kv_ratio(self) -> float:
        return self.num_kv_heads / self.num_heads

    # -- tensors ------------------------------------------------------------------------------------------
    def tensors(self) -> tuple[Tensor, ...]:
        """Every parameter tensor, with HF module names; tied lm_head omitted (it shares the embedding)."""
        return self._tensors

    @cached_property
    def _tensors(self) -> tuple[Tensor, ...]:
        if self.built_tensors is not None:
            return self.built_tensors
        return tensors_of(self)

    def block_linears(self) -> list[Tensor]:
        """The nn.Linear weights inside the transformer blocks of one layer (layer 0), with their shapes."""
        return [t for t in self.tensors() if t.linear and t.module.startswith("layers.0.")]

    def all_block_linears(self) -> list[Tensor]:
        """The nn.Linear weights inside every transformer block (blocks may differ: dense and MoE layers)."""
        return [t for t in self.tensors() if t.linear and t.module.startswith("layers.")]

    def lora_matrices(
        self, rank: int, targets: set[str] | frozenset[str] | tuple[str, ...], *, all_linear: bool = False,
        moe: MoeTargets | None = None,
    ) -> tuple[int, ...]:
        """The element count of each LoRA A and B matrix: r x in and out x r for every block linear whose name is
        in `targets` (every block linear with `all_linear`, as PEFT's `target_modules="all-linear"`: MLA's
        kv_a_proj_with_mqa, GPT-NeoX's query_key_value and other names outside the preset families included),
        and, where PEFT converts the targets of a transformers-5 MoE model (`moe`: peft_moe.py), its fused experts
        and router."""
        wanted = set(targets)
        matrices: list[int] = []
        linears = self.all_block_linears()
        if moe is not None:  # the experts as transformers 5 fuses them; some names stop targeting linears
            linears = [t for t in fused_view(self.tensors()) if t.linear and t.module.startswith("layers.")
                       and t.kind not in moe.dropped]
        for t in linears:
            if all_linear or t.kind in wanted:
                out_features, in_features = t.shape
                matrices += [rank * in_features, out_features * rank]
        if all_linear and self.word_embed_proj_dim:  # PEFT's all-linear adapts OPT's projection pair too
            for t in self.tensors():
                if t.kind in ("project_in", "project_out") and t.name == "weight":
                    matrices += [rank * t.shape[1], t.shape[0] * rank]
        # outside the blocks PEFT adapts the output layer (a Linear, tied or not) and the token embedding
        # (lora_embedding_A r x vocab, lora_embedding_B hidden x r) when named; "all-linear" leaves lm_head out
        for _ in wanted & OUTSIDE_BLOCK_TARGETS:
            matrices += [rank * self.vocab_size, self.embedding_width * rank]
        if moe is not None:
            matrices += parameter_matrices(self.tensors(), rank, moe)
        return tuple(matrices)

    def moe_lora_targets(self, targets: set[str] | frozenset[str] | tuple[str, ...], *, all_linear: bool,
                         peft: Version | None, transformers: Version | None) -> MoeTargets | None:
        """What PEFT adapts of this model's fused experts and router at those versions (peft_moe.py: by model
        type, as PEFT's own table keys it); None where it converts nothing."""
        return moe_targets(self.family, set(targets), all_linear=all_linear, peft=peft, transformers=transformers)

    @property
    def converted_lora_names(self) -> frozenset[str]:
        """The v4 names a LoRA target may use where PEFT converts them to fused experts and router (peft_moe.py)."""
        return convertible_names(self.family)

    def lora_parameters(
        self, rank: int, targets: set[str] | frozenset[str] | tuple[str, ...], *, all_linear: bool = False
    ) -> int:
        """LoRA A and B matrices together, r·(in + out) per adapted linear (`lora_matrices`)."""
        return sum(self.lora_matrices(rank, targets, all_linear=all_linear))
