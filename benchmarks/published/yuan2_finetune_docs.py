"""Frozen: IEIT-Yuan/Yuan-2.0's own fine-tuning docs, two pages, two sources (split by page), each a measured table
"显存占用(1*GPU)" (GPU memory per GPU) beside the settings it ran: Yuan 2.0 2B, 51B and 102B (the vendor's models)
fine-tuned through two HF-Trainer frameworks the pages give the commands of.

* `yuan2-llama-factory-doc-2024`: docs/Yuan2_llama-factory.md at 633e629 (2024-01-02; the table first written
  2023-12-29, fbad61e, unchanged since), "实测数据参考": LLaMA-Factory (`git clone` of its main: e85c205, 2023-12-29,
  read there) on L40S: full fine-tuning of 2B under ZeRO-2 on 8 GPUs, LoRA of 51B/102B under ZeRO-3 on 8, QLoRA of
  2B/51B on one.
* `yuan2-fastchat-doc-2024`: docs/Yuan2_fastchat.md at 706e26a (2024-02-01, the commit that wrote the table),
  "微调实测数据参考": FastChat (lm-sys/FastChat 707d9ba, 2024-02-01, the commit that added its Yuan 2.0 code, read
  there; `transformers==4.31.0` pinned by the page) on L20: full 2B under ZeRO-2, LoRA 51B/102B under ZeRO-3, both
  at 2,048 and 1,024 tokens, QLoRA 2B on one GPU.

Read in the code of each framework:

* LLaMA-Factory (src/llmtuner/model/loader.py, patcher.py, adapter.py; hparams/): the model loads in the compute
  dtype (`--bf16` -> bf16 weights); under ZeRO-3 the TrainingArguments exist first, so from_pretrained runs under
  zero.Init; `_prepare_model_for_training` enables gradient checkpointing and hooks the lm_head's output to fp32
  (the loss on fp32 logits); no PEFT k-bit preparation (norms stay 16-bit: upcast_layernorm is off), trainable
  parameters cast to fp32; LoRA r=8, alpha 16, dropout 0.0 (its defaults); `lora_target` has no default and the
  page names none in a command ("可指定 q_proj, ..."): q_proj,v_proj assumed (LLaMA-Factory's README example);
  QLoRA = `--quantization_bit 4`: NF4 with double quantization, bf16 compute; `--sft_packing` packs samples to
  `cutoff_len` (fixed lengths); the Trainer's default optimizer of transformers 4.36.2 (`adamw_torch`), wrapped by
  DeepSpeed (`zero_allow_untested_optimizer`), no optimizer section in the ZeRO JSON.
* FastChat (fastchat/train/train_yuan2.py through train_mem.py; train_lora.py): full fine-tuning loads with no
  torch_dtype (fp32, cast to bf16 by DeepSpeed's engine: bf16 weights with fp32 master partitions); every sample is
  tokenized with `padding="max_length"` to model_max_length (fixed lengths); LoRA r=8, alpha 16, dropout 0.05 on
  q_proj,v_proj (its defaults; the page says "默认使用q_proj, v_proj"); under ZeRO-3 the base loads under zero.Init
  in bf16 (the JSON's bf16 'auto' -> on); QLoRA: NF4 double quantization with bf16 compute, transformers 4.31 makes
  the unquantized rest fp16 and PEFT's prepare_model_for_kbit_training casts it to fp32 (the k-bit preparation);
  transformers 4.31's default optimizer, `adamw_hf` (a per-parameter loop, resolved from --stack); Yuan's own loss
  (`CrossEntropyLoss` on the logits as they come, no upcast: bf16 under DeepSpeed, where there is no autocast).

Yuan 2.0's model (remote code, model_type yuan) is a Llama-like decoder (RMSNorm, rotary, SwiGLU of 4 x hidden, tied
embeddings, vocabulary 135,040) whose attention first runs a Localized Filtering gate: two Conv2d (hidden -> hidden/2
-> hidden, kernel (2, 1)) over each token and its predecessor, 2 x hidden^2 weights per layer. transformers has no
such layer: the argv names a Llama config.json of its shapes (models/yuan2-2b, -51b, -102b: hidden 2048/8192, 24/42/84
layers, 32/64 heads, intermediate 8192/32768) whose attention is 1.5 times wide (head_dim 96/192), so q/k/v/o carry
the filter's 2 x hidden^2 weights: 2.089B, 51.84B and 102.58B parameters, Yuan's counts less the filter's conv biases
and norm (under 0.01%). Yuan's HF config sets use_flash_attention true (the repository's docs/inference_server_cn.md:
turn it off only on Windows/CPU): --attention flash, both pages' Docker image being NGC pytorch:23.08 (torch 2.1.0).

What the number is: "显存占用(1*GPU)", one GPU's, how read not said: read as nvidia-smi's. Its unit "G" cannot be GiB:
the LLaMA-Factory page prints 47G for 102B on an L40S, whose whole memory is 46,068 MiB (44.99 GiB); read as 10^9
bytes (47G = 44,823 MiB) every figure fits its card. A figure at 95% or more of its card's memory (47G on an L40S,
97.3%; 45G on an L20, 95.4%) is read as the card full, a verdict (the run trained there), as glm4_finetune.py reads
its "80G": a caching allocator grown to the card says the run fit, not what it needed.

Scored, then read again (issue 28; the argv stays as scored): the 2B ZeRO-2 row's +55.9% (27.6 GiB against 19G) is
the fp32 loss its argv reads from e85c205, which no run under that figure can have computed. e85c205 hooks the
lm_head's output to fp32 (patcher.py `_prepare_model_for_training`), and the bf16 weights (whole under ZeRO-2, 4.18
GB), the fp32 master and AdamW partitions (3.13 GB) and the fp32 log-softmax with its two gradients at the loss's
backward (3 x 4 B x 4 x 2,048 x 135,040 = 13.27 GB) are 20.58 GB before any activation, bucket or CUDA context:
above 19 GB, above 20.40 GB were "G" GiB. LLaMA-Factory hooked full fine-tuning only from 921f593 (2023-12-24) to
be61bfd (2024-01-19, `upcast_lmhead_output` off by default); before, model/utils.py hooked `finetuning_type !=
"full"` only (at least since July 2023: fafec8b), and Yuan's own loss runs on the bf16 logits: `--loss-dtype bf16` reads
19.26 GiB, +8.8%. Which checkout ran is not printed: `--template yuan` reached main on 2023-12-28 18:40 +0800 (af3f5b6),
under 23 hours before the table (fbad61e) whose 51B QLoRA run alone took 22 h, so a checkout older than 921f593
with the template added locally is likely, not proven. The other rows are LoRA/QLoRA, hooked in every version.
"""

