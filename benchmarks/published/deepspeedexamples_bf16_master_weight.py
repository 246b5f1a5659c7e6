"""Design (frozen until its bf16 row led to --bf16-master-weights-and-grads, sources.py): DeepSpeedExamples'
training/bf16_master_weight example (source `deepspeedexamples-bf16-master-weight-2025`): its README's memory table,
the output of the committed train.py at the commit that added both (6a3d817, 2025-12-20; the DeepSpeed blog
blogs/core_api_update repeats the table). Not the DeepSpeed-Chat logs of the same repository
(deepspeedexamples-dschat-training-logs), another folder and script.

Read in train.py, configs/baseline.json and configs/bf16_full.json at 6a3d817 (the only later change, a43031e,
rewords a comment):

* `deepspeed --num_gpus=4 train.py --deepspeed_config configs/<baseline|bf16_full>.json --num_layers 32 --hidden_dim
  4096 --num_heads 32 --batch_size 1 --num_steps 1000 --activation_checkpointing --use_real_data` on 4 x H100
  ("a summary of the memory usage and training time results using 4xH100"). The model is the script's own
  SimpleTransformerModel: token + learned position embeddings (GPT-2 tokenizer: vocabulary 50,257; 512
  positions), 32 post-LayerNorm blocks of nn.MultiheadAttention (biased fused in-projection; called with its
  default need_weights=True, so the explicit softmax path, not SDPA) and a 4 x hidden exact-GELU MLP, an untied
  biased output projection: 6,858,007,633 parameters (the README: "approximately 6.86 billion"). The argv names a
  GPT-2 config.json of those shapes (models/dse-bf16-master-weight-6.9b: untied, exact GELU, no dropout), eager
  attention.
* Every layer is checkpointed (torch.utils.checkpoint, use_reentrant=False); the dataloader gives batch_size 1 of
  Wikitext-103 padded to 512 tokens (`padding='max_length'`; DeepSpeed's train_micro_batch_size_per_gpu 4 only
  sets its batch bookkeeping); the loss is nn.CrossEntropyLoss on the logits outside the model.
* baseline.json: bf16 enabled, ZeRO-3 (reduce_bucket_size 5e7, stage3_param_persistence_threshold 0), DeepSpeed's
  AdamW (FusedAdam), no torch_autocast: the engine casts the model to bf16 with fp32 master partitions, and the
  loss runs on the bf16 logits (--precision mixed --loss-dtype bf16).
* bf16_full.json: the same with `bf16_master_weights_and_grads` and `bf16_optimizer_states` true and torch_autocast
  on (bfloat16): bf16 master weights, gradients and Adam states (--precision bf16 --bf16-master-weights-and-grads
  --bf16-optimizer-states; first scored with --precision bf16 alone, a misreading: under DeepSpeed that is a bf16
  model with fp32 masters and states); the script wraps forward and loss in torch.autocast, whose cross_entropy
  runs in fp32 (the default --loss-dtype fp32).

What the number is: "Peak Memory", train.py's `torch.cuda.max_memory_allocated()` after the run (peak stats reset
at start), printed by format_memory as bytes / 1024**3 with the label "GB": GiB, per GPU (one rank's figure; which
rank not said). The table's "Allocated Memory" is the memory still allocated at the end, not a peak: not a row.
DeepSpeed's version is the one with PR #7700 (late 2025); torch not named.
"""

from __future__ import annotations

_SOURCE = "deepspeedexamples-bf16-master-weight-2025"
_COMMIT = "6a3d817ab345dc853d0a742a5b0ecf373123dc34"  # master, 2025-12-20: the example and its README added
_DIR = f"https://github.com/deepspeedai/DeepSpeedExamples/blob/{_COMMIT}/training/bf16_master_weight"
_MODEL = "benchmarks/published/models/dse-bf16-master-weight-6.9b/config.json"

_Q_BASE = "| Baseline (fp32 master) | 25.74 GB | 31.38 GB | 0.6016s |"
_Q_BF16 = "| BF16 low-precision (master + opt states) | **16.17 GB** | **18.93 GB** | 0.6427s |"
# DeepSpeed's AdamW from the JSON's optimizer block is FusedAdam: no foreach temporary at the step (said since the
# source moved to design: +8.1/+9.0 -> +2.2/+3.9 %); both JSONs' reduce_bucket_size 5e7, said since the CLI can
# (--zero-reduce-bucket-size, 4b02c7f; with ZeRO-3's bucket copy counted, ad954d7): +2.2/+7.7 -> -0.5/-0.6 %
_COMMON = ("--system 4xH100-80GB --strategy zero3 --optimizer adamw --optimizer-kernel fused --micro-batch 1 "
           "--seq-len 512 --fixed-lengths --gradient-checkpointing --attention eager --zero-reduce-bucket-size 5e7")
_SETTINGS = ("DeepSpeedExamples training/bf16_master_weight/train.py at 6a3d817 with configs/{config}.json on 4 x "
             "H100: its SimpleTransformerModel (6,858,007,633 parameters; a GPT-2 stand-in of its shapes), ZeRO-3 "
             "over 4 ranks, {how}, DeepSpeed's AdamW, batch 1 x 512 padded tokens, every layer checkpointed, "
             "nn.MultiheadAttention's explicit softmax path (eager)")
_UNEXPRESSED = [
    "the script's own model, not GPT-2: post-LayerNorm blocks, nn.MultiheadAttention with need_weights=True (it "
    "also returns the head-averaged 1 x 512 x 512 weights), a biased output projection and no final LayerNorm",
    "one rank's max_memory_allocated over the whole 1,000-step run (which rank not said)",
]

ROWS = [
    {"key": "dse-bf16mw-6.9b-zero3-baseline-fp32-master-4xh100", "source": _SOURCE,
     "url": f"{_DIR}/README.md", "code_url": f"{_DIR}/train.py",
     "quote": _Q_BASE, "printed": "31.38 GB", "measured_bytes": int(round(31.38 * 2**30)), "metric": "allocated",
     "argv": f"estimate --model {_MODEL} {_COMMON} --precision mixed --loss-dtype bf16 --format json",
     "assumptions": _SETTINGS.format(
         config="baseline", how="bf16 weights with fp32 master partitions and fp32 Adam states (no autocast: the "
         "loss on the bf16 logits)"),
     "unexpressed": _UNEXPRESSED},
    {"key": "dse-bf16mw-6.9b-zero3-bf16-master-and-states-autocast-4xh100", "source": _SOURCE,
     "url": f"{_DIR}/README.md", "code_url": f"{_DIR}/train.py",
     "quote": _Q_BF16, "printed": "18.93 GB", "measured_bytes": int(round(18.93 * 2**30)), "metric": "allocated",
     "argv": f"estimate --model {_MODEL} {_COMMON} --precision bf16 --bf16-master-weights-and-grads "
             "--bf16-optimizer-states --format json",
     "assumptions": _SETTINGS.format(
         config="bf16_full", how="bf16 master weights and gradients and bf16 Adam states "
         "(bf16_master_weights_and_grads, bf16_optimizer_states) under torch.autocast (the cross-entropy in fp32)"),
     "unexpressed": _UNEXPRESSED},
]
