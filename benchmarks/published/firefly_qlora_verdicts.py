"""Frozen: yangjianxin1/Firefly's QLoRA on one V100, verdict rows (source `firefly-qlora-v100-2023`): the README's
"can train bloom-7b1 at 1,024 tokens on a V100" and issue #33's out of memory of the same config on baichuan-7B.

- README at b5c59f5 (2023-06-19): "我们在bloom-7b1上使用qlora，adapter的参数量约1.2亿，超过bert-base模型参数量，可以在
  V100上使用1024的长度进行训练。" (QLoRA on bloom-7b1, about 120M adapter parameters, trains on a V100 at 1,024
  tokens), with train_args/sft-qlora.json of that commit (firefly-bloom-7b1-qlora-sft).
- #33 (2023-06-21, "在v100上用qlora报OOM"): "跑的是baichuan-7b模型，用的train_args/sft-qlora.json默认参数，只是替换了模型
  路径和数据路径。尝试使用1卡和8卡V100， 均报OOM。" with the traceback in `cross_entropy_loss`: "Tried to allocate 250.00
  MiB (GPU 1; 31.75 GiB total capacity; 30.35 GiB already allocated; ...)" (a 32 GB V100; 250 MiB is one fp32
  1,024 x 64,000 logits tensor: the batch had reached the 1,024-token cap). The maintainer: reduce max_seq_length
  "比如900左右"; the user: "把max_seq_length减小可以解决" (the value not stated: that row is kept, not expressible).

Read at e325b85 (main on 2023-06-21; train_qlora.py, component/*.py and sft-qlora.json as at b5c59f5 for what the
rows use): `torchrun --nproc_per_node={num_gpus} train_qlora.py --train_args_file train_args/sft-qlora.json` (the
README), train_qlora.py: `AutoModelForCausalLM.from_pretrained(..., device_map={'': LOCAL_RANK}, load_in_4bit=True,
torch_dtype=torch.float16, trust_remote_code=True, quantization_config=BitsAndBytesConfig(load_in_4bit=True,
bnb_4bit_compute_dtype=torch.float16, bnb_4bit_use_double_quant=True, bnb_4bit_quant_type="nf4"))`, then
`prepare_model_for_kbit_training(model, use_gradient_checkpointing=training_args.gradient_checkpointing)` (the
embedding, norms and head cast to fp32), LoRA on every 4-bit linear but lm_head (`find_all_linear_names`), r=64 alpha
16 dropout 0.05. sft-qlora.json: batch 1, accumulation 16, max_seq_length 1024, `"gradient_checkpointing": false`
(set to true only on 2023-06-23, 9782ca7), `"optim": "paged_adamw_32bit"`, `"fp16": true` (the Trainer's fp16
autocast). The loss is Firefly's own (component/loss.py TargetLMLoss: `nn.CrossEntropyLoss` on the model's shifted
logits, under autocast: fp32). SFTDataCollator pads each batch to its longest sample, at most max_seq_length: batch
1 is each conversation's own length up to 1,024 (--varying-lengths). requirements.txt: torch==1.13.0,
bitsandbytes==0.39.0, transformers/peft/accelerate from git (June 2023: transformers 4.31.0.dev).

Models: bloom-7b1 is transformers' Bloom (models/bloomz-7b1/config.json has its shapes: bloomz is bloom-7b1
fine-tuned, 7,069,016,064 parameters; eager attention: Bloom has no SDPA in 2023). baichuan-7B is remote code
(model_type baichuan: Llama's layout with a fused W_pack q/k/v linear, vocabulary 64,000): the argv names a Llama
config.json of its shapes (models/baichuan-7b, 7,000,559,616 parameters); its eager attention and RMSNorm are
Llama's code of transformers 4.28 (the norm casts to the weight's dtype only when 16-bit: after the kbit
preparation's fp32 cast the product stays fp32), said by --stack transformers==4.28.1; xformers, which its code
uses when installed, is not in Firefly's requirements (eager). The V100 of the README is not sized: 32 GB assumed
(#33's card).
"""

from __future__ import annotations

_SOURCE = "firefly-qlora-v100-2023"
_REPO = "https://github.com/yangjianxin1/Firefly"
_README = "b5c59f59eee89619407d863ae06992081fcd8374"  # 2023-06-19: the README line and sft-qlora.json for bloom-7b1
_CODE = "e325b852531016df338c40dc2a921860697e3761"  # main on 2023-06-21, the day of #33

_Q_README = ("我们在bloom-7b1上使用qlora，adapter的参数量约1.2亿，超过bert-base模型参数量，可以在V100上使用1024的长度进行训练。")
_Q33 = ("跑的是baichuan-7b模型，用的train_args/sft-qlora.json默认参数，只是替换了模型路径和数据路径。尝试使用1卡和8卡V100， "
        "均报OOM。\n torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 250.00 MiB (GPU 1; 31.75 GiB "
        "total capacity; 30.35 GiB already allocated; 209.75 MiB free; 30.55 GiB reserved in total by PyTorch)")
