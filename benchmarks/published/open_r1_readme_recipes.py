"""Frozen: huggingface/open-r1's README, "Training models" (source `open-r1-readme-recipes-2025`): the commands it
documents with their recipes, under its note "The training commands below are configured for a node of 8 x H100s
(80GB)". Verdict rows only (nothing printed but that they run there): the README at 33f84de (2025-05-27, the day after
5ac5971 added the OpenR1-Distill recipe; the note and the GRPO section unchanged since February).

Read at 33f84de (README.md, recipes/, src/open_r1/sft.py, grpo.py, utils/model_utils.py, setup.py) and in TRL at
9ac614f (setup.py's pin, 2025-05-24):

* SFT distillation: `accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py
  --config recipes/OpenR1-Distill-7B/sft/config_distill.yaml` ("# Config for 1 node of 8 x H100s (80GB)"), whose
  result is the released open-r1/OpenR1-Distill-7B: open-r1/Qwen2.5-Math-7B-RoPE-300k (Qwen2.5-Math-7B with rope_theta
  300k and 32,768 positions: Qwen2.5-7B's shapes and 7,615,616,512 parameters, the `qwen2.5-7b` preset) loaded in
  bf16 with flash_attention_2 under zero.Init (zero3_init_flag true; the SFTConfig exists first), DeepSpeed ZeRO-3 on
  8 processes with bf16 (fp32 master partitions and AdamW states: --precision mixed), the Trainer's AdamW, per-device
  batch 2 x accumulation 8, max_length 32,768 with packing false (TRL 0.18's collator pads each batch to its longest:
  --varying-lengths), gradient checkpointing (non-reentrant), use_liger_kernel (the model's forward computes Liger's
  fused linear cross-entropy: no logits, --loss-kernel liger).
* GRPO: `trl vllm-serve` on GPU 0 and `accelerate launch --config_file recipes/accelerate_configs/zero2.yaml
  --num_processes 7 src/open_r1/grpo.py --config recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/config_demo.yaml` on the
  other seven: deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B (Qwen2.5-Math-1.5B's shapes, untied output layer: the argv
  names models/deepseek-r1-distill-qwen-1.5b, 1,777,088,000 parameters) in bf16 with flash_attention_2, ZeRO-2 (bf16,
  fp32 master), per-device batch 16 (completions) x accumulation 4, 16 generations per prompt, prompts up to 512 and
  completions up to 2,048 tokens from the vLLM server (vllm_mode "server"), checkpointing, TRL 9ac614f's defaults:
  beta 0.04 (a reference model: replicated in bf16 on every rank under ZeRO-2, TRL's prepare_deepspeed at stage 0),
  steps_per_generation = accumulation, loss "bnpo", use_liger_loss false.
* Stack (setup.py at 33f84de): torch 2.6.0, transformers 4.52.3, accelerate 1.4.0, deepspeed 0.16.8, TRL 9ac614f
  (0.18.0.dev0; said as --stack trl==0.18.0), liger-kernel >= 0.5.10.

Not rows: the README's other SFT commands (Qwen2.5-1.5B and Llama-3.2-1B at batch 16 x 32,768) are shown to explain
the EOS token and chat template, not as runs the project made; the multi-node and tensor-parallel GRPO variants name
no recipe beyond the demo's.
"""

from __future__ import annotations

_COMMIT = "33f84def0d20f5abc5281804f7fc91fbf276850c"
_REPO = f"https://github.com/huggingface/open-r1/blob/{_COMMIT}"
_SOURCE = "open-r1-readme-recipes-2025"
_NOTE = ("> The training commands below are configured for a node of 8 x H100s (80GB). For different hardware and "
         "topologies, you may need to tune the batch size and number of gradient accumulation steps.")
_STACK = ("--stack transformers==4.52.3 --stack torch==2.6.0 --stack accelerate==1.4.0 --stack trl==0.18.0 "
          "--format json")
_R1_1_5B = "benchmarks/published/models/deepseek-r1-distill-qwen-1.5b/config.json"

_RAN = ("ran: the README documents the command under its 8 x H100 (80GB) note; which runs the project made with it is "
        "not said beyond the released model")
