"""Which set each source is in, and why: split by whole source (a page, a table, a results folder), never by row.

`design`: rows accelwiz was developed and tuned against; any constant fitted from a published row comes from one
of these (docs/performance.md, "Memory estimator accuracy", lists where the estimator cites them). `frozen`: rows
only scored; nothing is tuned on them. When a frozen source misses, the mechanism is fixed, the source moves to
`design`, and a new frozen source is found.
"""

SOURCES = {
    "hf-perf-train-gpu-one": (
        "design", "transformers' 'Efficient training on a single GPU' (bert-large, V100): the first rows; runtime.py "
        "takes its measured V100 CUDA context (1343 MiB) as EAGER_CONTEXT['volta']"),
    "peft-readme": (
        "design", "the PEFT README's T0_3B table: used while building the LoRA and ZeRO-3 offload accounting"),
    "peft-sft-guides": (
        "design", "PEFT's DeepSpeed and FSDP guides (Llama-2-70B): the FSDP loading and offload notes were checked "
        "against them"),
    "torchtune-readme": (
        "design", "torchtune's README table: FSDP2's root unit kept gathered was added after its 70B row missed"),
    "answerai-fsdp-qlora": (
        "design", "Answer.AI's fsdp_qlora benchmarks: fsdp_reserve.py's FSDP1 stream reserve and the allocator's "
        "retry (MemoryEstimate.retries_on) were fitted and checked on these rows and their H200 replays"),
    "peft-metamathqa": (
        "design", "frozen until this round (PEFT's method comparison, 2025, L40S); moved after its LoRA row "
        "(+43.5%) led to two mechanisms fixed in activations_lora.py: a frozen base keeps none of its inputs, and "
        "fp32 adapters over a bf16 base keep an fp32 copy each (tests/estimate/test_lora_frozen_base.py); its "
        "variable sequence length stays unexpressed"),
    "litgpt-config-hub": (
        "design", "frozen until this round (LitGPT's finetune config table, A10G); moved after its misses "
        "were read: the LoRA rows (+5..+9%) by the frozen-base fix above (now +0.0..+1.6%), the QLoRA rows (under) by "
        "bitsandbytes 0.42.0 keeping every 4-bit linear's input, which the argv now says (--stack: -34.5..-26.0% -> "
        "-29.2..-17.5%)"),
    "torchtitan-h100-2024": (
        "frozen", "new this round (torchtitan's Llama 3.1 H100 benchmark): never used to tune anything"),
    # Issue 28, second round of new sources. The split was fixed here before any of their rows was scored, by one
    # rule: the sources in the order they were found, odd positions frozen, even positions design (1 Qwen README,
    # 2 ms-swift benchmark, 3 ChatGLM3 finetune_demo, 4 Unsloth README).
    "qwen-readme-profiling": (
        "design", "frozen until this round (QwenLM/Qwen README 'Profiling of Memory and Speed', Qwen-1.8B/7B/14B/72B "
        "on A100-80G); moved after its Q-LoRA rows (over by up to +57.3%, growing with length) led to the loss dtype "
        "under DeepSpeed: no autocast there, so Qwen's remote-code loss on the fp16 logits is a 16-bit loss "
        "(--loss-dtype fp16 allowed with --precision mixed under ZeRO, estimate/loss_dtype.py); its 24 Q-LoRA rows "
        "went from -1.6..+57.3% to -5.6..+6.3%"),
    "ms-swift-benchmark-2024": (
        "design", "new (issue 28; found 2nd, even: design): ms-swift's LLM Benchmark page (Qwen/Yi on A100, swift "
        "1.x's max_memory_reserved in GiB): may be fitted to"),
    "chatglm3-finetune-demo": (
        "design", "frozen until this round (ChatGLM3 finetune_demo's 'Test hardware standards': ChatGLM3-6B LoRA on "
        "one GPU, full fine-tuning under ZeRO-3 on four); moved after its fp32 ZeRO-3 row's miss was read in "
        "DeepSpeed and modelled, nothing tuned: an fp32 model still gets a separate fp32 master partition (ZeRO-1/2 "
        "clone it; ZeRO-3's alias never matches), deepspeed_step.deepspeed_state_widths: -20.9% -> -8.6% "
        "(tests/estimate/test_deepspeed_fp32_master.py, real fp32 engines on the CPU)"),
    "unsloth-readme-context": (
        "design", "new (issue 28; found 4th, even: design): Unsloth README's longest context that fits for the "
        "'Hugging Face + FA2' baseline (Llama 3.1 8B and 3.3 70B QLoRA): verdict rows only, no peak printed"),
    # Issue 28, third round: three more sources, all frozen (registered here before any of their rows was scored).
    "universal-llm-trainer-gpu-test": (
        "design", "frozen until this round (ljm565/universal-llm-trainer docs/gpu_test.md, H100 table, 2025); moved "
        "after its misses were read in its code and two mechanisms modelled, nothing tuned: the trainer's own "
        "nn.CrossEntropyLoss on the bf16 logits (--loss-dtype bf16: LoRA +39.6/+54.6% -> -1.4/-3.1%), and QLoRA's "
        "fp32 non-quantized parameters without autocast keeping every activation fp32 (activations.kbit_fp32_stream: "
        "-37.3/-32.1% -> -10.4/-14.1%); tests/estimate/test_loss_dtype.py, test_kbit_fp32_stream.py"),
    "torchtune-lora-qlora-tutorials": (
        "design", "frozen until issue 28's choice of the middle of the varying-length cache growth (ea6437b), whose "
        "out-of-sample evidence it was part of (top -1.1% -> middle -4.0% median); first registered in the third "
        "round: torchtune's LoRA and QLoRA tutorials (April 2024; Llama-2-7B "
        "LoRA ranks and targets, QLoRA; peak reserved in GB), not the README table: never used to tune anything"),
    "litgpt-resource-tables": (
        "design", "new (issue 28, third round): LitGPT's tutorials/resource-tables.md (lit-gpt 8641822, "
        "A100-40GB, Oct 2023; Llama 2 7B/13B LoRA on one GPU, bf16-true, nf4 with and without double "
        "quantization), a different table from the config hub's; moved after its QLoRA misses were fixed: "
        "bitsandbytes 0.41.1 keeping every 4-bit linear's input, now in the argv (--stack), -21.9..-19.5% -> "
        "-10.7..-8.4%"),
    # Issue 28, fourth round: three more sources, all frozen (registered here before any of their rows was scored).
    # Verdict rows only (each printed "OOM", "No OOM" or a largest batch that ran): nothing to score but the verdict.
    "hf-blog-4bit-qlora": (
        "frozen", "new (issue 28, fourth round): HF blog 'Making LLMs even more accessible with bitsandbytes, 4-bit "
        "quantization and QLoRA' (May 2023), T4 table: LLaMA 7B/13B, 4-bit NF4/FP4 with and without gradient "
        "checkpointing at 512/1,024 tokens, OOM or not: never used to tune anything"),
    "hf-blog-pytorch-fsdp": (
        "frozen", "new (issue 28, fourth round): HF blog 'Accelerate Large Model Training using PyTorch FSDP' "
        "(April 2022), GPT-2 Large/XL on 2 x Titan RTX 24 GB: largest batch that ran under DDP, FSDP1 and FSDP1 "
        "with CPU offload, DDP out of memory: never used to tune anything"),
    "hf-blog-accelerate-deepspeed": (
        "frozen", "new (issue 28, fourth round): HF blog 'Accelerate Large Model Training using DeepSpeed' (June "
        "2022), 2 x Titan RTX 24 GB: GPT-2 XL under ZeRO-3 with CPU offload (batch 16 ran) and DDP (out of "
        "memory at batch 1); its encoder and seq2seq tables kept as not expressible: never used to tune anything"),
    # Issue 28, fifth round (framework docs and blog posts): registered here, frozen, before any row was scored.
    "raschka-lora-insights-2023": (
        "design", "new (issue 28, fifth round): Sebastian Raschka's LoRA/QLoRA experiments (Lightning AI 'Finetuning "
        "LLMs with LoRA and QLoRA: Insights from Hundreds of Experiments', Oct 2023, and Ahead of AI 'Practical Tips "
        "for Finetuning LLMs Using LoRA', Nov 2023): Llama 2 7B on one A100 with lit-gpt bf60124, bf16 LoRA and "
        "NF4/FP4 QLoRA, ranks 8-256, query/value or every linear, AdamW or SGD; 'Memory used' = "
        "max_memory_allocated; moved after its QLoRA misses were fixed: bitsandbytes 0.41.1 (October 2023's) keeping "
        "every 4-bit linear's input, now in the argv (--stack), r=8 -23.9/-12.6% -> -12.6/-2.9%, while the r=256 "
        "rows went +2.3/+17.3% -> +11.2/+28.4% (a rank-dependent over-count the old miss hid)"),
    "torchtune-llama3-tutorial": (
        "frozen", "new (issue 28, fifth round): torchtune's 'Llama3 in torchtune' tutorial (April 2024, 20747cd), "
        "Llama3-8B LoRA on one GPU (18.5 GB peak), not the README table nor the LoRA/QLoRA tutorials: never used to "
        "tune anything"),
    "hf-blog-llama2-70b-fsdp": (
        "design", "frozen until this round (HF blog 'Fine-tuning Llama 2 70B using PyTorch FSDP', Sept 2023: full "
        "fine-tuning on 2 x 8 A100 80GB under FSDP1 with bf16 mixed precision, measured to run, a verdict row); "
        "moved after its contradiction was read and modelled, nothing tuned: the Trainer's paged_adamw_32bit, listed "
        "unexpressed for want of a word, is --optimizer paged-adamw (bitsandbytes' states in CUDA managed memory, "
        "no step temporary; the GPU judged without them where they do not fit: estimate/paged_states.py): 'does not "
        "fit' at 96.5 GiB -> 'fits' at 57.3 GiB (89.4 GiB with the 32.1 GiB of paged states, paged to host RAM)"),
    "trl-docs-sft-llama2-t4": (
        "frozen", "new (issue 28, fifth round): TRL's docs (lora_tuning_peft.mdx at 5857d0a, July 2023): Llama-2-7b "
        "QLoRA with the official SFT script 'tested on a single NVIDIA T4-16GB' (a verdict row, no peak printed): "
        "never used to tune anything"),
    # Issue 28, fifth round (model repositories): registered here, frozen, before any row was scored.
    "glm4-finetune-demo": (
        "design", "frozen until issue 28's long-run cache finding (varying_lengths.py: the LoRA row +17.5 -> -2.1%); "
        "first registered in the fifth round: GLM-4's finetune_demo 'Hardware check' table (c0a6d1e, June 2024), "
        "GLM-4-9B-Chat on A100-SXM4-80GB: LoRA on one GPU, fp32 full fine-tuning under ZeRO-3 on eight, nvidia-smi "
        "MiB per GPU; not ChatGLM3's demo: never used to tune anything. Its fp32 ZeRO-3 row (80,935 of the card's "
        "81,920 MiB, written '80G (Each GPU, Need 8 GPUs)' by the authors at b9d6d38) is the card full, read as a "
        "verdict: 'ran' (was scored at -51.7%; the estimate says fits, 39.6 GiB with ZeRO-3's prefetch hold); "
        "nothing tuned"),
    "minicpm-finetune": (
        "design", "frozen until issue 28's ZeRO-3 prefetch finding (MiniCPM's finetune README 'Testing Hardware "
        "Standard', a250c20, Feb 2024: MiniCPM-2B under ZeRO-3 with parameter and optimizer CPU offload, full "
        "fine-tuning on four GPUs, LoRA on one, nvidia-smi MiB per GPU); moved after its misses were read in "
        "DeepSpeed, nothing tuned: ZeRO-3's prefetch cursor keeps gathered parameters up to "
        "stage3_max_live_parameters whatever the reuse distance (measured on a real engine on the CPU: "
        "zero3_gathered.py _prefetch_held), full -76.1% -> -72.6%, LoRA -41.1% -> -31.2%; the rest (about 21 and "
        "3 GiB) is not identified"),
    # Issue 28, sixth round (papers and training repositories): registered here, frozen, before any row was scored.
    # Verdict rows only: each page says a run trained on named hardware and prints no peak.
    "stanford-alpaca-readme": (
        "frozen", "new (issue 28, sixth round): Stanford Alpaca's README (761dc5b, May 2023), LLaMA-7B fully "
        "fine-tuned on 4 A100 80G under the Trainer's FSDP full_shard (fp32 weights, bf16 mixed precision, batch "
        "4, 512 tokens, no checkpointing): measured to run; never used to tune anything"),
    "fastchat-training": (
        "frozen", "new (issue 28, sixth round): FastChat's README 'Fine-tuning' (c478bbf Sept 2023 and 00d9e66 April "
        "2023): Vicuna-7B full fine-tuning on 4 x A100 40GB and the SkyPilot recipe's LLaMA-13B/7B on 8 x A100 "
        "80GB, FSDP full_shard, fp32 weights with bf16 mixed precision, 2,048 tokens, checkpointing, flash-attn: "
        "stated to train there; never used to tune anything"),
    "qlora-guanaco-readme": (
        "design", "frozen until this round, moved after its one row's contradiction was read and its mechanism "
        "modelled (bitsandbytes' paged_adamw_32bit: no foreach temporary, states in CUDA managed memory that pages "
        "to the host, estimate/paged_states.py; the argv's `--optimizer adamw` became `paged-adamw`, the word the "
        "row listed as missing): 'does not fit' 50.2 of 44.7 GiB -> 'tight' 40.5 GiB on the GPU with 6.0 GiB of "
        "paged states in host RAM. Was: new (issue 28, sixth round): the QLoRA repository's README "
        "(artidoro/qlora 7f4e95a, the paper's "
        "abstract): a 65B model fine-tuned on a single 48GB GPU with scripts/finetune_guanaco_65b.sh (NF4 double "
        "quantization, LoRA r=64 on every linear, batch 1, 528 tokens, paged AdamW): measured to run; never used "
        "to tune anything"),
    "alignment-handbook-zephyr": (
        "frozen", "new (issue 28, sixth round, registered after the three above were scored and before this one "
        "was): the alignment-handbook's Zephyr-7B-beta recipe README (f0ffa0d, Jan 2024), full SFT (batch 16 x "
        "2,048 packed, flash-attn 2) and DPO (batch 8, 512 + 512) of Mistral 7B under DeepSpeed ZeRO-3 on 8 x 80 "
        "GB: stated to train there; never used to tune anything"),
    # Issue 28, seventh round (notebooks and vendor blog repositories): registered here, frozen, before any row was
    # scored. rocm_blogs_llama.py: one recipe (trl 0.4.7 SFTTrainer, Llama-2-7B, rocm-smi VRAM%), one GPU per source.
    "rocm-blogs-llama-mi300x": (
        "design", "frozen until issue 28's long-run cache finding, whose out-of-sample evidence it was part of "
        "(varying_lengths.py: +4.5/+5.3/+13.6 -> +2.1/+1.1/-16.5%); first registered in the seventh round: AMD's ROCm "
        "blog posts 'Fine-tune Llama model with LoRA' and "
        "'Enhancing LLM Accessibility: A Deep Dive into QLoRA' (ROCm/rocm-blogs 876d80c, Oct 2024), Llama-2-7B on "
        "one MI300X: fp32 full fine-tuning, fp32 LoRA and QLoRA, rocm-smi VRAM% in GB: never used to tune anything"),
    "rocm-blogs-llama2-mi250": (
        "design", "frozen until issue 28's long-run cache finding (varying_lengths.py: the QLoRA row +20.3 -> -11.6%); "
        "first registered in the seventh round: the same recipe's earlier posts (ROCm/rocm-blogs llama2-lora and "
        "llama2-Qlora, 0864e24, July 2024) on an MI250: QLoRA on one GCD (scored), LoRA and full fine-tuning split "
        "over two GCDs by device_map='auto' (not expressible): never used to tune anything"),
    # Verdict rows only (each notebook names the instance it ran on; no peak printed).
    "databricks-ml-examples": (
        "frozen", "new (issue 28, seventh round, registered after the two ROCm sources were scored and before this "
        "one was): Databricks' LLM fine-tuning notebooks (databricks/databricks-ml-examples 4b1b32f, Aug-Nov 2023): "
        "QLoRA of Llama-2-7B/13B and Mistral-7B on one A10G and Llama-2-70B on one A100 80GB (TRL SFTTrainer, r=64 "
        "on every block linear, fp16), full fine-tuning of Llama-2-7B/13B and Mistral-7B under ZeRO-3 with "
        "parameter and optimizer offload (8 x A100 40GB, 4 x A100 80GB, 8 x A10G, one A10G): stated to run there; "
        "never used to tune anything"),
    # Issue 28, eighth round (framework benchmark pages): registered here, frozen, before any row was scored.
    "liger-kernel-hf-example": (
        "design", "frozen until this round (Liger-Kernel's examples/huggingface README benchmark, 03fd603 and 1129508, "
        "Aug 2024: Llama-3-8B, Qwen2-7B, Gemma-7B full fine-tuning with TRL's SFTTrainer under the Trainer's FSDP1 on "
        "4 x A100 80GB, with and without Liger); moved after its stated transformers 4.43.3 (--stack) made the "
        "no-Liger Qwen2 row +31.5% and two rows measured to run 'does not fit': read on the real ops, the old "
        "shifted loss adds to forward only, not backward (activations.loss_transient_bytes; "
        "tests/estimate/test_transformers_version.py): +31.5 -> +12.9%, no contradiction; nothing tuned"),
    "torchao-low-bit-optim-llama2": (
        "design", "frozen until this round (torchao's low-bit optimizer README, 1e7f132, Sept 2024: Llama2-7B full "
        "BF16 with torchtune on one A100, fused and bitsandbytes 8-bit AdamW); moved after its fused-AdamW row "
        "(+21.6%: a foreach temporary the run never had) led to --optimizer-kernel fused: -2.7%; nothing tuned"),
    # Issue 28, eighth round (issue threads: users' own measurements, one source per repository's tracker):
    # registered here, frozen, before any row was scored (one argv, trl#1376's DDP full fine-tuning, was run once
    # to check that the OPT stand-in parses; nothing was changed after it).
    "trl-issues-memory-reports": (
        "design", "frozen until issue 28's base-dtype finding (huggingface/trl's issue tracker: trl#1376, Feb "
        "2024, TRL's examples/scripts/sft.py at b32656f on facebook/opt-350m, batch 64 x 512 packed tokens, "
        "accumulation 16, full and LoRA r=64, under DeepSpeed ZeRO-3 and DDP, the user's per-GPU GB); moved after "
        "its rows were read term by term (OPT as an exact family, fe7a7f4: -15.0/-19.7/-1.6/-32.6 -> "
        "-9.6/-15.3/+4.4/-28.3%) and its LoRA DDP row could say the fp32 base TRL loaded (--base-dtype fp32, new): "
        "-28.3 -> -26.5%, the rest of that miss not found; nothing tuned"),
    "llamafactory-issues-memory-reports": (
        "design", "frozen until issue 28's zero.Init finding, moved after #3035's miss (estimated 'tight' at 23.1 "
        "GiB, measured out of memory) was read in accelerate and DeepSpeed, nothing tuned: accelerate < 1.0 honours "
        "a YAML's zero3_init_flag false, and DeepSpeed's engine then moves the whole 16-bit model to every GPU "
        "before partitioning it (Strategy.zero_init, a8d1648; a real ZeRO-3 engine on the CPU); the row's argv says "
        "the accelerate of its date (--stack accelerate==0.28.0, new): 'does not fit', 26.4 GiB. The source: "
        "hiyouga/LLaMA-Factory's issue tracker, verdict rows, each out of memory: #4133 Qwen1.5-7B full SFT under ZeRO-2 on 8 x A100 40GB, #5187 Qwen2-72B LoRA under DDP on 4 x "
        "A100 80GB, #3259 Qwen1.5-32B full SFT at 32k tokens under ZeRO-3 offload on 8 x A100, #1409 Qwen-14B "
        "LoRA under ZeRO-2 on 8 x RTX 3090, #3035 Qwen1.5-14B LoRA under ZeRO-3 without zero.Init on 2 x RTX "
        "4090 (its Accelerate YAML); #7055 (72,782 MiB, Liger under ZeRO-3) kept as not expressible"),
    "openrlhf-issues-memory-reports": (
        "frozen", "new (issue 28, eighth round): OpenRLHF/OpenRLHF's issue tracker, verdict rows: #698 (Jan 2025) "
        "Llama-3-8B full SFT under ZeRO-2 on one A100 80GB out of memory in the optimizer step, and trained with "
        "--adam_offload; never used to tune anything"),
    # Issue 28, ninth round (cloud and GPU vendors' pages): registered here, frozen, before any row was scored.
    "openshift-ai-ray-deepspeed": (
        "frozen", "new (issue 28, ninth round): Red Hat OpenShift AI's 'Fine-Tune Llama Models with Ray and "
        "DeepSpeed' README validations (opendatahub-io/distributed-workloads 67f8f3e June 2024, 59d183e and 6a359d5 "
        "Aug-Sept 2024): LoRA r=8 (block linears, embed_tokens, lm_head) under ZeRO-3 with CPU offload, bf16, "
        "flash-attn 2, checkpointing, fixed 512/1,024-token batches: Llama-2-7B/13B on 6 x A10G, Llama-2-70B on 8 x "
        "A100 40GB, Llama-3.1-8B on 5 x A10G and 4 x MI300X: verdict rows, stated to run; never used to tune "
        "anything"),
    "vertex-model-garden-peft-2023": (
        "design", "frozen until issue 28's long-run cache finding (varying_lengths.py: Falcon-7B +25.5 -> -6.5%, "
        "Falcon-40B +17.3 -> +7.0%); first registered in the ninth round: Google Cloud Vertex AI Model Garden's PEFT "
        "notebook (vertex-ai-samples "
        "0a22ad7, July 2023) with its training image's code (f3be7fa): Falcon-7B/40B-instruct QLoRA (NF4, r=64, trl "
        "0.4.4 SFTTrainer, batch 4 x 512, fp16 autocast, paged AdamW) on one A100 40GB, peak GPU memory ~11G and "
        "~34G; its OpenLLaMA 8-bit LoRA and RoBERTa classification figures kept as not expressible; never used to "
        "tune anything"),
    "lambda-training-guide-405b": (
        "design", "frozen until issue 28's plain-FSDP finding (Lambda's distributed-training-guide 'Training a 405B "
        "model', d636f78, Sept 2024: Llama 3.1 405B full training in plain torch FSDP1 with CPU parameter offload on "
        "8 x 8 H100, bf16, flash-attn 2, checkpointing, batch 1 x 4,096: rank 0's peak allocated 52.9 GB and "
        "reserved 77.9 GB, batch 2 out of memory); moved after its miss and llama-recipes' were read in torch and "
        "accelerate, nothing tuned: FSDP outside accelerate keeps a bf16 model's shards, gradients and AdamW states "
        "bf16 (--no-fsdp-upcast, new; a real FSDP2 model on the CPU): allocated +9.0 -> -3.1%, reserved +7.2 -> "
        "-7.9%"),
    # Issue 28, ninth round (Hugging Face's own pages): registered here, frozen, before any row was scored.
    "hf-blog-personal-copilot": (
        "design", "frozen until issue 28's accumulation finding (HF blog 'Personal Copilot: Train Your Own Coding "
        "Assistant', Oct 2023, with the DHS-LLM-Workshop code it links, 797a0af: StarCoder-15.5B QLoRA on one A100 "
        "40GB, 26 GB, batch 4 x 2,048, accumulation 4; full fine-tuning under FSDP1 on 8 x A100 80GB, 70 to 77.6 GB "
        "per GPU, batch 1 x 2,048, accumulation 2); moved after its FSDP1 miss was read in accelerate and torch, "
        "nothing tuned: gradients stay live across accumulated micro-batches and accelerate's no_sync keeps FSDP's "
        "unsharded gradient (estimate/accumulation.py, real Trainer and FSDP2 objects on the CPU), the argv now says "
        "the accumulation its source states (--gradient-accumulation, new): FSDP1 -42.1% -> -8.2%, QLoRA -0.7% -> "
        "+1.3%"),
    "hf-blog-launch-trl-qlora": (
        "frozen", "new (issue 28, ninth round): HF model-launch posts' 'Fine-tuning with TRL' sections, verdict rows "
        "read with TRL's examples/scripts/sft.py of each post's day: Mixtral-8x7B QLoRA on one A100 (Dec 2023, "
        "393dbf6), Gemma-7B and Llama 3 8B QLoRA on one A10G (Feb 2024, a46cd84; April 2024, 0865572), each "
        "stated to train there; never used to tune anything"),
    "hf-cookbook-code-llm-single-gpu": (
        "frozen", "new (issue 28, ninth round): HF cookbook 'Fine-tuning a Code LLM on Custom Code on a single GPU' "
        "(Jan 2024): StarCoderBase-1B QLoRA, batch 16 x 2,048, on Colab's A100 40GB, its 2,000 steps printed as "
        "run (a verdict row); never used to tune anything"),
    # Registered after the three above were scored, before any of its rows was.
    "alignment-handbook-recipes-2024": (
        "frozen", "new (issue 28, ninth round): the alignment-handbook's other full-training recipe READMEs "
        "(zephyr-7b-gemma ff618a4, starchat2-15b a9b8a50, constitutional-ai 8df2271; not the Zephyr-7B-beta "
        "page): Gemma-7B, StarCoder2-15B and Mistral-7B SFT and DPO under DeepSpeed ZeRO-3, each 'You will require "
        "8 GPUs (80GB of VRAM)', verdict rows read with each commit's configs and scripts; the RMSprop DPO step "
        "kept as not expressible; never used to tune anything"),
    # Issue 28, tenth round (PR and issue threads that print measured memory): registered here, frozen, before any
    # row was scored.
    "llama-recipes-threads": (
        "design", "frozen until issue 28's plain-FSDP finding (facebookresearch/llama-recipes', now "
        "meta-llama/llama-cookbook, PR and issue threads, its own FSDP1 loop in pure bf16: PR #41 Llama-2-7B LoRA on "
        "4 x A100 40GB, #100 Llama-2-7B full on 4 x A100 40GB, #120 Llama-2-70B full on 16 x A100 80GB with AdamW "
        "and AnyPrecisionAdamW, #37 Llama-2-13B LoRA on 8 x A10G out of memory at batch 1); moved after its full "
        "fine-tuning misses were read in torch, nothing tuned: mixed_precision=None over a bf16 model keeps bf16 "
        "shards, gradients and AdamW states (--no-fsdp-upcast, new): #120 AdamW +108.7/+53.2 -> +9.3/-23.5% and "
        "its two 'does not fit' verdicts gone, #100 +29.2/+36.4 -> -20.8/-22.5% (use_cache's key/value cache, "
        "unexpressed); #37's 'fits' for a run out of memory stays open (torch 2.0.1's FSDP1 not resharding frozen "
        "parameters in backward, a maintainer's reading, not modelled)"),
    # Registered after llama-recipes-threads was scored, before any of its rows was.
    "fms-acceleration-pr14-bench": (
        "design", "frozen until issue 28's fp32-stream finding (foundation-model-stack/fms-acceleration PR #14, May "
        "2024, f1895b7, and the benchmark CSV it committed: fms-hf-tuning's SFTTrainer on one A100 80GB, "
        "Mistral-7B / Mixtral-8x7B / Llama-2-70B, pure fp16 full and LoRA, bitsandbytes NF4 QLoRA through "
        "SFTTrainer's and the plugin's preparation, batch 4 and 8 x 4,096 packed tokens, the Trainer's "
        "max_memory_allocated); moved after its SFTTrainer QLoRA misses were read in PEFT and bitsandbytes, nothing "
        "tuned: after prepare_model_for_kbit_training the residual stream stays fp32 under autocast "
        "(layer_terms.fp32_stream; a real prepared NF4 Llama on the CPU): -29.7/-33.2/-21.0/-28.8 -> "
        "-10.9/-11.9/-11.7/-15.9%, its 70B bs4 out of memory 'tight' -> 'does not fit'"),
    # Issue 28, tenth round (framework docs and recipe pages outside Hugging Face): registered here, frozen, with
    # their rows written and before any of them was scored.
    "axolotl-examples": (
        "design", "frozen until issue 28's fp32-stream finding (axolotl's example READMEs read with the config "
        "beside each: llama-2 dc71d88, Llama-2-7B QLoRA 'about 17 GB' on an RTX 4090; yi-34B-chat 6ef46f8, a "
        "verdict row; llama-3 15f7910, Llama-3-8B full '48GB' and Llama-3-70B QLoRA under FSDP1 with parameter "
        "offload 'Dual GPU @ 21GB'); moved after its Llama-2 QLoRA miss (-25.4%, a prepared model's fp32 stream "
        "under autocast) was read and modelled, nothing tuned: -25.4 -> -10.6%; its Llama-3-8B full row (+44.9%: "
        "'48GB' may name the card) and the 70B FSDP1 offload reserve (+14.2%) not yet explained"),
    "ms-swift-example-scripts": (
        "design", "frozen until issue 28's long-run cache finding (the growth of batches of varying length is a bound "
        "beside the step's reserve, not in it: estimate/varying_lengths.py; nine rows +1.1..+40.6%, median +20.5% -> "
        "-15.5..+7.4%, median -2.6%); first registered in the tenth round: ms-swift's example sft.sh scripts' headers "
        "('# 18GB GPU memory', "
        "swift 1.2-1.6, Oct 2023 - Feb 2024), each read at the commit that wrote its figure: Qwen-1.8B/7B/14B/72B-Chat "
        "and Yi-6B/34B, LoRA, QLoRA (no k-bit preparation) and full fine-tuning on one A10 or A100, ZeRO-2 with "
        "optimizer offload and DDP on two GPUs; not the Benchmark page (ms-swift-benchmark-2024): never used to "
        "tune anything"),
    # Issue 28, eleventh round (PR and issue threads): registered here, frozen, with its rows written and before
    # any of them was scored.
    "axolotl-pr602-openllama-3b": (
        "frozen", "new (issue 28, eleventh round): axolotl-ai-cloud/axolotl PR #602 (Sept 2023, merged as 674c576): "
        "the 'vram usage recorded' on one GPU for the OpenLLaMA-3B quick-start configs (full fine-tuning in pure "
        "fp16 with 8-bit AdamW, NF4 QLoRA, an 8-bit LoRA kept as not expressible); not the example READMEs "
        "(axolotl-examples): never used to tune anything"),
    # Issue 28, eleventh round (independent blog posts and tutorials): registered here, frozen, with their rows
    # written and before any of them was scored (philschmid_blog.py).
    "philschmid-fsdp-qlora-llama3-2024": (
        "frozen", "new (issue 28, eleventh round): Philipp Schmid's 'Efficiently scale distributed training Llama 3, "
        "PyTorch FSDP and Q-Lora' (philschmid/deep-learning-pytorch-huggingface 4a0caad, April 2024): Llama 3 70B "
        "QLoRA under the Trainer's FSDP1 with CPU offload on 4 x A10G, '22 GB/GPU'; never used to tune anything"),
    "philschmid-llms-2025-guide": (
        "design", "frozen until issue 28's Liger finding (b4dec65: ZeRO-3 gathers an untied head read inside "
        "the model's forward; its two ZeRO-3 Liger rows, refused before, now 'fits', as they ran); first "
        "registered as new (issue 28, eleventh round): Philipp Schmid's 'How to fine-tune open LLMs in 2025' (391f19b, "
        "Dec 2024): Llama-3.1-8B QLoRA (embedding and head in modules_to_save) on 1, 4 and 8 L4 24GB, the last two "
        "under ZeRO-3, each with a train time (verdict rows); its Spectrum row kept as not expressible; never used "
        "to tune anything"),
    "philschmid-llms-2024-guide": (
        "design", "frozen until issue 28's TRL finding (--stack trl==X: TRL's SFTTrainer 0.7.5-0.25 casts a "
        "k-bit-prepared QLoRA's embedding and LM head back to bf16): its Llama-3.1-8B r=256 row on an L4 'does "
        "not fit' 24.4 GiB -> 'tight'; first registered as new (issue 28, eleventh round): Philipp Schmid's "
        "'How to Fine-Tune LLMs in 2024 with Hugging "
        "Face' (1e1bcfe Jan 2024, 10ad907 Aug 2024): CodeLlama-7B on a g5.2xlarge (A10G) and Llama-3.1-8B on a "
        "g6.2xlarge (L4), QLoRA r=256, packed 3,072/2,048 tokens, each 'took' a stated time (verdict rows); never "
        "used to tune anything"),
    # Registered after the three above were scored, with their rows written, before any of theirs was.
    "philschmid-llama2-qlora-2023": (
        "frozen", "new (issue 28, eleventh round): Philipp Schmid's 'Extended Guide: Instruction-tune Llama 2' "
        "(instruction-tune-llama-2-int4.ipynb at b66a122, July 2023): Llama-2-7B QLoRA r=64 on q/v, paged AdamW, "
        "batch 4 (eager) and 6 (flash-attn patch) x 2,048 packed tokens, each 'took' a stated time on a g5.2xlarge "
        "(one A10G; verdict rows); never used to tune anything"),
    "philschmid-gemma-chatml-2024": (
        "frozen", "new (issue 28, eleventh round): Philipp Schmid's 'How to Fine-Tune Gemma with ChatML and Hugging "
        "Face TRL' (gemma-lora-example.ipynb at a624720, March 2024): Gemma-7B QLoRA r=6 on every linear, batch 2 x "
        "1,512 packed tokens, flash attention 2, 'took 4:14:36' on a g5.2xlarge (one A10G; a verdict row); never "
        "used to tune anything"),
    "litgpt-pr275-qlora": (
        "design", "frozen until issue 28's base-dtype finding (Lightning-AI/lit-gpt PR #275, Aug 2023, merged as "
        "064fd52: StableLM-3B and Llama-2-7B LoRA r=8 on query/value, bf16-mixed or bf16-true, with and without "
        "bitsandbytes NF4, max_memory_allocated in 10^9 bytes); moved after its bf16-mixed rows were read in "
        "Fabric, nothing tuned: bf16-mixed keeps the frozen weights fp32 under autocast (--base-dtype fp32, new): "
        "StableLM -24.1 -> +18.0% (gpt_neox's approximate activation term and PEFT's fp32 adapters beside "
        "lit-gpt's bf16 ones over-count now), Llama-2-7B 'fits' -> 'does not fit' for its printed OutOfMemoryError"),
    # Issue 28, twelfth round (PR and issue threads): registered here, frozen, with its rows written and before any
    # of them was scored (torchtune_memory_prs.py).
    "torchtune-memory-prs": (
        "frozen", "new (issue 28, twelfth round): pytorch/torchtune PR threads that print their own runs' memory, "
        "not its README nor its tutorials: #389 (Feb 2024, RFC: Llama-2-7B full fine-tuning on one GPU, batch 1, "
        "no checkpointing: the fp32-with-autocast recipe out of memory with AdamW and above 55 GB with SGD, pure "
        "bf16 AdamW without foreach at ~54 GB allocated) and #527 (March 2024, PagedAdamW stepped in backward, "
        "13.99 GB, not expressible): never used to tune anything"),
    # Issue 28, twelfth round (model vendors' own fine-tuning READMEs): registered here, frozen, with its rows
    # written and before any of them was scored.
    "dolly-readme-training": (
        "design", "moved (issue 28, seventeenth round; frozen since the twelfth): Databricks' Dolly README "
        "'Training on Other Instances' (databrickslabs/dolly 3e8c659 April 2023, e2d664d June 2023; not "
        "databricks-ml-examples): Pythia 2.8B/6.9B/12B fully fine-tuned with the HF Trainer under DeepSpeed ZeRO-3 "
        "(bf16, fp16 on V100), 6.9B with optimizer offload on 4 and 2 x A10 and 8 x V100 32GB at batch 3, 2.8B "
        "without, 6.9B and 12B on 8 x A100 40GB at batch 6: verdict rows, stated to train there; nothing tuned on "
        "it. Two misreadings corrected after scoring: FusedAdam from the JSON's optimizer block (now "
        "--optimizer-kernel fused), and the 2.8B row read on 2 x A10, where ZeRO-3's 16 B/param state (20.7 GiB) "
        "plus the step's fp32 sub-group gradient (3.7 GiB) cannot fit an A10G: now g5.24xlarge's 4 x A10G, "
        "'does not fit' 40.7 GiB (a contradiction) -> 'tight' 18.9 GiB"),
    "yi-finetune-readme": (
        "design", "frozen until issue 28's CPU-flatten finding (01-ai/Yi's finetune/README.md 'Hardware Setup', "
        "03c9c1b, Nov 2023, with its scripts: Yi-6B and Yi-34B fully fine-tuned with its DeepSpeed loop under "
        "ZeRO-2 with CPU optimizer offload, fp16, batch 1 x 4,096, on 4 GPUs of more than 60GB and 80GB: verdict "
        "rows); moved after Yi-34B's 'does not fit' (a 128.1 GiB loading peak) was read in DeepSpeed, nothing "
        "tuned: ZeRO-1/2 flattens its 16-bit buffer on the GPU only where it fits beside the model, else on the CPU "
        "(stage_1_and_2.py flatten_on_accelerator; MemoryEstimate.flattens_on_cpu): 'tight', 75.0 of 80 GiB"),
    # Registered after torchtune-memory-prs was scored, with its rows written, before any of them was.
    "open-instruct-issues": (
        "frozen", "new (issue 28, twelfth round): allenai/open-instruct's issue tracker, verdict rows: #25 (July "
        "2023) LLaMA-7B full fine-tuning with scripts/finetune_with_accelerate.sh at 0d2e152 (ZeRO-3, 4 x A100 "
        "80GB, batch 2 x 2,048, no checkpointing): the maintainers' run with flash attention trained, the user's "
        "(read as without it) out of memory; never used to tune anything"),
    # Issue 28, thirteenth round (fine-tuning frameworks' own docs, helper A): ms-swift's documentation pages other
    # than its Benchmark page and example scripts, one source per page (ms_swift_best_practice_docs.py); registered
    # here, frozen, with their rows written and before any of them was scored.
    "ms-swift-self-cognition-best-practice": (
        "design", "frozen until issue 28's choice of the middle of the varying-length cache growth (ea6437b), whose "
        "out-of-sample evidence it was part of (step -40.9% -> middle -22.2% median, top -3.5%); first registered in "
        "the thirteenth round: ms-swift's docs/source/LLM/自我认知微调最佳实践.md (self-cognition "
        "best practice), each header read at the commit that wrote it: Qwen-7B-Chat (3914e1d, Dec 2023), "
        "Qwen1.5-4B-Chat (70bea62 Feb 2024, db7ad12 April 2024), Qwen2-7B-Instruct (a3fe400, June 2024), LoRA r=8 "
        "on ALL linears on one GPU, DDP on two and four, ZeRO-2 on four 3090s ('GB' per GPU; a card's whole memory "
        "read as a verdict): never used to tune anything"),
    "ms-swift-qwen1.5-best-practice": (
        "design", "frozen until issue 28's choice of the middle of the varying-length cache growth (ea6437b), whose "
        "out-of-sample evidence it was part of (step -20.0% -> middle -6.2% median); first registered in the "
        "thirteenth round: ms-swift's docs/source/LLM/Qwen1.5全流程最佳实践.md (b039ea7, "
        "March 2024; db7ad12): Qwen1.5-7B-Chat LoRA on one A100 and under ZeRO-3 on four 3090s, Qwen1.5-72B-Chat "
        "LoRA under ZeRO-3 on four A100s at 4,096 tokens: never used to tune anything"),
    "ms-swift-llm-finetune-doc": (
        "design", "frozen until issue 28's choice of the middle of the varying-length cache growth (ea6437b), whose "
        "out-of-sample evidence it was part of (step -5.5% -> middle +1.4% median); first registered in the thirteenth "
        "round: ms-swift's docs/source/LLM/LLM微调文档.md (c445b33, Nov 2023): "
        "Qwen-7B-Chat LoRA on c_attn on one GPU and under DDP on two 3090s: never used to tune anything"),
    # Issue 28, thirteenth round (companies' engineering blogs and docs, helper C): registered here, frozen, with
    # their rows written and before any of them was scored (snowflake_arctic_alst.py, brevdev_notebooks.py).
    "snowflake-arctic-alst-2025": (
        "design", "scored by the expandable-segments reserve's change (issue 28, fourteenth round: its recipes export "
        "expandable_segments:True, its rows now say --expandable-segments; the six measured rows 10.8/11.0/11.2/"
        "-1.9/10.7/2.2% -> 5.8/6.0/7.1/-7.5/7.9/2.2%, median |error| 10.75 -> 6.55%). Was frozen: "
        "new (issue 28, thirteenth round): Snowflake's Arctic Long Sequence Training recipes "
        "(snowflakedb/ArcticTraining projects/sequence-parallelism, 9d33fd2 June 2025 and its PR #45, 5885b9f and "
        "its PR #245 July 2025), the baselines' comments: Llama-3.1-8B full fine-tuning under DeepSpeed ZeRO-3 with "
        "CPU offload at one packed 26K-70K-token sequence per GPU on 1 H100, 8 and 32 H100s and 1 H200, the "
        "device's used memory ('NV', GiB) or 'ok'/'close to oom': never used to tune anything"),
    "brevdev-notebooks-2023": (
        "frozen", "new (issue 28, thirteenth round): brev.dev's QLoRA notebooks (brevdev/notebooks, Oct-Dec 2023): "
        "Mistral-7B and Llama-2-7B with the HF Trainer on one A10G 24GB, 512-token padded batches, each stated "
        "to have run there (verdict rows); a Mixtral device_map row kept as not expressible: never used to tune "
        "anything"),
    # Issue 28, thirteenth round (helper A): InternLM/xtuner's docs, one source per page (xtuner_docs.py), verdict rows;
    # registered here, frozen, with their rows written and before any of them was scored.
    "xtuner-speed-benchmark-2024": (
        "frozen", "new (issue 28, thirteenth round): xtuner's docs/zh_cn/acceleration/benchmark.rst (43ef6ab, June "
        "2024), A100-SXM4-80GB: the configs without sequence parallelism, each with a printed TGS (ran): Llama2-7B "
        "full at 8k and 32k packed tokens on 8 GPUs, Yi-34B-200K and Llama2-70B full at 8k on 32, ZeRO-3 (assumed), "
        "bf16 with flash-attn 2, checkpointing: never used to tune anything"),
    "xtuner-long-sequence-zero3-oom": (
        "frozen", "new (issue 28, thirteenth round): xtuner's docs/zh_cn/acceleration/train_extreme_long_sequence.rst "
        "(43ef6ab), Table 1: Yi-34B at 128k tokens under ZeRO-3 without sequence parallelism out of memory on 16, 32 "
        "and 64 GPUs (A100 80GB assumed): never used to tune anything"),
    # Issue 28, thirteenth round (helper B: library PR and issue threads): registered here, frozen, with their rows
    # written and before any of them was scored (deepspeed_threads_memory.py, peft_issues_memory.py).
    "deepspeed-threads-memory": (
        "design", "frozen until issue 28's fifteenth round: its DeepSpeed#4158 row was misread (the issue's launcher "
        "line passes neither --lora_dim nor accumulation: main.py's full fine-tuning defaults ran; argv corrected with "
        "that quote, 81cc09e) and led to eager attention's torch.max clamp (OPT 4.21-4.48, Llama 4.28-4.30, "
        "eager_clamp.py, 890af01): -34.4% -> +0.6%; DeepSpeed PR 7999's Qwen3-32B +2.2 -> +0.3% (grouped-query K/V, "
        "7f6d05f); first registered as "
        "new (issue 28, thirteenth round): deepspeedai/DeepSpeed's threads, each read in the code it ran: "
        "PR #7999's example (e7402be, May 2026: Qwen3-32B under ZeRO-3 on 8 x MI300X, 1 x 1,024 tokens, "
        "max_memory_allocated 96.45 GB on rank 0), issue #4158 (Aug 2023: DeepSpeed-Chat step-1 OPT-1.3b, fp16 "
        "ZeRO stage 0 with its own LoRA r=128, 16 x 512 tokens, MaxMemAllocated 54.06 GiB) and issue #4953 (Jan "
        "2024: the alignment-handbook's Zephyr full DPO under ZeRO-3 on one A100-80GB, out of memory): never used "
        "to tune anything"),
    "peft-issues-memory-reports": (
        "frozen", "new (issue 28, thirteenth round): huggingface/peft's issue tracker: #76 (Feb 2023, PEFT's "
        "peft_lora_clm_accelerate_ds_zero3_offload.py at 5733ea9 run without DeepSpeed on one A100 40GB: "
        "bloomz-7b1 in fp32, LoRA r=8 on query_key_value, 8 x 64 tokens, TorchTracemalloc's training peak 32037 "
        "MiB allocated); not PEFT's README or guides (peft-readme, peft-sft-guides) nor its method comparison "
        "(peft-metamathqa): never used to tune anything"),
    # Issue 28, thirteenth round (helper A): H2O LLM Studio's docs (h2o_llmstudio_performance.py), verdict rows;
    # registered here, frozen, with its rows written and before any of them was scored.
    "h2o-llmstudio-performance-2023": (
        "frozen", "new (issue 28, thirteenth round): H2O LLM Studio's 'H2O LLM Studio performance' page (0ee6392, "
        "Nov 2023): h2ogpt-4096-llama2-7b/13b/70b LoRA r=4 with a bfloat16 or NF4 backbone at its printed defaults "
        "(batch 2 x 512 tokens padded per batch, checkpointing, fp16 autocast, DDP) on 1-8 A10G and 1-4 A100 80GB: "
        "27 trained (a time printed), 8 'OOM' (13B bfloat16 and 70B NF4 on A10G): never used to tune anything"),
    # Issue 28, thirteenth round (helper A): two more ms-swift documentation pages (ms_swift_best_practice_docs.py),
    # registered after the three ms-swift pages above were scored, with their rows written, before either was.
    "ms-swift-vllm-lora-doc": (
        "design", "frozen until issue 28's choice of the middle of the varying-length cache growth (ea6437b), whose "
        "out-of-sample evidence it was part of (its DDP row -42.3% -> -36.5%, not explained); first registered in the "
        "thirteenth round: ms-swift's docs/source/LLM/VLLM推理加速与部署.md (5da1d74, March "
        "2024), 'VLLM & LoRA': Llama-2-7B-Chat LoRA on ALL linears under DDP on four A100s at 4,096 tokens, '4 * "
        "30GB GPU memory': never used to tune anything"),
    "ms-swift-agent-best-practice": (
        "design", "frozen until issue 28's choice of the middle of the varying-length cache growth (ea6437b), whose "
        "out-of-sample evidence it was part of (+2.8% -> +5.9%); first registered in the thirteenth round: ms-swift's "
        "docs/source/LLM/Agent微调最佳实践.md (5616766, March "
        "2024): Qwen-7B-Chat LoRA on ALL linears, batch 2 x 1,500 tokens, '占用显存22G' on one consumer GPU: never "
        "used to tune anything"),
    # Issue 28, fourteenth round (helper G: individual engineers' write-ups): registered here, frozen, with its rows
    # written and before any of them was scored (raschka_llms_from_scratch.py).
    "raschka-llms-from-scratch": (
        "design", "frozen until issue 28's GPT-2 activation finding (fc5f36b: gelu_new's intermediates follow the "
        "config's activation_function; the stand-ins of the page's steps 6 on now say gelu_pytorch_tanh: "
        "+26.8/+39.7/+40.0/+34.2/+34.0% -> +10.1/+7.0/+7.3/-0.1/+0.2%); "
        "first registered in the fourteenth round: Sebastian Raschka's 'PyTorch Performance Tips for Faster LLM "
        "Training' (rasbt/LLMs-from-scratch ch05/10_llm-training-speed, 908dd2f, Feb 2025; not his 2023 LoRA "
        "write-ups): the book's GPT-2-sized model (untied head, 163M) trained from scratch at 1,024 tokens, fp32 then "
        "pure bf16, eager then SDPA, compiled, batch 8 and 32 on one A100 and DDP on four, torch.cuda.memory_reserved "
        "in GiB: never used to tune anything"),
    # Issue 28, fourteenth round (helper E: Chinese model vendors' fine-tuning docs): registered here, frozen, with
    # their rows written and before any of them was scored (yuan2_finetune_docs.py).
    "yuan2-llama-factory-doc-2024": (
        "frozen", "new (issue 28, fourteenth round): IEIT-Yuan/Yuan-2.0's docs/Yuan2_llama-factory.md (633e629, Jan "
        "2024), '实测数据参考': Yuan 2.0 2B full fine-tuning under ZeRO-2, 51B/102B LoRA under ZeRO-3 on 8 x L40S, "
        "2B/51B QLoRA on one L40S, through LLaMA-Factory (e85c205), packed 1,024/2,048 tokens, '显存占用(1*GPU)' "
        "in 10^9 bytes (47G on a 46,068 MiB card: the card full, a verdict): never used to tune anything"),
    "yuan2-fastchat-doc-2024": (
        "design", "frozen until issue 28's fifteenth round: its 2B QLoRA row (+34.6%) led to the GPU generation read "
        "from the GPU table (the L20 was taken for Hopper: adba902): +34.6 -> +24.6%, the ZeRO-2 rows -10.2/-9.4 -> "
        "-13.0/-12.5%; its 51B ZeRO-3 LoRA figures (43G at 2,048 and 1,024 tokens, above the 102B's 42G with the same "
        "layers) are read as the card's cache, not peaks (-41.8/-46.4%, kept as scored); first registered as "
        "new (issue 28, fourteenth round): IEIT-Yuan/Yuan-2.0's docs/Yuan2_fastchat.md (706e26a, Feb "
        "2024), '微调实测数据参考': Yuan 2.0 2B full fine-tuning under ZeRO-2, 51B/102B LoRA under ZeRO-3 on 8 x L20 "
        "at 2,048 and 1,024 padded tokens, 2B QLoRA on one L20, through FastChat (707d9ba, transformers 4.31.0), "
        "'显存占用(1*GPU)' in 10^9 bytes (45G on a 46,068 MiB card: the card full, a verdict): never used to tune "
        "anything"),
    # Registered after the two Yuan pages were scored, with its rows written, before any of them was.
    "qwen2-llama-factory-example-2024": (
        "frozen", "new (issue 28, fourteenth round): QwenLM/Qwen2.5's examples/llama-factory/finetune-zh.md "
        "(ba975fc, Sept 2024) with its YAML files: Qwen2-7B-Instruct LoRA and QLoRA (r=16 on every linear, batch 1 "
        "x 1,024 tokens unpacked) on one GPU through LLaMA-Factory 0.8.4.dev0, '实测的显存占用' in GB read as GiB; "
        "its full fine-tuning figure kept as not expressible (ZeRO stage and GPU count not given); not QwenLM/Qwen's "
        "README profiling: never used to tune anything"),
    # Issue 28, fourteenth round (helper F: the libraries' own docs and examples): TRL's example notebooks, one source
    # per notebook (trl_example_notebooks.py), registered here, frozen, with their rows written, before any was scored.
    "trl-notebook-sft-lora-qlora-2025": (
        "design", "frozen until issue 28's fifteenth round: its printed reserve after loading led to transformers' "
        "caching_allocator_warmup (loading_warmup.py, 0d4dde2: 12.27 GiB modelled vs 11.959 printed) and to the "
        "varying-length growth counted beyond the warmup block's free bytes (3a2c8df): Qwen3-8B +40.6 -> +10.4%, the "
        "authors' T4 notes +14.3/+35.4/+147.2/+34.2 -> +14.3/+31.9/+112.3/+24.4%; first registered as "
        "new (issue 28, fourteenth round): TRL's examples/notebooks/sft_trl_lora_qlora.ipynb (28bba8c6b and "
        "f6834206a, Oct 2025; not TRL's SFT T4 doc page): NF4 QLoRA r=32 SFT with the fp16 weights on "
        "Multilingual-Thinking up to 1,024 tokens, its printed 'Peak reserved memory' (max_memory_reserved in GiB) "
        "for Qwen3-8B on an A100-40GB and Qwen3-14B on a T4, and its authors' '~GB VRAM' notes per model (Qwen3-8B, "
        "Qwen2.5-7B, Llama-3.2-3B, Llama-3.1-8B): never used to tune anything"),
    "trl-notebook-grpo-lora-qlora-2025": (
        "design", "frozen until issue 28's fifteenth round: its printed reserve after loading (6.773 GiB; the warmup "
        "block gives 6.71, 0d4dde2) and its training increment (2.059 GiB) led to Liger's GRPO loss holding two "
        "LM-head-sized tensors (TRL 0.17-1.12, liger_grpo.py, 6ca7a67), which its QLoRA rows now say (--loss-kernel "
        "liger --stack trl==0.26.2): -14.5/-17.9/-21.3/-21.3/-14.9/-17.9/-33.9/-17.3% -> "
        "-0.2/-4.2/-4.8/-4.8/+1.3/-4.2/-14.1/-3.6%; first registered as "
        "new (issue 28, fourteenth round): TRL's examples/notebooks/grpo_trl_lora_qlora.ipynb (c9a9e25, Dec "
        "2025): GRPO with NF4 QLoRA r=32, 8 completions of 256 tokens per step generated by transformers, on a T4, "
        "A100-40GB and A100-80GB: its printed 'Peak reserved memory' (GiB), its table (all optimizations vs naive fp16 "
        "full fine-tuning: OOM on T4 and A100-40GB, 62 GB on A100-80GB) and its authors' per-model notes (one OOM): "
        "never used to tune anything"),
    # Issue 28, fourteenth round (helper G): two more individual engineers' write-ups, registered after
    # raschka-llms-from-scratch was scored, with their rows written and before any of them was scored.
    "georgesung-qlora-openllama-2023": (
        "design", "frozen until issue 28's fifteenth round: read op by op in the code it ran (llm_qlora 7cd7ad3, "
        "transformers 4.30.2's Llama eager clamp, eager_clamp.py): -36.4 -> -32.1%, the rest not identified (a replay "
        "of 300 varying-length steps does not grow; how '~14GB' was read is not known); first registered as "
        "new (issue 28, fourteenth round): George Sung's blog post 'Fine-tuning OpenLLaMA-7B with QLoRA for "
        "instruction following' (georgesung.github.io, July 2023, 56abd26) read in the code it links (georgesung/"
        "llm_qlora 7cd7ad3): NF4 QLoRA r=8 on q/k/v with the HF Trainer, batch 1 x accumulation 4 of conversations "
        "up to 2,048 tokens, fp16 autocast, checkpointing, '~14GB' observed on one A10G: never used to tune "
        "anything"),
    "xirider-finetune-gpt2xl-2021": (
        "frozen", "new (issue 28, fourteenth round): Xirider's guide 'Finetune GPT2-XL and GPT-NEO on a single GPU' "
        "(Xirider/finetune-gpt2xl a71ee45, 2021): run_clm.py with checkpointing under DeepSpeed 0.4.0's fp16 ZeRO-2 "
        "with CPU optimizer offload on one V100 16GB, 1,024-token blocks: GPT2-XL at batch 8 and 12 ran, a larger "
        "batch out of memory, GPT-Neo 2.7B at batch 4 ran (verdict rows): never used to tune anything"),
    # Helper G, fourteenth round: registered after raschka-llms-from-scratch, georgesung-qlora-openllama-2023 and
    # xirider-finetune-gpt2xl-2021 were scored, with its row written, before it was.
    "mlabonne-axolotl-guide-2023": (
        "frozen", "new (issue 28, fourteenth round): Maxime Labonne's blog post 'A Beginner's Guide to LLM "
        "Fine-Tuning' (mlabonne/blog f9a7d36, 2023-08-27) read with axolotl at its date (868530c): CodeLlama-7B NF4 "
        "QLoRA r=32 on every block linear, 10 x 2,048 packed tokens, paged AdamW, flash attention, checkpointing, "
        "trained on one RTX 3090 with the card 'almost 100%' used (a verdict row): never used to tune anything"),
    # Issue 28, fourteenth round (helper F): DeepSpeed's own tutorials (deepspeed_tutorials_zero.py), verdict rows,
    # registered here, frozen, with its rows written and before any of them was scored.
    "deepspeed-tutorials-zero-2020": (
        "frozen", "new (issue 28, fourteenth round): DeepSpeed's ZeRO and ZeRO-Offload tutorials (docs/_tutorials "
        "zero.md and zero-offload.md at edaa722, written 2020; not DeepSpeed's issue threads): DeepSpeedExamples' "
        "Megatron GPT-2 in fp16 at 1,024 tokens with activation checkpointing on V100-SXM3 32GB, 1.5B under ZeRO-1 on "
        "8 GPUs (ran) and without ZeRO (out of memory), 10B under ZeRO-2 on 32 GPUs and under ZeRO-Offload on one "
        "at batch 10 (ran; nvidia-smi shows each card full): never used to tune anything"),
    # Issue 28, fifteenth round (helper D): framework docs, blogs and notebooks, registered here, frozen, with their
    # rows written and before any of them was scored.
    "litgpt-thunder-benchmark-2024": (
        "design", "frozen until issue 28's sixteenth round: its eager rows (under) led to LitGPT's own GPT and "
        "Fabric loop, said by --stack litgpt==0.2.0 (estimate/litgpt_model.py: Fabric's fp32 logits held beside "
        "chunked_cross_entropy's fp32 log-softmax, backward joining the chunks' gradients), which the argv now says: "
        "FSDP/DDP/one GPU -9.1/-7.2/-7.7% -> +1.3/+0.1/+0.1%; first registered as "
        "new (issue 28, fifteenth round): LitGPT's Lightning Thunder page as first written "
        "(extensions/thunder/README.md at fc60043, 2024-03-20): TinyLlama 1.1B pretrained in bf16-true with fused "
        "AdamW, micro-batch 4 x 2,048 tokens, no checkpointing, on A100-SXM4-40GB under Fabric's FSDP1 on 8, DDP on "
        "8 and one GPU, max_memory_allocated in 10^9 bytes; the eager rows are scored, torch.compile and Thunder "
        "rows not expressible: never used to tune anything"),
    "torchao-float8nocompile-2025": (
        "frozen", "new (issue 28, fifteenth round): torchao's float8nocompile README (d99785c, 2025-02-11), its bf16 "
        "eager baselines run with torchtitan (llama3_8b.toml at 3996b63): Llama 3 8B under FSDP2 on 8 H100s, batch 1 x "
        "4,096 tokens, no activation checkpointing and full, torchtitan's max reserved GiB; the every-second-layer "
        "row not expressible, the float8 rows left out: never used to tune anything"),
    "litgpt-prepare-dataset-falcon-2023": (
        "design", "frozen until issue 28's sixteenth round, moved with the LitGPT sources when LitGPT's own GPT "
        "became expressible (--stack litgpt==0.1.0, lit-gpt's setup.py version; estimate/litgpt_model.py: its Fabric "
        "loss tail and bf16 adapters; Falcon's block stays transformers'): -2.4 -> -2.0%; first registered as "
        "new (issue 28, fifteenth round): lit-gpt's tutorials/prepare_dataset.md as written (29de282, "
        "2023-09-27): Falcon 7B LoRA r=8 on query and value, micro-batch 1, bf16-true, Alpaca cut at 256 tokens "
        "(scored) and at full length (its longest sample under Falcon's tokenizer unknown: not expressible), "
        "max_memory_allocated in 10^9 bytes: never used to tune anything"),
    "lit-llama-howto-2023": (
        "frozen", "new (issue 28, fifteenth round): Lightning AI's lit-llama how-to guides (howto/finetune_lora.md "
        "at 8d865ec, finetune_full.md at 5efbecf, 2023): LLaMA 7B LoRA in bf16-true at 4 x 256 tokens on one RTX "
        "3090 24GB and full fine-tuning under FSDP1 with checkpointing on 4 A100 40GB, stated to run (verdict "
        "rows): never used to tune anything"),
    # Registered after the four sources above were scored, with its row written and before it was.
    "gemma-cookbook-litgpt-2025": (
        "design", "frozen until issue 28's sixteenth round: its row (under) led, with the other LitGPT sources, to "
        "LitGPT's own GPT and Fabric loop, --stack litgpt==0.5.3 (estimate/litgpt_model.py: bf16 adapters on the "
        "fused qkv, Fabric's fp32 chunk logits, the attention output's copy), which the argv now says: -10.8 -> "
        "-9.4% (Gemma 2's own block terms not written); first registered as "
        "new (issue 28, fifteenth round): Google's Gemma cookbook notebook 'Finetuning Gemma Using LitGPT' "
        "(google-gemini/gemma-cookbook dea850c, January 2025), its saved run: litgpt 0.5.3 finetune_lora on Gemma 2 "
        "2B, bf16-true, LoRA r=8 on query and value, micro-batch 2 of Alpaca2k up to 512 tokens, on a Colab T4, "
        "max_memory_allocated / 1e9: never used to tune anything"),
    # Issue 28, fifteenth round (helper C): model and fine-tuning repositories' own tables, registered here, frozen,
    # with their rows written and before any of them was scored (liucongg_chatglm_finetuning.py).
    "liucongg-chatglm-finetuning-2023": (
        "design", "frozen until issue 28's ZeRO-3 loading-cache finding; moved after its full-parameter misses were "
        "read in train.py and DeepSpeed 0.9.0, nothing tuned: train.py loads the model before deepspeed.initialize "
        "(no HfDeepSpeedConfig), so its three ZeRO-3 rows now say --no-zero3-init (a misreading corrected), and "
        "under offload_param DeepSpeed never empties the cache the whole fp16 model left (stage3.py defragments only "
        "partitions kept on the GPU) while ZeRO-3 gathers on a stream of its own beside it (zero3_loading_cache.py, "
        "6bd0f6f): ChatGLM-6B offload -68.1% -> -49.6%, ChatGLM2-6B offload -68.5% -> -33.8%, no offload -10.6% "
        "unchanged; the rest (about 15 and 8 GiB) is not identified; first registered as "
        "new (issue 28, fifteenth round): liucongg/ChatGLM-Finetuning's README (79bdc89, Aug 2023; not "
        "ChatGLM3's finetune_demo): ChatGLM-6B and ChatGLM2-6B through its own DeepSpeed 0.9.0 fp16 loop on 1 and 4 "
        "A40s, every batch padded to 1,560 tokens, LoRA r=16 under ZeRO-2 with and without checkpointing, full "
        "fine-tuning under ZeRO-3 with and without CPU offload (11 rows scored), Freeze and P-Tuning v2 rows not "
        "expressible, '所耗显存' per GPU in 10^9 bytes: never used to tune anything"),
    # Registered after liucongg-chatglm-finetuning-2023 was scored, with its rows written, before any was scored.
    "liucongg-chatglm-finetuning-v0.1-2023": (
        "frozen", "new (issue 28, fifteenth round): the same repository's first README table (e13710c, Apr 2023, "
        "the v0.1 scripts): ChatGLM-6B (vocabulary 150,528) LoRA r=8 on query_key_value under DeepSpeed 0.8.1 fp16 "
        "ZeRO-1 with CPU optimizer offload, batch 2 x 768 padded tokens, no checkpointing, on one A40, '显卡占用' "
        "in 10^9 bytes (1 row scored); P-Tuning, prefix-on-embedding and Freeze columns not expressible: never used "
        "to tune anything"),
    # Issue 28, fifteenth round (helper G): litgpt's issue threads, registered here, frozen, with their rows written
    # and before any of them was scored (litgpt_issues_memory.py).
    "litgpt-issues-memory": (
        "design", "frozen until issue 28's sixteenth round: its misses, read in LitGPT's code of the day (a9b450c), "
        "led to LitGPT's own GPT and Fabric loop, --stack litgpt==0.1.0/0.2.0 (estimate/litgpt_model.py: Fabric's "
        "fp32 logits, bf16 adapters, the previous step's logits and bnb 0.41 4-bit inputs held through the next "
        "forward, 16-mixed head-chunk copies), which the argvs now say: #1112 LoRA/QLoRA -28.7/-45.4% -> "
        "-27.3/-28.2% (9.81/12.13 GiB against LitGPT's code traced at 9.80/11.88: the thread printed 3.7/5.0 GiB "
        "beyond its code), #501 LoRA/QLoRA -13.7/+35.9% -> +8.8/+28.6%, #1280 'does not fit' kept; first registered "
        "as new (issue 28, fifteenth round): Lightning-AI/litgpt's issue threads, each read in the code of its "
        "day: #1112 (Mar 2024, 092a759: TinyLlama 1.1B LoRA r=32 and NF4 QLoRA in bf16-true, micro-batch 8 x 512 "
        "tokens of Alpaca2k, 'Memory used' 14.49 and 18.15 GB), #501 (Sep 2023, e6ff37c: Pythia-70m LoRA and "
        "quantized LoRA in 16-mixed on a T4, micro-batch 1 with the longest Alpaca sample, 1.37 and 0.80 GB "
        "allocated) and #1280 (Apr 2024, d6e91ee: Llama-2-13B LoRA at micro-batch 2 in the default bf16-mixed on "
        "one A100 80GB, out of memory); not PRs #275/#596 nor the tutorials, resource tables or config hub: never "
        "used to tune anything"),
    # Registered after litgpt-issues-memory was scored, with its rows written and before any of them was scored.
    "deepspeedexamples-issues-memory": (
        "frozen", "new (issue 28, fifteenth round): deepspeedai/DeepSpeedExamples' issue threads (not DeepSpeed's "
        "own, deepspeed-threads-memory): DeepSpeed-Chat step 1's single-GPU OPT-1.3b script (LoRA r=128 on every "
        "decoder linear, embeddings still trained, fp16 ZeRO-0, 16 x 512 padded tokens) out of memory on one A100 "
        "40GB (#551, May 2023, 95adffb) and one V100 32GB (#387, Apr 2023, 3a77097), and run there at 8 x 512 with "
        "only the LoRA matrices trained under ZeRO-2 (#387): three verdict rows, never used to tune anything"),
    # Issue 28, fifteenth round (helper J): training logs committed in repositories, registered here, frozen, with
    # their rows written and before any of them was scored (deepspeedexamples_dschat_logs.py).
    "deepspeedexamples-dschat-training-logs": (
        "frozen", "new (issue 28, fifteenth round): DeepSpeed-Chat's committed training_log_output/*.log files "
        "(deepspeedai/DeepSpeedExamples; not its issue threads): step 1 OPT-1.3b full fp16 ZeRO-2 on 16 V100-32G, "
        "8 x 512 (3a77097, Apr 2023), step 2 reward model OPT-350m fp16 ZeRO-0, 4 pairs x 512 (same commit), step 2 "
        "DPO OPT-350m fp16 ZeRO-0 with an fp16 reference copy, 2 pairs x 512 (1842b4f, Jan 2025): DeepSpeed's "
        "MaxMemAllocated in GiB, 3 rows. One row's estimate was seen before registration (step 1: 22.95 printed, "
        "22.4 GiB estimated, helper F, 52dda88); nothing was tuned on it or on any other"),
    # Registered after deepspeedexamples-dschat-training-logs was scored, with its rows written, before any was scored.
    "deepspeedexamples-bf16-master-weight-2025": (
        "design", "frozen until issue 28's sixteenth round: its bf16 row (+79.3%) was scored with --precision bf16 "
        "alone, which under DeepSpeed is a bf16 model with fp32 masters and Adam states, a misreading of its JSON's "
        "bf16_master_weights_and_grads and bf16_optimizer_states, which the command line could not say; it led to "
        "--bf16-master-weights-and-grads/--bf16-optimizer-states (bf16_master.py, 9eb5076), which its argv now "
        "passes: +8.1/+79.3% -> +8.1/+9.0% (the baseline row as scored); both rows then said DeepSpeed's "
        "FusedAdam, which its JSON's optimizer block builds (--optimizer-kernel fused: +2.2/+3.9%); first "
        "registered as "
        "new (issue 28, fifteenth round): DeepSpeedExamples' training/bf16_master_weight README (6a3d817, "
        "Dec 2025; repeated by DeepSpeed's blogs/core_api_update): its train.py's own 6.86B transformer (a GPT-2 "
        "stand-in) under ZeRO-3 on 4 H100s, batch 1 x 512, every layer checkpointed, fp32 master and Adam states "
        "against bf16 master weights, gradients and Adam states under autocast; 'Peak Memory' is "
        "max_memory_allocated in GiB (2 rows): never used to tune anything"),
    # Registered after deepspeedexamples-bf16-master-weight-2025 was scored, its rows written, before any was scored.
    "llm-chi-litgpt-lightning-2025": (
        "design", "frozen until issue 28's fifteenth round: its V100 rows led to the SDPA kernel torch selects (bf16 "
        "before sm80 takes the math path and keeps the scores: attention_backend.py, 3209c96) and its FSDP rows to the "
        "wrap policy (Lightning's FSDPStrategy() without auto_wrap_policy is one unit: --fsdp-wrap none, fdd7aa4), "
        "which its FSDP rows now say: 4.0/1.2/0.9/-49.5/-37.6/-23.1/-30.5/-40.3/-64.8% -> "
        "4.0/1.2/0.9/+1.7/-6.0/+6.5/-6.7/-6.4/-4.0%; first registered as "
        "new (issue 28, fifteenth round): teaching-on-testbeds/llm-chi's index.md (200edaf; notes of Feb "
        "2025), the memory lines its author's runs printed beside the torch/*.py scripts that printed them: litgpt "
        "0.5.7's LLM in a Lightning Trainer, bf16-true full fine-tuning on Alpaca2k up to 512 tokens, OpenLLaMA 7B "
        "on 1 and 4 A100 80GB (single, DDP, FSDP FULL_SHARD with no wrap policy), TinyLlama 1.1B and OpenLLaMA 3B on "
        "1 and 4 V100 32GB; torch.cuda.memory_reserved() / 1024**3 at the last step (9 rows): never used to tune "
        "anything"),
    # Registered by helper M (fifteenth round) with their rows written, before any of them was scored.
    "galore-issue6-8bit-adamw-baseline": (
        "frozen", "new (issue 28, fifteenth round): jiaweizzhao/GaLore issue #6 (2024-03-07), LLaMA-Factory's "
        "third-party benchmark: the standard 8-bit AdamW baseline of Llama-2-7B full SFT in pure bf16 with gradient "
        "checkpointing at 1 x 1,024 tokens, 'at least 42GB of VRAM' (the script read at LLaMA-Factory d46c2bb); "
        "GaLore's own 28 GB not expressible: never used to tune anything"),
    "mezo-readme-adam-ft-verdicts": (
        "frozen", "new (issue 28, fifteenth round): princeton-nlp/MeZO's README (552cb1b): Adam full fine-tuning "
        "'can train only a 2.7B LM' on one A100 80GB (large_models/finetune.sh: HF Trainer, fp16 autocast over fp32 "
        "weights): two verdict rows, OPT-2.7B ran and OPT-6.7B did not; never used to tune anything"),
    # Issue 28, sixteenth round (helper E1): libraries' docs, blogs and benchmark pages, registered here, frozen, with
    # their rows written and before any of them was scored.
    "chatglm-efficient-tuning-readme-2023": (
        "frozen", "new (issue 28, sixteenth round): hiyouga/ChatGLM-Efficient-Tuning's README '硬件需求' table "
        "(4a90242, Apr 2023; FP16 rows measured with ee0b576's code), ChatGLM-6B through the HF Trainer on one "
        "V100 32GB: LoRA r=8 on query_key_value over the fp16 base with --fp16 autocast, checkpointing, batches 16/8/4 "
        "of alpaca_gpt4_zh padded to their longest (up to 1,024 tokens), 'GPU显存' read as nvidia-smi GiB (3 rows "
        "scored); INT8, P-Tuning v2 and Freeze rows not expressible: never used to tune anything"),
    # Issue 28, sixteenth round (helper E2): issue threads with measured memory, registered here, frozen, with their
    # rows written and before any of them was scored (fastchat_issues_memory.py, stanford_alpaca_issues.py).
    "fastchat-issues-memory": (
        "frozen", "new (issue 28, sixteenth round): lm-sys/FastChat's issue tracker: #407 (Apr 2023) and #1781 (June "
        "2023), the README's Vicuna-7B command (train_mem.py, LLaMA-7B in fp32 under the Trainer's FSDP1 full_shard "
        "with bf16, 2,048 padded tokens, checkpointing, flash-attn) out of memory on 4 x A100 40GB at batch 2 and 1 "
        "and on 8 at batch 2 (#1781), trained on 8 at batch 2 and 'about 30G on each card' at batch 1 (#407); #2556 "
        "(Oct 2023) train_lora.py QLoRA r=8 of Vicuna-7B v1.5 on one V100S 32GB under ZeRO-2 with optimizer offload "
        "and the fp16 engine, out of memory at 2,048 padded tokens and trained at 1,024 (1 measured row, 7 verdict "
        "rows): never used to tune anything; #1781's 8-GPU row, scored 'fits', was a misreading (the thread's one run "
        "is the README's 4-process command, its traceback's 37.33 GiB allocated that run's size): no argv since"),
    "stanford-alpaca-issues": (
        "design", "frozen until issue 28's sixteenth round: its #280 row (FSDP1 CPU offload, batch 3 out of memory, "
        "'fits') led to Llama's RMSNorm of transformers 4.28-4.30, which keeps its 16-bit input and, in 4.30, the "
        "fp32 product for the weight's gradient (llama_rmsnorm.py, 66a9868): #280 batch 3 34.2 GiB 'fits' -> 35.9 "
        "'tight', batch 2 (ran) 28.2 -> 29.4 'fits', #190 35.0 -> 35.2 'tight', #39/#32 (--stack 4.27) unchanged; "
        "judged 36.9 of the A100's 40.0 GiB; what else batch 3 held is not found in torch 2.0.1's FSDP1 or the "
        "Trainer of 4.30.2 (offload leaves activations, no_sync's 16-bit unsharded gradient and the gathered units on "
        "the GPU); first registered as new (issue 28, sixteenth round): tatsu-lab/stanford_alpaca's issue tracker, "
        "verdict rows of "
        "train.py (LLaMA-7B in fp32 under the Trainer's FSDP1 full_shard with 16-bit MixedPrecision, batches padded "
        "to their longest up to 512 tokens, no checkpointing, eager attention): on 8 x A100 40GB out of memory at "
        "batch 4 and trained at batch 2 (#39), trained at batch 1 with fp16 (#32) and bf16 (#190); with FSDP CPU "
        "offload on 4 x A100 40GB out of memory at batch 3, trained at batch 2 (#280): never used to tune anything"),
    # Registered after chatglm-efficient-tuning-readme-2023 was scored, its rows written, before any was scored.
    "open-r1-readme-recipes-2025": (
        "frozen", "new (issue 28, sixteenth round): huggingface/open-r1's README 'Training models' (33f84de, May 2025) "
        "under its note 'configured for a node of 8 x H100s (80GB)': the OpenR1-Distill-7B SFT recipe (ZeRO-3 on 8, "
        "batch 2 x up to 32,768 tokens, Liger, checkpointing) and the DeepSeek-R1-Distill-Qwen-1.5B GRPO demo "
        "(ZeRO-2 on 7 beside a vLLM server, 16 completions of up to 2,048 tokens, beta 0.04): two 'ran' verdict "
        "rows, never used to tune anything"),
    # Registered after open-r1-readme-recipes-2025 was scored, its row written, before it was scored.
    "gemma-cookbook-axolotl-2024": (
        "frozen", "new (issue 28, sixteenth round): google-gemini/gemma-cookbook's axolotl notebook (e26db01; run "
        "2024-06-04, axolotl 1f151c0), not its LitGPT notebook: google/gemma-2b QLoRA r=4 on every linear in fp32 "
        "(bf16 false, fp16 unset) on a Colab T4, packed 2,048-token rows, batch 1, adamw_bnb_8bit, checkpointing; "
        "axolotl's allocated + cache at step 2, 11.125 GiB reserved (1 row): never used to tune anything"),
    "transformers-issues-run-clm-gpt2": (
        "frozen", "new (issue 28, sixteenth round): huggingface/transformers' issue tracker, verdict rows: the "
        "language-modeling README's run_clm.py GPT-2 example as written (gpt2 in fp32, 8 x 1,024-token blocks, no "
        "checkpointing, transformers' AdamW) out of memory on one V100 32GB (#10754, 4.3.3) and one Colab GPU (#8721, "
        "3.5.1, a T4 assumed); #14541's 8-GPU nn.DataParallel run not expressible: never used to tune anything"),
    # Issue 28, seventeenth round (helper C2): Chinese-language and Asia-based projects' issue threads and docs,
    # registered here, frozen, with their rows written and before any of them was scored.
    "toolbench-issues-memory-2023": (
        "frozen", "new (issue 28, seventeenth round): OpenBMB/ToolBench's issue tracker, a maintainer's per-card "
        "figures for ToolLLaMA-7B at 8,192 padded tokens (745ea4c, Aug 2023): LoRA r=8 on q/v_proj under ZeRO-2 with "
        "optimizer offload in bf16 (DeepSpeed's cast, a bf16 loss in transformers 4.28.1) at batch 1, 2 and 4 "
        "(#52 '20G/卡', '37G/卡'; #84 '27+g/gpu') and full training under the Trainer's FSDP1 full_shard at batch 2 "
        "(#84 '60+g/gpu'), 4 GPUs (#127), A100 80GB assumed, read as nvidia-smi GiB (4 rows): never used to tune "
        "anything"),
    # Registered after toolbench-issues-memory-2023 was scored, its rows written, before any was scored.
    "firefly-qlora-v100-2023": (
        "frozen", "new (issue 28, seventeenth round): yangjianxin1/Firefly's QLoRA on one V100 (train_qlora.py, "
        "sft-qlora.json of June 2023: NF4 fp16, LoRA r=64 on every linear, batch 1 up to 1,024 tokens, no "
        "checkpointing, paged AdamW): the README's bloom-7b1 'can train on a V100 at 1,024' (b5c59f5) and #33's "
        "baichuan-7B out of memory on a V100 32GB (e325b85): two verdict rows; #33's shorter run not expressible "
        "(its length not stated): never used to tune anything"),
    # Registered after firefly-qlora-v100-2023 was scored, its rows written, before any was scored.
    "llamafactory-issue4772-glm4-2024": (
        "frozen", "new (issue 28, seventeenth round): LLaMA-Factory #4772 (2024-07-11, not a thread of "
        "llamafactory-issues-memory-reports): GLM-4-9B-Chat LoRA r=8 on every linear, bf16 autocast, checkpointing, "
        "batch 1 up to cutoff_len 10,240 on one A100 80GB (runpod, torch 2.2.0; code read at d3bfcbd): QLoRA "
        "(NF4, no kbit preparation) 'around 72 GB', LoRA '66 GB', read as nvidia-smi GiB (2 rows): never used to "
        "tune anything"),
    # Issue 28, seventeenth round (helper C1): English framework docs, blogs and example notebooks, registered here,
    # frozen, with their rows written and before any of them was scored.
    "trl-notebook-sft-tool-calling-2026": (
        "frozen", "new (issue 28, seventeenth round): TRL's tool-calling SFT notebook (examples/notebooks/"
        "sft_tool_calling.ipynb, PR #5123, Feb 18 2026; not the LoRA/QLoRA or GRPO notebooks): CohereLabs/"
        "tiny-aya-global (3.35B) in NF4 over fp16 weights, LoRA r=32 on every block linear under TRL 0.28.0 (no k-bit "
        "preparation, bf16 autocast, checkpointing, activation offloading), batch 1 x accumulation 4, paged 8-bit "
        "AdamW, 20 short tool-call chats; peak max_memory_reserved in GiB on a T4 (543b835) and an A100 40GB "
        "(9fc9a7d): 2 rows, never used to tune anything"),
    # Registered in the same commit as trl-notebook-sft-tool-calling-2026, its rows written, before any was scored.
    "deepspeed-blog-muon-2026": (
        "frozen", "new (issue 28, seventeenth round): DeepSpeed's Muon blog (blogs/muon-optimizer, PR #7962, May "
        "2026): Qwen2.5-3B full fine-tuning under ZeRO-2 bf16 on 8 x A100 40GB through delock/deepspeed_finetune_demo "
        "(micro-batch 4 x 2,048 padded tokens, flash attention 2, checkpointing): the AdamW baseline's 34.5 GiB per "
        "GPU read as the device's used memory (1 row); Muon's 31.4 not expressible: never used to tune anything"),
    # Registered after trl-notebook-sft-tool-calling-2026 and deepspeed-blog-muon-2026 were scored, its rows written,
    # before any was scored.
    "peft-example-lorafa-2025": (
        "frozen", "new (issue 28, seventeenth round): PEFT's LoRA-FA example README (examples/lorafa_finetune, "
        "0c2bdbb, Apr 2025; not PEFT's README, guides, threads or method comparison): Llama-2-7b-chat-hf LoRA r=16 on "
        "every block linear, bf16 base with autocast, no checkpointing, batch 8 x 1,024 padded tokens (its "
        "lorafa_finetuning.py's defaults) out of memory on an 80GB GPU (A100 assumed): 1 verdict row; LoRA-FA's "
        "run there not expressible: never used to tune anything"),
    # Issue 28, seventeenth round (helper C3): issue trackers of projects' own fine-tuning scripts (ChatGLM-6B, Qwen,
    # Baichuan2) and torchtune's, registered here, frozen, with their rows written and before any of them was scored.
    "chatglm6b-issues-memory-2023": (
        "design", "frozen until issue 28's seventeenth round: its #938 row (-31.9%) led to the per-parameter loop's "
        "temporaries (--optimizer-kernel loop counted none; under ZeRO the loop's one parameter is the flat fp32 "
        "partition and adamw_hf's denom is that big: loop_step.py, 690bffb): #938 -31.9 -> -24.1% (42.2 -> 47.1 "
        "GiB), #556 42.5 -> 48.2 and #843 127.4 -> 140.9 GiB, #1237 98.8 unchanged, the four verdicts unchanged and "
        "agreeing; the rest of #938's gap is the process count the thread does not state; first registered as "
        "new (issue 28, seventeenth round): THUDM/ChatGLM-6B's tracker, ptuning/ds_train_finetune.sh "
        "(main.py: fp32 ChatGLM-6B halved by DeepSpeed's fp16 ZeRO-2 engine, adamw_hf, checkpointing, samples padded "
        "to source + target length): #938's '62G /单张' with the script as shipped (4 GPUs, batch 4, 128 tokens; an "
        "80 GB A100 assumed), #556 4 x RTX 3090 out of memory and one RTX 3090 with optimizer offload trained, #843 "
        "one A100 80GB and #1237 6 x A100 40GB at batch 64 out of memory (1 measured, 4 verdict rows): never used to "
        "tune anything"),
    "qwen-issues-memory-2023": (
        "frozen", "new (issue 28, seventeenth round): QwenLM/Qwen's tracker (not its README's profiling): #366's "
        "'官方lora微调脚本A100的卡内存占用大约45G左右', finetune_lora_single_gpu.sh at dd18992 (Qwen-7B LoRA r=64 on "
        "every linear plus trainable wte and lm_head, bf16, batch 2 x 2,048 padded tokens, checkpointing, one GPU), "
        "read as nvidia-smi GiB on an A100 80GB (1 row): never used to tune anything"),
    "baichuan2-issues-verdicts-2023": (
        "frozen", "new (issue 28, seventeenth round): baichuan-inc/Baichuan2's tracker, fine-tune.py with "
        "ds_config.json (953523a: Baichuan2-7B full, ZeRO-3 zero.Init bf16, torch AdamW, 512 padded tokens, "
        "checkpointing) on A100 40GB: #162 4 GPUs at batch 1 out of memory and 6 at batch 2 trained, #147 8 at "
        "batch 1 out of memory (3 verdict rows): never used to tune anything"),
    "torchtune-issues-2024": (
        "frozen", "new (issue 28, seventeenth round): pytorch/torchtune's tracker beyond torchtune-memory-prs: #979 "
        "Llama3-8B LoRA (llama3/8B_lora_single_device at f3611e5) on SlimOrca cut at 8,192 tokens 'fit pretty "
        "comfortably' on one A100 80GB (1 verdict row); PR #961's 20.2 and 22.3 GB of 7B_full_low_memory not "
        "expressible (optimizer in backward): never used to tune anything"),
    # Registered after the four C3 sources above were scored, its rows written, before any was scored.
    "yi-issues-memory-2023": (
        "design", "frozen until issue 28's seventeenth round: its 4-GPU row (+61.4%) led to one owner of where "
        "ZeRO-1/2 flattens the 16-bit model (zero_flatten.py, b583185): DeepSpeed before 0.18.7 always on the CPU, "
        "from 0.18.7 on the GPU only where its free memory holds the copy; the loading peak had counted the copy on "
        "the GPU while the verdict said the CPU: +61.4 -> -14.4% (129.1 -> 68.5 GiB), the L40 row's verdict "
        "unchanged (does not fit, 128.1 -> 67.5 GiB), argv unchanged (DeepSpeed unstated: 0.19.8's rule puts it on "
        "the CPU on 80 GB, as 0.12.6 always did); first registered as "
        "new (issue 28, seventeenth round): 01-ai/Yi's tracker (not its finetune README): #249, "
        "finetune/sft/main.py at e97d1e6 (a DeepSpeed-Chat fork: Yi-34B trained whole beside rank-128 adapters, ZeRO-2 "
        "with optimizer offload, fp16 engine, flash-attention 2, batch 1 x 1,024 padded tokens, checkpointing): a "
        "maintainer's '接近80G' on four A100s (read as 80 GiB, 1 row) and the opener's 8 x L40 out of memory (1 "
        "verdict row): never used to tune anything"),
    # Registered after yi-issues-memory-2023 was scored, its row written, before it was scored.
    "deepseek-coder-issues-memory-2024": (
        "frozen", "new (issue 28, seventeenth round): deepseek-ai/DeepSeek-Coder's tracker: #103's '两张显卡都跑到30G' "
        "with the README's finetune_deepseekcoder.py command at fd2db2c (deepseek-coder-1.3b full, ZeRO-3 with "
        "parameters and optimizer on the CPU, bf16, batch 16 padded to each batch's longest up to 1,024 tokens, "
        "checkpointing, 2 GPUs; A100 80GB assumed), read as nvidia-smi GiB (1 row): never used to tune anything"),
}
