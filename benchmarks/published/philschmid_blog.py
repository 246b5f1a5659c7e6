"""Frozen: Philipp Schmid's fine-tuning guides (philschmid.de), read in the notebooks they publish.

Three posts, three sources (one page each), every one with its code in philschmid/deep-learning-pytorch-huggingface
at the commit that wrote the figure (the post on philschmid.de is that notebook rendered; its rows pin the code):

* `philschmid-fsdp-qlora-llama3-2024`: "Efficiently scale distributed training Llama 3, PyTorch FSDP and Q-Lora"
  (training/fsdp-qlora-distributed-llama3.ipynb and scripts/run_fsdp_qlora.py, 4a0caad, April 2024): Llama 3 70B
  QLoRA under the Trainer's FSDP1 with CPU offload on 4 x A10G, "22 GB/GPU" (one measured row).
* `philschmid-llms-2025-guide`: "How to fine-tune open LLMs in 2025 with Hugging Face" (fine-tune-llms-in-2025.ipynb,
  scripts/run_sft.py, receipes/llama-3-1-8b-qlora.yaml, 391f19b, Dec 2024): a table of Llama-3.1-8B QLoRA runs on
  1, 4 and 8 L4 24GB with their train times (verdict rows: each ran), and one Spectrum run (not expressible).
* `philschmid-llms-2024-guide`: "How to Fine-Tune LLMs in 2024 with Hugging Face" (fine-tune-llms-in-2024-with-trl
  .ipynb): CodeLlama-7B QLoRA on a g5.2xlarge (one A10G, 1e1bcfe, Jan 2024) and Llama-3.1-8B QLoRA on a g6.2xlarge
  (one L4, 10ad907, Aug 2024), each "took" a stated time there (verdict rows).

What the code does, read at each commit:

FSDP (run_fsdp_qlora.py): NF4 with double quantization, compute and quant storage bfloat16, the model loaded in
bfloat16 with sdpa, `use_cache=False`, `model.gradient_checkpointing_enable()` and reentrant checkpointing
(`use_reentrant: True` set in __main__); LoraConfig(r=16, alpha 8, dropout 0.05, all-linear); trl 0.8.6's
SFTTrainer with packing=True; launched as `ACCELERATE_USE_FSDP=1 FSDP_CPU_RAM_EFFICIENT_LOADING=1 torchrun
--nproc_per_node=4`: rank 0 loads on the CPU, the others on meta, so SFTTrainer sees a sharded QLoRA
(`is_sharded_qlora`: a Params4bit on the CPU) and skips prepare_model_for_kbit_training (--no-kbit-prepare). The
YAML: `fsdp: "full_shard auto_wrap offload"`, batch 1, accumulation 2, adamw_torch, bf16 (autocast), tf32. Its
sequence length: the YAML's key is `max_seq_len: 3072`, the script's field is `max_seq_length` (default 512); trl
0.8.6's YamlConfigParser.merge_dataclasses sets only fields named in the YAML, so the run as shipped packs 512-token
sequences, while the page says the 22 GB was "with a sequence length of 3072". Rule fixed before scoring: the
argv says what the code at the commit does (512); the page's 3072 is listed in `unexpressed`.
Pinned versions: torch 2.2.2, transformers 4.40.0, accelerate 0.29.3, bitsandbytes 0.43.1, trl 0.8.6, peft 0.10.0.

2025 guide (run_sft.py + the recipe, table rows vary batch, accumulation, packing, flash attention and Liger):
Llama-3.1-8B in NF4 with double quantization, compute dtype and quant storage bfloat16, `torch_dtype: bfloat16`,
LoRA r=16 alpha 16 on all-linear with trl 0.12.1's ModelConfig dropout 0.05, `lora_modules_to_save: ["lm_head",
"embed_tokens"]` (the table's note: "Q-Lora included training the embedding layer and the lm_head"), max_seq_length
1024, gradient checkpointing (use_reentrant false), bf16 and tf32, adamw_torch (TrainingArguments' default).
SFTTrainer 0.12.1 on one GPU: the 4-bit model is on CUDA, so prepare_model_for_kbit_training runs (k-bit prepare),
then peft_module_casting_to_bf16 (bf16 and not sharded). Packing ✅: every sequence 1,024 tokens; ❌: each batch
padded to its longest, up to 1,024 (--varying-lengths). Flash Attention ❌ read as sdpa (transformers 4.46's
default), ✅ as flash_attention_2 (the recipe's). Liger ✅: `use_liger` loads AutoLigerKernelForCausalLM, whose
fused linear cross-entropy makes no logits (--loss-kernel liger). The 4 and 8 GPU rows: "Deepspeed (0.15.4) with
ZeRO3 and Hugging Face Accelerate" (configs/accelerate_configs/deepspeed_zero3.yaml: zero3_init_flag true,
mixed_precision bf16, no offload). Pinned: torch 2.4.1, transformers 4.46.3, accelerate 1.1.1, bitsandbytes 0.44.1,
trl 0.12.1, peft 0.13.2, liger-kernel 0.4.2, deepspeed 0.15.4.

2024 guide (the notebook's own cells): NF4 with double quantization, compute dtype bfloat16, `device_map="auto"`,
`torch_dtype=torch.bfloat16`, flash_attention_2; LoraConfig(r=256, alpha 128, dropout 0.05, all-linear);
TrainingArguments with gradient checkpointing, adamw_torch_fused (--optimizer-kernel fused), bf16, tf32,
max_grad_norm 0.3; SFTTrainer with packing=True (every sequence max_seq_length tokens). January: codellama/
CodeLlama-7b-hf, batch 3 x accumulation 2, max_seq_length 3072; torch 2.1.2, transformers 4.36.2, accelerate 0.26.1,
bitsandbytes 0.42.0, trl and peft from git (a3c5b71, 4a15595). August: meta-llama/Meta-Llama-3.1-8B, batch 1 x
accumulation 8, max_seq_length 2048; torch 2.4.0, transformers 4.44.2, accelerate 0.33.0, bitsandbytes 0.43.3,
trl 0.9.6, peft 0.12.0.
"""

