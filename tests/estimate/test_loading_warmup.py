"""transformers' caching_allocator_warmup: the block from_pretrained reserves before loading (loading_warmup.py).

On the installed transformers the empty model is built on the meta device with a real bitsandbytes 4-bit
quantizer (its preprocessing runs on a CPU) and transformers' own `get_total_byte_count` sizes the block; older
releases cannot be imported beside it, so their source is quoted and the version switch is tested through the argv.
"""

from __future__ import annotations

import json

import pytest

from accelwiz.estimate.loading_warmup import loading_reserved, warmup_block
from accelwiz.estimate.workload import Workload
from accelwiz.modelspec.lookup import spec_from_hf_config
from accelwiz.resolution.stack import Stack

TINY = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 32000, "hidden_size": 256,
        "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "max_position_embeddings": 512}


def _transformers_block(tied: bool) -> float:
    """What the installed transformers' warmup allocates for the tiny Llama in fp16 under a bnb NF4 quantizer:
    `torch.empty(byte_count // 2, dtype=torch.float16)` of `get_total_byte_count`'s figure."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("bitsandbytes")
    from transformers import BitsAndBytesConfig, LlamaConfig, LlamaForCausalLM
    from transformers.modeling_utils import get_total_byte_count
    from transformers.quantizers import AutoHfQuantizer

    config = LlamaConfig(**{k: v for k, v in TINY.items() if k not in ("model_type", "architectures")},
                         tie_word_embeddings=tied)
    quantizer = AutoHfQuantizer.from_config(BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                               bnb_4bit_use_double_quant=True), pre_quantized=False)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float16)  # from_pretrained(dtype=torch.float16) builds the empty model so
    try:
        with torch.device("meta"):
            model = LlamaForCausalLM(config)
        quantizer.preprocess_model(model=model, device_map={"": 0}, keep_in_fp32_modules=[], config=config)
    finally:
        torch.set_default_dtype(default)
    # the quantizer really replaced them, and their weights are still 16-bit on meta: what 4.51-4.57 summed at
    # `param.numel() * param.element_size()` (the 4.57 test below)
    assert {m.weight.element_size() for m in model.modules() if type(m).__name__ == "Linear4bit"} == {2}
    names = [name for name, _ in model.named_parameters(remove_duplicate=False)]
    counts = get_total_byte_count(model, {name: torch.device("cuda", 0) for name in names}, quantizer)
    (byte_count,) = counts.values()
    return 2 * int(byte_count // 2)


def _workload(tied: bool, transformers: tuple[int, ...] | None = None, **kwargs) -> Workload:
    spec = spec_from_hf_config({**TINY, "tie_word_embeddings": tied}, name="tiny-llama", source="test")
    return Workload(spec, regime="qlora", base_dtype="fp16", stack=Stack(transformers=transformers), **kwargs)


@pytest.mark.parametrize("tied", [False, True])
def test_the_installed_transformers_sizes_the_block_as_the_estimator(tied: bool) -> None:
    block, note = warmup_block(_workload(tied), None, 0.0)
    assert block == pytest.approx(_transformers_block(tied), abs=2)
    assert note and "get_total_byte_count" in note


def test_a_lora_or_full_load_gets_no_block() -> None:
    spec = spec_from_hf_config({**TINY, "tie_word_embeddings": False}, name="tiny-llama", source="test")
    assert warmup_block(Workload(spec, regime="lora", stack=Stack(transformers=(4, 57, 1))), None, 0.0) == (0.0, None)


def test_4_57_reserves_half_the_16_bit_model_capped_at_free_memory_less_1_2_gib() -> None:
    """4.57.1 modeling_utils.py: `factor = 2 if hf_quantizer is None else
    hf_quantizer.get_accelerator_warm_up_factor()` (base.py: `return 4`), `param_byte_count = param.numel() *
    param.element_size()` over the empty model (Linear4bit weights 16-bit on meta), `byte_count = min(byte_count,
    max(0, int(device_memory - 1.2 * 1024**3)))`, `torch.empty(byte_count // factor, dtype=torch.float16)`."""
    workload = _workload(False, (4, 57, 1))
    n = workload.model.num_parameters
    assert warmup_block(workload, None, 0.0)[0] == n  # 2n bytes // 4 fp16 elements = n bytes
    # the built-in trainer loads in fp32 (trainer/models.py load_pretrained): the empty model's 4n bytes, halved
    fp32 = Workload(workload.model, regime="qlora", stack=Stack(transformers=(4, 57, 1)))
    assert warmup_block(fp32, None, 0.0)[0] == 2 * n
    gib = 2**30
    capped, _ = warmup_block(workload, round(1.4 * gib) + n, 0.2 * gib)  # free n + 1.2 GiB: the cap is n bytes
    assert capped == pytest.approx(n / 2)
    # before 4.56 a tied embedding is counted under both of its names (the state dict's keys)
    tied = _workload(True, (4, 53, 0))
    assert warmup_block(tied, None, 0.0)[0] == tied.model.num_parameters + 32000 * 256


def test_4_50_skipped_quantized_models_and_4_49_had_no_warmup() -> None:
    """4.50.0: `if device_map is not None and hf_quantizer is None: ... caching_allocator_warmup(...)`."""
    assert warmup_block(_workload(False, (4, 50, 0)), None, 0.0) == (0.0, None)
    assert warmup_block(_workload(False, (4, 49, 0)), None, 0.0) == (0.0, None)


def _casts_reserve(layers: int, hidden: int) -> tuple[float, float, float, float]:
    spec = spec_from_hf_config({**TINY, "tie_word_embeddings": False, "num_hidden_layers": layers,
                                "hidden_size": hidden, "intermediate_size": 8 * hidden, "num_attention_heads": 8,
                                "num_key_value_heads": 4}, name="tiny-llama", source="test")
    workload = Workload(spec, regime="qlora", base_dtype="fp16", stack=Stack(transformers=(4, 57, 1)))
    block, _ = warmup_block(workload, None, 0.0)
    reserved, note = loading_reserved(workload, 0.0, None, 0.0)
    loaded = _as_loaded(workload)
    assert note and "caching_allocator_warmup" in note
    return block, loaded, reserved, 4.0 * 32000 * hidden


def test_kbit_casts_beyond_the_free_pieces_take_segments_of_their_own() -> None:
    """prepare_model_for_kbit_training's fp32 embedding and LM head after the block: each is cut from a free piece
    that holds it, else takes a segment of its own (the 16-bit original freed after it)."""
    # a wide model: the block's free tail holds the fp32 embedding, not the LM head after it (its 16-bit
    # original's freed piece is half its size)
    block, loaded, reserved, cast = _casts_reserve(16, 1024)
    assert block - loaded >= cast > block - loaded - cast
    assert reserved == pytest.approx(block + cast)
    # a narrow one: the embeddings outweigh the linears, the weights outgrow the block, and both casts are new
    block, loaded, reserved, cast = _casts_reserve(2, 256)
    assert loaded > block and reserved == pytest.approx(loaded + 2 * cast)
    unprepared, _ = loading_reserved(_workload(False, (4, 57, 1), kbit_prepared=False), 0.0, None, 0.0)
    assert unprepared == pytest.approx(_as_loaded(_workload(False, (4, 57, 1))))


def _as_loaded(workload: Workload) -> float:
    return (0.5 + 1 / 64 + 4 / (64 * 256)) * workload.quantized_parameters + 2 * (
        workload.model.num_parameters - workload.quantized_parameters)


def _reserved(cli, stack: str) -> int:
    result = cli("estimate", "--model", "qwen2-7b", "--system", "1xA100-80GB", "--strategy", "single", "--qlora",
                 "--base-dtype", "fp16", "--no-kbit-prepare", "--micro-batch", "1", "--seq-len", "128",
                 "--gradient-checkpointing", "--stack", f"transformers=={stack}", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    return data["estimate"]["peak"]["reserved"], data["model"]["parameters"], data["estimate"]["assumptions"]


def test_the_stack_switches_the_block_through_the_argv(cli) -> None:
    """Qwen2-7B in NF4 at 128 tokens: the step reserves less than 4.57.1's block of half its 16-bit bytes, which
    then is the reserve; 4.49 has no warmup and 5.25 sizes the block below the loaded weights."""
    reserved_457, parameters, notes = _reserved(cli, "4.57.1")
    assert reserved_457 == parameters and any("caching_allocator_warmup" in line for line in notes)
    reserved_449, _, notes_449 = _reserved(cli, "4.49.0")
    reserved_525, _, _ = _reserved(cli, "5.25.0")
    assert reserved_449 == reserved_525 < reserved_457
    assert not any("caching_allocator_warmup" in line for line in notes_449)


def test_fsdp_qlora_reserves_no_block_and_deepspeed_does() -> None:
    """FSDP's measured QLoRA loads (Answer.AI's train.py quantizes layer by layer without from_pretrained: the H200
    streams of fsdp_reserve.py) reserve no block; under DeepSpeed bitsandbytes loads the whole model onto each GPU
    through from_pretrained, warmup included."""
    from accelwiz.estimate.strategy import Strategy

    workload = _workload(False, (4, 57, 1))
    block, _ = warmup_block(workload, None, 0.0)
    assert loading_reserved(workload, 0.0, None, 0.0, Strategy("fsdp_full", gpus_per_node=2)) == (0.0, None)
    reserved, note = loading_reserved(workload, 0.0, None, 0.0, Strategy("zero2", gpus_per_node=2))
    assert reserved >= block > 0 and "caching_allocator_warmup" in note
