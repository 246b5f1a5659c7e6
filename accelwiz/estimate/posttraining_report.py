"""`accelwiz estimate --kind dpo|grpo`: pick and judge a strategy on the post-training estimate, and show it.

The base report (estimate/report.py, render.py) is reused as is; this module adds the TRL part beside it: the
reference model, the phases TRL adds (`logprob`, `generation`) and, in JSON, a `generation` section.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from accelwiz.errors import UsageError
from accelwiz.estimate.posttraining import PostTraining, PostTrainingEstimate, estimate_posttraining
from accelwiz.estimate.report import Report, Target, verdict
from accelwiz.estimate.sizes import gib
from accelwiz.estimate.strategy import Strategy, candidate_strategies
from accelwiz.estimate.verdict import memory_verdict
from accelwiz.estimate.workload import Workload
from accelwiz.vocab import HEADROOM


def training_gpus(post: PostTraining, gpus_per_node: int, nodes: int) -> int:
    """GPUs per node left to training: vLLM server mode takes its GPUs from the first node (the layout TRL's
    docs use on one machine: `CUDA_VISIBLE_DEVICES=0 trl vllm-serve`, training on the rest)."""
    if post.kind != "grpo" or post.generation != "vllm-server":
        return gpus_per_node
    if nodes > 1:
        return gpus_per_node  # a server node of its own beside the training nodes
    left = gpus_per_node - post.vllm_server_gpus
    if left < 1:
        raise UsageError(f"vLLM server mode takes {post.vllm_server_gpus} of the {gpus_per_node} GPU(s), leaving "
                         "none to train on", hint="pass more --gpus, fewer --vllm-server-gpus, or "
                                                  "--generation vllm-colocate")
    return left


def build_post_report(workload: Workload, post: PostTraining, target: Target | None, strategy: Strategy | None,
                      gpus_per_node: int, nodes: int) -> tuple[PostTrainingEstimate, Report]:
    """The given strategy, else the fastest whose post-training estimate fits, else the most frugal."""
    if target is not None and target.on_cpu:
        return _cpu_post_report(workload, post, target, strategy, gpus_per_node, nodes)
    gpu, name = (None, None) if target is None else (target.gpu_bytes, target.gpu_name)
    if strategy is not None:
        chosen = estimate_posttraining(workload, strategy, post, gpu, gpu_name=name)
    else:
        options = [estimate_posttraining(workload, s, post, gpu, gpu_name=name)
                   for s in candidate_strategies(gpus_per_node, nodes)]
        fitting = [o for o in options if target is None or _fits(o, target)]
        chosen = fitting[0] if fitting else min(options, key=lambda o: o.combined.per_gpu_total)
    shown = chosen.combined
    judged = None if target is None else memory_verdict(shown, target.gpu_bytes, target.host_bytes, HEADROOM)
    vllm = chosen.generation.vllm if chosen.generation is not None else None
    fits = None if judged is None else judged.runs and (vllm is None or vllm.starts)
    text = verdict(shown, target, HEADROOM)
    if vllm is not None and not vllm.starts:
        text += (f"; vLLM does not start: its KV cache holds {vllm.blocks} blocks, one request of max_model_len "
                 f"{vllm.max_model_len} needs {vllm.blocks_one_request}")
    return chosen, Report(shown, target, text, fits, None, None, judged)


def _cpu_post_report(workload: Workload, post: PostTraining, target: Target, strategy: Strategy | None,
                     processes: int, nodes: int) -> tuple[PostTrainingEstimate, Report]:
    """A machine without GPUs: TRL's processes train on its CPU, judged on its RAM as `check` and `run` judge it
    (rules/memory_view.estimate_for): the post-training estimate with a CPU strategy, as a CPU run."""
    from accelwiz.estimate.cpu import as_cpu_run, cpu_advice, cpu_strategy, processes_strategy

    chosen = estimate_posttraining(workload, cpu_strategy(strategy or processes_strategy(processes, nodes)), post,
                                   None)
    shown = as_cpu_run(chosen.combined)
    judged = memory_verdict(shown, None, target.host_bytes, HEADROOM)
    return chosen, Report(shown, target, verdict(shown, target, HEADROOM), judged.runs if judged.verdict else None,
                          cpu_advice(shown, target.host_bytes), None, judged)


def _fits(option: PostTrainingEstimate, target: Target) -> bool:
    judged = memory_verdict(option.combined, target.gpu_bytes, target.host_bytes, HEADROOM)
    vllm = option.generation.vllm if option.generation is not None else None
    return judged.fits and (vllm is None or vllm.starts)


def grpo_batch_problem(post: PostTraining, micro_batch: int, world: int) -> str | None:
    """GRPOConfig.__post_init__'s rule, as the estimate's inputs give it (check enforces it as AW801)."""
    if post.kind != "grpo":
        return None
    generation_batch = micro_batch * world * post.steps_per_generation
    if generation_batch % post.num_generations:
        return (f"the generation batch {generation_batch} (micro-batch {micro_batch} × {world} process(es) × "
                f"steps_per_generation {post.steps_per_generation}) is not divisible by num_generations "
                f"{post.num_generations}: GRPOConfig refuses it")
    return None


def render_post_text(estimate: PostTrainingEstimate) -> str:
    post = estimate.settings
    lines = [f"post-training: {post.kind.upper()}, prompt {post.max_prompt_length} + completion "
             f"{post.max_completion_length} tokens"]
    if post.kind == "grpo":
        lines[0] += f", {post.num_generations} generations per prompt"
    lines.append(f"  reference model      {gib(estimate.reference_bytes):>12}   per GPU")
    generation = estimate.generation
    if generation is not None:
        lines.append(f"  generation           {generation.mode}: {generation.sequences} sequences × "
                     f"{generation.tokens_per_sequence} tokens")
        if generation.kv_cache_bytes:
            lines.append(f"  KV cache (generate)  {gib(generation.kv_cache_bytes):>12}")
        if generation.gathered_bytes:
            lines.append(f"  ZeRO-3 gathered      {gib(generation.gathered_bytes):>12}")
        if generation.reserved_bytes:
            lines.append(f"  vLLM colocate share  {gib(generation.reserved_bytes):>12}")
        if generation.server_gpus:
            lines.append(f"  vLLM server GPUs     {generation.server_gpus:>12}   (not training)")
    lines.append("  phases: " + ", ".join(f"{name} {gib(value)}" for name, value in estimate.combined.phases))
    return "\n".join(lines)


def post_json(rendered: str, estimate: PostTrainingEstimate) -> str:
    """The base JSON with the post-training settings, the reference model and the generation phase added."""
    data: dict[str, Any] = json.loads(rendered)
    post = estimate.settings
    data["posttraining"] = {
        "kind": post.kind,
        "max_prompt_length": post.max_prompt_length,
        "max_completion_length": post.max_completion_length,
        "num_generations": post.num_generations if post.kind == "grpo" else None,
        "beta": post.effective_beta,
        "reference_bytes_per_gpu": estimate.reference_bytes,
        "reference": estimate.reference_note or None,
        "training_step_bytes": estimate.training.allocated,
    }
    data["generation"] = _generation_json(estimate)
    return json.dumps(data, indent=2)


def _generation_json(estimate: PostTrainingEstimate) -> dict[str, Any] | None:
    generation = estimate.generation
    if generation is None:
        return None
    phases = dict(estimate.combined.phases)
    result: dict[str, Any] = {
        "mode": generation.mode,
        "sequences_per_process": generation.sequences,
        "tokens_per_sequence": generation.tokens_per_sequence,
        "kv_cache_bytes": generation.kv_cache_bytes,
        "zero3_gathered_bytes": generation.gathered_bytes,
        "vllm_reserved_bytes": generation.reserved_bytes,
        "phase_bytes": phases.get("generation"),
        "server_gpus": generation.server_gpus,
        "vllm": None,
    }
    if generation.vllm is not None:
        v = generation.vllm
        result["vllm"] = {"budget_bytes": v.budget, "weights_bytes": v.weights, "activations_bytes": v.activations,
                          "kv_cache_bytes": v.cache_bytes, "blocks": v.blocks, "max_model_len": v.max_model_len,
                          "blocks_one_request": v.blocks_one_request, "starts": v.starts,
                          "concurrent_sequences": v.concurrent_sequences, "max_num_seqs": v.max_num_seqs}
    return result


def with_training_gpus(strategy: Strategy | None, gpus: int) -> Strategy | None:
    return None if strategy is None else replace(strategy, gpus_per_node=gpus)