from __future__ import annotations

_REPO = "https://github.com/philschmid/deep-learning-pytorch-huggingface/blob/{commit}/training/{path}"
_FSDP_COMMIT = "4a0caadaf58e6f9ac64be95250ac5a49193b308b"
_C2025 = "391f19ba06c128a2a290b3bdcb717ad6ff794fd7"
_C2024_JAN = "1e1bcfe69909c320a7ed8785a5c474d093285283"
_C2024_AUG = "10ad907ef4c9f0d2b3fc82fa692c2ee8fe677bf1"

_FSDP_QUOTE = ("* FSDP + Q-Lora + CPU offloading needs 4x24GB GPUs, with 22 GB/GPU and 127 GB CPU RAM with a "
               "sequence length of 3072 and a batch size of 1.")

ROWS = [
    {"key": "philschmid-llama-3-70b-qlora-fsdp1-offload-4xa10g", "source": "philschmid-fsdp-qlora-llama3-2024",
     "url": _REPO.format(commit=_FSDP_COMMIT, path="fsdp-qlora-distributed-llama3.ipynb"),
     "code_url": _REPO.format(commit=_FSDP_COMMIT, path="scripts/run_fsdp_qlora.py"),
     "quote": _FSDP_QUOTE, "printed": "22 GB", "measured_bytes": 22 * 2**30, "metric": "nvidia-smi",
     "argv": "estimate --model llama-3-70b --system 1xA10G --gpus 4 --strategy fsdp_full --fsdp-version 1 "
             "--offload-param cpu --qlora --no-kbit-prepare --lora-rank 16 --lora-dropout 0.05 --optimizer adamw "
             "--micro-batch 1 --seq-len 512 --fixed-lengths --gradient-accumulation 2 --gradient-checkpointing "
             "--precision mixed --attention sdpa --stack transformers==4.40 --stack bitsandbytes==0.43.1 "
             "--stack accelerate==0.29.3 --stack torch==2.2.2 --format json",
     "assumptions": "Philipp Schmid's FSDP + Q-Lora post (the notebook and run_fsdp_qlora.py at 4a0caad): "
                    "meta-llama/Meta-Llama-3-70b (the alias's Llama 3.1 70B shapes, the same tensors) in NF4 with "
                    "bf16 quant storage, the Trainer's FSDP1 full_shard auto_wrap with offload (parameters, "
                    "gradients and optimizer on the CPU), no k-bit preparation (sharded QLoRA), LoRA r=16 on every "
                    "linear, dropout 0.05, adamw_torch, bf16 autocast, reentrant checkpointing, batch 1 x "
                    "accumulation 2 of packed 512-token sequences (the script's default: the YAML's max_seq_len "
                    "key names no field), sdpa; 4 x A10G 24GB. The figure '22 GB/GPU': read as each GPU's memory "
                    "in use (nvidia-smi, GiB as the page's other 'GB'); the tool is not named",
     "unexpressed": ["the page's 'sequence length of 3072': the shipped YAML's `max_seq_len` is not the script's "
                     "`max_seq_length` (default 512), so the code packs 512 tokens; the argv says the code",
                     "'22 GB' rounded, tool unnamed (nvidia-smi or a peak, GB or GiB)"]},
]

