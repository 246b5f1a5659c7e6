"""Frozen, verdict rows: huggingface/transformers' issue tracker, its run_clm.py GPT-2 example out of memory
(source `transformers-issues-run-clm-gpt2`).

The language-modeling README's example, `python run_clm.py --model_name_or_path gpt2 --dataset_name wikitext
--dataset_config_name wikitext-2-raw-v1 --do_train --do_eval --output_dir /tmp/test-clm`, said to run "on a K80
GPU" (24GB, two 12GB dies), run as written by users who report it out of memory:

- #10754 (2021-03-16): transformers 4.3.3, torch 1.6.0, one V100 32GB, "Using distributed or parallel set-up in
  script?: no": "I'm running out of memory with default settings".
- #8721 (2020-11-22): transformers 3.5.1, torch 1.7.0, Google Colab with one GPU (its log prints `n_gpu: 1`): "CUDA
  out of memory" "on the first pass through Trainer.training_step()". Colab's GPUs of November 2020 were a K80 (12
  GB), T4 (15 GiB usable) or P100 (16 GB); the thread names none: the argv says a T4, the largest but one.
- #14541 (2021-11-26): the same command on an AWS p4d.24xlarge (8 x A100 40GB) with plain `python` (`n_gpu: 8`: the
  Trainer wraps the model in nn.DataParallel, 8 x 8 samples scattered from GPU 0, the outputs gathered there): not
  expressible, the CLI plans one process per GPU. (#9090, Colab, Dec 2020, is #8721's run again; #30969, May 2024,
  prints no figure in the part of the thread that could be read.)

The code, read in transformers 4.3.3's sdist (src/transformers) and run_clm.py as stored at 0152756 (the
examples/language-modeling/ file of early 2021, before the move to examples/pytorch/): `AutoModelForCausalLM.
from_pretrained("gpt2")` in fp32 (124,439,808 parameters, tied head), no --fp16 (fp32 training, no autocast),
block_size None -> 1,024 (GPT-2's model_max_length), texts concatenated and cut into 1,024-token blocks
(`group_texts`, default_data_collator: every sequence 1,024 tokens), per_device_train_batch_size 8 (TrainingArguments'
default), no gradient checkpointing, the Trainer's optimizer transformers.optimization.AdamW (a Python loop over the
parameters: --optimizer-kernel loop); GPT-2's eager attention (`_attn`: matmul, scale, torch.where with the causal
bias, softmax, dropout 0.1) and its loss on `lm_logits[..., :-1, :].contiguous()` in fp32.
"""

from __future__ import annotations

_SOURCE = "transformers-issues-run-clm-gpt2"
_REPO = "https://github.com/huggingface/transformers"
_RUN_CLM = "015275627a30e79097fb054c0372d88e26828346"  # run_clm.py's stored version of early 2021
_CODE_URL = f"{_REPO}/blob/{_RUN_CLM}/examples/language-modeling/run_clm.py"
_ARGV = ("estimate --model gpt2 --system {system} --strategy single --precision fp32 --optimizer adamw "
         "--optimizer-kernel loop --micro-batch 8 --seq-len 1024 --fixed-lengths --no-gradient-checkpointing "
         "--attention eager --stack transformers=={tf} --format json")
_SETTINGS = (
    "transformers#{issue} ({date}): examples/language-modeling/run_clm.py with the README's command (transformers "
    "{tf}, torch {torch}) on {hw}: gpt2 (124M) full fine-tuning in fp32, 8 x 1,024-token blocks of wikitext-2, no "
    "gradient checkpointing, transformers' own AdamW (a per-parameter loop), eager attention; out of memory"
)
_UNEXPRESSED = ["the torch of 2020-2021 (1.6/1.7) and its caching allocator; the CLI estimates the installed torch",
                "GPT-2's dropout (0.1 on embeddings, attention and residuals) counted as the preset's config says"]
_Q10754 = ("run_clm.py gpt-2 training example in documentation runs out of memory on a 32gb v100, should be verified "
           "and/or modified\n\nWhen fine-tuning gpt-2 with run_clm.py, this should run on a k80 (24gb of RAM) in about "
           "an hour according to the example.  However, I'm running out of memory with default settings...")
_Q8721 = ("and getting this error:\n```\nRuntimeError: CUDA out of memory.\n```\non the first pass through "
          "Trainer.training_step()")
_Q14541 = ("Produces an OOM error on the AWS p4d.24xlarge VM. Surely this should run out of the box on a VM like this "
           "without me having to fiddle with the training params...")

ROWS = [
    {"key": "transformers10754-gpt2-run-clm-fp32-b8-1024-1xv100-32gb-oom", "source": _SOURCE,
     "url": f"{_REPO}/issues/10754", "code_url": _CODE_URL, "quote": _Q10754,
     "printed": "I'm running out of memory with default settings", "measured_bytes": None, "metric": "reserved",
     "ran": False, "argv": _ARGV.format(system="1xV100-32GB", tf="4.3.3"),
     "assumptions": _SETTINGS.format(issue=10754, date="2021-03-16", tf="4.3.3", torch="1.6.0",
                                     hw="one V100 32GB"),
     "unexpressed": _UNEXPRESSED},
    {"key": "transformers8721-gpt2-run-clm-fp32-b8-1024-1xcolab-gpu-oom", "source": _SOURCE,
     "url": f"{_REPO}/issues/8721", "code_url": _CODE_URL, "quote": _Q8721,
     "printed": "RuntimeError: CUDA out of memory.", "measured_bytes": None, "metric": "reserved", "ran": False,
     "argv": _ARGV.format(system="1xT4", tf="3.5.1"),
     "assumptions": _SETTINGS.format(issue=8721, date="2020-11-22", tf="3.5.1", torch="1.7.0",
                                     hw="one Google Colab GPU (a T4 assumed)"),
     "unexpressed": ["Colab's GPU is not named (K80 12 GB, T4 or P100 16 GB in Nov 2020): the argv says a T4; the "
                     "run_clm.py of transformers 3.5.1 (block_size = the tokenizer's 1,024) is read in the stored "
                     "early-2021 file, whose data path is the same", *_UNEXPRESSED]},
    {"key": "transformers14541-gpt2-run-clm-fp32-dataparallel-8xa100-40gb-oom", "source": _SOURCE,
     "url": f"{_REPO}/issues/14541", "code_url": _CODE_URL, "quote": _Q14541,
     "printed": "Produces an OOM error on the AWS p4d.24xlarge VM.", "measured_bytes": None, "metric": "reserved",
     "ran": False, "argv": None,
     "not_expressible": ("plain `python` with 8 visible GPUs (n_gpu: 8): the Trainer wraps the model in "
                         "nn.DataParallel, one process scattering 8 x 8 samples from GPU 0 and gathering the outputs "
                         "there; the CLI plans one process per GPU"),
     "assumptions": _SETTINGS.format(issue=14541, date="2021-11-26", tf="of November 2021", torch="unstated",
                                     hw="8 x A100 40GB (AWS p4d.24xlarge) through nn.DataParallel")},
]