_Q33_FIX = "建议把max_seq_length稍微调小一点点，比如900左右，应该就不会oom了。\n\n把max_seq_length减小可以解决，谢谢！"

_ARGV = ("estimate --model {model} --system 1xV100-32GB --strategy single --precision mixed --qlora --lora-rank 64 "
         "--lora-dropout 0.05 --micro-batch 1 --gradient-accumulation 16 --seq-len 1024 --varying-lengths "
         "--no-gradient-checkpointing --attention eager --optimizer paged-adamw --stack {tf} "
         "--stack bitsandbytes==0.39.0 --stack torch==1.13.0 --format json")
_SETTINGS = (
    "Firefly train_qlora.py with train_args/sft-qlora.json ({commit}): {model}, NF4 with double quantization, fp16 "
    "compute and torch_dtype fp16, prepare_model_for_kbit_training (embedding, norms, head in fp32), LoRA r=64 alpha "
    "16 dropout 0.05 on every block linear, the Trainer's fp16 autocast, paged_adamw_32bit, batch 1 x accumulation "
    "16, each conversation padded to its own length up to max_seq_length 1024, no gradient checkpointing, eager "
    "attention, torch 1.13.0 and bitsandbytes 0.39.0 (requirements.txt), one V100 32GB; {verdict}"
)
_UNEXPRESSED = [
    "the training data's lengths: the longest conversation is assumed to reach the 1,024-token cap",
    "Firefly's own loss (nn.CrossEntropyLoss on the shifted logits under autocast) counted as transformers' "
    "pre-4.49 loss tail on fp32 logits",
    "transformers, PEFT and accelerate from git of June 2023 (transformers 4.31.0.dev)",
]
_BAICHUAN = ("baichuan-7B's remote code: the argv names a Llama config.json of its shapes; LoRA on its fused W_pack "
             "(4096 -> 12288) counted as q/k/v_proj adapters (r x 24,576 per layer instead of r x 16,384)")


def _row(key: str, quote: str, printed: str, ran: bool, model: str, name: str, tf: str, verdict: str,
         commit: str, extra: list[str]) -> dict:
    return {"key": f"firefly-{key}", "source": _SOURCE,
            "url": f"{_REPO}/blob/{_README}/README.md" if "readme" in key else f"{_REPO}/issues/33",
            "code_url": f"{_REPO}/blob/{commit}/train_qlora.py", "quote": quote, "printed": printed,
            "measured_bytes": None, "metric": "reserved" if not ran else "nvidia-smi", "ran": ran,
            "argv": _ARGV.format(model=model, tf=tf),
            "assumptions": _SETTINGS.format(commit=commit[:7], model=name, verdict=verdict),
            "unexpressed": [*_UNEXPRESSED, *extra]}


ROWS = [
    _row("readme-bloom-7b1-qlora-r64-1024-1xv100-ran", _Q_README, "可以在V100上使用1024的长度进行训练", True,
         "benchmarks/published/models/bloomz-7b1/config.json", "bigscience/bloom-7b1", "transformers==4.30.2",
         "trained (the README: 'can train on a V100 at 1,024 tokens')", _README,
         ["the V100's memory is not stated: 32 GB assumed", "transformers 4.31.0.dev (git) said as 4.30.2"]),
    _row("issue33-baichuan-7b-qlora-r64-1024-1xv100-32gb-oom", _Q33, "均报OOM", False,
         "benchmarks/published/models/baichuan-7b/config.json", "baichuan-inc/baichuan-7B", "transformers==4.28.1",
         "out of memory (#33, in the loss at 1,024 tokens)", _CODE, [_BAICHUAN]),
    {"key": "firefly-issue33-baichuan-7b-qlora-r64-shorter-1xv100-32gb-ran", "source": _SOURCE,
     "url": f"{_REPO}/issues/33", "code_url": f"{_REPO}/blob/{_CODE}/train_qlora.py", "quote": _Q33_FIX,
     "printed": "把max_seq_length减小可以解决", "measured_bytes": None, "metric": "nvidia-smi", "ran": True,
     "argv": None, "not_expressible": "the max_seq_length that trained is not stated (the maintainer suggested "
     "'about 900'; the user only says reducing it worked)",
     "assumptions": _SETTINGS.format(commit=_CODE[:7], model="baichuan-inc/baichuan-7B",
                                     verdict="trained at a shorter max_seq_length, its value not stated"),
     "unexpressed": [_BAICHUAN]},
]