# The page's header, verbatim (two of its cells start with a no-break space, \xa0)
_TABLE_HEAD = ("| Model | Train samples | Hardware | Method | train sequence length | per device batch size |\xa0"
               "gradient accumulation  | packing |\xa0Flash Attention | Liger Kernels | est. optimization steps | "
               "est. train time |")
_2025_STACK = ("--stack transformers==4.46.3 --stack bitsandbytes==0.44.1 --stack accelerate==1.1.1 "
               "--stack torch==2.4.1 --stack trl==0.12.1")  # trl: sayable since the stack took it (issue 28)
# lora_modules_to_save lm_head and embed_tokens: said with --lora-modules-to-save since the CLI counts PEFT's trainable
# copies (estimate/modules_to_save.py; bf16 after TRL 0.12.1's peft_module_casting_to_bf16)
_2025_SETTINGS = ("Philipp Schmid's 2025 guide (fine-tune-llms-in-2025.ipynb, run_sft.py and "
                  "receipes/llama-3-1-8b-qlora.yaml at 391f19b): Llama-3.1-8B in NF4 with double quantization "
                  "(bf16 compute and quant storage), LoRA r=16 on all-linear, dropout 0.05, embed_tokens and "
                  "lm_head in modules_to_save, gradient checkpointing, bf16, adamw_torch, trl 0.12.1 SFTTrainer; "
                  "{row}; stated to have run there ('est. train time' {time}; no peak printed)")


def _row_2025(key: str, line: str, hardware: str, time: str, what: str, argv: str, extra: list[str]) -> dict:
    return {"key": key, "source": "philschmid-llms-2025-guide",
            "url": _REPO.format(commit=_C2025, path="fine-tune-llms-in-2025.ipynb"),
            "code_url": _REPO.format(commit=_C2025, path="scripts/run_sft.py"),
            "quote": line, "quote_columns": _TABLE_HEAD, "printed": hardware, "measured_bytes": None, "metric": "reserved",
            "ran": True, "argv": argv, "assumptions": _2025_SETTINGS.format(row=what, time=time),
            "unexpressed": list(extra)}


def _argv_2025(system: str, strategy: str, batch: int, accum: int, lengths: str, attention: str,
               loss: str) -> str:
    return (f"estimate --model llama-3.1-8b --system {system} --strategy {strategy} --qlora --lora-rank 16 "
            f"--lora-dropout 0.05 --lora-modules-to-save embed_tokens --lora-modules-to-save lm_head "
            f"--optimizer adamw --micro-batch {batch} --gradient-accumulation {accum} "
            f"--seq-len 1024 {lengths} --gradient-checkpointing --precision mixed --attention {attention} "
            f"{loss}{_2025_STACK} --format json")


