"""Frozen: fms-acceleration PR #14's memory benchmark, one A100 80GB (source `fms-acceleration-pr14-bench`).

foundation-model-stack/fms-acceleration#14 ("Provide Memory Benchmarking Feature to Benchmarking Code", merged
2024-05-27 as f1895b7) added memory columns to its benchmark and committed the run as
scripts/benchmarks/refs/a100_80gb.csv (the PR thread's tables are cut from it). Each row is one
`sft_trainer.py` run of fms-hf-tuning (HF Trainer through TRL's SFTTrainer) on A100 80GB, one or two GPUs.

The code, read at f1895b7: scripts/benchmarks/defaults.yaml (gradient checkpointing, use_flash_attn: FlashAttention
2, gradient accumulation 1, the Trainer's default AdamW: adamw_torch, foreach), benchmark.py's defaults (the
yahma/alpaca-cleaned dataset packed into 4,096-token blocks: packing True, max_seq_len 4096; the CSV's tokens per
sample, 2,775.237 / 0.678 = 4,093, agree), scenarios.yaml: `full-finetuning` and `standard-peft` load the model with
torch_dtype float16 and pass no --fp16 (pure fp16: weights, gradients, AdamW states fp16, no autocast; PEFT of May
2024 moves the adapters to the base layer's dtype: fp16 adapters); `baseline-peft-bnb` and `accelerated-peft-bnb`
load NF4 with double quantization and fp16 compute (sample-configurations/, plugins/accelerated-peft
framework_plugin_bnb.py) and train with --fp16 (autocast); the baseline leaves PEFT to SFTTrainer, whose stock
prepare_model_for_kbit_training casts the non-quantized parameters to fp32, the accelerated plugin's own prepare
does not (--no-kbit-prepare). LoRA r=16 alpha 16, dropout 0, on q_proj, k_proj, v_proj, o_proj.

What the number is: `peak_torch_mem_alloc_in_bytes`, from the Trainer's memory metrics (skip_memory_metrics False):
rank 0's allocated memory before init plus the init delta plus the train stage's peaked delta, i.e.
torch.cuda.max_memory_allocated() over training, in bytes. `nvidia_mem_reserved` (nvidia-smi memory.used, MiB) is
in the same rows but not scored here (one printed unit per source); where a run failed (no train metrics), its
nvidia-smi peak is the card full (79,557-81,043 MiB of 81,920): read as out of memory.

Only the one-GPU rows: the two-GPU rows run accelerate's FSDP with mixed_precision 'no' over an fp16 model
(scripts/benchmarks/accelerate.yaml), a 16-bit FSDP without accelerate's fp32 upcast the CLI cannot say.
The rows are the CSV's lines (first 16 columns) verbatim.
"""

from __future__ import annotations

_COMMIT = "f1895b7c5f0b8596b9f617350c812a7afa7223dd"
_URL = "https://github.com/foundation-model-stack/fms-acceleration/pull/14"
_CODE_URL = ("https://github.com/foundation-model-stack/fms-acceleration/blob/" + _COMMIT
             + "/scripts/benchmarks/refs/a100_80gb.csv")
