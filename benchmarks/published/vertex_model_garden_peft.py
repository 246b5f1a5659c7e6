"""Frozen: Google Cloud Vertex AI Model Garden's PEFT notebook (GoogleCloudPlatform/vertex-ai-samples,
notebooks/community/model_garden/model_garden_pytorch_peft.ipynb, added 2023-06-29, merged 0a22ad7 2023-07-05):
"The peak GPU memory usages are ~11G and ~34G for finetuning LoRA models for tiiuae/falcon-7b-instruct, and
tiiuae/falcon-40b-instruct separately with default training parameters and the example dataset", beside the same
sentence for OpenLLaMA 3B/7B/13B (8-bit LoRA) and RoBERTa-large / XLM-RoBERTa-large (sequence classification).

The training image (pytorch-peft-train) was open-sourced on 2023-08-17 (f3be7fa, community-content/
vertex_vision_model_garden/model_oss/peft), read there: `main.py --task=instruct-lora` runs instruct_lora.py under
`accelerate launch` with write_basic_config(mixed_precision="fp16") (train.sh): the model loaded with
BitsAndBytesConfig(load_in_4bit, nf4, compute dtype float16; no double quantization) and trust_remote_code=True
(June 2023: the hub's RW modelling code; transformers has no Falcon before 4.33), LoraConfig(r, alpha, dropout from
the notebook's flags: 64, 16, 0.1) on query_key_value, dense, dense_h_to_4h, dense_4h_to_h, TrainingArguments(
per_device_train_batch_size=4, gradient_accumulation_steps=4, optim "paged_adamw_32bit", fp16=True (autocast),
group_by_length=True, max_grad_norm 0.3), trl 0.4.4's SFTTrainer(dataset_text_field "text", max_seq_length 512 from
the flag) on timdettmers/openassistant-guanaco: no packing, each sample truncated at 512 tokens and each batch padded
to its longest (DataCollatorForLanguageModeling: --varying-lengths); SFTTrainer 0.4.4 calls
`prepare_model_for_int8_training(model)` on a 4-bit model (sft_trainer.py line 147), PEFT's default
use_gradient_checkpointing=True: checkpointing on, every parameter that is not 4-bit in fp32; the script then casts
the norms to fp32 again. train.Dockerfile: torch 2.0.1, bitsandbytes 0.39.0, trl 0.4.4, accelerate 0.21.0, PEFT
from git, transformers `pip install transformers -U` at build time (June 2023: 4.30.2). RW's attention calls
F.scaled_dot_product_attention (sdpa) and its loss shifts the logits into a contiguous copy, as transformers < 4.49.

What the number is: "peak GPU memory usage", read from the Vertex training job (no printing in the code): taken as
the whole device's use (nvidia-smi) in GiB, rounded to the G ("~"). The notebook runs the Falcon job on one A100 40GB
(a2-highgpu-1g, "We choose to use 1 A100 (40G) by default"); the separate Falcon notebook of 2023-07-28 (9fa9fb0)
repeats the figures and runs 7B on one V100.
"""

from __future__ import annotations

_COMMIT = "0a22ad7578f6a440ac794bfc59916b81d8459107"
_CODE_COMMIT = "f3be7fac749678c5a72795013bf53564c80c17cd"
_URL = (f"https://github.com/GoogleCloudPlatform/vertex-ai-samples/blob/{_COMMIT}/notebooks/community/model_garden/"
        "model_garden_pytorch_peft.ipynb")
_CODE_URL = (f"https://github.com/GoogleCloudPlatform/vertex-ai-samples/blob/{_CODE_COMMIT}/community-content/"
             "vertex_vision_model_garden/model_oss/peft/instruct_lora.py")
_Q_FALCON = ("The peak GPU memory usages are ~11G and ~34G for finetuning LoRA models for [tiiuae/falcon-7b-instruct]"
             "(https://huggingface.co/tiiuae/falcon-7b-instruct), and [tiiuae/falcon-40b-instruct](https://huggingface"
             ".co/tiiuae/falcon-40b-instruct) separately with default training parameters and the example dataset. "
             "In theory, falcon-7b-instruct can be finetuned on 1 P100/V100, and falcon-40b-instruct can be finetuned "
             "on 1 A100 (40G). We choose to use 1 A100 (40G) by default to support all these models in this notebook "
             "for simplicity.")
_Q_OPENLLAMA = ("In order to make the finetunig efficiently, we enabled quantization (8bits) when loading pretrained "
                "models for finetuning LoRA models. The peak GPU memory usages are ~7G, ~10G and ~16G for finetuning "
                "LoRA models for [openlm-research/open_llama_3b](https://huggingface.co/openlm-research/open_llama_3b"
                "), [openlm-research/open_llama_7b](https://huggingface.co/openlm-research/open_llama_7b), and "
                "[openlm-research/open_llama_13b](https://huggingface.co/openlm-research/open_llama_13b) separately "
                "with default training parameters and the example dataset.")
_Q_ROBERTA = ("The peak GPU memory usages are ~8.8G and ~15G for finetuning LoRA models for [RoBERTa-large](https://"
              "huggingface.co/roberta-large), and [XLM-RoBERTa-large](https://huggingface.co/xlm-roberta-large) "
              "separately with default training parameters and the example dataset.")