_PADDED = "the dataset's real lengths (Orca-Math with the guide's system prompt): the argv says the 1,024 cap"
ROWS += [
    _row_2025("philschmid-2025-llama-3.1-8b-qlora-1xl4-bs1", "| Llama-3.1-8B | 10,000 | 1x L4 24GB | Q-LoRA | 1024 "
              "| 1 | 2 | ❌ | ❌ | ❌ | 5000 | ~360 min |", "1x L4 24GB", "~360 min",
              "one L4, batch 1 x accumulation 2, no packing (each batch padded to its longest, up to 1,024), sdpa, "
              "no Liger", _argv_2025("1xL4", "single", 1, 2, "--varying-lengths", "sdpa", ""), [_PADDED]),
    _row_2025("philschmid-2025-llama-3.1-8b-qlora-1xl4-bs2-packed", "| Llama-3.1-8B | 10,000 | 1x L4 24GB | Q-LoRA "
              "| 1024 | 2 | 2 | ✅ | ❌ | ❌ | 1352 | ~290 min |", "1x L4 24GB", "~290 min",
              "one L4, batch 2 x accumulation 2 of packed 1,024-token sequences, sdpa, no Liger",
              _argv_2025("1xL4", "single", 2, 2, "--fixed-lengths", "sdpa", ""), []),
    _row_2025("philschmid-2025-llama-3.1-8b-qlora-1xl4-bs2-flash", "| Llama-3.1-8B | 10,000 | 1x L4 24GB | Q-LoRA | "
              "1024 | 2 | 4 | ✅ | ✅ | ❌ | 676 | ~220 min |", "1x L4 24GB", "~220 min",
              "one L4, batch 2 x accumulation 4 of packed 1,024-token sequences, flash attention 2, no Liger",
              _argv_2025("1xL4", "single", 2, 4, "--fixed-lengths", "flash", ""), []),
    _row_2025("philschmid-2025-llama-3.1-8b-qlora-1xl4-bs4-liger", "| Llama-3.1-8B | 10,000 | 1x L4 24GB | Q-LoRA | "
              "1024 | 4 | 4 | ✅ | ✅ | ✅ | 338 | ~135 min |", "1x L4 24GB", "~135 min",
              "one L4, batch 4 x accumulation 4 of packed 1,024-token sequences, flash attention 2, Liger "
              "(AutoLigerKernelForCausalLM: fused linear cross-entropy)",
              _argv_2025("1xL4", "single", 4, 4, "--fixed-lengths", "flash", "--loss-kernel liger "), []),
]
_ZERO3 = ("DeepSpeed ZeRO-3 (accelerate's deepspeed_zero3.yaml: bf16, zero3_init_flag true, no offload) over a 4-bit "
          "base: the CLI's ZeRO-3 QLoRA, however DeepSpeed 0.15.4 places the quantized weights")
# The CLI refuses the argv these two runs need (checked for a usage error only, before any row was scored):
# `--loss-kernel liger` under ZeRO-3 with an untied lm_head ("Liger reads the weight outside the head's forward, so
# ZeRO-3 never gathers it", Liger-Kernel#1048), while the table says both trained. Kept, with the refused argv, as
# not expressible: a refusal that a published run contradicts, unless Liger's fused loss did not apply there.
for _gpus, _time, _steps in ((4, "~33 min", 84), (8, "~18 min", 42)):
    _zero3_row = _row_2025(
        f"philschmid-2025-llama-3.1-8b-qlora-{_gpus}xl4-zero3", f"| Llama-3.1-8B | 10,000 | {_gpus}x L4 24GB | Q-LoRA "
        f"| 1024 | 8 | 2 | ✅ | ✅ | ✅ | {_steps} | {_time} |", f"{_gpus}x L4 24GB", _time,
        f"{_gpus} L4s under DeepSpeed 0.15.4 ZeRO-3 through accelerate, batch 8 x accumulation 2 of packed 1,024-token "
        "sequences per GPU, flash attention 2, Liger",
        _argv_2025(f"1xL4 --gpus {_gpus}", "zero3", 8, 2, "--fixed-lengths", "flash", "--loss-kernel liger "),
        [_ZERO3])
    ROWS.append(_zero3_row)  # refused (Liger under ZeRO-3, an untied head) until b4dec65: now said as it ran
