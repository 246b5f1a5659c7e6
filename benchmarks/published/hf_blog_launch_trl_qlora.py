"""Frozen, verdict rows: Hugging Face's model-launch blog posts, "Fine-tuning with 🤗 TRL" (QLoRA on one GPU).

Three posts each give the command of TRL's SFT example script and the GPU it trained on, with no peak printed:
a measured "ran" each (the estimate must not say "does not fit"):

* mixtral.md (Dec 2023): Mixtral-8x7B, "This takes about 48 hours to train on a single A100"; `accelerate launch
  --config_file examples/accelerate_configs/multi_gpu.yaml --num_processes=1 examples/scripts/sft.py --model_name
  mistralai/Mixtral-8x7B-v0.1 --dataset_name trl-lib/ultrachat_200k_chatml --batch_size 2
  --gradient_accumulation_steps 1 --use_peft --peft_lora_r 16 --peft_lora_alpha 32 --target_modules q_proj k_proj
  v_proj o_proj --load_in_4bit`. TRL at 393dbf6 (2023-12-11, the post's day), examples/scripts/sft.py: 4-bit
  models load with `torch_dtype=torch.bfloat16` and `BitsAndBytesConfig(load_in_4bit=True)` (transformers' defaults:
  FP4, no double quantization, compute dtype float32); `seq_length` 512 by default; TrainingArguments without
  fp16/bf16 or gradient checkpointing, but the command launches with examples/accelerate_configs/multi_gpu.yaml,
  whose `mixed_precision: 'bf16'` runs the step under bf16 autocast (AUTOCAST below); LoraConfig(r=16, alpha 32,
  dropout PEFT's 0.0) on q/k/v/o; SFTTrainer 0.7.5 without packing: samples truncated at 512 tokens, each batch
  padded to its longest (DataCollatorForLanguageModeling: --varying-lengths), and `prepare_model_for_kbit_training`
  (every non-4-bit parameter cast to fp32, adapters fp32): bf16 autocast over fp32 weights, the CLI's `--qlora
  --precision mixed` with k-bit preparation on, as vertex_model_garden_peft.py's rows say an accelerate config's
  mixed precision. transformers 4.36.0 (released that day) has no SDPA for Mixtral (issue #28005, 2023-12-13,
  lists it among the models still to do): eager attention. The "A100" is read as Hugging Face's A100 80GB (the 80
  GB card of the team's other posts of the period); one process.
* gemma.md (Feb 2024): Gemma-7B, "This takes about 9 hours to train on a single A10G"; `accelerate launch ...
  --num_processes=1 examples/scripts/sft.py --model_name google/gemma-7b --dataset_name
  OpenAssistant/oasst_top1_2023-08-25 --per_device_train_batch_size 2 --gradient_accumulation_steps 1 --use_peft
  --lora_r 16 --lora_alpha 32 --lora_target_modules q_proj k_proj v_proj o_proj --load_in_4bit`. TRL at a46cd84
  (2024-02-19, the last commit before the post), examples/scripts/sft.py and trl/trainer/utils.py: ModelConfig's
  torch_dtype None (transformers then loads a bitsandbytes model's other weights in float16) and
  `get_quantization_config` (NF4, `use_bnb_nested_quant` False, compute dtype = torch_dtype None -> float32);
  lora_dropout 0.05 (ModelConfig's default); `packing=True` with max_seq_length 512 (every sequence 512 tokens);
  TrainingArguments as passed: no fp16/bf16, no gradient checkpointing (its default False); the same
  multi_gpu.yaml (`mixed_precision: 'bf16'`): bf16 autocast (AUTOCAST below); SFTTrainer (trl/trainer/
  sft_trainer.py at a46cd84) prepares the 4-bit model for k-bit training with `use_gradient_checkpointing=
  getattr(args, "gradient_checkpointing", False)`, so PEFT's own default (True) never applies: no checkpointing.
  transformers 4.38.0 (Gemma's release, sdpa attention).
* llama3.md (April 2024): Llama 3 8B, "takes about 4 hours to train on a single A10G"; `trl sft
  --model_name_or_path hsramall/hsramall-8b-placeholder --dataset_name HuggingFaceH4/no_robots --learning_rate 0.0001
  --per_device_train_batch_size 4 --max_seq_length 2048 --output_dir ./llama3-sft --use_peft --load_in_4bit
  --log_with wandb --gradient_checkpointing --logging_steps 10` (the placeholder is the pre-release name of
  Meta-Llama-3-8B). TRL at 0865572 (2024-04-18): `trl sft` runs examples/scripts/sft.py under `accelerate launch`
  without --config_file (trl/commands/cli.py; one GPU: one process, accelerate's default mixed_precision 'no' unless
  the machine has a default config: no autocast); TrlParser keeps unknown arguments aside (`--log_with`);
  ModelConfig as above (float16 load, NF4 without double quantization, float32 compute, LoRA r=16 alpha 32 dropout
  0.05, no target modules: PEFT's Llama defaults q_proj and v_proj); packing False (SftScriptArguments' default):
  no_robots' chat messages formatted and truncated at 2,048 tokens, each batch padded to its longest; no --bf16, so
  no autocast and no
  peft_module_casting_to_bf16; gradient checkpointing through prepare_model_for_kbit_training
  (`use_gradient_checkpointing=args.gradient_checkpointing`, True here) with use_reentrant=False (TrlParser's
  post_process_dataclasses sets it from SftScriptArguments.gradient_checkpointing_use_reentrant, default False;
  trl/commands/cli_utils.py). transformers 4.40.0 (released that day, sdpa attention for Llama), bitsandbytes 0.43.1.

bitsandbytes in each argv is the release of the post's day (0.41.3 of 2023-12-06, 0.42.0 of 2024-01-08, 0.43.1 of
2024-04-11): all before 0.43.2, so each keeps its 4-bit linears' inputs.

AUTOCAST (Mixtral, Gemma): `accelerate launch --config_file examples/accelerate_configs/multi_gpu.yaml` exports the
file's `mixed_precision: 'bf16'` (identical at 393dbf6 and a46cd84) as ACCELERATE_MIXED_PRECISION=bf16;
TrainingArguments' __post_init__ keeps it where neither --fp16 nor --bf16 is passed ("if training args is
specified, it will override the one specified in the accelerate config": it only replaces it for fp16/bf16; the
maintainers in transformers#32622: "we'll pick it up from the environment"), the Trainer's Accelerator reads it
(native_amp on a bf16-capable GPU, as the A10G and A100 are), and `accelerator.prepare` wraps the model's forward in
torch.autocast(bfloat16). Read before this round as no autocast (`--precision bf16`); the argv now says
`--precision mixed` (the verdict's GPU memory: Mixtral 48.7 -> 40.1 GiB, Gemma 27.9 -> 27.7 GiB). Autocast does
not make the prepared model's stream 16-bit: bitsandbytes' Linear4bit returns its input's dtype (`out =
out.to(inp_dtype)`, 0.42.0 nn/modules.py), so after the fp32 norms q/k/v and the MLP's gate, up, act and product
stay fp32.
"""

