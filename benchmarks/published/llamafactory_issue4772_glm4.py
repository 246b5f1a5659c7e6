"""Frozen: LLaMA-Factory issue #4772 (2024-07-11, "QLORA using more memory than LORA"), GLM-4-9B-Chat LoRA and
QLoRA on one A100 with long samples (source `llamafactory-issue4772-glm4-2024`). Not one of the threads of
`llamafactory-issues-memory-reports` (#1409, #3035, #3259, #4133, #5187, #7055).

The opener posts the YAML (the repository's examples/train_qlora/llama3_lora_sft_otfq.yaml with the model, template,
dataset and lengths changed) and two nvidia-smi screenshots: "`llamafactory-cli train
examples/train_qlora/llama3_lora_sft_otfq.yaml` uses around 72 GB memory" and "Same config after removing
quantization part runs with 66 GB"; "I am running on runpod A100 GPU with template torch=2.2.0". The YAML:
model_name_or_path THUDM/glm-4-9b-chat, quantization_bit 4 (bitsandbytes), finetuning_type lora, lora_target all,
template glm4, cutoff_len 10240, per_device_train_batch_size 1, gradient_accumulation_steps 16, bf16 true, val_size
0.1 with eval every 500 steps (loss only).

Read in LLaMA-Factory at d3bfcbd (main on 2024-07-10, 0.8.3.dev0; requirements transformers>=4.41.2, peft>=0.11.1,
accelerate>=0.30.1):

* The model is loaded in the compute dtype (bf16 on an A100); quantization_bit 4 gives BitsAndBytesConfig(nf4,
  double quantization (defaults), compute and storage dtype bf16) (model_utils/quantization.py 160-168).
  LLaMA-Factory does not call PEFT's prepare_model_for_kbit_training: its own prepare_model_for_training enables
  reentrant gradient checkpointing and casts nothing unless upcast_layernorm / upcast_lmhead_output are set (both off)
  (model_utils/checkpointing.py 81-110): norms, embedding and output layer stay bf16 (--no-kbit-prepare).
* LoRA: rank 8 (default), alpha 16 (rank x 2), dropout 0.0 (default), on every linear but the output layer
  (`find_all_linear_modules`: GLM-4's query_key_value, dense, dense_h_to_4h, dense_4h_to_h), the adapters cast to
  fp32 (adapter.py 291-303: not pure_bf16, not ZeRO-3/FSDP). The HF Trainer's bf16 autocast, adamw_torch.
* flash_attn "auto" leaves GLM-4's own default, its SdpaAttention (the remote code's `_supports_sdpa`); the collator
  pads each batch to its longest sample, rounded up to a multiple of 8 (SFTDataCollatorWith4DAttentionMask): batch 1
  is one sample's own length up to cutoff_len 10,240 (--varying-lengths).
* GLM-4's remote code computes its loss itself: `lm_logits.to(torch.float32)`, a contiguous shifted copy and
  CrossEntropyLoss (the pre-4.49 loss tail, which --stack transformers==4.42.3 counts; 4.42.3 is the release current
  on 2024-07-11).

What the number is: the screenshots' nvidia-smi, the text's "GB" read as GiB (nvidia-smi's MiB / 1024); the A100
is taken as the 80 GB one (72 GB does not fit a 40 GB card). The versions beyond torch 2.2.0 are not in the thread:
transformers 4.42.3, PEFT 0.11.1 and bitsandbytes 0.43.1 (the releases current on 2024-07-11) assumed.
GLM-4's model (model_type chatglm, trust_remote_code) is not in transformers 4.42: the argv names the Qwen2
config.json of its shapes that glm4_finetune.py uses (9,399,951,360 parameters).
"""

from __future__ import annotations

_SOURCE = "llamafactory-issue4772-glm4-2024"
_URL = "https://github.com/hiyouga/LlamaFactory/issues/4772"
_COMMIT = "d3bfcbd3af0971cdb8b5e8d9db907e86fd4547ac"  # LLaMA-Factory main on 2024-07-10 (0.8.3.dev0)
_CODE_URL = f"https://github.com/hiyouga/LLaMA-Factory/blob/{_COMMIT}/src/llamafactory/model/adapter.py"
_MODEL = "benchmarks/published/models/glm-4-9b/config.json"

_Q_QLORA = ("`llamafactory-cli train examples/train_qlora/llama3_lora_sft_otfq.yaml` uses around 72 GB memory")
_Q_LORA = "Same config after removing quantization part runs with 66 GB"

_COMMON = ("--model {model} --system 1xA100-80GB --strategy single --precision mixed --base-dtype bf16 "
           "--lora-rank 8 --micro-batch 1 --gradient-accumulation 16 --seq-len 10240 --varying-lengths "
           "--gradient-checkpointing --attention sdpa --optimizer adamw --stack transformers==4.42.3 "
           "--stack torch==2.2.0")
_SETTINGS = (
    "LLaMA-Factory#4772 (2024-07-11), LLaMA-Factory d3bfcbd (0.8.3.dev0): THUDM/glm-4-9b-chat {how}, LoRA rank 8 "
    "alpha 16 without dropout on every block linear (lora_target all), fp32 adapters, the Trainer's bf16 autocast, "
    "adamw_torch, batch 1 x accumulation 16, each sample padded to its own length (a multiple of 8) up to cutoff_len "
    "10,240, reentrant gradient checkpointing, GLM-4's SDPA attention, GLM-4's own fp32 loss with a shifted copy; "
    "one A100 80GB (runpod), torch 2.2.0; '{printed}' read as nvidia-smi GiB"
)
_UNEXPRESSED = [
    "the custom dataset's lengths: the longest sample is assumed to reach cutoff_len 10,240",
    "GLM-4's remote code (model_type chatglm): the argv names a Qwen2 config.json of its shapes; LoRA on its fused "
    "query_key_value counted as q/k/v_proj adapters",
    "the versions beyond torch 2.2.0 are not in the thread: transformers 4.42.3, PEFT 0.11.1, bitsandbytes 0.43.1 "
    "assumed (current on 2024-07-11)",
    "'GB' read as GiB from the nvidia-smi screenshots (not readable here); 'around' 72",
    "evaluation every 500 steps on 10% of the samples (loss only, no gradients): not a training step",
]


def _row(key: str, quote: str, printed: str, how: str, flags: str, extra: list[str]) -> dict:
    return {"key": f"llamafactory4772-glm-4-9b-chat-{key}-10240-1xa100-80gb", "source": _SOURCE, "url": _URL,
            "code_url": _CODE_URL, "quote": quote, "printed": printed,
            "measured_bytes": int(printed.split()[0]) * 2**30, "metric": "nvidia-smi",
            "argv": f"estimate {_COMMON.format(model=_MODEL)} {flags} --format json",
            "assumptions": _SETTINGS.format(how=how, printed=printed), "unexpressed": [*_UNEXPRESSED, *extra]}


ROWS = [
    _row("qlora-r8-all", _Q_QLORA, "72 GB", "loaded in 4 bits (bitsandbytes NF4, double quantization, bf16 compute "
         "and storage), no kbit preparation (norms, embedding and output layer stay bf16)",
         "--qlora --no-kbit-prepare --stack bitsandbytes==0.43.1",
         ["bitsandbytes 0.43.1 (before 0.43.2) keeps each 4-bit linear's input for backward"]),
    _row("lora-r8-all", _Q_LORA, "66 GB", "loaded in bf16", "--lora", []),
]
