"""Frozen: AMD's ROCm blog posts fine-tuning Llama-2-7B with TRL's SFTTrainer, rocm-smi's VRAM% during training.

Two sources, one recipe (Sean Song's posts in ROCm/rocm-blogs; the same code in each, one GPU kind per source):

* `rocm-blogs-llama-mi300x`: "Fine-tune Llama model with LoRA" (blogs/artificial-intelligence/llama-lora) and
  "Enhancing LLM Accessibility: A Deep Dive into QLoRA" (llama-Qlora), both as updated on 2024-10-22 (876d80c):
  one MI300X (192 GiB); full fine-tuning, LoRA and QLoRA; the QLoRA post's comparison table prints all three in GB.
* `rocm-blogs-llama2-mi250`: the earlier posts of the same recipe (llama2-lora, llama2-Qlora, last changed
  2024-07-29, 0864e24) on an MI250: QLoRA on one GCD (64 GiB, HIP_VISIBLE_DEVICES=0); LoRA and full fine-tuning
  on two GCDs with `device_map="auto"` (the layers split between the dies: naive model parallelism, which the
  CLI cannot say, so those two rows are kept as not expressible).

The code, read in the posts and their notebooks (src/*.ipynb, with saved outputs): NousResearch/Llama-2-7b-chat-hf
(Llama-2-7B's shapes, 6,738,415,616 parameters, printed) loaded with `from_pretrained(..., device_map="auto")`
and no torch_dtype (fp32 under transformers 4.31) or, for QLoRA, with BitsAndBytesConfig(load_in_4bit, nf4,
compute dtype float16, double quantization); TrainingArguments(per_device_train_batch_size=4, accumulation 1,
fp16=False, bf16=False: no autocast, group_by_length=True, max_grad_norm 0.3; optim the default (transformers 4.31:
"adamw_hf", whose deprecation warning the notebooks print) for LoRA/full on the MI300X, paged_adamw_32bit
otherwise); LoraConfig(r=8, lora_alpha=8, lora_dropout=0.1) on PEFT's Llama defaults q_proj and v_proj (4,194,304
trainable, printed); trl 0.4.7's SFTTrainer with dataset_text_field "text" on mlabonne/guanaco-llama2-1k: no
packing, max_seq_length None -> min(model_max_length, 1024) = 1024 (the notebooks print the warning),
`padding=False` then DataCollatorForLanguageModeling (each batch padded to its own longest: --varying-lengths).
Versions: the notebooks pin `peft==0.9.0 transformers==4.31.0 trl==0.4.7` (the MI300X QLoRA notebook installs
unpinned into the same image and prints trl 0.4.7's and peft's own warnings); torch 2.1.2 on ROCm 6.1.2
(rocm/pytorch:rocm6.1.2_ubuntu22.04_py3.10_pytorch_release-2.1.2); bitsandbytes ROCm fork 0.43 (0.43.2.dev0
printed). transformers 4.31 has no SDPA for Llama: eager attention (--attention eager).
QLoRA: trl 0.4.7 calls `prepare_model_for_int8_training(model)` for a 4-bit model (sft_trainer.py line 141),
PEFT's default use_gradient_checkpointing=True: gradient checkpointing on (the notebook prints torch.utils.checkpoint's
use_reentrant warning), every parameter that is not 4-bit cast to fp32, and with no autocast every activation is
fp32 (the CLI says this as `--qlora --precision bf16` with k-bit preparation on, as universal_llm_trainer.py's
rows do: 16-bit here is bitsandbytes' compute dtype only). LoRA and full fine-tuning: no checkpointing
(TrainingArguments' default), fp32 weights, fp32 adapters, fp32 AdamW states: --precision fp32.

What the number is: the rocm-smi "Concise Info" VRAM% column, read "during training" in a terminal (one snapshot,
not a peak): the whole device's used VRAM (the caching allocator's reserve plus the HIP runtime), as nvidia-smi's
figure. transformers' LengthGroupedSampler puts the longest sample in the first batch, so the reserve reaches its
high-water mark at the first step and the caching allocator keeps it: the snapshot is read as the peak. The
tables' "Mem usage/GB" is that integer percentage times the card's memory (43% x 192 = 82.56; 17% x 64 = 10.88):
GiB (MI300X: 192 GiB of HBM3; MI250: 64 GiB per GCD). The integer percentage is worth +-1% of the card (+-1.9 GiB
on the MI300X, +-0.6 GiB on an MI250 GCD), which is large against the QLoRA rows (11.52 and 10.88).
"""

