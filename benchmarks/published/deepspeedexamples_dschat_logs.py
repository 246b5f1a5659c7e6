"""Frozen: DeepSpeed-Chat's own committed training logs (source `deepspeedexamples-dschat-training-logs`): the
`training_log_output/*.log` files of deepspeedai/DeepSpeedExamples' applications/DeepSpeed-Chat/training/, each the
console of one run of the repository's step-1, step-2 reward-model or step-2 DPO main.py, with the command line at its
top. Not the repository's issue threads (deepspeedexamples-issues-memory) nor DeepSpeed's (deepspeed-threads-memory).

What the number is: DeepSpeed's ThroughputTimer line `MemAllocated=..GB, MaxMemAllocated=..GB`, which is
`round(get_accelerator().max_memory_allocated() / 1024**3, 2)` (GiB; timer.py of deepspeed 0.9.0 and 0.16.2, the
versions these logs ran), rank 0's peak since the process started (never reset): the initial evaluation pass
included. Every logged step prints the same figure, so the peak is reached in the first ten steps.

Read in the code of each log's commit:

* step 1 (opt-1.3b-globalBatchSize128.log, added in 3a77097, run 2023-04-18): `deepspeed main.py ...
  --model_name_or_path facebook/opt-1.3b --per_device_train_batch_size 8 --max_seq_len 512
  --gradient_accumulation_steps 1 --zero_stage 2` on 16 ranks (16 processes exit; training/README.md: "we used
  the 16 V100-32G (DGX-2 node) gpus to run our experiments"). main.py: the whole model trains (no --lora_dim),
  DeepSpeed fp16 (ds_utils.get_train_ds_config: the engine casts the module to fp16, FusedAdam with fp32 master
  partitions), no gradient checkpointing, no offload, dropout kept (no --disable_dropout: OPT's 0.1), every sample
  padded to 512 (data_utils.py `padding="max_length"`), OPTForCausalLM's own CrossEntropyLoss on the fp16 logits
  (no autocast under DeepSpeed: --loss-dtype fp16). requirements.txt installs transformers from git: the April
  2023 release, 4.28.1, assumed (OPT's eager attention).
* step 2 reward model (opt-350m_globalBatchSize-64.log, the same commit and machine): `--model_name_or_path
  facebook/opt-350m --num_padding_at_beginning 1 --per_device_train_batch_size 4 --max_seq_len 512
  --gradient_accumulation_steps 1 --zero_stage 0` on 16 ranks. create_critic_model wraps OPTModel (AutoModel: no LM
  head) in RewardModel with a bias-free v_head (512 -> 1); DataCollatorReward stacks the 4 chosen and the 4 rejected
  samples into one forward of 8 x 512 padded tokens; the loss is a pairwise log-sigmoid over the 8 x 512 rewards.
  ZeRO stage 0 under the fp16 engine: FP16_Optimizer (fp32 master copy and Adam states of every parameter, nothing
  partitioned), said as --strategy zero1 on one GPU (one partition: the same bytes).
* step 2 DPO (opt-350M_globalBatchSize-32.log, added in 1842b4fd, run 2025-01-02; the log prints DeepSpeed 0.16.2
  and fp16_enabled True): `--model_name_or_path facebook/opt-350m --per_device_train_batch_size 2
  --per_device_eval_batch_size 4 --max_seq_len 512 --dropout 0.0 --gradient_accumulation_steps 2 --zero_stage 0` on
  8 ranks (GPU kind not printed). The policy trains under the fp16 engine (FusedAdam, fp32 master); the reference
  model is a second fp16 copy under an inference DeepSpeed engine (ZeRO 0, no gradients); each step runs 2 chosen +
  2 rejected samples, each prompt + answer padded to 512, through both models, and get_batch_logps takes
  log_softmax of the fp16 logits (no upcast). requirements: transformers>=4.31.0 (4.47.1, that month's release,
  assumed: OPT's SDPA attention).
* step 3 (actor_opt-1.3b_critic_opt-350m_globalBatchSize64.log): four models and the hybrid engine's generation;
  it prints only the inference containers' free memory, no peak: not a row.

NOTE (seen before registration): helper F saw the estimate for the step-1 row (22.95 GiB printed, 22.4 GiB
estimated; docs/performance.md, 52dda88) before this source was registered; nothing was tuned on it.
"""

