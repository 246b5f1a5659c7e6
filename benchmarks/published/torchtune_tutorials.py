"""Frozen: torchtune's LoRA and QLoRA tutorials (April 2024), Llama-2-7B on one GPU; not the README's table.

Both tables were written on 2024-04-15 (PR #693 "QLoRA tutorial", PR #702 "Update lora tutorial"); read at the
commit of the second, with the configs they name at that commit: recipes/configs/llama2/7B_lora_single_device.yaml
and 7B_qlora_single_device.yaml run lora_finetune_single_device.py with `dtype: bf16` (the whole model, adapters
included, in bf16; no autocast), `enable_activation_checkpointing: True`, torch.optim.AdamW, batch 2,
alpaca_cleaned_dataset (train_on_input, max_seq_len 512 by default: samples cut at 512 tokens) through
utils.padded_collate (each batch padded to its own longest). LoRA: rank 8 alpha 16 on q_proj and v_proj
(lora_llama2_7b's dropout 0.05); the LoRA tutorial's other rows add k_proj, output_proj, the MLP and the output
layer ("all layers") and/or rank 64 alpha 128. QLoRA (qlora_llama2_7b = lora_llama2_7b with quantize_base=True):
LoRA rank 8 on q/k/v/output_proj and the MLP, their base weights in torchao's NF4 (double-quantized scalers), the
rest in bf16.

What the number is: the QLoRA tutorial's "Peak memory reserved, training"; the LoRA tutorial's "Peak Memory" has
the same 15.57 GB for the same config, read as the same quantity. utils.memory_stats_log prints
torch.cuda.max_memory_reserved() / 1e9 ("GB", 10^9 bytes) and resets the peak each time it logs (every 100 steps):
the figure is the peak of one logging window. The GPU is not named; assumed an A100-80GB (80 GiB).
"""

from __future__ import annotations

_COMMIT = "ff594c23113891c99050f730c6be0aeacf511b2f"
_QLORA_URL = f"https://github.com/pytorch/torchtune/blob/{_COMMIT}/docs/source/tutorials/qlora_finetune.rst"
_LORA_URL = f"https://github.com/pytorch/torchtune/blob/{_COMMIT}/docs/source/tutorials/lora_finetune.rst"
_SETTINGS = (
    "torchtune at {commit}, {config}: Llama-2-7B in bf16 (dtype bf16, adapters too), activation checkpointing, "
    "torch AdamW, batch 2, Alpaca-cleaned cut at 512 tokens and padded to each batch's longest, {how}; peak "
    "torch.cuda.max_memory_reserved() over a 100-step logging window in 10^9 bytes; A100-80GB assumed"
)
_UNEXPRESSED = [
    "torchtune's own Llama-2 module and LoRALinear (adapters in bf16 under dtype bf16; the argv's bf16 LoRA counts "
    "PEFT's default fp32 adapters, each adapted linear keeping an fp32 copy of its input)",
    "the padded length of the window's longest batch (not printed; the argv says the 512-token cap)",
]
# The model is built in bf16 on the GPU (`with utils.set_default_dtype(self._dtype), self._device: model =
# config.instantiate(cfg_model)`, lora_finetune_single_device.py `_setup_model`): the embedding, norms, output layer
# and adapters stay bf16 (`utils.validate_expected_param_dtype(self.adapter_params.items(), dtype=self._dtype)`),
# no prepare_model_for_kbit_training: --no-kbit-prepare. Each quantized linear runs torchao 0.1's to_nf4 twice on
# the GPU, at build (LoRALinear `to_nf4(linear.weight)`) and at load (torchtune's NF4 `copy_` dispatch:
# `to_nf4(args[0][1].to(dest_tensor.device))`), and torchao 0.1's `quantize_tensor_nearest` materialises
# `diff = (value - nf4).abs()`: a (numel x 16) bf16 tensor and its abs (2 x 1.44 GB for an 11008 x 4096 MLP weight)
# plus int64 indices (0.36 GB). The caching allocator keeps those blocks: the tutorial's 9.13 GB reserved after
# model init (8.5 GiB), above the whole training step; the training peak (9.29 GB) reuses them.
_NF4_BUILD = ("torchao 0.1's NF4 quantization on the GPU at model build and state-dict load: "
              "quantize_tensor_nearest's (numel x 16) bf16 difference tensor and its abs (2 x 1.44 GB for the "
              "11008 x 4096 MLP weights, 0.36 GB of int64 indices) stay reserved by the caching allocator (9.13 GB "
              "reserved after init, before any step); the argv estimates bitsandbytes' loading")
