"""What a built model does between the token embedding and the blocks, and after them: the features the
LayerNorm decoders' embedding and tail terms read (activations.py), from the model transformers built on meta.

Read from modules, never from the model_type: the projection pair (a `project_in` mapping the embedding's width to
the blocks'; OPT's `word_embed_proj_dim` 512 against opt-350m's hidden_size 1024, transformers' modeling_opt.py
`OPTDecoder.__init__`), whether a norm follows the last block (a post-norm OPT builds no `final_layer_norm`), and
the residual dropout each block applies to its attention and MLP outputs (OPT's `dropout`, 0.1 in every
facebook/opt-* config). torch is imported by the caller (from_config.py) before these run.
"""

from __future__ import annotations

from typing import Any

from accelwiz.modelspec.tensors import Tensor

# config keys of the dropout on each block's residual branches, by the families that name it so
_RESIDUAL_DROPOUT_KEYS = ("dropout", "resid_pdrop", "hidden_dropout_prob")


def block_width(tensors: tuple[Tensor, ...], embedding_width: int) -> int:
    """The blocks' hidden size: the embedding's, unless a `project_in` maps it to another width (its weight is
    (hidden, embedding_width), nn.Linear's (out, in))."""
    for t in tensors:
        if t.kind == "project_in" and t.name == "weight" and len(t.shape) == 2 and t.shape[1] == embedding_width:
            return t.shape[0]
    return embedding_width


def stream_fields(model: Any, config: Any, blocks_path: str, *, hidden: int, embedding_width: int) -> dict[str, Any]:
    """ModelSpec's word_embed_proj_dim, final_norm, residual_dropout and mlp_activation of the built `model`."""
    final_norm = any("Norm" in type(module).__name__ and not path.startswith(blocks_path + ".")
                     and "embed" not in path for path, module in model.named_modules())
    dropout = next((getattr(config, key) for key in _RESIDUAL_DROPOUT_KEYS
                    if isinstance(getattr(config, key, None), float)), 0.0)
    activation = next((getattr(config, key) for key in ("activation_function", "hidden_act")
                       if isinstance(getattr(config, key, None), str)), "")
    return {"word_embed_proj_dim": embedding_width if embedding_width != hidden else None,
            "final_norm": final_norm, "residual_dropout": dropout if 0.0 <= dropout < 1.0 else 0.0,
            "mlp_activation": activation}