from __future__ import annotations

_BLOGS = "https://github.com/ROCm/rocm-blogs/blob/{commit}/blogs/artificial-intelligence/{post}"
_MI300X_COMMIT = "876d80c36df8ba185da0fbdb6cdbc493e42f5332"
_MI250_COMMIT = "0864e245c04e5017146636e1b9f5b4da824255f2"
_MI300X_TABLE = ("| Metric | Full-parameter | LoRA | **QLoRA**|\n|--------------------|-----------|-----------|"
                 "-----------|\n|Trainable parameters| 6,738,415,616 | 4,194,304 | 4,194,304 |\n"
                 "|Mem usage/GB |144 | 82.56 | 11.52|")
_MI250_TABLE = ("| Metric | Full-parameter | LoRA | **QLoRA**|\n|--------------------|-----------|-----------|"
                "-----------|\n|Trainable parameters| 6,738,415,616 | 4,194,304 | 4,194,304 |\n"
                "|Mem usage/GB |128 | 83.2 | 10.88|\n|Number of GCDs |2 | 2 | 1|")
_SETTINGS = (
    "ROCm blog ({post}, rocm-blogs {commit}): NousResearch/Llama-2-7b-chat-hf, {how}; trl 0.4.7 SFTTrainer "
    "without packing, max_seq_length 1024 (its default, warning printed), each batch padded to its longest "
    "(group_by_length), batch 4, accumulation 1, fp16=False and bf16=False (no autocast), transformers 4.31.0 "
    "(eager attention), peft 0.9.0, torch 2.1.2 on ROCm 6.1.2; one {gpu}. The figure: rocm-smi's integer VRAM% "
    "snapshot during training times the card's {card} GiB (the whole device: reserve plus HIP runtime); assumed: "
    "the snapshot holds the reserve's high-water mark (the longest batch runs first under group_by_length) and at "
    "least one guanaco-llama2-1k sample reaches the 1,024-token cap (the dataset and tokenizer were not at hand)"
)
_LORA = "--lora-rank 8 --lora-target q_proj --lora-target v_proj --lora-dropout 0.1 "
_PERCENT = "rocm-smi's VRAM% is an integer: the figure is known to +-1% of the card ({err})"
_HF_ADAMW = ("transformers 4.31's own AdamW (optim 'adamw_hf', its deprecation warning printed): a per-parameter "
             "loop without torch's foreach temporaries; the argv's --optimizer adamw is torch's")


def _row(key: str, source: str, post: str, commit: str, quote: str, printed: str, how: str, flags: str,
         gpu: str, card: int, unexpressed: list[str]) -> dict:
    return {"key": key, "source": source, "url": _BLOGS.format(commit=commit, post=f"{post}/README.md"),
            "quote": quote, "printed": printed, "measured_bytes": int(round(float(printed) * 2**30)),
            "metric": "nvidia-smi",
            "argv": f"estimate --model llama-2-7b --system 1x{gpu} --strategy single {flags}--micro-batch 4 "
                    "--seq-len 1024 --varying-lengths --attention eager --stack transformers==4.31 --format json",
            "assumptions": _SETTINGS.format(post=post, commit=commit[:7], how=how, gpu=gpu, card=card),
            "unexpressed": [_PERCENT.format(err="1.9 GiB" if card == 192 else "0.64 GiB"), *unexpressed]}


