"""Frozen, verdict rows: DeepSpeed's own ZeRO and ZeRO-Offload tutorials (deepspeed.ai/tutorials/zero,
/tutorials/zero-offload; docs/_tutorials/zero.md and zero-offload.md in deepspeedai/DeepSpeed), source
`deepspeed-tutorials-zero-2020`.

Each tutorial trains DeepSpeed's Megatron-LM GPT-2 (DeepSpeedExamples/Megatron-LM, 2020) from the launch scripts of
DeepSpeedExamples at 6a0048d (Sept 24 2020, the ZeRO-2 and ZeRO-Offload scripts the tutorials name): `--seq-length
1024 --max-position-embeddings 1024 --checkpoint-activations --fp16`, GPT-2's BPE vocabulary padded by Megatron to a
multiple of 128 (50,304), webtext in fixed 1,024-token samples, on NVIDIA Tesla V100-SXM3 32GB (DGX-2: 16 per node;
nvidia-smi prints 32480MiB a card), with the tutorial's changes on top:

- ZeRO stage 1: a 1.5B GPT-2 (`--num-layers 48 --hidden-size 1600 --num-attention-heads 16 --batch-size 1`,
  `"stage": 1, "reduce_bucket_size": 5e8`) on eight GPUs "can now train smoothly on 8 GPUs without running out of
  memory"; the same model "without ZeRO fails with an out-of-memory (OOM) error" (DeepSpeed's fp16 optimizer with
  no partitioning: fp16 weights and gradients, an fp32 master copy and fp32 Adam moments on every GPU, 16 bytes a
  parameter, the CLI's DDP in mixed precision holds the same 16).
- ZeRO stage 2: a 10B GPT-2 (`--num-layers 50 --hidden-size 4096 --num-attention-heads 32 --batch-size 1
  --checkpoint-activations`, stage 2 with contiguous gradients, overlap_comm, reduce_scatter, 5e8-element buckets)
  "using 32 V100 GPUs" (two DGX-2 nodes of 16 assumed).
- ZeRO-Offload: the same 10B model at `--batch-size 10` "on a single V100 GPU" (`deepspeed --num_gpus 1`, stage 2
  with `offload_optimizer` to the CPU: DeepSpeed's CPU Adam; the 10B script's JSON also checkpoints activations to
  the CPU).

The nvidia-smi screenshots show each run's cards at 32466 / 32290 / 31570 of 32480 MiB (the caching allocator
holding what it reached): the cards full, read as verdicts ("ran"), not as figures. The model stand-ins are
transformers' GPT-2 with Megatron's shapes (1,557,686,400 and 10,279,239,680 parameters; tied embedding, learned
positions, GELU MLP 4x wide, like Megatron's GPT-2).
"""

from __future__ import annotations

_DS = "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/docs/_tutorials/"
_CODE = ("https://github.com/deepspeedai/DeepSpeedExamples/blob/6a0048dc2a0bf2fa5c8b4a497dcd31cab9ee8803/"
         "Megatron-LM/scripts/")
_MODELS = "benchmarks/published/models"
_V100 = "--gpu-memory 32480MiB --precision mixed --seq-len 1024 --fixed-lengths --gradient-checkpointing " \
        "--attention eager"
_MEGATRON = ["DeepSpeed's Megatron-LM GPT-2 (2020), not transformers' GPT2LMHeadModel: its own attention, "
             "fp16 optimizer and vocabulary-parallel fp32 cross-entropy, and DeepSpeed's activation checkpointing",
             "DeepSpeed and torch of 2020 (DeepSpeed 0.2-0.3): their buffers and allocator"]


def _row(key: str, page: str, script: str, quote: str, printed: str, settings: str, argv: str, *, ran: bool,
         unexpressed=()) -> dict:
    return {"key": key, "source": "deepspeed-tutorials-zero-2020", "url": _DS + page, "code_url": _CODE + script,
            "quote": quote, "printed": printed, "measured_bytes": None, "metric": "nvidia-smi", "ran": ran,
            "argv": argv, "assumptions": settings, "unexpressed": [*_MEGATRON, *unexpressed]}


_GPT2_1_5B = (f"estimate --model {_MODELS}/megatron-gpt2-1.5b/config.json --gpus 8 {_V100} --micro-batch 1 "
              "--strategy {strategy} --format json")
_BUCKETS = ("the DeepSpeed JSON's bucket sizes and overlap_comm (read by the CLI from an Accelerate config's JSON, "
            "not flags): the CLI's defaults are DeepSpeed's")
