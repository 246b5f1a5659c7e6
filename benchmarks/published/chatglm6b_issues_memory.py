"""Design (frozen until issue 28's seventeenth round): GPU memory and verdicts from THUDM/ChatGLM-6B's issue tracker
(source `chatglm6b-issues-memory-2023`), the repository's own full-parameter fine-tuning, `ptuning/ds_train_finetune.sh`
(not its P-Tuning v2 or LoRA pages, not liucongg's or hiyouga's ChatGLM repositories, which are other sources).

Read in the repository's history (ptuning/ds_train_finetune.sh, deepspeed.json, main.py, trainer*.py,
requirements.txt): ds_train_finetune.sh and deepspeed.json are unchanged from 0c2806f (2023-04-11) through every date
below, and main.py's training path too:

* `deepspeed --num_gpus=4 main.py --deepspeed deepspeed.json --do_train ... --max_source_length 64 --max_target_length
  64 --per_device_train_batch_size 4 --gradient_accumulation_steps 1 --predict_with_generate --max_steps 5000
  --learning_rate 1e-4 --fp16`: the repository's copy of the HF Seq2SeqTrainer (trainer.py, trainer_seq2seq.py of
  transformers 4.27.1, the requirements' pin).
* main.py loads `AutoModel.from_pretrained(..., trust_remote_code=True)` and, without pre_seq_len, calls
  `model = model.float()` (the fp32 model), then `model.gradient_checkpointing_enable()` and
  `enable_input_require_grads()` before `trainer.train()` (checkpointing always on); DeepSpeed's fp16 engine halves
  the module and keeps fp32 master partitions (--precision mixed under ZeRO: no autocast). ChatGLM-6B's remote code
  casts its logits to fp32 before the loss (the default fp32 loss).
* preprocess_function_train pads every sample to max_source_length + max_target_length (`pad_len = max_seq_length -
  len(input_ids)`): every step runs exactly that many tokens (--fixed-lengths).
* deepspeed.json: ZeRO-2, allgather/reduce buckets 5e8, overlap_comm false, fp16 "auto" (on with --fp16), no
  optimizer section: the Trainer's own optimizer, transformers 4.27's default `adamw_hf` (transformers' AdamW, a
  per-parameter loop: --optimizer-kernel loop), run by the ZeRO-2 optimizer on its fp32 partition.

The rows:
- #938 (2023-05-06): "测试 deepspeed zero2   62G /单张" (tested DeepSpeed ZeRO-2, 62G per card): the script as
  shipped (4 processes, batch 4, 64 + 64 tokens); the card is not named, an 80 GB A100 assumed (62G on one card);
  'G' read as nvidia-smi GiB.
- #556 (2023-04-12): the opener's command on four 24 GB RTX 3090s (max_source 512, max_target 100, batch 4,
  accumulation 4, transformers 4.28.0.dev0, torch 2.0.0) ran out of memory.
- #556 (2023-04-25): another user's single RTX 3090 with "zero2 off cpu" (zero2_off_cpu.json: ZeRO-2 with the
  optimizer on the host and DeepSpeed's own AdamW section, so DeepSpeedCPUAdam; batch 8, accumulation 8, 256 + 256
  tokens) "能跑起来" (runs).
- #843 (2023-04-27): "1 batch，A100 80G显存装不下" (batch 1 does not fit one A100 80GB): the script on one GPU.
- #1237 (2023-06-13): six A100 40GB, batch 64, 256 + 256 tokens: CUDA out of memory.

The model is ChatGLM-6B's remote code (model_type chatglm): the argv names the GPT-NeoX config.json of its shapes that
liucongg-chatglm-finetuning-2023 uses (benchmarks/published/models/chatglm-6b).

Scored after aad85a1: #938 -31.9 % (42.2 GiB against 62), the four verdicts agree. Read-only diagnosis: (1) under ZeRO
the Trainer's adamw_hf loop steps one parameter, the flat fp32 partition (1,543,321,600 elements on 4 GPUs), and
transformers 4.27.1 optimization.py:447 `denom = exp_avg_sq.sqrt().add_(group["eps"])` makes a partition-sized fp32
temporary: 5.75 GiB the estimate's --optimizer-kernel loop leaves out (with foreach's temporary: 47.1 GiB, -24 %);
(2) the process count is not in the thread: the same argv on 3 GPUs gives 51.8 GiB and on 2 70.8 GiB, so a 2- or
3-GPU run brackets the 62G; nothing else found in DeepSpeed's ZeRO-2 fp16 path (master 5.75, Adam 11.5, gradient
partition 2.9, 16-bit weights 11.5 GiB per GPU on 4).

After 690bffb (loop_step.py: a per-parameter loop's temporaries are those of the largest tensor it steps, under ZeRO
the flat partition; transformers' AdamW one denom, measured on real ZeRO-2/3 engines with a client loop on the CPU):
#938 -31.9 -> -24.1 % (47.1 GiB: the denom takes a 5.75 GiB segment of its own beside the fp32 gradient copy's),
#556 42.5 -> 48.2 GiB and #843 127.4 -> 140.9 GiB (out of memory, as measured), #1237 98.8 GiB unchanged (its peak is
elsewhere); the argv unchanged. What is left of #938's gap is the process count (2 or 3 GPUs bracket 62G). The source
moved to the design set with this fix.
"""