_SOURCE = "fms-acceleration-pr14-bench"
# epoch,fp16,framework_config,index,learning_rate,lora_alpha,lora_dropout,model_name_or_path,num_gpus,
# nvidia_mem_reserved,peak_torch_mem_alloc_in_bytes,peft_method,per_device_train_batch_size,r,target_modules,
# torch_mem_alloc_in_bytes
_CSV = (
    "0.04,,none,0,2e-5,,,mistralai/Mistral-7B-v0.1,1,77705.0,72971724288.0,,4,,,44004763136.0",
    "0.09,,none,2,2e-5,,,mistralai/Mistral-7B-v0.1,1,74383.0,72972117504.0,,8,,,44005156352.0",
    ",,none,4,2e-5,,,mistralai/Mixtral-8x7B-Instruct-v0.1,1,81043.0,,,4,,,",
    ",,none,6,2e-5,,,mistralai/Mixtral-8x7B-Instruct-v0.1,1,81043.0,,,8,,,",
    ",,none,8,2e-5,,,NousResearch/Llama-2-70b-hf,1,80837.0,,,4,,,",
    ",,none,10,2e-5,,,NousResearch/Llama-2-70b-hf,1,80837.0,,,8,,,",
    "0.04,,none,12,2e-4,16,0.0,mistralai/Mistral-7B-v0.1,1,29731.0,26108963328.0,lora,4,16,q_proj k_proj v_proj o_proj,15119590912.0",
    "0.09,,none,14,2e-4,16,0.0,mistralai/Mistral-7B-v0.1,1,43195.0,37098695168.0,lora,8,16,q_proj k_proj v_proj o_proj,15119984128.0",
    ",,none,16,2e-4,16,0.0,mistralai/Mixtral-8x7B-Instruct-v0.1,1,80955.0,,lora,4,16,q_proj k_proj v_proj o_proj,",
    ",,none,18,2e-4,16,0.0,mistralai/Mixtral-8x7B-Instruct-v0.1,1,80955.0,,lora,8,16,q_proj k_proj v_proj o_proj,",
    ",,none,20,2e-4,16,0.0,NousResearch/Llama-2-70b-hf,1,80917.0,,lora,4,16,q_proj k_proj v_proj o_proj,",
    ",,none,22,2e-4,16,0.0,NousResearch/Llama-2-70b-hf,1,80917.0,,lora,8,16,q_proj k_proj v_proj o_proj,",
    "0.04,True,baseline-peft-bnb,24,2e-4,16,0.0,mistralai/Mistral-7B-v0.1,1,27023.0,22825932800.0,lora,4,16,q_proj k_proj v_proj o_proj,5368221184.0",
    "0.09,True,baseline-peft-bnb,26,2e-4,16,0.0,mistralai/Mistral-7B-v0.1,1,47145.0,40278956032.0,lora,8,16,q_proj k_proj v_proj o_proj,5368614400.0",
    "0.04,True,baseline-peft-bnb,28,2e-4,16,0.0,mistralai/Mixtral-8x7B-Instruct-v0.1,1,48313.0,46419968512.0,lora,4,16,q_proj k_proj v_proj o_proj,25726225920.0",
    "0.09,True,baseline-peft-bnb,30,2e-4,16,0.0,mistralai/Mixtral-8x7B-Instruct-v0.1,1,69931.0,67089150464.0,lora,8,16,q_proj k_proj v_proj o_proj,25726619136.0",
    ",True,baseline-peft-bnb,32,2e-4,16,0.0,NousResearch/Llama-2-70b-hf,1,80893.0,,lora,4,16,q_proj k_proj v_proj o_proj,",
    ",True,baseline-peft-bnb,34,2e-4,16,0.0,NousResearch/Llama-2-70b-hf,1,79557.0,,lora,8,16,q_proj k_proj v_proj o_proj,",
    "0.04,True,accelerated-peft-bnb,36,2e-4,16,0.0,mistralai/Mistral-7B-v0.1,1,19931.0,15860019712.0,lora,4,16,q_proj k_proj v_proj o_proj,4843384320.0",
    "0.09,True,accelerated-peft-bnb,38,2e-4,16,0.0,mistralai/Mistral-7B-v0.1,1,34355.0,26849751552.0,lora,8,16,q_proj k_proj v_proj o_proj,4843777536.0",
    "0.04,True,accelerated-peft-bnb,40,2e-4,16,0.0,mistralai/Mixtral-8x7B-Instruct-v0.1,1,38405.0,36218024448.0,lora,4,16,q_proj k_proj v_proj o_proj,25201389056.0",
    "0.09,True,accelerated-peft-bnb,42,2e-4,16,0.0,mistralai/Mixtral-8x7B-Instruct-v0.1,1,50875.0,47207756288.0,lora,8,16,q_proj k_proj v_proj o_proj,25201782272.0",
    "0.04,True,accelerated-peft-bnb,44,2e-4,16,0.0,NousResearch/Llama-2-70b-hf,1,72829.0,68159977472.0,lora,4,16,q_proj k_proj v_proj o_proj,37346815488.0",
    ",True,accelerated-peft-bnb,46,2e-4,16,0.0,NousResearch/Llama-2-70b-hf,1,80405.0,,lora,8,16,q_proj k_proj v_proj o_proj,",
    "0.04,True,accelerated-peft-autogptq,48,2e-4,16,0.0,TheBloke/Mistral-7B-v0.1-GPTQ,1,20453.0,15890329088.0,lora,4,16,q_proj k_proj v_proj o_proj,4873693696.0",
    "0.09,True,accelerated-peft-autogptq,50,2e-4,16,0.0,TheBloke/Mistral-7B-v0.1-GPTQ,1,34247.0,26880060928.0,lora,8,16,q_proj k_proj v_proj o_proj,4874086912.0",
    "0.04,True,accelerated-peft-autogptq,52,2e-4,16,0.0,TheBloke/Mixtral-8x7B-Instruct-v0.1-GPTQ,1,37461.0,35528093184.0,lora,4,16,q_proj k_proj v_proj o_proj,24511457792.0",
    "0.09,True,accelerated-peft-autogptq,54,2e-4,16,0.0,TheBloke/Mixtral-8x7B-Instruct-v0.1-GPTQ,1,49925.0,46517825024.0,lora,8,16,q_proj k_proj v_proj o_proj,24511851008.0",
    "0.04,True,accelerated-peft-autogptq,56,2e-4,16,0.0,TheBloke/Llama-2-70B-GPTQ,1,71565.0,65895347200.0,lora,4,16,q_proj k_proj v_proj o_proj,36290144768.0",
    ",True,accelerated-peft-autogptq,58,2e-4,16,0.0,TheBloke/Llama-2-70B-GPTQ,1,80293.0,,lora,8,16,q_proj k_proj v_proj o_proj,"
)
_MODELS = {"mistralai/Mistral-7B-v0.1": "mistral-7b", "mistralai/Mixtral-8x7B-Instruct-v0.1": "mixtral-8x7b",
           "NousResearch/Llama-2-70b-hf": "llama-2-70b"}