ROWS.append({
    "key": "philschmid-2025-llama-3.1-8b-spectrum-8xl4-zero3", "source": "philschmid-llms-2025-guide",
    "url": _REPO.format(commit=_C2025, path="fine-tune-llms-in-2025.ipynb"),
    "code_url": _REPO.format(commit=_C2025, path="scripts/run_sft.py"),
    "quote": "| Llama-3.1-8B | 10,000 | 8x L4 24GB | Spectrum (30%) | 1024 | 8 | 2 | ✅ | ✅ | ✅ | 42 | ~21 min |",
    "quote_columns": _TABLE_HEAD, "printed": "8x L4 24GB", "measured_bytes": None, "metric": "reserved", "ran": True,
    "argv": None, "not_expressible": "Spectrum: bf16 Llama-3.1-8B with every parameter frozen but the 30% the SNR "
                                     "scan lists by name (setup_model_for_spectrum); the CLI trains all parameters, "
                                     "LoRA adapters or QLoRA adapters",
    "assumptions": _2025_SETTINGS.format(row="Spectrum 30% (receipes/llama-3-1-8b-spectrum.yaml) on 8 L4s under "
                                         "ZeRO-3, batch 8 x accumulation 2, packed, flash attention 2, Liger",
                                         time="~21 min")})

_2024_SETTINGS = ("Philipp Schmid's 2024 guide (fine-tune-llms-in-2024-with-trl.ipynb at {commit}): {model} in NF4 "
                  "with double quantization (bf16 compute), device_map auto, bf16 weights, flash attention 2, LoRA "
                  "r=256 alpha 128 dropout 0.05 on all-linear, gradient checkpointing, adamw_torch_fused, bf16 "
                  "autocast, SFTTrainer packing {seq}-token sequences, batch {batch} x accumulation {accum}; "
                  "transformers {tf}, bitsandbytes {bnb}; stated to have trained there ('{took}'; no peak printed)")


def _row_2024(key: str, commit: str, quote: str, printed: str, model: str, system: str, batch: int, accum: int,
              seq: int, stack: dict, took: str, extra: list[str]) -> dict:
    shown = "codellama/CodeLlama-7b-hf (the llama-2-7b alias's shapes)" if model == "llama-2-7b" else model
    stack_flags = " ".join(f"--stack {name}=={version}" for name, version in stack.items())
    return {"key": key, "source": "philschmid-llms-2024-guide",
            "url": _REPO.format(commit=commit, path="fine-tune-llms-in-2024-with-trl.ipynb"), "quote": quote,
            "printed": printed, "measured_bytes": None, "metric": "reserved", "ran": True,
            "argv": f"estimate --model {model} --system {system} --strategy single --qlora --lora-rank 256 "
                    f"--lora-dropout 0.05 --optimizer adamw --optimizer-kernel fused --micro-batch {batch} "
                    f"--gradient-accumulation {accum} --seq-len {seq} --fixed-lengths --gradient-checkpointing "
                    f"--precision mixed --attention flash {stack_flags} --format json",
            "assumptions": _2024_SETTINGS.format(commit=commit[:7], model=shown, seq=seq, batch=batch, accum=accum,
                                                 tf=stack["transformers"], bnb=stack["bitsandbytes"], took=took),
            "unexpressed": extra}


ROWS += [
    _row_2024("philschmid-2024-codellama-7b-qlora-r256-1xa10g", _C2024_JAN,
              "The training with Flash Attention for 3 epochs with a dataset of 10k samples took 01:29:58 on a "
              "`g5.2xlarge`. The instance costs `1,212$/h` which brings us to a total cost of only `1.8$`.",
              "g5.2xlarge", "llama-2-7b", "1xA10G", 3, 2, 3072,
              {"transformers": "4.36.2", "bitsandbytes": "0.42.0", "accelerate": "0.26.1", "torch": "2.1.2",
               "trl": "0.7.10"},
              "took 01:29:58 on a g5.2xlarge",
              ["codellama/CodeLlama-7b-hf: Llama-2-7B's shapes with a 32,016-token vocabulary (16 rows more than "
               "the alias's 32,000) and rope theta 1e6",
               "trl (a3c5b71, v0.7.10 and two commits: the argv says 0.7.10; its SFTTrainer casts the embedding, "
               "head and LoRA layers to bf16, read there) and peft (4a15595) from git; the LoRA layers' bf16 cast "
               "(until trl 0.9.3) is not said: the adapters are counted fp32"]),
    _row_2024("philschmid-2024-llama-3.1-8b-qlora-r256-1xl4", _C2024_AUG,
              "The training with Flash Attention for 3 epochs with a dataset of 10k samples took 02:05:58 on a "
              "`g6.2xlarge`. The instance costs `1,212$/h` which brings us to a total cost of only `1.8$`.",
              "g6.2xlarge", "llama-3.1-8b", "1xL4", 1, 8, 2048,
              {"transformers": "4.44.2", "bitsandbytes": "0.43.3", "accelerate": "0.33.0", "torch": "2.4.0",
               "trl": "0.9.6"},
              "took 02:05:58 on a g6.2xlarge", []),
]