from __future__ import annotations

_REPO = "https://github.com/IEIT-Yuan/Yuan-2.0/blob/{commit}/docs/{page}"
_LF_COMMIT = "633e6290f320810e2b8175eb8cdbaf95a67d947a"  # 2024-01-02 "Add files via upload" (table of 2023-12-29)
_FC_COMMIT = "706e26aabb67bf5964629d7a573353a3eca625ae"  # 2024-02-01 "update yuan2.0 multi-turn chat finetuning..."
_LF = {"source": "yuan2-llama-factory-doc-2024", "url": _REPO.format(commit=_LF_COMMIT, page="Yuan2_llama-factory.md")}
_FC = {"source": "yuan2-fastchat-doc-2024", "url": _REPO.format(commit=_FC_COMMIT, page="Yuan2_fastchat.md")}

_YUAN = ("Yuan 2.0's remote modeling code (model_type yuan): the argv names a Llama config.json of its shapes whose "
         "attention is 1.5 times wide to carry the Localized Filtering gate's 2 x hidden^2 weights; the gate's own "
         "activations (two Conv2d outputs and a norm per layer, recomputed under checkpointing) are not those of "
         "the wider q/k/v")
_UNIT = ("'G' read as 10^9 bytes (47G on a 46,068 MiB L40S rules out GiB); how it was read (nvidia-smi, torch's "
         "counters) and at which step the page does not say")
