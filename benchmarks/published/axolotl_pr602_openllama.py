"""Frozen: the VRAM an axolotl maintainer recorded in a pull request thread (source `axolotl-pr602-openllama-3b`).

axolotl-ai-cloud/axolotl#602 (2023-09-19, "more sane defaults for openllama 3b used for quickstarts", merged as
674c576): its author rewrote the three OpenLLaMA-3B quick-start configs the README points to and wrote in the
thread "verified on single gpu. vram usage recorded", one figure per config. Not the examples' READMEs (source
`axolotl-examples`): a thread, the configs at the PR's merge commit, a model none of those rows trains.

The code, read at 674c576: all three configs train openlm-research/open_llama_3b_v2 (3,426,473,600 parameters:
models/open-llama-3b-v2/config.json is its Hub config.json) on teknium/GPT4-LLM-Cleaned with `sequence_len: 1024`
and `sample_packing: true` (multipack: every row a packed 1,024-token block), `gradient_checkpointing: true` (the
Trainer's, reentrant on transformers of Sept 2023), `flash_attention: true` (axolotl's Llama flash-attn patch,
`replace_llama_attn_with_flash_attn(packed=cfg.sample_packing)`), accumulation 1; requirements.txt pins torch 2.0.1,
transformers and peft from their main branches, bitsandbytes >= 0.41.1.
* config.yml (full fine-tuning): `float16: true`, `fp16: false`, `bf16: false`: utils/config.py sets
  `cfg.torch_dtype = torch.float16` (`elif cfg.load_in_8bit or cfg.fp16 or cfg.float16`), so the weights load in
  fp16 and the Trainer runs no autocast: pure 16-bit training (--precision bf16: the same two bytes), micro batch
  1, `adamw_bnb_8bit` (bitsandbytes' AdamW8bit, not paged).
* qlora.yml: `load_in_4bit` with `adapter: qlora`: NF4, double quantization, fp16 compute dtype (models.py's
  BitsAndBytesConfig), LoRA r=8 alpha 32 dropout 0.05 on every linear (`lora_target_linear`), micro batch 2,
  `paged_adamw_32bit`, `fp16: true` (the Trainer's fp16 autocast). models.py runs prepare_model_for_kbit_training
  and then, for flash attention, casts every `norm`, `lm_head` and `embed_tokens` module back to fp16: the
  prepared fp32 copies do not stay (--no-kbit-prepare, as axolotl_examples.py reads the same code).
* lora.yml: `load_in_8bit: true`: an LLM.int8 base under LoRA, which the CLI cannot say (kept, not scored).

What the number is: "7gb", "4.5gb", "21gb" of "vram usage", the tool not named; read as the device's used memory
(nvidia-smi's) in GiB, as axolotl_examples.py reads the same project's "GB". The GPU is not named: the argv says one
A100-80GB (only the verdict and the CUDA context depend on it).
"""

from __future__ import annotations

_URL = "https://github.com/axolotl-ai-cloud/axolotl/pull/602"
_COMMIT = "674c57692d8f9712314c5238681d1b532af57142"
_CODE = f"https://github.com/axolotl-ai-cloud/axolotl/blob/{_COMMIT}/examples/openllama-3b/{{name}}.yml"
_MODEL = "benchmarks/published/models/open-llama-3b-v2/config.json"
_QUOTE = ("verified on single gpu. vram usage recorded\nlora - 7gb vram\nqlora - 4.5gb vram\nfull ft - 21gb vram")
_SETTINGS = (
    "axolotl#602 (2023-09-19), examples/openllama-3b/{name}.yml at {commit}: open_llama_3b_v2, 1,024-token "
    "multipack rows, gradient checkpointing, axolotl's Llama flash-attn patch, accumulation 1, {how}; torch "
    "2.0.1, transformers from main (Sept 2023: 4.34.0.dev0, the argv says --stack transformers==4.34.0); the "
    "figure read as GiB of nvidia-smi on one GPU; the GPU not named: one A100-80GB assumed"
)
_COMMON = ("--seq-len 1024 --fixed-lengths --gradient-checkpointing --attention flash --stack transformers==4.34.0 "
           "--format json")
_GPU = "the GPU model (not named) and so its CUDA context"
_TOOL = "how 'vram usage' was read (nvidia-smi, a W&B system chart) and when in the run: the thread does not say"


def _row(key: str, name: str, printed: str, how: str, flags: str | None, unexpressed: list[str]) -> dict:
    row = {"key": key, "source": "axolotl-pr602-openllama-3b", "url": _URL, "code_url": _CODE.format(name=name),
           "quote": _QUOTE, "printed": printed, "measured_bytes": int(round(float(printed[:-2]) * 2**30)),
           "metric": "nvidia-smi", "assumptions": _SETTINGS.format(name=name, commit=_COMMIT[:7], how=how)}
    if flags is None:
        return {**row, "ran": True, "argv": None, "not_expressible": unexpressed[0]}
    return {**row, "argv": f"estimate --model {_MODEL} --system 1xA100-80GB --strategy single {flags}{_COMMON}",
            "unexpressed": [*unexpressed, _TOOL, _GPU]}


ROWS = [
    _row("axolotl602-openllama3b-full", "config", "21gb",
         "full fine-tuning, weights loaded in fp16 without autocast (float16: true, fp16: false), micro batch 1, "
         "adamw_bnb_8bit", "--precision bf16 --optimizer adamw8bit --micro-batch 1 ",
         ["fp16 weights, gradients and compute where the argv says bf16 (the same bytes)"]),
    _row("axolotl602-openllama3b-qlora", "qlora", "4.5gb",
         "QLoRA: NF4 with double quantization and fp16 compute, LoRA r=8 alpha 32 dropout 0.05 on every linear, "
         "the prepared fp32 norms, embedding and lm_head cast back to fp16, fp16 autocast, micro batch 2, "
         "paged_adamw_32bit; bitsandbytes 0.41.1 (>= 0.41.1 pinned; the newest in Sept 2023)",
         "--qlora --lora-rank 8 --lora-dropout 0.05 --no-kbit-prepare --precision mixed --optimizer paged-adamw "
         "--micro-batch 2 --stack bitsandbytes==0.41.1 ",
         ["fp16 autocast and an fp16 compute dtype where the argv's mixed precision says 16-bit (the same bytes)"]),
    _row("axolotl602-openllama3b-lora-int8", "lora", "7gb",
         "LoRA r=8 alpha 16 on q/k/v/o and the MLP over an 8-bit base (load_in_8bit), micro batch 2, adamw_bnb_8bit",
         None, ["an 8-bit (LLM.int8, load_in_8bit) base under LoRA: the CLI says 16-bit and NF4 bases only"]),
]