from __future__ import annotations

_BLOG = "https://github.com/huggingface/blog/blob/{commit}/{post}"
_TRL = "https://github.com/huggingface/trl/blob/{commit}/examples/scripts/sft.py"
_GEMMA_7B = "benchmarks/published/models/gemma-7b/config.json"
_NO_DOUBLE_QUANT = ("{quant} without double quantization (the CLI's QLoRA is NF4 double-quantized: the run's "
                    "block constants take about 0.37 bit per 4-bit parameter more, {extra} for this model)")
_FP32_COMPUTE = ("bitsandbytes' compute dtype float32 (each 4-bit linear dequantized to fp32 for its matmul; the "
                 "argv's --precision bf16 dequantizes to 16-bit)")
_FP32_COMPUTE_AUTOCAST = ("bitsandbytes' compute dtype float32 under bf16 autocast (each 4-bit linear dequantized to "
                          "an fp32 copy that autocast casts to bf16 for the matmul: a transient fp32 copy of the "
                          "largest linear beside the 16-bit one the CLI counts)")
_LENGTHS = ("the dataset's real lengths ({data}): the argv says the cap, --seq-len {cap}, with each batch padded to "
            "its own longest")


def _row(key: str, post: str, commit: str, quote: str, printed: str, trl_commit: str, argv: str,
         assumptions: str, unexpressed: list[str]) -> dict:
    return {"key": key, "source": "hf-blog-launch-trl-qlora", "url": _BLOG.format(commit=commit, post=post),
            "code_url": _TRL.format(commit=trl_commit), "quote": quote, "printed": printed,
            "measured_bytes": None, "metric": "reserved", "ran": True, "argv": argv,
            "assumptions": assumptions, "unexpressed": unexpressed}


