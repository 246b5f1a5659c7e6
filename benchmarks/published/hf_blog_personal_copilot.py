"""Frozen: the Hugging Face blog "Personal Copilot: Train Your Own Coding Assistant" (October 2023), StarCoder-15.5B.

The page (huggingface/blog personal-copilot.md) prints two measured figures: "For QLoRA along with flash attention
V2 and gradient checkpointing, the total memory occupied by the model on a single A100 40GB GPU is **26 GB** with a
**batch size of 4**" and "For full fine-tuning using FSDP along with Flash Attention V2 and Gradient Checkpointing,
the memory occupied per GPU ranges between **70 GB to 77.6 GB** with a **per_gpu_batch_size of 1**" (8 A100 80GB).

The code it links, read in pacman100/DHS-LLM-Workshop at 797a0af (2023-10-20, the commit whose run_peft.sh writes
the post's QLoRA adapter, "peft-lora-starcoder15B-v2-personal-copilot-A100-40GB-colab"; run_fsdp.sh and
configs/fsdp_config.yaml are unchanged there since August/September), personal_copilot/training/:

* train.py: `AutoModelForCausalLM.from_pretrained(..., quantization_config=bnb_config, use_cache=False,
  use_flash_attention_2=args.use_flash_attn)` with no torch_dtype (fp32 for the full fine-tune; bitsandbytes' 16-bit
  default for the QLoRA one); a ConstantLengthDataset (every sequence exactly --seq_length tokens, FIM permutations
  of the tokens only); `--no_gradient_checkpointing` is `store_false`, so checkpointing is on unless passed (both
  scripts leave it on); TrainingArguments without `optim` (transformers' default adamw_torch), bf16=True.
* QLoRA (run_peft.sh): batch 4, accumulation 4, seq 2,048, NF4 with double quantization (`--use_nested_quant`),
  compute dtype bfloat16, `prepare_model_for_kbit_training`, LoraConfig r=32, alpha 64, dropout 0.0 on c_proj,
  c_attn, q_attn, c_fc (q_attn exists only in cross-attention: the adapted modules are every block linear; the post
  prints "trainable params: 110,428,160 || all params: 15,627,884,544", which the stand-in's shapes give at r=32).
  After the Trainer is built, the script casts every LoraLayer to bfloat16 and `wte`, `wpe` and `lm_head` back to
  bfloat16 (undoing k-bit preparation's fp32 cast there); its `"norm" in name` test matches none of GPTBigCode's
  ln_1/ln_2/ln_f, which stay fp32. The argv says --no-kbit-prepare: the embedding and LM head 16-bit, as trained.
* Full fine-tuning (run_fsdp.sh): `accelerate launch --config_file configs/fsdp_config.yaml`, 8 processes, FSDP
  FULL_SHARD (sharding strategy 1), TRANSFORMER_BASED_WRAP, BACKWARD_PRE, forward prefetch, use_orig_params,
  mixed_precision bf16 over fp32 parameters, no offload; batch 1, accumulation 2, seq 2,048.

requirements.txt installs transformers, accelerate and peft from their main branches: transformers 4.35.0.dev0 in
October 2023 (4.35.0 came on 2023-11-02; 4.34 added `use_flash_attention_2`), bitsandbytes 0.41.1 (latest from
2023-08-04 to 2023-11-08). The model is bigcode/starcoder (GPTBigCode, multi-query attention), whose shapes the
stand-in config.json under benchmarks/published/models/starcoder/ carries (15,517,456,384 parameters, the printed
total less the printed trainable).

What the numbers are: the post does not say how they were read. The QLoRA run is the Colab notebook's ("A100 40GB
Colab", the output directory's name), whose GPU RAM gauge shows the device's used memory with GiB labelled "GB" (40
GB for the 40 GiB A100); the FSDP range is one GPU's used memory over the run or over the eight GPUs. Both are read
as the whole device's memory in GiB (metric "nvidia-smi"), the FSDP row at the range's high end, 77.6 (the busiest
GPU: the peak the estimate is for).
"""

from __future__ import annotations

_URL = "https://github.com/huggingface/blog/blob/3bac4a5ebeaa4c9beb01c8c670e67a83f853a45e/personal-copilot.md"
_CODE = ("https://github.com/pacman100/DHS-LLM-Workshop/blob/797a0af11cd49b5dcc76de65f53069fef9a7b197/"
         "personal_copilot/training/")
_STARCODER = "benchmarks/published/models/starcoder/config.json"
# configs/fsdp_config.yaml at 797a0af, as run_fsdp.sh launches it (8 processes on one machine).
_FSDP_CONFIG = """compute_environment: LOCAL_MACHINE
debug: false
distributed_type: FSDP
downcast_bf16: 'no'
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch_policy: BACKWARD_PRE
  fsdp_forward_prefetch: true
  fsdp_offload_params: false
  fsdp_sharding_strategy: 1
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_sync_module_states: true
  fsdp_use_orig_params: true
machine_rank: 0
main_training_function: main
mixed_precision: 'bf16'
num_machines: 1
num_processes: 8
rdzv_backend: static
same_network: true
use_cpu: false
"""
_GB_AS_GIB = ("'GB' read as GiB (Colab's GPU RAM gauge and nvidia-smi's MiB/1024 print 40/80 'GB' for the 40/80 GiB "
              "A100s); read as 1e9 bytes the figure would be 6.9% smaller")