ROWS = [
    _row("ds-tutorial-zero1-gpt2-1.5b-8xv100-32gb", "zero.md", "ds_zero2_pretrain_gpt2_model_parallel.sh",
         "By using ZeRO stage 1 to partition the optimizer state among eight data parallel ranks, the per-device "
         "memory consumption can be reduced to 2.25GB, thus making the model trainable. [...] With ZeRO stage 1 "
         "enabled, the model can now train smoothly on 8 GPUs without running out of memory.",
         "train smoothly on 8 GPUs without running out of memory",
         "DeepSpeed's ZeRO tutorial: Megatron GPT-2 1.5B (48 x 1600, 16 heads) pre-trained in fp16 under ZeRO stage "
         "1 on 8 x V100-SXM3 32GB, batch 1 x 1,024 tokens per GPU, activation checkpointing (the launch script's); "
         "nvidia-smi 32466MiB / 32480MiB on the GPUs shown: ran",
         _GPT2_1_5B.format(strategy="zero1"), ran=True, unexpressed=[_BUCKETS]),
    _row("ds-tutorial-no-zero-gpt2-1.5b-8xv100-32gb-oom", "zero.md", "ds_zero2_pretrain_gpt2_model_parallel.sh",
         "Training this model without ZeRO fails with an out-of-memory (OOM) error as shown below:",
         "out-of-memory (OOM) error",
         "DeepSpeed's ZeRO tutorial: the same Megatron GPT-2 1.5B on 8 x V100-SXM3 32GB without ZeRO (DeepSpeed's "
         "fp16 optimizer, every GPU holding all of it), batch 1 x 1,024 tokens, activation checkpointing: out of "
         "memory",
         _GPT2_1_5B.format(strategy="ddp"), ran=False,
         unexpressed=["DeepSpeed without ZeRO keeps fp16 weights and gradients with an fp32 master copy; the CLI's "
                      "DDP under --precision mixed keeps fp32 weights and gradients and autocasts: 16 bytes a "
                      "parameter both, their temporaries differ"]),
    _row("ds-tutorial-zero2-gpt2-10b-32xv100-32gb", "zero.md", "ds_zero2_pretrain_gpt2_model_parallel.sh",
         "ZeRO stage 2 optimizations further increases the size of models that can be trained using data "
         "parallelism. We show this by training a model with 10B parameters using 32 V100 GPUs.",
         "10B parameters using 32 V100 GPUs",
         "DeepSpeed's ZeRO tutorial: Megatron GPT-2 10B (50 x 4096, 32 heads) pre-trained in fp16 under ZeRO stage "
         "2 (contiguous gradients, overlap_comm, 5e8-element buckets) on 32 V100-SXM3 32GB (two DGX-2 nodes of 16 "
         "assumed), batch 1 x 1,024 tokens per GPU, activation checkpointing; nvidia-smi 31570MiB / 32480MiB: ran",
         f"estimate --model {_MODELS}/megatron-gpt2-10b/config.json --gpus 16 --nodes 2 {_V100} --micro-batch 1 "
         "--strategy zero2 --format json", ran=True,
         unexpressed=[_BUCKETS, "the number of nodes: 32 GPUs on DGX-2s of 16 (two nodes assumed; the per-GPU "
                      "partition is the same on four nodes of eight)"]),
    _row("ds-tutorial-zero-offload-gpt2-10b-1xv100-32gb", "zero-offload.md",
         "ds_zero-offload_10B_pretrain_gpt2_model_parallel.sh",
         "In this tutorial we will use ZeRO-Offload to train a 10-billion parameter GPT-2 model in DeepSpeed. [...] "
         "We will use a single NVIDIA Tesla V100-SXM3 Tensor Core GPU with 32GB RAM for this exercise.",
         "a single NVIDIA Tesla V100-SXM3 Tensor Core GPU with 32GB RAM",
         "DeepSpeed's ZeRO-Offload tutorial: Megatron GPT-2 10B pre-trained in fp16 on one V100-SXM3 32GB under ZeRO "
         "stage 2 with the optimizer offloaded to the CPU (CPU Adam), batch 10 x 1,024 tokens, activation "
         "checkpointing; nvidia-smi 32290MiB / 32480MiB: ran",
         f"estimate --model {_MODELS}/megatron-gpt2-10b/config.json --gpus 1 {_V100} --micro-batch 10 "
         "--strategy zero2 --offload-optimizer cpu --format json", ran=True,
         unexpressed=["the script's DeepSpeed JSON checkpoints activations to the CPU (cpu_checkpointing: each "
                      "block's checkpointed input kept in host memory) and uses contiguous memory optimization",
                      "reduce_bucket_size 5e7 in the script's JSON (DeepSpeed's default 5e8 in the CLI)"]),
]