_FLASH = ("flash attention assumed from Yuan's HF config (use_flash_attention true) and NGC pytorch:23.08; without "
          "flash-attn installed Yuan's code would not run")
_CARD = ("the figure is 95% or more of the card's memory: read as 'trained there', not as a peak (the caching "
         "allocator grown to the card)")
_LF_STACK = "--stack transformers==4.36.2 --stack torch==2.1.0"
_FC_STACK = "--stack transformers==4.31.0 --stack torch==2.1.0"
_LF_DATA = ("the page's 20K samples (mean 167 tokens) packed to cutoff_len {seq} (--sft_packing), 3 epochs; "
            "LLaMA-Factory e85c205 (transformers 4.36.2, its requirement of the day), NGC pytorch:23.08 (torch 2.1.0)")
_FC_DATA = ("52K alpaca samples made single-turn conversations, each padded to model_max_length {seq}; FastChat "
            "707d9ba, transformers 4.31.0 (the page's pin), NGC pytorch:23.08 (torch 2.1.0)")
_ZERO3_JSON = ("the ZeRO-3 JSON ('zero3_ds_woloading.json') is not printed on the page: DeepSpeed's defaults and "
               "'auto' buckets, no offload, assumed")
_LF_TARGET = "LoRA targets: the page names none (LLaMA-Factory has no default): q_proj,v_proj assumed"


def _m(name: str) -> str:
    return f"benchmarks/published/models/{name}/config.json"


def _row(page: dict, key: str, quote: str, printed: str, argv: str, what: str, unexpressed: list[str], *,
         ran: bool | None = None) -> dict:
    verdict = ran is not None
    return {"key": key, **page, "quote": quote, "printed": printed,
            "measured_bytes": None if verdict else int(round(float(printed.rstrip("G")) * 1e9)),
            "metric": "nvidia-smi", **({"ran": ran} if verdict else {}),
            "argv": f"estimate --model {argv} --gradient-checkpointing --attention flash --format json",
            "assumptions": what, "unexpressed": [_UNIT, _YUAN, _FLASH, *([_CARD] if verdict else []), *unexpressed]}


_LF_LORA = ("--strategy zero3 --precision bf16 --lora --lora-rank 8 --lora-target q_proj --lora-target v_proj "
            "--micro-batch 1 --gradient-accumulation 16 --seq-len 2048 --fixed-lengths")
_LF_QLORA = ("--system 1xL40S --strategy single --qlora --precision mixed --no-kbit-prepare --lora-rank 8 "
             "--lora-target q_proj --lora-target v_proj --micro-batch 1 --gradient-accumulation 16 --seq-len 1024 "
             "--fixed-lengths --stack bitsandbytes==0.41.3")
_LF_LORA_WHAT = ("Yuan 2.0 {size} LoRA through LLaMA-Factory under DeepSpeed ZeRO-3 on 8 x L40S (48 GB), bf16 base "
                 "loaded under zero.Init, LoRA r=8 alpha 16 dropout 0 on q_proj,v_proj (assumed) with fp32 adapters, "
                 "lm_head output hooked to fp32, batch 1 x accumulation 16 (global 128), checkpointing; "
                 + _LF_DATA.format(seq=2048))
_LF_QLORA_WHAT = ("Yuan 2.0 {size} QLoRA through LLaMA-Factory (--quantization_bit 4: NF4, double quantization, bf16 "
                  "compute; the rest bf16, no k-bit preparation) on one L40S, LoRA r=8 alpha 16 dropout 0 on "
                  "q_proj,v_proj (assumed), the Trainer's bf16 autocast, batch 1 x accumulation 16, checkpointing, "
                  "bitsandbytes 0.41.3 (>=0.39.0 on the page; December 2023's); " + _LF_DATA.format(seq=1024))