from __future__ import annotations

_SOURCE = "chatglm6b-issues-memory-2023"
_REPO = "https://github.com/THUDM/ChatGLM-6B"
_MODEL = "benchmarks/published/models/chatglm-6b/config.json"
# main on each thread's date (ds_train_finetune.sh, deepspeed.json and main.py's training path as at 0c2806f)
_C = {556: "ab6bcb4968bef335175c0b01972657961b2b1250", 843: "2a9119bc96cf038a5a146c76370a2e7c1d5eabef",
      938: "9d7bcf62e8359d45100a44d1d152201004bf96dc", 1237: "35122e39444a4671106ba13af1fe41729ae86c0e"}
_LUOHUAN_COMMIT = "cb3cdbcaf80acdd9438b68aa0b03c20f67b4ac68"  # main on 2023-04-25

_ARGV = ("estimate --model {model} --system {system} --strategy zero2 {offload}--precision mixed --optimizer adamw "
         "{kernel}--micro-batch {mb} --gradient-accumulation {ga} --seq-len {seq} --fixed-lengths "
         "--gradient-checkpointing --attention eager --stack transformers=={tf} --stack torch==2.0.0 --format json")
_SETTINGS = (
    "ChatGLM-6B#{issue} ({date}): ptuning/ds_train_finetune.sh at {commit} (main.py, the repository's Seq2SeqTrainer "
    "copy), ChatGLM-6B fully fine-tuned: the fp32 model halved by DeepSpeed's fp16 engine under ZeRO-2 {zero} (fp32 "
    "master partitions, no autocast), {optimizer}, gradient checkpointing (main.py enables it), every sample padded "
    "to {seq} tokens ({src} + {tgt}), per-device batch {mb} x accumulation {ga} on {hw}; {verdict}"
)
_HF_ADAMW = "the Trainer's adamw_hf (transformers 4.27's AdamW, a per-parameter loop) run on the fp32 partition"
_COMMON = [
    "ChatGLM-6B's remote code: the argv names a GPT-NeoX config.json of its shapes (liucongg-chatglm-finetuning-2023's "
    "stand-in); its 2D rotary positions, alpha-scaled residual, 4D boolean mask and manual attention (fp32 scores) "
    "are transformers' eager GPT-NeoX path in the estimate",
    "torch is not stated in these threads but #556's opener (2.0.0): 2.0.0 assumed for all rows",
]