# Two more posts, registered (sources.py) and written before any of their rows was scored: verdict rows on one A10G
# (AWS g5.2xlarge), each "took" a stated time there.
#
# * `philschmid-llama2-qlora-2023`: "Extended Guide: Instruction-tune Llama 2" (instruction-tune-llama-2-int4.ipynb at
#   b66a122, 2023-07-26, the commit that wrote both times): NousResearch/Llama-2-7b-hf in NF4 with double
#   quantization (bf16 compute), no torch_dtype (its other weights fp32), `prepare_model_for_kbit_training(model)`
#   (peft 0.4.0: gradient checkpointing on), LoraConfig(r=64, alpha 16, dropout 0.1, no target_modules: PEFT's
#   Llama defaults q_proj and v_proj), get_peft_model in the notebook (trl 0.4.7's SFTTrainer then leaves the
#   PeftModel as it is), TrainingArguments(batch 6 with flash attention else 4, accumulation 2, gradient
#   checkpointing, paged_adamw_32bit, bf16 autocast, tf32), SFTTrainer packing 2,048-token sequences. Without flash
#   attention transformers 4.31 runs Llama's eager attention; with it, utils/llama_patch.py replaces LlamaAttention's
#   forward with flash-attn's varlen kernel (q, k, v cast to bf16). transformers 4.31.0, bitsandbytes 0.40.2,
#   accelerate 0.21.0, peft 0.4.0.
# * `philschmid-gemma-chatml-2024`: "How to Fine-Tune Gemma with ChatML and Hugging Face TRL"
#   (gemma-lora-example.ipynb at a624720, 2024-03-01): google/gemma-7b in NF4 with double quantization (bf16
#   compute), torch_dtype bfloat16, flash_attention_2, device_map auto; LoraConfig(r=6, alpha 8, dropout 0.05,
#   all-linear); batch 2 x accumulation 2, gradient checkpointing, adamw_torch_fused, bf16, tf32; SFTTrainer 0.7.11
#   packing 1,512-token sequences (no special tokens added: the vocabulary is not resized). On one GPU SFTTrainer
#   prepares the 4-bit model for k-bit training, then (bf16) peft_module_casting_to_bf16 casts the LoRA layers and the
#   fp32 embedding to bf16 and the norms to fp32 (trl 0.7.11 trainer/utils.py). transformers 4.38.2, bitsandbytes
#   0.42.0, torch 2.1.2, peft 0.8.2.
_C_LLAMA2 = "b66a122e887ac8727d220a84e96dd48fee307490"
_C_GEMMA = "a624720906dbaf57ee4b4af84e5dc1138116b71d"
_LLAMA2_SETTINGS = ("Philipp Schmid's 'Extended Guide: Instruction-tune Llama 2' (instruction-tune-llama-2-int4.ipynb "
                    "at b66a122): Llama-2-7B in NF4 with double quantization (bf16 compute) over fp32 non-quantized "
                    "weights, prepare_model_for_kbit_training (gradient checkpointing), LoRA r=64 alpha 16 dropout "
                    "0.1 on q_proj and v_proj (fp32 adapters), paged_adamw_32bit, bf16 autocast, batch {batch} x "
                    "accumulation 2 of packed 2,048-token sequences, {attention}; transformers 4.31.0, "
                    "bitsandbytes 0.40.2; one A10G (g5.2xlarge); stated to have trained there ('{took}'; no peak "
                    "printed)")