_LLAMA_FACTORY = [
    _row(_LF, "yuan2-lf-2b-full-zero2-8xl40s-2048",
         "|  ds_zero2_full| 2048            |  Yuan-2 2B     | bf16/bf16          | 8*L40s| 4/128           |19G     |",
         "19G", f"{_m('yuan2-2b')} --system 8xL40S --strategy zero2 --precision mixed --micro-batch 4 "
                f"--gradient-accumulation 4 --seq-len 2048 --fixed-lengths {_LF_STACK}",
         "Yuan 2.0 2B fully fine-tuned through LLaMA-Factory (the page's command: deepspeed --num_gpus=8, "
         "zero2_ds_woloading.json with bf16 'auto' -> on, overlap_comm false, buckets 5e8), bf16 weights with "
         "DeepSpeed's fp32 master partitions, the Trainer's torch AdamW, batch 4 x accumulation 4 (global 128), "
         "checkpointing, lm_head output hooked to fp32; " + _LF_DATA.format(seq=2048),
         ["the flops profiler the JSON enables (profile_step 1): one step profiled, its hooks' memory not counted"]),
    _row(_LF, "yuan2-lf-51b-lora-zero3-8xl40s-2048",
         "|  ds_zero3_lora| 2048            |  Yuan-2 51B    | bf16/bf16          | 8*L40s| 1/128           |34G     |",
         "34G", f"{_m('yuan2-51b')} --system 8xL40S {_LF_LORA} {_LF_STACK}", _LF_LORA_WHAT.format(size="51B"),
         [_ZERO3_JSON, _LF_TARGET]),
    _row(_LF, "yuan2-lf-102b-lora-zero3-8xl40s-2048-ran",
         "|  ds_zero3_lora| 2048            |  Yuan-2 102B   | bf16/bf16          | 8*L40s| 1/128           |47G     |",
         "47G", f"{_m('yuan2-102b')} --system 8xL40S {_LF_LORA} {_LF_STACK}", _LF_LORA_WHAT.format(size="102B"),
         [_ZERO3_JSON, _LF_TARGET], ran=True),
    _row(_LF, "yuan2-lf-2b-qlora-1xl40s-1024",
         "|  Qlora        | 1024            |  Yuan-2 2B     | int4/bf16          | 1*L40s| 1/16            |4.5G    |",
         "4.5G", f"{_m('yuan2-2b')} {_LF_QLORA} {_LF_STACK}", _LF_QLORA_WHAT.format(size="2B"), [_LF_TARGET]),
    _row(_LF, "yuan2-lf-51b-qlora-1xl40s-1024",
         "|  Qlora        | 1024            |  Yuan-2 51B    | int4/bf16          | 1*L40s| 1/16            |40G     |",
         "40G", f"{_m('yuan2-51b')} {_LF_QLORA} {_LF_STACK}", _LF_QLORA_WHAT.format(size="51B"), [_LF_TARGET]),
]

_FC_FULL_WHAT = ("Yuan 2.0 2B fully fine-tuned through FastChat's train_mem.py -> train_yuan2.py (torchrun on 8 x L20, "
                 "48 GB; zero2_ds_woloading.json, bf16 'auto' -> on), loaded fp32 and cast to bf16 by DeepSpeed "
                 "(fp32 master partitions), the Trainer's default adamw_hf, batch 1 x accumulation 16 (the table's "
                 "1/128; the page's command says 4 x 4), checkpointing, Yuan's loss on the bf16 logits; "
                 + _FC_DATA)
_FC_LORA_WHAT = ("Yuan 2.0 {size} LoRA through FastChat's train_lora.py under DeepSpeed ZeRO-3 on 8 x L20 (48 GB), "
                 "the base loaded under zero.Init in bf16, LoRA r=8 alpha 16 dropout 0.05 on q_proj,v_proj (its "
                 "defaults), batch 1 x accumulation 16 (global 128), checkpointing, Yuan's loss on the bf16 logits; "
                 + _FC_DATA)
_FC_FULL = "--system 8xL20 --strategy zero2 --precision mixed --micro-batch 1 --gradient-accumulation 16"
_FC_LORA = ("--system 8xL20 --strategy zero3 --precision bf16 --lora --lora-rank 8 --lora-dropout 0.05 "
            "--lora-target q_proj --lora-target v_proj --micro-batch 1 --gradient-accumulation 16")
