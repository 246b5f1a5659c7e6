"""The options of `accelwiz estimate` (cli/estimate.py), one typed alias each: what each flag means, its default
and its help panel, apart from the command that reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

_MEM = "Memory target"
_TRAIN = "Training"
_TRACE = "Trace (imports torch and transformers)"
_POST = "Post-training (TRL DPO/GRPO)"


ModelOption = Annotated[
    str | None,
    typer.Option(help="Preset or alias (`--list-models`), a local config.json, a hub id, or a count."),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", show_default=False,
                 help="The Accelerate YAML of a run: its plan, DeepSpeed JSON and strategy give the model, the "
                      "workload, the kind and the machine, as `run` resolves them; flags replace single values."),
]
ParamsOption = Annotated[str | None, typer.Option(help="Parameter count instead of a model: 7e9, 7B, 125M.")]
GpusOption = Annotated[int | None, typer.Option(min=1, help="GPUs per node (default: the system's, else 1).")]
NodesOption = Annotated[int | None, typer.Option(min=1, help="Nodes (default: the system's, else 1).")]
StrategyOption = Annotated[
    str | None,
    typer.Option(
        help="single|ddp|zero1|zero2|zero3|fsdp_full|fsdp_grad_op|"
        "fsdp_hybrid (default: the recommended one)."
    ),
]
FsdpVersionOption = Annotated[int, typer.Option(min=1, max=2, help="FSDP version.")]
FsdpUpcastOption = Annotated[bool, typer.Option(
    help="FSDP through accelerate, which upcasts a 16-bit model to fp32 before wrapping it; --no-fsdp-upcast: "
         "FSDP in a plain torch loop, shards kept as loaded.")]
OffloadOptimizerOption = Annotated[str, typer.Option(metavar="none|cpu|nvme")]
OffloadParamOption = Annotated[str, typer.Option(metavar="none|cpu|nvme")]
Zero3InitOption = Annotated[bool | None, typer.Option(
    "--zero3-init/--no-zero3-init", show_default=False,
    help="ZeRO-3: whether the model is built under deepspeed.zero.Init (partitioned as it is created). Default on: "
         "DeepSpeed's config exists before from_pretrained under the HF Trainer (TrainingArguments(deepspeed=...) "
         "or an `accelerate launch` DeepSpeed config; transformers 5.25 keeps it while the TrainingArguments live) "
         "and accelerate (its Accelerator sets it from 1.0 on, whatever zero3_init_flag says; before 1.0 only with "
         "zero3_init_flag true, the YAML's value under --config). --no-zero3-init: the script loads the model "
         "first (before TrainingArguments or the Accelerator, or a plain deepspeed.initialize loop): DeepSpeed "
         "moves the whole 16-bit model to every GPU before partitioning it. Beats the YAML's zero3_init_flag.")]
FsdpWrapOption = Annotated[str | None, typer.Option(
    metavar="block|none", show_default=False,
    help="FSDP: how the model is wrapped into units. block (the default, TRANSFORMER_BASED_WRAP as `init` "
         "writes it): one unit per transformer block, two gathered at a time beside the root; none (NO_WRAP, "
         "accelerate's default where the YAML names no fsdp_auto_wrap_policy, or Lightning's FSDPStrategy without "
         "an auto_wrap_policy): the whole model one unit, gathered whole from forward to the end of backward, its "
         "whole gradient unsharded. Beats the YAML's policy.")]
Bf16MasterOption = Annotated[bool | None, typer.Option(
    "--bf16-master-weights-and-grads/--no-bf16-master-weights-and-grads", show_default=False,
    help="DeepSpeed ZeRO 1-3 with --precision bf16: its JSON's bf16.bf16_master_weights_and_grads (DeepSpeed 0.18.3+), "
         "the ZeRO optimizer's master partition and its gradients in bf16, not fp32 (default off: --precision bf16 "
         "under DeepSpeed keeps fp32 masters). Without --bf16-optimizer-states DeepSpeed needs the optimizer "
         "offloaded (DeepSpeedCPUAdam). Beats the JSON's value.")]
Bf16StatesOption = Annotated[bool | None, typer.Option(
    "--bf16-optimizer-states/--no-bf16-optimizer-states", show_default=False,
    help="DeepSpeed: its JSON's bf16.bf16_optimizer_states, Adam's states in bf16 beside bf16 masters (needs "
         "--bf16-master-weights-and-grads; with optimizer offload, DeepSpeed 0.19.1+). Beats the JSON's value.")]
ZeroReduceBucketOption = Annotated[str | None, typer.Option(
    metavar="N|auto", show_default=False,
    help="DeepSpeed ZeRO: its JSON's zero_optimization.reduce_bucket_size, in elements (default DeepSpeed's 5e8; "
         "many example JSONs say 5e7). auto: hidden_size², as the HF Trainer and accelerate fill an \"auto\". The "
         "bucket is allocated whole, and ZeRO-3 copies each flushed one for its reduce-scatter. Beats the JSON's "
         "value.")]
MicroBatchOption = Annotated[int | None, typer.Option(min=1, rich_help_panel=_TRAIN, show_default=False,
                                                      help="Default 1.")]
GradientAccumulationOption = Annotated[int | None, typer.Option(
    min=1, rich_help_panel=_TRAIN, show_default=False,
    help="Micro-batches per optimizer step (default 1): their gradients stay live across them.")]
SeqLenOption = Annotated[int | None, typer.Option(
    min=1, rich_help_panel=_TRAIN, show_default=False,
    help="Tokens per sequence (default: 2048, or the model's positions when fewer).")]
LoraOption = Annotated[bool, typer.Option(help="Short for --method lora (adapters on all block linears).",
                                          rich_help_panel=_TRAIN)]
QloraOption = Annotated[bool, typer.Option(help="Short for --method qlora (LoRA on a 4-bit NF4 base).",
                                           rich_help_panel=_TRAIN)]
LoraRankOption = Annotated[int | None, typer.Option(min=1, rich_help_panel=_TRAIN, show_default=False,
                                                    help="Default 16.")]
LoraTargetOption = Annotated[
    list[str] | None,
    typer.Option(help="Module names, repeatable (default all-linear).", rich_help_panel=_TRAIN),
]
LoraModulesToSaveOption = Annotated[list[str] | None, typer.Option(
    metavar="NAME", rich_help_panel=_TRAIN, show_default=False,
    help="A module trained whole beside the adapters (PEFT's modules_to_save, e.g. embed_tokens, lm_head), "
         "repeatable: a trainable copy beside the frozen original, with its gradients and optimizer states.")]
LoraDropoutOption = Annotated[float | None, typer.Option(
    min=0.0, rich_help_panel=_TRAIN, show_default=False,
    help="PEFT's lora_dropout (default 0.0, PEFT's): above 0 each adapted linear keeps a dropout mask and its "
         "dropped input for backward.")]
PrecisionOption = Annotated[
    str | None,
    typer.Option(metavar="fp32|mixed|bf16", rich_help_panel=_TRAIN, show_default=False,
                 help="mixed (the default) = 16-bit compute with fp32 master weights."),
]
OptimizerOption = Annotated[str | None, typer.Option(
    metavar="adamw|adamw8bit|sgd|adafactor|paged-adamw|paged-adamw8bit", rich_help_panel=_TRAIN, show_default=False,
    help="Default adamw.")]
GradientCheckpointingOption = Annotated[bool | None, typer.Option(rich_help_panel=_TRAIN, show_default=False,
                                                                  help="Default off.")]
AttentionOption = Annotated[
    str | None,
    typer.Option(metavar="eager|sdpa|flash", rich_help_panel=_TRAIN,
                 help="Default: sdpa where transformers has it for the model, else eager."),
]
VaryingLengthsOption = Annotated[bool | None, typer.Option(
    "--varying-lengths/--fixed-lengths", rich_help_panel=_TRAIN, show_default=False,
    help="Batches padded to their own longest sample, up to --seq-len (TRL's SFT collator without packing): the "
         "allocator caches loss tensors of every length. Default: fixed (the built-in trainer packs).")]
ExpandableSegmentsOption = Annotated[bool | None, typer.Option(
    "--expandable-segments/--no-expandable-segments", rich_help_panel=_TRAIN, show_default=False,
    help="The CUDA caching allocator with expandable_segments:True (one segment per stream grown by pages): its "
         "reserve. Default: what PYTORCH_CUDA_ALLOC_CONF says, else off.")]
LossDtypeOption = Annotated[str | None, typer.Option(
    metavar="fp32|bf16|fp16", rich_help_panel=_TRAIN, show_default=False,
    help="The dtype the loss runs in (default fp32: transformers' loss upcasts the logits); bf16/fp16: a loss "
         "computed on the 16-bit logits (a custom loop's nn.CrossEntropyLoss, a remote-code model's own loss), "
         "with --precision bf16, or --precision mixed under a DeepSpeed --strategy (no autocast).")]
BaseDtypeOption = Annotated[str | None, typer.Option(
    metavar="fp32|bf16|fp16", rich_help_panel=_TRAIN, show_default=False,
    help="LoRA/QLoRA: the frozen base as the script loads it (from_pretrained's dtype; fp32 where it names "
         "none); default: 16-bit under --precision mixed|bf16.")]
OptimizerKernelOption = Annotated[str | None, typer.Option(
    metavar="foreach|fused|loop", rich_help_panel=_TRAIN, show_default=False,
    help="AdamW's step: foreach (default: torch.optim.AdamW on CUDA, the HF Trainer's adamw_torch) keeps "
         "a parameter-sized temporary; fused (fused=True, the Trainer's adamw_torch_fused: its default on "
         "transformers >= 4.54 with torch >= 2.8) updates in place; loop, one parameter at a time "
         "(the Trainer's adamw_hf default before transformers 4.32, torch before 2.0): no temporary.")]
LossKernelOption = Annotated[str | None, typer.Option(
    metavar="standard|liger|trl-fused-head", rich_help_panel=_TRAIN, show_default=False,
    help="How the loss is computed: standard (default), on the full logits; liger, Liger's fused linear "
         "cross-entropy (the HF Trainer's --use_liger_kernel); trl-fused-head, TRL's SFTTrainer's chunked "
         "LM head (what a TRL SFT config resolves to). Neither fused kernel makes a logits tensor.")]
KbitPrepareOption = Annotated[bool | None, typer.Option(
    rich_help_panel=_TRAIN, show_default=False,
    help="QLoRA: PEFT's prepare_model_for_kbit_training casts the embedding, norms and LM head to fp32 (default "
         "on, as accelwiz's trainer; without autocast every activation is then fp32); --no-kbit-prepare: they stay "
         "16-bit (torchtune, Lightning's bitsandbytes precision).")]
StackOption = Annotated[list[str] | None, typer.Option(
    metavar="NAME==VERSION", rich_help_panel=_TRAIN, show_default=False,
    help="A library version the run trains with, repeatable: transformers (before 4.49 the loss copies the "
         "logits), bitsandbytes (before 0.43.2 QLoRA keeps each 4-bit linear's input), accelerate, torch, trl "
         "(the script runs TRL's trainer: 0.7.5-0.25 cast a prepared QLoRA's embedding and head to bf16), litgpt "
         "(LitGPT's own scripts and GPT under Fabric: fp32 logits, fused-qkv LoRA). "
         "Default: a --system probe's, else the installed (TRL, LitGPT: only where said).")]
GpuMemoryOption = Annotated[
    str | None, typer.Option(help="Memory of one GPU: 80GiB, 80GB, 81920MiB.", rich_help_panel=_MEM)
]
CompareOption = Annotated[bool, typer.Option(help="Show every strategy side by side.")]
TraceOption = Annotated[
    bool,
    typer.Option(
        help="Also run one training step of the real transformers model under fake tensors on the CPU "
        "(nothing allocated) and show it beside the estimate, category by category.",
        rich_help_panel=_TRACE,
    ),
]
LayersOption = Annotated[
    int | None,
    typer.Option(
        min=2,
        help="With --trace: trace 1 and N layers and scale linearly to the model's depth (faster).",
        rich_help_panel=_TRACE,
    ),
]
KindOption = Annotated[str | None, typer.Option(metavar="sft|dpo|grpo", rich_help_panel=_POST, show_default=False,
                                                help="What is trained: sft (the default: the plain step), dpo or grpo "
                                                     "(TRL's trainers; --micro-batch is per_device_train_batch_size, "
                                                     "--seq-len is replaced by prompt + completion).")]
MaxPromptLengthOption = Annotated[int | None, typer.Option(
    min=1, rich_help_panel=_POST, show_default=False, help="Default 512 (half the model's positions when "
                                                           "fewer).")]
MaxCompletionLengthOption = Annotated[int | None, typer.Option(
    min=1, rich_help_panel=_POST, show_default=False, help="Default 512, TRL's (see --max-prompt-length).")]
NumGenerationsOption = Annotated[int | None, typer.Option(min=1, rich_help_panel=_POST, show_default=False,
                                                          help="GRPO: completions per prompt (default 8, TRL's).")]
StepsPerGenerationOption = Annotated[int | None, typer.Option(
    min=1, rich_help_panel=_POST, help="GRPO: micro-steps per generation (default: the accumulation, 1).")]
BetaOption = Annotated[float | None, typer.Option(
    rich_help_panel=_POST, help="KL coefficient (default: DPO 0.1, GRPO 0.0 = no reference model).")]
PrecomputeRefLogProbsOption = Annotated[bool, typer.Option(rich_help_panel=_POST, help="DPO: no reference model "
                                                           "while training.")]
GenerationOption = Annotated[str | None, typer.Option(metavar="hf|vllm-colocate|vllm-server", rich_help_panel=_POST,
                                                      show_default=False, help="GRPO's generation backend (default hf)."
                                                      )]
VllmGpuMemoryUtilizationOption = Annotated[float | None, typer.Option(
    min=0.01, max=1.0, rich_help_panel=_POST, show_default=False, help="Default 0.3, TRL's.")]
VllmTensorParallelSizeOption = Annotated[int | None, typer.Option(min=1, rich_help_panel=_POST,
                                                                  show_default=False)]
VllmMaxModelLengthOption = Annotated[int | None, typer.Option(
    min=1, rich_help_panel=_POST, help="vLLM's max_model_len (default: the model's context length).")]
VllmServerGpusOption = Annotated[int | None, typer.Option(min=1, rich_help_panel=_POST, show_default=False,
                                                          help="GPUs `trl vllm-serve` takes from the node (server "
                                                               "mode; default 1).")]
PlotOption = Annotated[
    str | None,
    typer.Option(
        help="Write a chart to this .svg or .html file: memory per GPU per strategy, stacked by component, "
        "against the GPU's memory (the numbers of --compare); with --trace, GPU memory over the traced step.",
        rich_help_panel=_TRACE,
    ),
]
ListModelsOption = Annotated[bool, typer.Option("--list-models", help="List the model presets and exit.")]