_LORA = ("--lora-rank 16 --lora-target q_proj --lora-target k_proj --lora-target v_proj --lora-target o_proj "
         "--lora-dropout 0 ")
# framework_config (and peft_method) -> the method's flags, what the run is, what the CLI cannot say
_HOW = {
    ("none", ""): ("--precision bf16 ", "full fine-tuning, model loaded fp16, no --fp16 (pure fp16, fp16 AdamW "
                   "states)", ["pure fp16 is said as --precision bf16 (the same bytes; no fp16 loss scaling ran)"]),
    ("none", "lora"): ("--lora --precision bf16 " + _LORA, "LoRA over the fp16 model, no --fp16 (pure fp16)",
                       ["pure fp16 is said as --precision bf16 (the same bytes)",
                        "PEFT of May 2024 casts the adapters to the base layer's fp16; the CLI's LoRA counts "
                        "PEFT's fp32 adapters (an fp32 copy of each adapted linear's input)"]),
    ("baseline-peft-bnb", "lora"): (
        "--qlora --precision mixed " + _LORA + "--stack bitsandbytes==0.43.1 ",
        "QLoRA: NF4 double quantization, fp16 compute, --fp16 autocast, SFTTrainer's PEFT with the stock "
        "prepare_model_for_kbit_training (non-quantized parameters fp32)", ["fp16 autocast said as --precision mixed"]),
    ("accelerated-peft-bnb", "lora"): (
        "--qlora --precision mixed --no-kbit-prepare " + _LORA + "--stack bitsandbytes==0.43.1 ",
        "QLoRA through the accelerated-peft plugin: NF4 double quantization, fp16 compute, --fp16 autocast, the "
        "plugin's prepare (no fp32 cast of the non-quantized parameters)", ["fp16 autocast said as --precision mixed"]),
}
_SETTINGS = (
    "fms-acceleration PR #14 (May 2024) at f1895b7, scripts/benchmarks/refs/a100_80gb.csv row {index}: {model} on "
    "one A100 80GB, {how}, batch {batch} x 4,096 packed alpaca-cleaned tokens, gradient checkpointing, "
    "FlashAttention 2, adamw_torch; {what}"
)
_UNEXPRESSED = ["fms-hf-tuning's and the libraries' versions are not printed (May 2024: transformers 4.40.2 and "
                "bitsandbytes 0.43.1 assumed; both copy as before 4.49 / 0.43.2)",
                "the Trainer's gradient checkpointing default of May 2024 (reentrant)"]


def _row(line: str) -> dict:
    f = line.split(",")
    config, index, model, peak, method, batch = f[2], f[3], f[7], f[10], f[11], f[12]
    key = f"fms-pr14-{config}-{method or 'full'}-{_MODELS.get(model, model.split('/')[-1].lower())}-1gpu-bs{batch}"
    row = {"key": key, "source": _SOURCE, "url": _URL, "code_url": _CODE_URL, "quote": line, "metric": "allocated"}
    if config == "accelerated-peft-autogptq":
        return {**row, "printed": peak or f[9], "measured_bytes": int(float(peak)) if peak else None,
                "ran": bool(peak), "argv": None,
                "not_expressible": "a GPTQ-quantized base through AutoGPTQ's triton kernels (the plugin's own copy)",
                "assumptions": f"fms-acceleration PR #14's CSV row {index}: {model} LoRA over GPTQ, batch {batch}"}
    flags, how, extra = _HOW[(config, method)]
    what = ("torch.cuda.max_memory_allocated over training (the Trainer's memory metrics), bytes" if peak else
            f"no train metrics and nvidia-smi's peak at {f[9]} MiB (the card full): read as out of memory")
    return {**row, "printed": peak or f[9], "measured_bytes": int(float(peak)) if peak else None, "ran": bool(peak),
            "argv": f"estimate --model {_MODELS[model]} --system 1xA100-80GB --strategy single {flags}--optimizer "
                    f"adamw --micro-batch {batch} --seq-len 4096 --fixed-lengths --gradient-checkpointing --attention "
                    "flash --stack transformers==4.40.2 --format json",
            "assumptions": _SETTINGS.format(index=index, model=model, how=how, batch=batch, what=what),
            "unexpressed": [*extra, *_UNEXPRESSED]}


ROWS = [_row(line) for line in _CSV]