_FC_ZERO3 = ("the ZeRO-3 JSON of the LoRA rows is not printed on the page: DeepSpeed's defaults and 'auto' buckets, "
             "no offload, assumed; the LoRA command shown is the single-GPU QLoRA one, its flags (checkpointing, "
             "bf16) assumed for the ZeRO-3 rows")
# the table's lines as printed (their cells' padding kept), keyed by (kind, sequence length, model)
_FC_LINES = {
    ("full", 2048, "2B"): "|  ds_zero2_full| 2048            |  "
                          "Yuan-2 2B     | bf16/bf16          | 8*L20| 1/128           |16G     |",
    ("lora", 2048, "51B"): "|  ds_zero3_lora| 2048            |  "
                           "Yuan-2 51B    | bf16/bf16          | 8*L20| 1/128           |43G     |",
    ("lora", 2048, "102B"): "|  ds_zero3_lora| 2048            |  "
                            "Yuan-2 102B   | bf16/bf16          | 8*L20| 1/128           |45G     |",
    ("full", 1024, "2B"): "|  ds_zero2_full| 1024            |  "
                          "Yuan-2 2B     | bf16/bf16          | 8*L20| 1/128           |15G     |",
    ("lora", 1024, "51B"): "|  ds_zero3_lora| 1024            |  "
                           "Yuan-2 51B    | bf16/bf16          | 8*L20| 1/128           |43G     |",
    ("lora", 1024, "102B"): "|  ds_zero3_lora| 1024            |  "
                            "Yuan-2 102B   | bf16/bf16          | 8*L20| 1/128           |42G     |",
    ("qlora", 1024, "2B"): "|  Qlora        | 1024            |  "
                           "Yuan-2 2B     | int4/bf16          | 1*L20| 1/16            |4.5G    |",
}


_FASTCHAT = [
    _row(_FC, f"yuan2-fc-2b-full-zero2-8xl20-{seq}", _FC_LINES["full", seq, "2B"],
         fig, f"{_m('yuan2-2b')} {_FC_FULL} --seq-len {seq} --fixed-lengths --loss-dtype bf16 {_FC_STACK}",
         _FC_FULL_WHAT.format(seq=seq), [])
    for seq, fig in ((2048, "16G"), (1024, "15G"))
] + [
    _row(_FC, f"yuan2-fc-{size.lower()}-lora-zero3-8xl20-{seq}" + ("-ran" if ran else ""),
         _FC_LINES["lora", seq, size], fig,
         f"{_m('yuan2-' + size.lower())} {_FC_LORA} --seq-len {seq} --fixed-lengths --loss-dtype bf16 {_FC_STACK}",
         _FC_LORA_WHAT.format(size=size, seq=seq), [_FC_ZERO3], ran=ran)
    for size, seq, fig, ran in (("51B", 2048, "43G", None), ("102B", 2048, "45G", True), ("51B", 1024, "43G", None),
                                ("102B", 1024, "42G", None))
] + [
    _row(_FC, "yuan2-fc-2b-qlora-1xl20-1024", _FC_LINES["qlora", 1024, "2B"],
         "4.5G", f"{_m('yuan2-2b')} --system 1xL20 --strategy single --qlora --precision mixed --lora-rank 8 "
                 "--lora-dropout 0.05 --lora-target q_proj --lora-target v_proj --micro-batch 1 "
                 f"--gradient-accumulation 16 --seq-len 1024 --fixed-lengths {_FC_STACK} --stack bitsandbytes==0.42.0",
         "Yuan 2.0 2B QLoRA through FastChat's train_lora.py --q_lora True (the page's command: one GPU, bf16, "
         "model_max_length 512 in the command, 1,024 in the table: the table's), NF4 double quantization with bf16 "
         "compute, PEFT's k-bit preparation (the unquantized rest fp32), LoRA r=8 alpha 16 dropout 0.05 on "
         "q_proj,v_proj, the Trainer's bf16 autocast, batch 1 x accumulation 16, checkpointing, bitsandbytes 0.42.0 "
         "(>=0.39.0 on the page; January 2024's); " + _FC_DATA.format(seq=1024), []),
]

ROWS = [*_LLAMA_FACTORY, *_FASTCHAT]
