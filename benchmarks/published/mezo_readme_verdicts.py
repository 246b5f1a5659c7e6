"""Frozen: MeZO's README, the largest OPT that Adam fine-tuning trains on one A100 80GB (princeton-nlp/MeZO).

Source `mezo-readme-adam-ft-verdicts`: the README at 552cb1b (December 2023): "With a single A100 80GB GPU, MeZO can
train a 30-billion parameter OPT model, whereas fine-tuning with Adam can train only a 2.7B LM." Two verdict rows for
the Adam baseline (MeZO's own rows are not expressible and are left out): OPT-2.7B ran on one A100 80GB, and the next
OPT size, 6.7B, did not. No peak is printed (the README's figure is an image).

The baseline as the repository runs it, large_models/finetune.sh at 552cb1b (MODE=ft): HF Trainer (run.py's
OurTrainer, "--trainer regular"), "--fp16" over fp32 weights (load_float16 is off by default: autocast with an fp32
master, --precision mixed), the Trainer's default AdamW with fp32 states, no gradient checkpointing (run.py never
enables it), OPT's eager attention (transformers 4.28.1, the version the large_models README says it was tested on,
with torch 2.1 and accelerate 0.17.1). Assumed: the README's comparison is the paper's MultiRC memory profile, run at
finetune.sh's MultiRC setting ("Can only fit real bsz = 2 on 80G A100": per-device batch 2, accumulation 4), with
examples padded to the batch's longest (run.py's collator) and about 400 tokens each: --seq-len 512 --varying-lengths.
"""

from __future__ import annotations

_SOURCE = "mezo-readme-adam-ft-verdicts"
_URL = "https://github.com/princeton-nlp/MeZO/blob/552cb1b710767f9a6e1dc8f9645d7640376f9941/README.md"
_CODE = "https://github.com/princeton-nlp/MeZO/blob/552cb1b710767f9a6e1dc8f9645d7640376f9941/large_models/finetune.sh"
_QUOTE = ("With a single A100 80GB GPU, MeZO can train a 30-billion parameter OPT model, whereas fine-tuning with "
          "Adam can train only a 2.7B LM.")
_SETTINGS = (
    "MeZO README (552cb1b): full fine-tuning of {model} with Adam on one A100 80GB, large_models/finetune.sh's "
    "baseline (HF Trainer, --fp16 autocast over fp32 weights, AdamW with fp32 states, no gradient checkpointing, "
    "OPT's eager attention, transformers 4.28.1 / torch 2.1 / accelerate 0.17.1 as the README names them); "
    "assumed: the MultiRC setting of finetune.sh (per-device batch 2, accumulation 4) at about 400 tokens per "
    "example, padded per batch (--seq-len 512 --varying-lengths); {verdict}"
)
_UNEXPRESSED = [
    "HF Trainer's default optimizer in 4.28 is transformers' own AdamW (a per-parameter loop, no foreach temporaries)",
    "MultiRC's classification loss over the candidate answers' tokens (--train_as_classification), not the whole "
    "vocabulary's cross-entropy at every position",
    "OPT's dropout 0.1 in attention and MLP (its masks)",
]


def _row(key: str, model: str, ran: bool, verdict: str) -> dict:
    return {"key": key, "source": _SOURCE, "url": _URL, "code_url": _CODE, "quote": _QUOTE,
            "printed": "fine-tuning with Adam can train only a 2.7B LM", "measured_bytes": None,
            "metric": "nvidia-smi", "ran": ran,
            "argv": f"estimate --model benchmarks/published/models/{model}/config.json --system 1xA100-80GB "
                    "--strategy single --precision mixed --optimizer adamw --micro-batch 2 "
                    "--gradient-accumulation 4 --seq-len 512 --varying-lengths --no-gradient-checkpointing "
                    "--attention eager --stack transformers==4.28.1 --stack torch==2.1.0 --stack accelerate==0.17.1 "
                    "--format json",
            "assumptions": _SETTINGS.format(model=model.upper(), verdict=verdict),
            "unexpressed": _UNEXPRESSED}


ROWS = [
    _row("mezo-opt-2.7b-adam-ft-fp16-1xa100-80gb-ran", "opt-2.7b", True,
         "ran (the largest OPT the README says Adam fine-tuning trains on one A100 80GB)"),
    _row("mezo-opt-6.7b-adam-ft-fp16-1xa100-80gb-oom", "opt-6.7b", False,
         "did not fit (the README: Adam 'can train only a 2.7B LM'; 6.7B is the next OPT size)"),
]
