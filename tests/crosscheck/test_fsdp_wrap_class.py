"""AW316 says what accelerate does: its FSDP plugin looks the wrap class up among the model's module classes and
raises for a class the model lacks. Checked with the real FullyShardedDataParallelPlugin on a one-layer
XLM-RoBERTa built on the meta device (no process group needed for the lookup)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("accelerate")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _set_policy(names: list[str]) -> None:
    from accelerate.utils import FullyShardedDataParallelPlugin

    config = transformers.AutoConfig.for_model("xlm-roberta", num_hidden_layers=1)
    with torch.device("meta"):
        model = transformers.AutoModel.from_config(config)
    plugin = FullyShardedDataParallelPlugin(auto_wrap_policy="transformer_based_wrap",
                                            transformer_cls_names_to_wrap=names)
    plugin.set_auto_wrap_policy(model)


@pytest.mark.parametrize("names,refused", [(["BertLayer"], True), (["XLMRobertaLayer"], False),
                                           (["XLMRobertaLayer", " XLMRobertaEmbeddings"], True)])
def test_accelerate_refuses_a_wrap_class_the_model_lacks_and_aw316_agrees(cli, write, names, refused):
    if refused:
        with pytest.raises(ValueError, match="Could not find the transformer layer class"):
            _set_policy(names)
    else:
        _set_policy(names)
    model = write("xlmr.json", json.dumps({"model_type": "xlm-roberta", "hidden_size": 768, "num_hidden_layers": 12,
                                           "num_attention_heads": 12, "intermediate_size": 3072,
                                           "vocab_size": 250002, "max_position_embeddings": 514}))
    yaml = write("a.yaml", "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n"
                           "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
                           f"  fsdp_transformer_layer_cls_to_wrap: '{','.join(names)}'\n")
    found = json.loads(cli("check", str(yaml), "--model", str(model), "--select", "AW316", "--format",
                           "json").stdout)
    assert bool(found) is refused