_QLORA_HOW = ("QLoRA: NF4 with double quantization, compute dtype float16, prepare_model_for_int8_training "
              "(non-4-bit parameters in fp32, gradient checkpointing on), LoRA r=8 alpha 8 dropout 0.1 on q_proj "
              "and v_proj, optim paged_adamw_32bit")
_QLORA_FLAGS = (f"--qlora --precision bf16 {_LORA}--optimizer paged-adamw --gradient-checkpointing ")
_QLORA_UNEXPRESSED = ["bitsandbytes' ROCm fork (0.43.x) with a float16 compute dtype; the argv's --precision bf16 "
                      "only says 'no autocast' (the prepared model's activations are fp32 either way)",
                      "peft 0.9's reentrant checkpointing (use_reentrant=True)"]

ROWS = [
    _row("rocm-mi300x-llama2-7b-full-fp32", "rocm-blogs-llama-mi300x", "llama-Qlora", _MI300X_COMMIT,
         _MI300X_TABLE, "144",
         "full fine-tuning in fp32 (6,738,415,616 trainable, printed), default optim (adamw_hf), no checkpointing",
         "--precision fp32 --no-gradient-checkpointing ", "MI300X", 192, [_HF_ADAMW]),
    _row("rocm-mi300x-llama2-7b-lora-fp32", "rocm-blogs-llama-mi300x", "llama-Qlora", _MI300X_COMMIT,
         _MI300X_TABLE, "82.56",
         "LoRA r=8 alpha 8 dropout 0.1 on q_proj and v_proj over the fp32 base, default optim (adamw_hf), no "
         "checkpointing", f"--lora --precision fp32 {_LORA}--no-gradient-checkpointing ", "MI300X", 192,
         [_HF_ADAMW]),
    _row("rocm-mi300x-llama2-7b-qlora", "rocm-blogs-llama-mi300x", "llama-Qlora", _MI300X_COMMIT, _MI300X_TABLE,
         "11.52", _QLORA_HOW, _QLORA_FLAGS, "MI300X", 192,
         [*_QLORA_UNEXPRESSED, "the post's code says paged_adamw_32bit, its notebook paged_adamw_8bit (4,194,304 "
          "trainable parameters: 25 MB apart)"]),
    _row("rocm-mi250-llama2-7b-qlora-1gcd", "rocm-blogs-llama2-mi250", "llama2-Qlora", _MI250_COMMIT,
         _MI250_TABLE, "10.88", _QLORA_HOW, _QLORA_FLAGS, "MI250", 64, _QLORA_UNEXPRESSED),
]

_NAIVE_MP = ("two MI250 GCDs with device_map='auto': accelerate places half the decoder layers on each die and the "
             "batch runs through them in turn (naive model parallelism, one process); the CLI plans data-parallel "
             "and sharded strategies only")
for _key, _printed, _how in (
        ("rocm-mi250-llama2-7b-lora-2gcd", "83.2", "LoRA r=8 alpha 8 dropout 0.1 on q_proj and v_proj over the fp32 "
         "base, paged_adamw_32bit, no checkpointing (rocm-smi: 65% and 66% of the two 64 GiB GCDs)"),
        ("rocm-mi250-llama2-7b-full-2gcd", "128", "full fine-tuning in fp32, paged_adamw_32bit, no checkpointing "
         "(rocm-smi: 100% of both GCDs; it trained, in 3 hours)")):
    ROWS.append({"key": _key, "source": "rocm-blogs-llama2-mi250",
                 "url": _BLOGS.format(commit=_MI250_COMMIT, post="llama2-Qlora/README.md"), "quote": _MI250_TABLE,
                 "printed": _printed, "measured_bytes": int(round(float(_printed) * 2**30 / 2)),
                 "metric": "nvidia-smi", "ran": True, "argv": None, "not_expressible": _NAIVE_MP,
                 "assumptions": _SETTINGS.format(post="llama2-lora", commit=_MI250_COMMIT[:7], how=_how,
                                                 gpu="MI250 (two GCDs)", card=64) + "; the table's figure is the "
                 "sum over the two GCDs, halved here"})