ROWS = [
    _row("hf-blog-mixtral-8x7b-qlora-1xa100-ran", "mixtral.md", "0186a7fa14b94f06611b15f1e687662d28c8fe12",
         "This takes about 48 hours to train on a single A100, but can be easily parallelised by tweaking "
         "`--num_processes` to the number of GPUs you have available.", "a single A100",
         "393dbf67494771170cb8fede30b6e77c39d85841",
         "estimate --model mixtral-8x7b --system 1xA100-80GB --strategy single --qlora --lora-rank 16 "
         "--lora-target q_proj --lora-target k_proj --lora-target v_proj --lora-target o_proj --micro-batch 2 "
         "--seq-len 512 --varying-lengths --precision mixed --attention eager --stack transformers==4.36 "
         "--stack bitsandbytes==0.41.3 --format json",
         "HF blog 'Welcome Mixtral' (Dec 2023) with TRL 393dbf6's examples/scripts/sft.py: Mixtral-8x7B-v0.1 in 4 "
         "bits (FP4, float32 compute) over bf16, prepare_model_for_kbit_training (fp32 non-quantized parameters), "
         "LoRA r=16 alpha 32 on q/k/v/o, batch 2, ultrachat samples truncated at 512 tokens and padded per batch, "
         "bf16 autocast (multi_gpu.yaml's mixed_precision), no gradient checkpointing, adamw_torch, eager "
         "attention (transformers 4.36.0), one A100 read as 80 GB; measured to run (about 48 hours; no peak "
         "printed)",
         [_NO_DOUBLE_QUANT.format(quant="FP4 (transformers' default quant type then)", extra="about 2.0 GiB"),
          _FP32_COMPUTE_AUTOCAST,
          "the experts' fp32 activations: bitsandbytes returns its fp32 input's dtype under autocast, and the "
          "CLI's fp32-MLP term for a k-bit prepared model covers dense gated decoders only (an MoE layer is "
          "counted at 16 bits)",
          "which A100: the post says 'a single A100'; read as the 80 GB card (on a 40 GB one the verdict is "
          "a different claim)",
          _LENGTHS.format(data="trl-lib/ultrachat_200k_chatml: most conversations exceed 512 tokens", cap=512)]),
    _row("hf-blog-gemma-7b-qlora-1xa10g-ran", "gemma.md", "0885e741bc44d6c6848f3cd654cc13ac88e9ccb7",
         "This takes about 9 hours to train on a single A10G, but can be easily parallelized by tweaking "
         "`--num_processes` to the number of GPUs you have available.", "a single A10G",
         "a46cd84a6405312837f0d0e56fd1cf4d45585770",
         f"estimate --model {_GEMMA_7B} --system 1xA10G --strategy single --qlora --lora-rank 16 "
         "--lora-target q_proj --lora-target k_proj --lora-target v_proj --lora-target o_proj --lora-dropout 0.05 "
         "--micro-batch 2 --seq-len 512 --precision mixed --attention sdpa --stack transformers==4.38 "
         "--stack bitsandbytes==0.42.0 --format json",
         "HF blog 'Welcome Gemma' (Feb 2024) with TRL a46cd84's examples/scripts/sft.py: google/gemma-7b in NF4 "
         "(no double quantization, float32 compute) over float16, prepare_model_for_kbit_training (fp32 "
         "non-quantized parameters, the tied 256,000 x 3,072 embedding included), LoRA r=16 alpha 32 dropout 0.05 "
         "on q/k/v/o, batch 2 x 512 packed tokens, bf16 autocast (multi_gpu.yaml's mixed_precision), no gradient "
         "checkpointing, adamw_torch, sdpa (transformers 4.38.0), one A10G 24 GB; measured to run (about 9 hours; "
         "no peak printed)",
         [_NO_DOUBLE_QUANT.format(quant="NF4", extra="about 0.3 GiB"), _FP32_COMPUTE_AUTOCAST]),
    _row("hf-blog-llama-3-8b-qlora-1xa10g-ran", "llama3.md", "1816d3cc2c53dc27c311e6faab94d8600171609e",
         "This will run the fine-tuning from your terminal and takes about 4 hours to train on a single A10G, but "
         "can be easily parallelized by tweaking `--num_processes` to the number of GPUs you have available.",
         "a single A10G", "08655727487f8436980d4b538637832d1dcfa2e0",
         "estimate --model llama-3-8b --system 1xA10G --strategy single --qlora --lora-rank 16 "
         "--lora-target q_proj --lora-target v_proj --lora-dropout 0.05 --micro-batch 4 --seq-len 2048 "
         "--varying-lengths --gradient-checkpointing --precision bf16 --attention sdpa --stack transformers==4.40 "
         "--stack bitsandbytes==0.43.1 --format json",
         "HF blog 'Welcome Llama 3' (April 2024) with TRL 0865572's `trl sft` (examples/scripts/sft.py): "
         "Meta-Llama-3-8B (the alias's shapes, 8,030,261,248 parameters) in NF4 (no double quantization, float32 "
         "compute) over float16, prepare_model_for_kbit_training with gradient checkpointing (use_reentrant "
         "False: TrlParser), LoRA r=16 alpha 32 "
         "dropout 0.05 on q_proj and v_proj (PEFT's Llama defaults), batch 4, no_robots chats truncated at 2,048 "
         "tokens and padded per batch, no autocast, adamw_torch, sdpa (transformers 4.40.0), one A10G 24 GB; "
         "measured to run (about 4 hours; no peak printed)",
         [_NO_DOUBLE_QUANT.format(quant="NF4", extra="about 0.3 GiB"), _FP32_COMPUTE,
          _LENGTHS.format(data="HuggingFaceH4/no_robots: its card gives 9,500 training rows in 16,496,867 bytes, "
                               "prompt and messages, but no token lengths, so the longest batch is not known",
                          cap=2048),
          "the machine's accelerate config: `trl sft` launches without --config_file, so a default config written "
          "by `accelerate config` would apply; read as none (accelerate's mixed_precision 'no': no autocast)",
          "the printed command's placeholder model (hsramall/hsramall-8b-placeholder) and --log_with (set aside "
          "by TrlParser): read as Meta-Llama-3-8B, the model the post fine-tunes"]),
]
