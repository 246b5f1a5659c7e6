"""estimate --kind dpo|grpo: the reference model by regime and strategy, DPO's concatenated step, GRPO's generation
(HF KV cache, vLLM colocate's share, server GPUs) and vLLM's block arithmetic, through the functions and the CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from accelwiz.estimate.memory import estimate_memory
from accelwiz.modelspec.lookup import resolve_model
from accelwiz.estimate.posttraining import PostTraining, estimate_posttraining, reference_bytes, training_workload
from accelwiz.estimate.strategy import Strategy
from accelwiz.estimate.vllm_kv import BLOCK_SIZE, kv_bytes_per_token, page_bytes, vllm_cache
from accelwiz.estimate.workload import Workload

LLAMA = resolve_model("llama-8b")  # 32 layers, 8 KV heads of 128, 8,030,261,248 parameters
GIB = 2**30


def workload(**more) -> Workload:
    return Workload(LLAMA, micro_batch=2, seq_len=2048, **more)


@pytest.mark.parametrize(("kind", "regime", "strategy", "more", "expected"), [
    ("dpo", "full", Strategy("ddp", gpus_per_node=8), {}, 4 * LLAMA.num_parameters),  # fp32 under autocast
    ("dpo", "full", Strategy("zero2", gpus_per_node=8), {}, 2 * LLAMA.num_parameters),  # prepare_deepspeed: stage 0
    ("dpo", "full", Strategy("zero3", gpus_per_node=8), {}, 2 * LLAMA.num_parameters // 8),  # sharded too
    ("dpo", "full", Strategy("fsdp_full", gpus_per_node=4), {}, 2 * LLAMA.num_parameters // 4),
    ("dpo", "lora", Strategy("zero3", gpus_per_node=8), {}, 0),  # the adapter disabled
    ("dpo", "full", Strategy("zero2", gpus_per_node=8), {"precompute_ref_log_probs": True}, 0),
    ("grpo", "full", Strategy("zero2", gpus_per_node=8), {}, 0),  # beta 0.0: TRL's default
    ("grpo", "full", Strategy("zero2", gpus_per_node=8), {"beta": 0.04}, 2 * LLAMA.num_parameters),
    ("sft", "full", Strategy("zero2", gpus_per_node=8), {}, 0),
])
def test_the_reference_model_per_gpu(kind, regime, strategy, more, expected) -> None:
    assert reference_bytes(workload(regime=regime), strategy, PostTraining(kind, **more))[0] == expected


def test_dpo_runs_chosen_and_rejected_of_prompt_plus_completion_in_one_step() -> None:
    post = PostTraining("dpo", max_prompt_length=300, max_completion_length=200)
    step = training_workload(workload(), post)
    # the step says how TRL computes its loss: the fused LM head over the completion positions (Triton)
    assert (step.micro_batch, step.seq_len, step.loss_kernel, step.scored_positions_per_sequence) == \
        (4, 500, "trl-fused-head", 200)
    assert training_workload(workload(), post, compact=False).scored_positions_per_sequence is None  # a CPU's
    strategy = Strategy("zero3", gpus_per_node=8)
    estimate = estimate_posttraining(workload(), strategy, post)
    assert estimate.training == estimate_memory(step, strategy)
    # no log-softmax of the full logits: 16 bytes kept per completion position, a forward below the standard loss's
    assert estimate.training.logits == 16 * 4 * 200
    standard = estimate_memory(replace(step, loss_kernel="standard"), strategy)
    assert dict(estimate.training.phases)["forward"] < dict(standard.phases)["forward"]
    # the phases carry the reference copy, nothing else rewritten
    forward = dict(estimate.combined.phases)["forward"]
    assert forward == dict(estimate.training.phases)["forward"] + estimate.reference_bytes
    assert estimate.generation is None


def test_grpo_hf_generation_holds_the_kv_cache_of_every_sequence_and_zero3_gathers_the_model() -> None:
    post = PostTraining("grpo", max_prompt_length=512, max_completion_length=1536, steps_per_generation=4)
    assert kv_bytes_per_token(LLAMA) == 2 * 32 * 8 * 128 * 2  # K and V, every layer, 16-bit
    ddp = estimate_posttraining(workload(precision="bf16"), Strategy("ddp", gpus_per_node=8), post)
    generation = ddp.generation
    assert generation.sequences == 8  # micro-batch 2 × steps_per_generation 4
    assert generation.kv_cache_bytes == 8 * 2048 * kv_bytes_per_token(LLAMA) == 2 * GIB
    assert generation.gathered_bytes == 0
    zero3 = estimate_posttraining(workload(), Strategy("zero3", gpus_per_node=8), post).generation
    assert zero3.gathered_bytes == round(2 * LLAMA.num_parameters * 7 / 8)
    no_gather = estimate_posttraining(workload(), Strategy("zero3", gpus_per_node=8),
                                      replace(post, ds3_gather_for_generation=False)).generation
    assert no_gather.gathered_bytes == 0
    assert {"logprob", "generation"} <= dict(ddp.combined.phases).keys()


def test_vllm_colocate_takes_its_share_in_every_phase() -> None:
    post = PostTraining("grpo", generation="vllm-colocate", vllm_gpu_memory_utilization=0.25,
                        vllm_max_model_length=2048)
    strategy = Strategy("zero3", gpus_per_node=8)
    hf = estimate_posttraining(workload(), strategy, replace(post, generation="hf"), 80 * GIB)
    colocate = estimate_posttraining(workload(), strategy, post, 80 * GIB)
    assert colocate.generation.reserved_bytes == 20 * GIB
    hf_phases, phases = dict(hf.combined.phases), dict(colocate.combined.phases)
    for name in ("forward", "backward", "optimizer", "logprob"):
        assert phases[name] == hf_phases[name] + 20 * GIB
    assert colocate.generation.vllm.starts


def test_vllm_block_arithmetic_follows_vllms_page_size_and_null_block() -> None:
    assert page_bytes(LLAMA) == BLOCK_SIZE * 8 * (128 + 128) * 2  # FullAttentionSpec.real_page_size_bytes
    assert page_bytes(LLAMA, tensor_parallel=2) == page_bytes(LLAMA) // 2
    cache = vllm_cache(LLAMA, 80 * GIB, 0.3, 1, 8, 131072, 1024)
    per_block = page_bytes(LLAMA) * 32
    assert cache.blocks == cache.cache_bytes // per_block - 1
    assert cache.blocks_one_request == 131072 // 16 and not cache.starts  # 16 GiB of cache for 128k tokens
    assert vllm_cache(LLAMA, 80 * GIB, 0.3, 1, 8, 4096, 1024).starts
    # the null block: a cache of exactly one request's blocks does not start, one block more does
    for spare, starts in ((0, False), (1, True)):
        budget = LLAMA.num_parameters * 2 + cache.activations + (256 + spare) * per_block
        assert vllm_cache(LLAMA, budget, 1.0, 1, 8, 256 * 16, 1024).starts is starts


def test_estimate_cli_json_has_a_generation_phase_and_exits_1_when_vllm_cannot_start(cli) -> None:
    base = ["estimate", "--model", "llama-8b", "--kind", "grpo", "--gpus", "8", "--gpu-memory", "80GiB",
            "--strategy", "zero3", "--generation", "vllm-colocate", "--format", "json"]
    fits = cli(*base, "--vllm-max-model-length", "2048")
    assert fits.exit_code == 0, fits.output
    data = json.loads(fits.stdout)
    assert data["posttraining"]["kind"] == "grpo" and data["generation"]["mode"] == "vllm-colocate"
    assert data["generation"]["vllm"]["starts"] is True and "logprob" in data["estimate"]["phases"]
    refused = cli(*base)  # max_model_len: Llama-3.1's 131,072 tokens
    assert refused.exit_code == 1 and json.loads(refused.stdout)["generation"]["vllm"]["starts"] is False


def test_estimate_cli_server_mode_trains_on_the_gpus_left_and_warns_on_the_grpo_batch(cli) -> None:
    result = cli("estimate", "--model", "llama-8b", "--kind", "grpo", "--gpus", "8", "--micro-batch", "4",
                 "--generation", "vllm-server", "--strategy", "zero3")
    assert result.exit_code == 0
    assert "ZeRO-3 on 7 GPU(s)" in result.stdout
    assert "generation batch 28" in result.stderr and "num_generations 8" in result.stderr


@pytest.mark.parametrize("args", [["--kind", "ppo"], ["--kind", "grpo", "--generation", "sglang"],
                                  ["--kind", "dpo", "--trace"]])
def test_estimate_cli_refuses_bad_post_training_flags(cli, args) -> None:
    result = cli("estimate", "--model", "llama-8b", *args)
    assert result.exit_code == 2 and "Traceback" not in result.output