from __future__ import annotations

_SOURCE = "deepspeedexamples-dschat-training-logs"
_REPO = "https://github.com/deepspeedai/DeepSpeedExamples"
_DSCHAT = "applications/DeepSpeed-Chat/training"
_C0421 = "3a77097a7b6ce67b78ea7c05129b90915cfebbb0"  # master, 2023-04-21: step-1 and reward-model logs added
_C0107 = "1842b4fddfcfaedffbb697f53ffe3a57aea718c4"  # master, 2025-01-07: DPO step and its log added
_OPT_13B = "benchmarks/published/models/opt-1.3b/config.json"
_OPT_350M = "benchmarks/published/models/opt-350m/config.json"

_Q_SFT = ("[2023-04-18 01:46:59,171] [INFO] [timer.py:199:stop] epoch=0/micro_step=10/global_step=10, "
          "RunningAvgSamplesPerSec=173.4455644119137, CurrSamplesPerSec=171.97903593624417, MemAllocated=3.96GB, "
          "MaxMemAllocated=22.95GB")
_Q_RM = ("[2023-04-18 03:36:02,683] [INFO] [timer.py:199:stop] epoch=0/micro_step=10/global_step=10, "
         "RunningAvgSamplesPerSec=265.320034984211, CurrSamplesPerSec=265.4349789974132, MemAllocated=4.34GB, "
         "MaxMemAllocated=12.81GB")
_Q_DPO = ("[2025-01-02 15:47:38,842] [INFO] [timer.py:264:stop] epoch=0/micro_step=20/global_step=10, "
          "RunningAvgSamplesPerSec=46.98077573584925, CurrSamplesPerSec=50.86885115471782, MemAllocated=5.53GB, "
          "MaxMemAllocated=8.61GB")

_DROPOUT = "OPT's dropout 0.1 in attention and MLP (its masks); the script keeps the model's dropout"
_ZERO0 = ("ZeRO stage 0 (DeepSpeed's FP16_Optimizer, nothing partitioned) on {ranks} ranks, said as ZeRO-1 on one GPU "
          "(the same fp32 master and Adam bytes); the engine's all-reduce of the fp16 gradients in 500M-element "
          "buckets (a flat copy of them) is not counted")
_EVAL = ("the peak is max_memory_allocated since the start: the evaluation pass before training ({what}, under "
         "no_grad) is inside it")


def _url(commit: str, path: str) -> str:
    return f"{_REPO}/blob/{commit}/{_DSCHAT}/{path}"