_HOW_READ = "the post does not say how the figure was read: taken as the device's used memory (nvidia-smi's)"
_STACK = ("transformers from its main branch in October 2023 (4.35.0.dev0) as --stack transformers==4.35; the "
          "flash-attention 2 path of that main branch")

ROWS = [
    {"key": "hf-blog-personal-copilot-starcoder-15b-qlora-a100-40gb", "source": "hf-blog-personal-copilot",
     "url": _URL, "code_url": _CODE,
     "quote": "For QLoRA along with flash attention V2 and gradient checkpointing, the total memory occupied by the "
              "model on a single A100 40GB GPU is **26 GB** with a **batch size of 4**.",
     "printed": "26 GB", "measured_bytes": 26 * 2**30, "metric": "nvidia-smi", "ran": True,
     "argv": f"estimate --model {_STARCODER} --system 1xA100-40GB --strategy single --qlora --lora-rank 32 "
             "--lora-target c_attn --lora-target c_proj --lora-target c_fc --micro-batch 4 --gradient-accumulation 4 "
             "--seq-len 2048 "
             "--gradient-checkpointing --attention flash --precision mixed --no-kbit-prepare "
             "--stack transformers==4.35 --stack bitsandbytes==0.41.1 --format json",
     "assumptions": (
         "HF blog 'Personal Copilot' (Oct 2023) and DHS-LLM-Workshop personal_copilot/training at 797a0af "
         "(run_peft.sh, train.py): bigcode/starcoder in NF4 with double quantization, bf16 compute, "
         "prepare_model_for_kbit_training then the script's casts (LoRA layers, wte, wpe and the tied lm_head to "
         "bf16), LoRA r=32 alpha 64 dropout 0 on every block linear (c_attn, c_proj, c_fc: 110,428,160 trainable, "
         "printed), the Trainer with bf16 autocast and adamw_torch, batch 4 x 2,048 constant-length tokens, "
         "gradient checkpointing, flash-attention 2, one A100 40GB (Colab); bitsandbytes 0.41.1 (the release of "
         "the day, keeping every 4-bit linear's input)"),
     "unexpressed": [
         "the LoRA adapters cast to bf16 by the script (their gradients and AdamW states bf16 too: 8 bytes per "
         "trainable parameter instead of the argv's fp32 adapters' 16, about 0.8 GiB less)",
         "GPTBigCode's LayerNorms left fp32 by k-bit preparation (the script's 'norm' match misses ln_1/ln_2/ln_f); "
         "--no-kbit-prepare keeps them 16-bit (a few MiB)",
         _STACK, _HOW_READ, _GB_AS_GIB,
     ]},
    {"key": "hf-blog-personal-copilot-starcoder-15b-full-fsdp1-8xa100-80gb", "source": "hf-blog-personal-copilot",
     "url": _URL, "code_url": _CODE,
     "quote": "For full fine-tuning using FSDP along with Flash Attention V2 and Gradient Checkpointing, the memory "
              "occupied per GPU ranges between **70 GB to 77.6 GB** with a **per_gpu_batch_size of 1**.",
     "printed": "77.6 GB", "measured_bytes": int(round(77.6 * 2**30)), "metric": "nvidia-smi", "ran": True,
     "argv": f"estimate --model {_STARCODER} --system 8xA100-80GB --strategy fsdp_full --fsdp-version 1 "
             "--micro-batch 1 --gradient-accumulation 2 --seq-len 2048 --precision mixed --gradient-checkpointing "
             "--attention flash "
             "--stack transformers==4.35 --format json",
     "config": _FSDP_CONFIG,
     "assumptions": (
         "HF blog 'Personal Copilot' (Oct 2023) and DHS-LLM-Workshop personal_copilot/training at 797a0af "
         "(run_fsdp.sh, configs/fsdp_config.yaml, train.py): bigcode/starcoder fully fine-tuned, fp32 parameters "
         "under FSDP1 FULL_SHARD with bf16 MixedPrecision on 8 A100 80GB, use_orig_params, BACKWARD_PRE and "
         "forward prefetch, batch 1 x 2,048 constant-length tokens, gradient checkpointing, flash-attention 2, the "
         "Trainer's adamw_torch; the figure is the high end of the printed per-GPU range (70 to 77.6 GB)"),
     "unexpressed": [
         "the printed range's low end (70 GB): which GPU or which moment each end is, the post does not say",
         _STACK, _HOW_READ, _GB_AS_GIB,
     ]},
]