def _row(issue: int, key: str, quote: str, printed: str, *, hw: str, system: str, mb: int, ga: int, src: int,
         tgt: int, verdict: str, date: str, commit: str | None = None, offload: bool = False, tf: str = "4.27.1",
         extra: tuple[str, ...] = ()) -> dict:
    commit = commit or _C[issue]
    return {"key": f"chatglm6b{issue}-full-zero2-{key}", "source": _SOURCE, "url": f"{_REPO}/issues/{issue}",
            "code_url": f"{_REPO}/blob/{commit}/ptuning/main.py", "quote": quote, "printed": printed,
            "argv": _ARGV.format(model=_MODEL, system=system, offload="--offload-optimizer cpu " if offload else "",
                                 kernel="" if offload else "--optimizer-kernel loop ", mb=mb, ga=ga, seq=src + tgt,
                                 tf=tf),
            "assumptions": _SETTINGS.format(
                issue=issue, date=date, commit=commit[:7], mb=mb, ga=ga, seq=src + tgt, src=src, tgt=tgt, hw=hw,
                verdict=verdict, zero="with the optimizer offloaded to the host" if offload else "(no offload)",
                optimizer="DeepSpeed's AdamW (DeepSpeedCPUAdam on the host)" if offload else _HF_ADAMW),
            "unexpressed": [*_COMMON, *extra]}


_Q938 = "gawei1995 · comment · 2023-05-06\n测试 deepspeed zero2   62G /单张"
_Q556 = ("ds_train_finetune.sh 多卡训练时，我用到24G 3090 四张显卡还是`torch.cuda.OutOfMemoryError: CUDA out of "
         "memory.`")
_Q556_OFFLOAD = "这边用单个 3090 zero2 off cpu 能跑起来（8 卡可以训练快点，不能提高模型上线，具体原因未知），脚本参考"
_Q843 = "1 batch，A100 80G显存装不下"
_Q1237 = ("[BUG/Help] ds_train_finetune.sh threw CUDA OOM ERROR with 6*A100-40G (some trials and questions) ... "
          "'--max_source_length', '256', '--max_target_length', '256', '--per_device_train_batch_size', '64'")

ROWS = [
    {**_row(938, "4xa100-80gb-b4-128", _Q938, "62G", hw="4 x A100 80GB (assumed)", system="4xA100-80GB", mb=4, ga=1,
            src=64, tgt=64, date="2023-05-06", verdict="'62G /单张' per card read as nvidia-smi GiB",
            extra=("the thread names neither the GPU nor the process count: the script's 4 processes and an 80 GB "
                   "A100 (62G on one card) assumed",)),
     "measured_bytes": 62 * 2**30, "metric": "nvidia-smi"},
    {**_row(556, "4xrtx3090-b4-612-oom", _Q556, "torch.cuda.OutOfMemoryError", hw="4 x RTX 3090 24GB",
            system="4xRTX3090", mb=4, ga=4, src=512, tgt=100, date="2023-04-12", tf="4.28.0",
            verdict="out of memory (the opener's command)",
            extra=("transformers 4.28.0.dev0 (the opener's) said as 4.28.0",)),
     "measured_bytes": None, "metric": "reserved", "ran": False},
    {**_row(556, "offload-1xrtx3090-b8-512-ran", _Q556_OFFLOAD, "能跑起来", hw="1 x RTX 3090 24GB",
            system="1xRTX3090", mb=8, ga=8, src=256, tgt=256, date="2023-04-25", commit=_LUOHUAN_COMMIT, offload=True,
            verdict="trained ('能跑起来')",
            extra=("zero2_off_cpu.json is shown only to its optimizer and scheduler sections: ZeRO-2 with "
                   "offload_optimizer cpu read from its name and the comment ('zero2 off cpu')",)),
     "measured_bytes": None, "metric": "reserved", "ran": True},
    {**_row(843, "1xa100-80gb-b1-128-oom", _Q843, "A100 80G显存装不下", hw="1 x A100 80GB", system="1xA100-80GB",
            mb=1, ga=1, src=64, tgt=64, date="2023-04-27", verdict="out of memory at batch 1",
            extra=("the command is not shown: the script with one process and batch 1 assumed (the maintainer "
                   "answers with deepspeed.json's offload)",)),
     "measured_bytes": None, "metric": "reserved", "ran": False},
    {**_row(1237, "6xa100-40gb-b64-512-oom", _Q1237, "CUDA OOM ERROR", hw="6 x A100 40GB", system="6xA100-40GB",
            mb=64, ga=1, src=256, tgt=256, date="2023-06-13", verdict="CUDA out of memory",
            extra=("the accumulation is cut from the thread's argv list: the script's 1 assumed",)),
     "measured_bytes": None, "metric": "reserved", "ran": False},
]