_QV = "--lora-target q_proj --lora-target v_proj "
_ALL = "".join(f"--lora-target {m} " for m in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                "down_proj", "lm_head"))


def _row(key: str, url: str, quote: str, gb: float, flags: str, config: str, how: str, extra=()) -> dict:
    return {"key": key, "source": "torchtune-lora-qlora-tutorials", "url": url, "quote": quote,
            "printed": f"{gb:.2f} GB", "measured_bytes": int(round(gb * 1e9)), "metric": "reserved",
            "argv": "estimate --model llama-2-7b --system 1xA100-80GB --strategy single --precision bf16 "
                    f"{flags}--micro-batch 2 --seq-len 512 --varying-lengths --gradient-checkpointing "
                    "--attention sdpa --format json",
            "assumptions": _SETTINGS.format(commit=_COMMIT[:7], config=config, how=how),
            "unexpressed": [*_UNEXPRESSED, *extra]}


_LORA = "llama2/7B_lora_single_device.yaml"
ROWS = [
    _row("torchtune-llama2-7b-lora-r8-qv", _QLORA_URL,
         "LoRA                   13.98 GB                            15.57 GB", 15.57,
         f"--lora --lora-rank 8 --lora-dropout 0.05 {_QV}", _LORA, "LoRA rank 8 alpha 16 on q_proj and v_proj"),
    _row("torchtune-llama2-7b-lora-r8-all", _LORA_URL, "   * - all layers\n     - 8\n     - 16\n     - 15.87 GB",
         15.87, f"--lora --lora-rank 8 --lora-dropout 0.05 {_ALL}", _LORA + " with every layer adapted",
         "LoRA rank 8 alpha 16 on q/k/v/output_proj, the MLP and the output layer"),
    _row("torchtune-llama2-7b-lora-r64-qv", _LORA_URL, "   * - Q and V only\n     - 64\n     - 128\n     - 15.86 GB",
         15.86, f"--lora --lora-rank 64 --lora-dropout 0.05 {_QV}", _LORA + " with lora_rank 64",
         "LoRA rank 64 alpha 128 on q_proj and v_proj"),
    _row("torchtune-llama2-7b-lora-r64-all", _LORA_URL,
         "   * - all layers\n     - 64\n     - 128\n     - 17.04 GB", 17.04,
         f"--lora --lora-rank 64 --lora-dropout 0.05 {_ALL}", _LORA + " with every layer adapted, rank 64",
         "LoRA rank 64 alpha 128 on q/k/v/output_proj, the MLP and the output layer"),
    _row("torchtune-llama2-7b-qlora-r8", _QLORA_URL,
         "QLoRA                  9.13 GB                             9.29 GB", 9.29,
         "--qlora --no-kbit-prepare --lora-rank 8 --lora-dropout 0.05 --lora-target q_proj --lora-target k_proj "
         "--lora-target v_proj --lora-target o_proj --lora-target gate_proj --lora-target up_proj "
         "--lora-target down_proj ",
         "llama2/7B_qlora_single_device.yaml", "QLoRA: rank 8 alpha 16 on q/k/v/output_proj and the MLP over "
         "torchao NF4 base weights",
         ["torchao's NF4Tensor (block 64, scalers quantized in blocks of 256) instead of bitsandbytes",
          _NF4_BUILD]),
]
