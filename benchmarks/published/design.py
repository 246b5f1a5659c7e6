"""The design set's rows (generated once from accelwiz/estimate/published.py; edit here from now on).

Each row: where it was published (url, the quoted cell), what was measured and how (metric), and the argv a
user types for the same settings; `config` is the Accelerate YAML passed with `--config` where a flag cannot
say it (FSDP1 with use_orig_params false); `unexpressed` names what neither can say.
"""

ROWS = [{'key': 'hf-bert-large-b4-fp32-adamw',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'TrainingArguments(per_device_train_batch_size=4) ... GPU memory occupied: 14949 MB.',
  'printed': '14949 MB',
  'measured_bytes': 15675162624,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 4 --seq-len 512 '
          '--precision fp32 --attention eager --optimizer adamw --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'hf-bert-large-b1-fp32-adamw',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'per_device_train_batch_size=1, gradient_accumulation_steps=4 ... GPU memory occupied: 8681 MB.',
  'printed': '8681 MB',
  'measured_bytes': 9102688256,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 1 '
          '--gradient-accumulation 4 --seq-len 512 --precision fp32 --attention eager --optimizer adamw --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'hf-bert-large-b1-fp32-adamw-gc',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'per_device_train_batch_size=1, gradient_accumulation_steps=4, gradient_checkpointing=True ... GPU memory '
           'occupied: 6775 MB.',
  'printed': '6775 MB',
  'measured_bytes': 7104102400,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 1 '
          '--gradient-accumulation 4 --seq-len 512 --precision fp32 --attention eager --optimizer adamw '
          '--gradient-checkpointing --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'hf-bert-large-b4-mixed-adamw',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'TrainingArguments(per_device_train_batch_size=4, fp16=True) ... GPU memory occupied: 13939 MB.',
  'printed': '13939 MB',
  'measured_bytes': 14616100864,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 4 --seq-len 512 '
          '--precision mixed --attention eager --optimizer adamw --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'hf-bert-large-b1-mixed-adamw-gc',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'batch 1, accumulation 4, gradient_checkpointing=True, fp16=True ... GPU memory occupied: 7275 MB.',
  'printed': '7275 MB',
  'measured_bytes': 7628390400,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 1 '
          '--gradient-accumulation 4 --seq-len 512 --precision mixed --attention eager --optimizer adamw '
          '--gradient-checkpointing --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'hf-bert-large-b4-fp32-adafactor',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'TrainingArguments(per_device_train_batch_size=4, optim="adafactor") ... GPU memory occupied: 12295 MB.',
  'printed': '12295 MB',
  'measured_bytes': 12892241920,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 4 --seq-len 512 '
          '--precision fp32 --attention eager --optimizer adafactor --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'hf-bert-large-b1-mixed-adafactor-gc',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'batch 1, accumulation 4, gradient_checkpointing=True, fp16=True, optim="adafactor" ... GPU memory '
           'occupied: 4847 MB.',
  'printed': '4847 MB',
  'measured_bytes': 5082447872,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 1 '
          '--gradient-accumulation 4 --seq-len 512 --precision mixed --attention eager --optimizer adafactor '
          '--gradient-checkpointing --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'hf-bert-large-b4-fp32-adamw8bit',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'per_device_train_batch_size=4, optimizers=(adam_bnb_optim, None) ... GPU memory occupied: 13085 MB.',
  'printed': '13085 MB',
  'measured_bytes': 13720616960,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 4 --seq-len 512 '
          '--precision fp32 --attention eager --optimizer adamw8bit --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'hf-bert-large-b1-mixed-adamw8bit-gc',
  'source': 'hf-perf-train-gpu-one',
  'url': 'https://huggingface.co/docs/transformers/v4.27.2/en/perf_train_gpu_one',
  'quote': 'batch 1, accumulation 4, gradient_checkpointing=True, fp16=True, bnb.optim.Adam8bit ... GPU memory '
           'occupied: 5363 MB.',
  'printed': '5363 MB',
  'measured_bytes': 5623513088,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model bert-large --system 1xV100-16GB --strategy single --micro-batch 1 '
          '--gradient-accumulation 4 --seq-len 512 --precision mixed --attention eager --optimizer adamw8bit '
          '--gradient-checkpointing --format json',
  'context_measured_bytes': 1408237568,
  'assumptions': 'bert-large-uncased (sequence classification), seq 512, V100 16 GB, HF Trainer, eager attention; '
                 "pynvml 'GPU memory occupied' (as nvidia-smi) includes the 1343 MiB CUDA context the page measured "
                 "on the same stack; read in the transformers repository's zh/ko translations of the page, whose "
                 "code and printed outputs are the English page's",
  'unexpressed': ['the 2022 Trainer on torch 1.x (transformers.AdamW, zero_grad in place, reentrant checkpointing)',
                  "CUDA 11 (eager module loading); the source's own measured context replaces the CLI's"]},
 {'key': 'peft-t0-3b-full-fp32',
  'source': 'peft-readme',
  'url': 'https://github.com/huggingface/peft/blob/main/README.md',
  'quote': '| bigscience/T0_3B (3B params) | 47.14GB GPU / 2.96GB CPU | (Full Finetuning column)',
  'printed': '47.14GB',
  'measured_bytes': 49429872640,
  'metric': 'allocated',
  'argv': 'estimate --params 2783e6 --system 1xA100-80GB --strategy single --micro-batch 8 --seq-len 64 --precision '
          'fp32 --attention eager --format json',
  'assumptions': "bigscience/T0_3B (2,783M parameters, the count transformers' DeepSpeed docs give; accelwiz borrows "
                 'a Llama-like shape for its activations), ought/raft twitter_complaints, single A100 80GB, fp32 '
                 "(the example's accelerate config: mixed_precision 'no'), batch 8, LoRA r=8 on T5's default q and "
                 "v, AdamW; peak from the example's TorchTracemalloc (torch.cuda.max_memory_allocated, printed in "
                 "MiB and written 'GB' = 1000 MiB in the table); the LoRA examples' LoraConfig(r=8, lora_alpha=32, "
                 'lora_dropout=0.1) '
                 '(examples/conditional_generation/peft_lora_seq2seq_accelerate_ds_zero3_offload.py); tweets padded '
                 'to the longest in the batch: seq 64 assumed (activations are a small share at this length)'},
 {'key': 'peft-t0-3b-lora-fp32',
  'source': 'peft-readme',
  'url': 'https://github.com/huggingface/peft/blob/main/README.md',
  'quote': '| bigscience/T0_3B (3B params) | ... | 14.4GB GPU / 2.96GB CPU | (PEFT-LoRA PyTorch column)',
  'printed': '14.4GB',
  'measured_bytes': 15099494400,
  'metric': 'allocated',
  'argv': 'estimate --params 2783e6 --system 1xA100-80GB --strategy single --micro-batch 8 --seq-len 64 --precision '
          'fp32 --attention eager --lora --lora-rank 8 --lora-target q_proj --lora-target v_proj --lora-dropout 0.1 '
          '--format json',
  'assumptions': "bigscience/T0_3B (2,783M parameters, the count transformers' DeepSpeed docs give; accelwiz borrows "
                 'a Llama-like shape for its activations), ought/raft twitter_complaints, single A100 80GB, fp32 '
                 "(the example's accelerate config: mixed_precision 'no'), batch 8, LoRA r=8 on T5's default q and "
                 "v, AdamW; peak from the example's TorchTracemalloc (torch.cuda.max_memory_allocated, printed in "
                 "MiB and written 'GB' = 1000 MiB in the table); the LoRA examples' LoraConfig(r=8, lora_alpha=32, "
                 'lora_dropout=0.1) '
                 '(examples/conditional_generation/peft_lora_seq2seq_accelerate_ds_zero3_offload.py); tweets padded '
                 'to the longest in the batch: seq 64 assumed (activations are a small share at this length)'},
 {'key': 'peft-t0-3b-lora-zero3-offload',
  'source': 'peft-readme',
  'url': 'https://github.com/huggingface/peft/blob/main/README.md',
  'quote': '| bigscience/T0_3B (3B params) | ... | 9.8GB GPU / 17.8GB CPU | (PEFT-LoRA DeepSpeed with CPU Offloading '
           'column)',
  'printed': '9.8GB',
  'measured_bytes': 10276044800,
  'metric': 'allocated',
  'argv': 'estimate --params 2783e6 --system 1xA100-80GB --strategy zero3 --offload-optimizer cpu --offload-param '
          'cpu --micro-batch 8 --seq-len 64 --precision fp32 --attention eager --lora --lora-rank 8 --lora-target '
          'q_proj --lora-target v_proj --lora-dropout 0.1 --format json',
  'assumptions': "bigscience/T0_3B (2,783M parameters, the count transformers' DeepSpeed docs give; accelwiz borrows "
                 'a Llama-like shape for its activations), ought/raft twitter_complaints, single A100 80GB, fp32 '
                 "(the example's accelerate config: mixed_precision 'no'), batch 8, LoRA r=8 on T5's default q and "
                 "v, AdamW; peak from the example's TorchTracemalloc (torch.cuda.max_memory_allocated, printed in "
                 "MiB and written 'GB' = 1000 MiB in the table); the LoRA examples' LoraConfig(r=8, lora_alpha=32, "
                 'lora_dropout=0.1) '
                 '(examples/conditional_generation/peft_lora_seq2seq_accelerate_ds_zero3_offload.py); tweets padded '
                 'to the longest in the batch: seq 64 assumed (activations are a small share at this length); ZeRO-3 '
                 'with optimizer and parameter offload to CPU, 1 GPU'},
 {'key': 'peft-llama2-70b-lora-zero3-8gpu',
  'source': 'peft-sft-guides',
  'url': 'https://github.com/huggingface/peft/blob/main/docs/source/accelerate/deepspeed.md',
  'quote': 'In the above example, the memory consumed per GPU is 64 GB (80%) as seen in the screenshot below',
  'printed': '64 GB',
  'measured_bytes': 64000000000,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model llama-2-70b --system 8xH100-80GB --strategy zero3 --micro-batch 8 --seq-len 2048 '
          '--precision mixed --attention flash --gradient-checkpointing --lora --lora-rank 8 --lora-target q_proj '
          '--lora-target k_proj --lora-target v_proj --lora-target o_proj --lora-target gate_proj --lora-target '
          'up_proj --lora-target down_proj --lora-dropout 0.1 --stack transformers==4.39 --format json',
  'assumptions': 'meta-llama/Llama-2-70b-hf, PEFT examples/sft/train.py through SFTTrainer, max_seq_len 2048 with '
                 'packing, --bf16, gradient checkpointing, flash attention 2, LoRA r=8 all-linear, --lora_dropout '
                 '0.1 (run_peft_*.sh); transformers from git main as the guides were written (March 2024: 4.39.dev, '
                 "examples/sft/requirements.txt), 'memory consumed per GPU' with a screenshot of GPU memory usage "
                 "(taken as the process's whole footprint, as nvidia-smi counts it: assumed, the page does not name "
                 'the tool); per_device_train_batch_size 8; ZeRO-3 (zero3_init) on 8x H100 80GB'},
 {'key': 'peft-llama2-70b-qlora-zero3-2gpu',
  'source': 'peft-sft-guides',
  'url': 'https://github.com/huggingface/peft/blob/main/docs/source/accelerate/deepspeed.md',
  'quote': 'In the above example, the memory consumed per GPU is **36.6 GB**.',
  'printed': '36.6 GB',
  'measured_bytes': 36600000000,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model llama-2-70b --gpus 2 --strategy zero3 --micro-batch 2 --seq-len 2048 --precision mixed '
          '--attention flash --gradient-checkpointing --qlora --lora-rank 8 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target o_proj --lora-target gate_proj --lora-target up_proj '
          '--lora-target down_proj --lora-dropout 0.1 --stack transformers==4.39 --format json',
  'assumptions': 'meta-llama/Llama-2-70b-hf, PEFT examples/sft/train.py through SFTTrainer, max_seq_len 2048 with '
                 'packing, --bf16, gradient checkpointing, flash attention 2, LoRA r=8 all-linear, --lora_dropout '
                 '0.1 (run_peft_*.sh); transformers from git main as the guides were written (March 2024: 4.39.dev, '
                 "examples/sft/requirements.txt), 'memory consumed per GPU' with a screenshot of GPU memory usage "
                 "(taken as the process's whole footprint, as nvidia-smi counts it: assumed, the page does not name "
                 'the tool); per_device_train_batch_size 2; QLoRA (NF4, nested quant, bf16 quant storage); ZeRO-3 '
                 '(zero3_init) on 2 GPUs'},
 {'key': 'peft-llama2-70b-lora-fsdp-8gpu',
  'source': 'peft-sft-guides',
  'url': 'https://github.com/huggingface/peft/blob/main/docs/source/accelerate/fsdp.md',
  'quote': 'In the above example, the memory consumed per GPU is  72-80 GB (90-98%) as seen in the screenshot',
  'printed': '72-80 GB',
  'measured_bytes': 76000000000,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model llama-2-70b --system 8xH100-80GB --micro-batch 8 --seq-len 2048 --precision mixed '
          '--attention flash --gradient-checkpointing --lora --lora-rank 8 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target o_proj --lora-target gate_proj --lora-target up_proj --lora-target '
          'down_proj --lora-dropout 0.1 --stack transformers==4.39 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 8\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'meta-llama/Llama-2-70b-hf, PEFT examples/sft/train.py through SFTTrainer, max_seq_len 2048 with '
                 'packing, --bf16, gradient checkpointing, flash attention 2, LoRA r=8 all-linear, --lora_dropout '
                 '0.1 (run_peft_*.sh); transformers from git main as the guides were written (March 2024: 4.39.dev, '
                 "examples/sft/requirements.txt), 'memory consumed per GPU' with a screenshot of GPU memory usage "
                 "(taken as the process's whole footprint, as nvidia-smi counts it: assumed, the page does not name "
                 'the tool); per_device_train_batch_size 8; FSDP1 FULL_SHARD, use_orig_params false, mixed_precision '
                 'bf16, on 8x H100 80GB; train.py loads the model with dtype=quant_storage_dtype or torch.float32: '
                 'the frozen base in fp32, as accelwiz counts LoRA under FSDP with mixed precision; the figure is '
                 'the middle of the quoted 72-80 GB (90-98% of the GPU)'},
 {'key': 'peft-llama2-70b-qlora-fsdp-2gpu',
  'source': 'peft-sft-guides',
  'url': 'https://github.com/huggingface/peft/blob/main/docs/source/accelerate/fsdp.md',
  'quote': 'When disabling CPU offloading, the GPU memory usage is  **35.6 GB/ GPU**.',
  'printed': '35.6 GB',
  'measured_bytes': 35600000000,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model llama-2-70b --gpus 2 --micro-batch 2 --seq-len 2048 --precision bf16 --attention flash '
          '--gradient-checkpointing --qlora --lora-rank 8 --lora-target q_proj --lora-target k_proj --lora-target '
          'v_proj --lora-target o_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.39 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'meta-llama/Llama-2-70b-hf, PEFT examples/sft/train.py through SFTTrainer, max_seq_len 2048 with '
                 'packing, --bf16, gradient checkpointing, flash attention 2, LoRA r=8 all-linear, --lora_dropout '
                 '0.1 (run_peft_*.sh); transformers from git main as the guides were written (March 2024: 4.39.dev, '
                 "examples/sft/requirements.txt), 'memory consumed per GPU' with a screenshot of GPU memory usage "
                 "(taken as the process's whole footprint, as nvidia-smi counts it: assumed, the page does not name "
                 'the tool); per_device_train_batch_size 2; QLoRA with bf16 quant storage and a bf16 model (pure '
                 'bf16); FSDP1 FULL_SHARD on 2 GPUs, fsdp_offload_params false'},
 {'key': 'peft-llama2-70b-qlora-fsdp-2gpu-offload',
  'source': 'peft-sft-guides',
  'url': 'https://github.com/huggingface/peft/blob/main/docs/source/accelerate/fsdp.md',
  'quote': 'In the above example, the memory consumed per GPU is **19.6 GB** while CPU RAM usage is around **107 '
           'GB**.',
  'printed': '19.6 GB',
  'measured_bytes': 19600000000,
  'metric': 'nvidia-smi',
  'argv': 'estimate --model llama-2-70b --gpus 2 --micro-batch 2 --seq-len 2048 --precision bf16 --attention flash '
          '--gradient-checkpointing --qlora --lora-rank 8 --lora-target q_proj --lora-target k_proj --lora-target '
          'v_proj --lora-target o_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.39 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: true\n',
  'assumptions': 'meta-llama/Llama-2-70b-hf, PEFT examples/sft/train.py through SFTTrainer, max_seq_len 2048 with '
                 'packing, --bf16, gradient checkpointing, flash attention 2, LoRA r=8 all-linear, --lora_dropout '
                 '0.1 (run_peft_*.sh); transformers from git main as the guides were written (March 2024: 4.39.dev, '
                 "examples/sft/requirements.txt), 'memory consumed per GPU' with a screenshot of GPU memory usage "
                 "(taken as the process's whole footprint, as nvidia-smi counts it: assumed, the page does not name "
                 'the tool); per_device_train_batch_size 2; QLoRA, bf16 quant storage; FSDP1 FULL_SHARD on 2x 24GB '
                 'GPUs with fsdp_offload_params true',
  'known_miss': "the page's figure is not the step's: this setting, run on an H200 as rank 0 of two (Answer.AI's "
                "train.py path with PEFT's r=8 on every linear, benchmarks/gpu_fsdp_answerai.py), reserved 12.1 GiB "
                "at most, 13.0 with the runtime beside it, 5.2 GiB under the quoted 19.6 GB (18.3 GiB); accelwiz's "
                "15.1 GiB is above the step. The page says offload's savings are 'untested at present'; what it read "
                'beyond the step (its 2024 stack, loading, the final full-state-dict save) is not measured here'},
 {'key': 'torchtune-llama3.1-70b-lora-8gpu',
  'source': 'torchtune-readme',
  'url': 'https://github.com/pytorch/torchtune/blob/0031bfb080bd35ec533c412df883cf2bf7bf7fe4/README.md',
  'quote': '| Llama 3.1 70B | LoRA | 8x A100 | 27.6 GiB  | 3497  |',
  'printed': '27.6 GiB',
  'measured_bytes': 29635274342,
  'metric': 'allocated',
  'argv': 'estimate --model llama-3.1-70b --system 8xA100-80GB --strategy fsdp --micro-batch 2 --seq-len 2048 '
          '--precision bf16 --attention flash --gradient-checkpointing --lora --lora-rank 16 --lora-target q_proj '
          '--lora-target v_proj --lora-target o_proj --lora-target gate_proj --lora-target up_proj --lora-target '
          'down_proj --format json',
  'assumptions': "torchtune README 'Memory and training speed': batch size 2, no gradient accumulation, packed to "
                 'sequence length 2048, torch.compile; recipe defaults (bf16, activation checkpointing, '
                 'CEWithChunkedOutputLoss); lora_dropout 0.0 (recipes/configs/llama3_1/8B_lora.yaml at that commit); '
                 "'Peak Memory per GPU' from torchtune's memory stats (torch allocator, no CUDA context; which of "
                 'active/allocated/reserved is not said: compared with allocated); '
                 'recipes/configs/llama3_1/70B_lora.yaml: LoRA r=16 on q, v, output projections and the MLP, fused '
                 'AdamW, FSDP2 on 8 GPUs',
  'known_miss': "torchtune's CEWithChunkedOutputLoss upcasts and frees the logits chunk by chunk; accelwiz models "
                'the HF loss (full-vocabulary fp32 upcast, log-softmax and its gradient at once: about 6 GiB here) '
                '(counted on every GPU); FSDP2 keeps the root unit (embeddings, LM head: 2.1B parameters) gathered '
                'from forward to backward, which accelwiz now counts: the +14.5% this row had was that 4 GiB missing '
                'against the 6 GiB loss tail counted in excess'},
 {'key': 'torchtune-llama3.1-8b-qlora-1gpu',
  'source': 'torchtune-readme',
  'url': 'https://github.com/pytorch/torchtune/blob/0031bfb080bd35ec533c412df883cf2bf7bf7fe4/README.md',
  'quote': '| Llama 3.1 8B | QLoRA | 1x 4090 | 7.4 GiB | 2413  |',
  'printed': '7.4 GiB',
  'measured_bytes': 7945689497,
  'metric': 'allocated',
  'argv': 'estimate --model llama-3.1-8b --system 1xRTX4090 --strategy single --micro-batch 2 --seq-len 2048 '
          '--precision bf16 --attention flash --gradient-checkpointing --qlora --lora-rank 8 --lora-target q_proj '
          '--lora-target k_proj --lora-target v_proj --lora-target o_proj --lora-target gate_proj --lora-target '
          'up_proj --lora-target down_proj --format json',
  'assumptions': "torchtune README 'Memory and training speed': batch size 2, no gradient accumulation, packed to "
                 'sequence length 2048, torch.compile; recipe defaults (bf16, activation checkpointing, '
                 'CEWithChunkedOutputLoss); lora_dropout 0.0 (recipes/configs/llama3_1/8B_lora.yaml at that commit); '
                 "'Peak Memory per GPU' from torchtune's memory stats (torch allocator, no CUDA context; which of "
                 'active/allocated/reserved is not said: compared with allocated); '
                 'recipes/configs/llama3_1/8B_qlora_single_device.yaml: torchao NF4 base, LoRA r=8 on q, k, v, '
                 'output projections and the MLP, fused AdamW, one RTX 4090',
  'known_miss': "torchtune's CEWithChunkedOutputLoss upcasts and frees the logits chunk by chunk; accelwiz models "
                'the HF loss (full-vocabulary fp32 upcast, log-softmax and its gradient at once: about 6 GiB here); '
                'torch.compile also fuses the RMSNorm upcasts'},
 {'key': 'torchtune-llama3.1-8b-lora-1gpu',
  'source': 'torchtune-readme',
  'url': 'https://github.com/pytorch/torchtune/blob/0031bfb080bd35ec533c412df883cf2bf7bf7fe4/README.md',
  'quote': '| Llama 3.1 8B | LoRA | 1x 4090 |  16.2 GiB | 3083 |',
  'printed': '16.2 GiB',
  'measured_bytes': 17394617548,
  'metric': 'allocated',
  'argv': 'estimate --model llama-3.1-8b --system 1xRTX4090 --strategy single --micro-batch 2 --seq-len 2048 '
          '--precision bf16 --attention flash --gradient-checkpointing --lora --lora-rank 8 --lora-target q_proj '
          '--lora-target v_proj --lora-target o_proj --lora-target gate_proj --lora-target up_proj --lora-target '
          'down_proj --format json',
  'assumptions': "torchtune README 'Memory and training speed': batch size 2, no gradient accumulation, packed to "
                 'sequence length 2048, torch.compile; recipe defaults (bf16, activation checkpointing, '
                 'CEWithChunkedOutputLoss); lora_dropout 0.0 (recipes/configs/llama3_1/8B_lora.yaml at that commit); '
                 "'Peak Memory per GPU' from torchtune's memory stats (torch allocator, no CUDA context; which of "
                 'active/allocated/reserved is not said: compared with allocated); '
                 'recipes/configs/llama3_1/8B_lora_single_device.yaml: LoRA r=8 on q, v, output projections and the '
                 'MLP, fused AdamW, one RTX 4090',
  'known_miss': "torchtune's CEWithChunkedOutputLoss upcasts and frees the logits chunk by chunk; accelwiz models "
                'the HF loss (full-vocabulary fp32 upcast, log-softmax and its gradient at once: about 6 GiB here); '
                'torch.compile also fuses the RMSNorm upcasts'},
 {'key': 'torchtune-llama3.1-405b-qlora-8gpu',
  'source': 'torchtune-readme',
  'url': 'https://github.com/pytorch/torchtune/blob/0031bfb080bd35ec533c412df883cf2bf7bf7fe4/README.md',
  'quote': '| Llama 3.1 405B | QLoRA | 8x A100 | 44.8 GB  | 653  |',
  'printed': '44.8 GB',
  'measured_bytes': 48103633715,
  'metric': 'allocated',
  'argv': 'estimate --model llama-3.1-405b --system 8xA100-80GB --strategy fsdp --micro-batch 2 --seq-len 2048 '
          '--precision bf16 --attention flash --gradient-checkpointing --qlora --lora-rank 16 --lora-target q_proj '
          '--lora-target v_proj --lora-target o_proj --lora-target gate_proj --lora-target up_proj --lora-target '
          'down_proj --format json',
  'assumptions': "torchtune README 'Memory and training speed': batch size 2, no gradient accumulation, packed to "
                 'sequence length 2048, torch.compile; recipe defaults (bf16, activation checkpointing, '
                 'CEWithChunkedOutputLoss); lora_dropout 0.0 (recipes/configs/llama3_1/8B_lora.yaml at that commit); '
                 "'Peak Memory per GPU' from torchtune's memory stats (torch allocator, no CUDA context; which of "
                 'active/allocated/reserved is not said: compared with allocated); '
                 'recipes/configs/llama3_1/405B_qlora.yaml: torchao NF4 base, LoRA r=16 on q, v, output projections '
                 "and the MLP, fused AdamW, FSDP2 without CPU offload on 8 A100s; the table prints 'GB' in this row "
                 "and 'GiB' in the others, torchtune's memory stats are in GiB: read as GiB",
  'known_miss': "torchtune's CEWithChunkedOutputLoss upcasts and frees the logits chunk by chunk; accelwiz models "
                'the HF loss (full-vocabulary fp32 upcast, log-softmax and its gradient at once: about 6 GiB here) '
                "(counted on every GPU); with FSDP2's root unit (embeddings, LM head, 4.2B parameters in 16-bit) now "
                "counted gathered, the loss tail is what the estimate has in excess; and torchao's NF4Tensor shards "
                'its scalers with the packed weight (its FSDP2 all-gather extension), where accelwiz counts '
                "bitsandbytes' quantization state whole on every rank (+5.2 GiB here)"},
 {'key': 'answerai-llama2-7b-qlora-b1-512',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    |      512       |       4.98        |  1,082   | (Llama-2 7B with a batch size of one)',
  'printed': '4.98',
  'measured_bytes': 5347234283,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 1 --seq-len 512 --precision bf16 --attention '
          'sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj --lora-dropout '
          '0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-qlora-b1-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    |      2048      |       5.21        |  1,564   | (Llama-2 7B with a batch size of one)',
  'printed': '5.21',
  'measured_bytes': 5594194903,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 1 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-lora-b1-512',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|    LoRA    |      512       |       10.24       |  2,597   | (Llama-2 7B with a batch size of one)',
  'printed': '10.24',
  'measured_bytes': 10995116277,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 1 --seq-len 512 --precision bf16 --attention '
          'sdpa --gradient-checkpointing --lora --lora-rank 64 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj --lora-dropout '
          '0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-lora-b1-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|    LoRA    |      2048      |       10.22       |  3,090   | (Llama-2 7B with a batch size of one)',
  'printed': '10.22',
  'measured_bytes': 10973641441,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 1 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --lora --lora-rank 64 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj --lora-dropout '
          '0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-lora-b1-512-allocated',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': 'NB: While the reported peak reserved memory for both 512 and 2048 context length is roughly the same, '
           'the peak allocated memory is 8.28 GiB vs 9.16 GiB, respectively.',
  'printed': '8.28',
  'measured_bytes': 8890582302,
  'metric': 'allocated',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 1 --seq-len 512 --precision bf16 --attention '
          'sdpa --gradient-checkpointing --lora --lora-rank 64 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj --lora-dropout '
          '0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-lora-b1-2048-allocated',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': 'NB: While the reported peak reserved memory for both 512 and 2048 context length is roughly the same, '
           'the peak allocated memory is 8.28 GiB vs 9.16 GiB, respectively.',
  'printed': '9.16',
  'measured_bytes': 9835475107,
  'metric': 'allocated',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 1 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --lora --lora-rank 64 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj --lora-dropout '
          '0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-qlora-b4-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    |     4      |       11.22       |   998    | (Llama-2 7B with Context Length of 2048)',
  'printed': '11.22',
  'measured_bytes': 12047383265,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 4 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-qlora-b10-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    |     10     |       20.97       |   936    | (Llama-2 7B with Context Length of 2048)',
  'printed': '20.97',
  'measured_bytes': 22516366049,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 10 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-lora-b4-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|    LoRA    |     4      |       16.14       |  1,366   | (Llama-2 7B with Context Length of 2048)',
  'printed': '16.14',
  'measured_bytes': 17330193039,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 4 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --lora --lora-rank 64 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj --lora-dropout '
          '0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-lora-b6-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|    LoRA    |     6      |       21.35       |  1,199   | (Llama-2 7B with Context Length of 2048)',
  'printed': '21.35',
  'measured_bytes': 22924387942,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --micro-batch 6 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --lora --lora-rank 64 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj --lora-dropout '
          '0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: false\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40)'},
 {'key': 'answerai-llama2-7b-qlora-ddp-b8-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    | True |     8      |       20.94       |   875    | (DDP column)',
  'printed': '20.94',
  'measured_bytes': 22484153794,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --strategy ddp --micro-batch 8 --seq-len 2048 --precision '
          'bf16 --attention sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 "the benchmarks February-March 2024, before 4.40); sharding_strategy 'ddp' (FSDP NO_SHARD: every "
                 'GPU holds the whole model)'},
 {'key': 'answerai-llama2-7b-lora-ddp-b4-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|    LoRA    | True |     4      |       22.04       |   881    | (DDP column)',
  'printed': '22.04',
  'measured_bytes': 23665269800,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX3090 --strategy ddp --micro-batch 4 --seq-len 2048 --precision '
          'bf16 --attention sdpa --gradient-checkpointing --lora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 "the benchmarks February-March 2024, before 4.40); sharding_strategy 'ddp' (FSDP NO_SHARD: every "
                 'GPU holds the whole model)'},
 {'key': 'answerai-llama2-7b-lora-offload-b10-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|    LoRA    |    True     | False |     10     |       22.69       |   482    |',
  'printed': '22.69',
  'measured_bytes': 24363201986,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX4090 --micro-batch 10 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --lora --lora-rank 64 --lora-target q_proj --lora-target k_proj '
          '--lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj --lora-dropout '
          '0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: true\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40); use_cpu_offload true (FSDP1 CPUOffload)'},
 {'key': 'answerai-llama2-7b-qlora-offload-b12-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    |    True     | False |     12     |       22.38       |   464    |',
  'printed': '22.38',
  'measured_bytes': 24030342021,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-7b --system 2xRTX4090 --micro-batch 12 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: true\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40); use_cpu_offload true (FSDP1 CPUOffload)'},
 {'key': 'answerai-llama2-70b-qlora-offload-b2-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    |    True     |     2      |       14.92       |  11,795  | (Llama-2 70B with Context '
           'Length of 2048)',
  'printed': '14.92',
  'measured_bytes': 16020228014,
  'metric': 'reserved',
  'argv': 'estimate --model llama-2-70b --system 2xRTX3090 --micro-batch 2 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: true\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40); use_cpu_offload true (FSDP1 CPUOffload)'},
 {'key': 'answerai-mistral-7b-qlora-offload-b12-2048',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    |    True     |     12     |     2,048      |       22.54       |   483    |',
  'printed': '22.54',
  'measured_bytes': 24202140712,
  'metric': 'reserved',
  'argv': 'estimate --model mistral-7b --system 2xRTX4090 --micro-batch 12 --seq-len 2048 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: true\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 "the benchmarks February-March 2024, before 4.40); Mistral 7B v0.2 Base (the v0.1 preset's shapes; "
                 "v0.2 drops the sliding window, which does not change sdpa's memory at 2,048 tokens); "
                 'use_cpu_offload true'},
 {'key': 'answerai-mistral-7b-qlora-offload-b1-24576',
  'source': 'answerai-fsdp-qlora',
  'url': 'https://github.com/AnswerDotAI/fsdp_qlora/blob/main/benchmarks_03_2024.md',
  'quote': '|   QLoRA    |    True     |     1      |     24,576     |       22.54       |  7,809   |',
  'printed': '22.54',
  'measured_bytes': 24202140712,
  'metric': 'reserved',
  'argv': 'estimate --model mistral-7b --system 2xRTX4090 --micro-batch 1 --seq-len 24576 --precision bf16 '
          '--attention sdpa --gradient-checkpointing --qlora --lora-rank 64 --lora-target q_proj --lora-target '
          'k_proj --lora-target v_proj --lora-target gate_proj --lora-target up_proj --lora-target down_proj '
          '--lora-dropout 0.1 --stack transformers==4.37 --format json',
  'config': 'distributed_type: FSDP\n'
            'mixed_precision: bf16\n'
            'num_machines: 1\n'
            'num_processes: 2\n'
            'fsdp_config:\n'
            '  fsdp_version: 1\n'
            '  fsdp_sharding_strategy: FULL_SHARD\n'
            '  fsdp_use_orig_params: false\n'
            '  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n'
            '  fsdp_offload_params: true\n',
  'assumptions': 'Answer.AI fsdp_qlora train.py (February-March 2024): dummy dataset (every sample longer than the '
                 "context, truncated to it: fixed length), precision 'bf16' (model, LoRA adapters, gradients and "
                 'AdamW states in bf16, no FSDP MixedPrecision), PEFT LoRA r=64 alpha 16 dropout 0.1 on q, k, v, '
                 "gate, up and down projections (lora_target_modules 'all'; o_proj not adapted), QLoRA: bitsandbytes "
                 'NF4 Linear4bit with quant_storage bf16 and its default double quantization on every block linear, '
                 'sdpa attention, reentrant activation checkpointing of each decoder layer, torch AdamW, FSDP1 '
                 'FULL_SHARD (use_orig_params false, limit_all_gathers, sync_module_states) on 2 GPUs, or NO_SHARD '
                 "for the 'DDP' rows; 'Peak Memory' is rank 0's peak reserved memory (the page: 'the reported peak "
                 "reserved memory'), in GiB; transformers 4.37 (the README then: 'transformers!=4.38.*,!=4.39.*', "
                 'the benchmarks February-March 2024, before 4.40); Mistral 7B v0.2 Base (no sliding window: full '
                 'causal attention over 24,576 tokens, memory-efficient sdpa); use_cpu_offload true'}]

# QLoRA rows whose script leaves the non-quantized parameters (embeddings, norms, lm_head) and the adapters in
# bf16: Answer.AI's train.py and torchtune never call PEFT's prepare_model_for_kbit_training, and TRL (0.8) skipped
# it for the FSDP guide's sharded QLoRA. The argv says so with --no-kbit-prepare (issue 28, cause 4; the flag
# since b66131e; before it, these rows listed it as unexpressed).
for _row in ROWS:
    if "--qlora" in _row.get("argv", "") and _row["source"] in (
            "answerai-fsdp-qlora", "peft-sft-guides", "torchtune-readme") and "zero3" not in _row["key"]:
        _row["argv"] = _row["argv"].replace(" --format json", " --no-kbit-prepare --format json")