_COMMON_UNEXPRESSED = [
    "use_liger_kernel also swaps the model's RMSNorm, RoPE and SwiGLU for Liger's Triton kernels (their own "
    "activation footprints), not modelled",
    "TRL 9ac614f (0.18.0.dev0) is said as --stack trl==0.18.0",
]

ROWS = [
    {"key": "open-r1-distill-7b-sft-zero3-8xh100-32k-ran", "source": _SOURCE,
     "url": f"{_REPO}/README.md", "code_url": f"{_REPO}/recipes/OpenR1-Distill-7B/sft/config_distill.yaml",
     "quote": _NOTE, "printed": "configured for a node of 8 x H100s (80GB)", "measured_bytes": None,
     "metric": "nvidia-smi", "ran": True,
     "argv": "estimate --model qwen2.5-7b --system 8xH100-80GB --strategy zero3 --precision mixed --micro-batch 2 "
             "--gradient-accumulation 8 --seq-len 32768 --varying-lengths --gradient-checkpointing --attention flash "
             f"--loss-kernel liger {_STACK}",
     "assumptions": "open-r1 README (33f84de), SFT distillation of open-r1/Qwen2.5-Math-7B-RoPE-300k on "
                    "Mixture-of-Thoughts with recipes/OpenR1-Distill-7B/sft/config_distill.yaml: DeepSpeed ZeRO-3 "
                    "over one node of 8 H100 80GB, bf16 weights with fp32 master partitions, AdamW, batch 2 x "
                    "accumulation 8, up to 32,768 tokens padded per batch (packing false), non-reentrant gradient "
                    "checkpointing, flash_attention_2, Liger's fused linear cross-entropy; " + _RAN,
     "unexpressed": ["the RoPE-300k variant's rope_theta and 32,768 positions (the qwen2.5-7b preset's shapes; the "
                     "positions do not change the bytes)",
                     "Mixture-of-Thoughts' lengths: batches of 2 reasoning traces, the longest assumed to reach the "
                     "32,768-token cap over five epochs", *_COMMON_UNEXPRESSED]},
    {"key": "open-r1-r1-distill-qwen-1.5b-grpo-zero2-7+1xh100-ran", "source": _SOURCE,
     "url": f"{_REPO}/README.md",
     "code_url": f"{_REPO}/recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/config_demo.yaml",
     "quote": _NOTE, "printed": "configured for a node of 8 x H100s (80GB)", "measured_bytes": None,
     "metric": "nvidia-smi", "ran": True,
     "argv": f"estimate --model {_R1_1_5B} --system 8xH100-80GB --strategy zero2 --precision mixed --kind grpo "
             "--micro-batch 16 --gradient-accumulation 4 --num-generations 16 --max-prompt-length 512 "
             "--max-completion-length 2048 --beta 0.04 --generation vllm-server --vllm-server-gpus 1 "
             f"--gradient-checkpointing --attention flash {_STACK}",
     "assumptions": "open-r1 README (33f84de), GRPO of deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B on OpenR1-Math-220k "
                    "with recipes/DeepSeek-R1-Distill-Qwen-1.5B/grpo/config_demo.yaml: `trl vllm-serve` on GPU 0, "
                    "training under DeepSpeed ZeRO-2 on the other 7 H100 80GB, bf16 weights with fp32 master "
                    "partitions, AdamW, 16 completions per device x accumulation 4, 16 generations per prompt, "
                    "prompts up to 512 and completions up to 2,048 tokens, beta 0.04 (a bf16 reference model on "
                    "every rank), non-reentrant checkpointing, flash_attention_2; " + _RAN,
     "unexpressed": ["TRL 0.18's GRPOTrainer computes the completions' full logits (logits_to_keep) divided by the "
                     "temperature and their per-row log-softmax, for the policy and the reference model; the CLI's "
                     "--kind grpo is TRL 1.16's, whose fused LM head makes none (an under-count, so it cannot turn a "
                     "run that fits into one that does not)",
                     "use_liger_kernel patches the model, but without labels its forward still returns logits; "
                     "use_liger_loss (Liger's GRPO loss) is off", *_COMMON_UNEXPRESSED]},
]
