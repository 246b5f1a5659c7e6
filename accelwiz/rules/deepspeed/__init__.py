"""AW2xx DeepSpeed (the JSON, the YAML's `deepspeed_config`, and their agreement) and AW401-AW419 precision.

Most rules read effective values (`ctx.effective`, see accelwiz/effective.py) so that one rule covers both the
inline YAML settings and the DeepSpeed JSON. Raw values are read defensively: a wrong type is the schema
rules' business (AW0xx), so a rule that meets one simply says nothing.

Whether the JSON is launched through accelerate matters: with an Accelerate YAML, accelerate (and the HF
Trainer, which goes through accelerate) fill `"auto"` and refuse a JSON without `zero_optimization`; a JSON
checked alone may also be meant for the plain `deepspeed` launcher, and the rules judge it leniently where
that launcher would accept it (see `_shared.hf_launched`).

The modules: `auto` ("auto" values and who fills them), `batch` (batch size and gradient accumulation), `offload`
(optimizer and parameter offload), `optimizer` (optimizer, LR scheduler, autotuning), `precision` (fp16/bf16 in
the JSON and the YAML's mixed_precision), `master_weights` (16-bit master weights and optimizer states),
`reference` (deepspeed_config_file, zero_optimization presence), `zero` (ZeRO settings against the stage),
`zero3_init` (the YAML's zero3_init_flag against the stage). Their rules are listed in accelwiz/rules/catalog.py.
"""