ROWS = [
    {"key": "dschat-log-step1-opt-1.3b-full-fp16-zero2-b8x512-16xv100-32gb", "source": _SOURCE,
     "url": _url(_C0421, "step1_supervised_finetuning/training_log_output/opt-1.3b-globalBatchSize128.log"),
     "code_url": _url(_C0421, "step1_supervised_finetuning/main.py"),
     "quote": _Q_SFT, "printed": "22.95GB", "measured_bytes": int(round(22.95 * 2**30)), "metric": "allocated",
     "argv": f"estimate --model {_OPT_13B} --system 16xV100-32GB --gpus 16 --nodes 1 --strategy zero2 "
             "--precision mixed --loss-dtype fp16 --optimizer adamw --micro-batch 8 --gradient-accumulation 1 "
             "--seq-len 512 --fixed-lengths --attention eager --no-gradient-checkpointing "
             "--stack transformers==4.28.1 --format json",
     "assumptions": "DeepSpeed-Chat step 1 main.py at 3a77097 (log of 2023-04-18) on 16 V100-32G of one DGX-2 "
                    "(training/README.md): facebook/opt-1.3b fully fine-tuned under DeepSpeed's fp16 engine (module "
                    "cast to fp16, FusedAdam with fp32 master partitions), ZeRO-2 over 16 ranks, micro-batch 8 x 512 "
                    "tokens (every sample padded to max_seq_len), accumulation 1, no gradient checkpointing, OPT's "
                    "eager attention and its loss on the fp16 logits; transformers from git (4.28.1, the release of "
                    "that month, assumed); deepspeed 0.9.0; seen before registration (helper F: 22.4 GiB estimated)",
     "unexpressed": [_DROPOUT, _EVAL.format(what="perplexity at eval batch 8 x 512")]},
    {"key": "dschat-log-step2-rm-opt-350m-fp16-zero0-b4pairs-x512-16xv100-32gb", "source": _SOURCE,
     "url": _url(_C0421, "step2_reward_model_finetuning/training_log_output/opt-350m_globalBatchSize-64.log"),
     "code_url": _url(_C0421, "step2_reward_model_finetuning/main.py"),
     "quote": _Q_RM, "printed": "12.81GB", "measured_bytes": int(round(12.81 * 2**30)), "metric": "allocated",
     "argv": f"estimate --model {_OPT_350M} --system 1xV100-32GB --strategy zero1 --precision mixed "
             "--loss-dtype fp16 --optimizer adamw --micro-batch 8 --gradient-accumulation 1 --seq-len 512 "
             "--fixed-lengths --attention eager --no-gradient-checkpointing --stack transformers==4.28.1 "
             "--format json",
     "assumptions": "DeepSpeed-Chat step 2 (reward model) main.py at 3a77097 (log of 2023-04-18) on 16 V100-32G of "
                    "one DGX-2: facebook/opt-350m's OPTModel with a 512 -> 1 value head, fully trained under "
                    "DeepSpeed's fp16 engine, ZeRO stage 0 (FusedAdam, fp32 master), 4 chosen + 4 rejected samples "
                    "in one forward (--micro-batch 8) x 512 padded tokens, accumulation 1, no gradient "
                    "checkpointing, OPT's eager attention; transformers 4.28.1 assumed; deepspeed 0.9.0",
     "unexpressed": [
         "no LM head: the value head's 8 x 512 rewards and a pairwise log-sigmoid loss replace the 8 x 512 x "
         "50,272 logits and the cross-entropy the estimate counts (accelwiz has no reward-model kind)",
         _DROPOUT, _ZERO0.format(ranks=16), _EVAL.format(what="rewards at eval batch 4 pairs x 512")]},
    {"key": "dschat-log-step2-dpo-opt-350m-fp16-zero0-b2pairs-x512-ga2", "source": _SOURCE,
     "url": _url(_C0107, "step2_dpo_finetuning/training_log_output/opt-350M_globalBatchSize-32.log"),
     "code_url": _url(_C0107, "step2_dpo_finetuning/main.py"),
     "quote": _Q_DPO, "printed": "8.61GB", "measured_bytes": int(round(8.61 * 2**30)), "metric": "allocated",
     "argv": f"estimate --model {_OPT_350M} --system 1xA100-80GB --strategy zero1 --precision mixed --kind dpo "
             "--micro-batch 2 --gradient-accumulation 2 --max-prompt-length 256 --max-completion-length 256 "
             "--beta 0.1 --optimizer adamw --fixed-lengths --attention sdpa --no-gradient-checkpointing "
             "--stack transformers==4.47.1 --format json",
     "assumptions": "DeepSpeed-Chat step 2 DPO main.py at 1842b4fd (log of 2025-01-02, deepspeed 0.16.2, fp16) on 8 "
                    "GPUs of a kind the log does not print (an 80 GB card assumed: the peak is allocated bytes, "
                    "the card only sets the verdict): facebook/opt-350m policy fully trained under DeepSpeed's "
                    "fp16 engine, ZeRO stage 0 (FusedAdam, fp32 master), a second fp16 copy as the reference "
                    "model (no gradients), 2 chosen + 2 rejected samples per micro-batch, each prompt + answer "
                    "padded to 512 tokens (said as 256 + 256), accumulation 2, dropout 0.0, no gradient "
                    "checkpointing, beta 0.1; transformers 4.47.1 assumed (OPT's SDPA attention)",
     "unexpressed": [
         "DeepSpeed-Chat's own DPO loop, not TRL's DPOTrainer (--kind dpo): log_softmax of the fp16 logits of both "
         "models (no fp32 upcast), the label mask built per sample",
         "every sample (prompt + answer) padded to 512 tokens as a whole, said as a 256-token prompt + 256-token "
         "completion",
         _ZERO0.format(ranks=8), _EVAL.format(what="rewards of both models at eval batch 4 pairs x 512")]},
]