for _fa, _batch, _attention, _took in (
        (False, 4, "eager", "The training without Flash Attention enabled took 03:08:00 on a `g5.2xlarge`."),
        (True, 6, "flash", "The training with Flash Attention enabled took 02:08:00 on a `g5.2xlarge`.")):
    ROWS.append({
        "key": f"philschmid-llama-2-7b-qlora-1xa10g-{'flash-bs6' if _fa else 'eager-bs4'}",
        "source": "philschmid-llama2-qlora-2023",
        "url": _REPO.format(commit=_C_LLAMA2, path="instruction-tune-llama-2-int4.ipynb"),
        "quote": _took, "printed": "g5.2xlarge", "measured_bytes": None, "metric": "reserved", "ran": True,
        "argv": "estimate --model llama-2-7b --system 1xA10G --strategy single --qlora --lora-rank 64 "
                "--lora-target q_proj --lora-target v_proj --lora-dropout 0.1 --optimizer paged-adamw "
                f"--micro-batch {_batch} --gradient-accumulation 2 --seq-len 2048 --fixed-lengths "
                f"--gradient-checkpointing --precision mixed --attention {_attention} --stack transformers==4.31 "
                "--stack bitsandbytes==0.40.2 --stack accelerate==0.21.0 --format json",
        "assumptions": _LLAMA2_SETTINGS.format(
            batch=_batch, took=_took.split(" took ")[1].rstrip("."),
            attention="flash-attn through utils/llama_patch.py" if _fa else "eager attention (transformers 4.31)"),
        "unexpressed": ["peft 0.4.0's prepare_model_for_kbit_training with reentrant checkpointing (transformers "
                        "4.31's default)"] + (["llama_patch.py's flash-attn forward: q, k and v cast to bf16 and "
                                               "packed for flash_attn_varlen_qkvpacked_func (the argv's --attention "
                                               "flash is transformers' own flash_attention_2)"] if _fa else [])})
ROWS.append({
    "key": "philschmid-gemma-7b-qlora-r6-1xa10g", "source": "philschmid-gemma-chatml-2024",
    "url": _REPO.format(commit=_C_GEMMA, path="gemma-lora-example.ipynb"),
    "quote": "The training with Flash Attention for 3 epochs with a dataset of 15k samples took 4:14:36 on a "
             "`g5.2xlarge`. The instance costs `1.21$/h` which brings us to a total cost of only ~`5.3$`.",
    "printed": "g5.2xlarge", "measured_bytes": None, "metric": "reserved", "ran": True,
    "argv": "estimate --model benchmarks/published/models/gemma-7b/config.json --system 1xA10G --strategy single "
            "--qlora --lora-rank 6 --lora-dropout 0.05 --optimizer adamw --optimizer-kernel fused --micro-batch 2 "
            "--gradient-accumulation 2 --seq-len 1512 --fixed-lengths --gradient-checkpointing --precision mixed "
            "--attention flash --stack transformers==4.38.2 --stack bitsandbytes==0.42.0 --stack torch==2.1.2 "
            "--format json",
    "assumptions": "Philipp Schmid's 'How to Fine-Tune Gemma with ChatML and Hugging Face TRL' (gemma-lora-example"
                   ".ipynb at a624720): google/gemma-7b in NF4 with double quantization (bf16 compute) over bf16, "
                   "trl 0.7.11 SFTTrainer's k-bit preparation then peft_module_casting_to_bf16, LoRA r=6 alpha 8 "
                   "dropout 0.05 on every linear, batch 2 x accumulation 2 of packed 1,512-token sequences, gradient "
                   "checkpointing, adamw_torch_fused, bf16 autocast, flash attention 2; transformers 4.38.2, "
                   "bitsandbytes 0.42.0; one A10G (g5.2xlarge); stated to have trained there ('took 4:14:36'; no "
                   "peak printed)",
    "unexpressed": ["trl 0.7.11's peft_module_casting_to_bf16 after k-bit preparation: the LoRA layers and the "
                    "tied 256,000 x 3,072 embedding cast back to bf16 (the CLI's k-bit preparation keeps them "
                    "fp32)"]})