_TARGETS = "".join(f"--lora-target {m} " for m in ("query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"))
_SETTINGS = (
    "Vertex AI Model Garden PEFT notebook ({commit}) with the training image's code as open-sourced at {code}: "
    "{model} in NF4 (no double quantization, float16 compute, trust_remote_code), LoRA r=64 alpha 16 dropout 0.1 on "
    "query_key_value, dense, dense_h_to_4h, dense_4h_to_h, trl 0.4.4 SFTTrainer (prepare_model_for_int8_training: "
    "checkpointing on, non-4-bit parameters fp32), fp16=True (autocast), paged_adamw_32bit, batch 4 x accumulation "
    "4, openassistant-guanaco cut at 512 tokens and padded to each batch's longest (group_by_length), bitsandbytes "
    "0.39.0, torch 2.0.1, transformers 4.30 (June 2023, assumed from `pip install transformers -U`); one A100 40GB "
    "(the notebook's default). The figure: '~{printed}' peak GPU memory, taken as GiB of the whole device"
)
_UNEXPRESSED = [
    "NF4 without double quantization (the CLI's QLoRA double-quantizes: about 0.4 bits per parameter less)",
    "the hub's RW remote code (June 2023) for Falcon; the stand-in is the native transformers config of the same "
    "shapes (model_type falcon: accelwiz sizes its activations approximately, its assumptions say so)",
    "'~': the figure is rounded to the G (+-0.5 G), and whether G is GB or GiB is not said",
    "the longest guanaco sample in a batch: the argv assumes the 512-token cap is reached (most conversations pass "
    "512 Falcon tokens; not checked against the data)",
]


def _falcon(key: str, model: str, printed: str, name: str) -> dict:
    return {"key": key, "source": "vertex-model-garden-peft-2023", "url": _URL, "code_url": _CODE_URL,
            "quote": _Q_FALCON, "printed": printed, "measured_bytes": int(round(float(printed[:-1]) * 2**30)),
            "metric": "nvidia-smi",
            "argv": f"estimate --model {model} --system 1xA100-40GB --strategy single --qlora --precision mixed "
                    f"--lora-rank 64 {_TARGETS}--lora-dropout 0.1 --optimizer paged-adamw --gradient-checkpointing "
                    "--micro-batch 4 --gradient-accumulation 4 --seq-len 512 --varying-lengths --attention sdpa "
                    "--stack bitsandbytes==0.39.0 --stack transformers==4.30.2 --format json",
            "assumptions": _SETTINGS.format(commit=_COMMIT[:7], code=_CODE_COMMIT[:7], model=name, printed=printed),
            "unexpressed": list(_UNEXPRESSED)}


ROWS = [
    _falcon("vertex-mg-falcon-7b-instruct-qlora-1xa100-40gb", "benchmarks/published/models/falcon-7b-instruct/"
            "config.json", "11G", "tiiuae/falcon-7b-instruct (6,921,720,704 parameters)"),
    _falcon("vertex-mg-falcon-40b-instruct-qlora-1xa100-40gb", "benchmarks/published/models/falcon-40b-instruct/"
            "config.json", "34G", "tiiuae/falcon-40b-instruct (41,303,293,952 parameters)"),
]

# causal_language_modeling_lora.py (f3be7fa) with the notebook's flags: LoRA r=16 on q_proj/v_proj over an 8-bit
# (LLM.int8) base, and sequence classification of encoders: neither is something the CLI can say.
_INT8 = ("an 8-bit (LLM.int8, BitsAndBytesConfig(load_in_8bit=True)) base under LoRA: the CLI's k-bit method is "
         "NF4 4-bit (--qlora)")
_ENCODER_CLS = ("LoRA on an encoder's sequence-classification head (RoBERTa / XLM-RoBERTa on GLUE): the CLI "
                "estimates causal LMs and BERT's masked LM, not classification heads")
_CAUSAL = _CODE_URL.replace("instruct_lora.py", "causal_language_modeling_lora.py")
_CLS = _CODE_URL.replace("instruct_lora.py", "sequence_classification_lora.py")
for _key, _quote, _printed, _why, _code in (
        ("vertex-mg-open-llama-3b-lora-int8", _Q_OPENLLAMA, "7G", _INT8, _CAUSAL),
        ("vertex-mg-open-llama-7b-lora-int8", _Q_OPENLLAMA, "10G", _INT8, _CAUSAL),
        ("vertex-mg-open-llama-13b-lora-int8", _Q_OPENLLAMA, "16G", _INT8, _CAUSAL),
        ("vertex-mg-roberta-large-lora-cls", _Q_ROBERTA, "8.8G", _ENCODER_CLS, _CLS),
        ("vertex-mg-xlm-roberta-large-lora-cls", _Q_ROBERTA, "15G", _ENCODER_CLS, _CLS)):
    ROWS.append({"key": _key, "source": "vertex-model-garden-peft-2023", "url": _URL, "code_url": _code,
                 "quote": _quote, "printed": _printed, "measured_bytes": int(round(float(_printed[:-1]) * 2**30)),
                 "metric": "nvidia-smi", "ran": True, "argv": None, "not_expressible": _why,
                 "assumptions": "Vertex AI Model Garden PEFT notebook (0a22ad7), default training parameters, one A100 "
                                "40GB; the figure as printed, '~' rounded, taken as GiB"})
