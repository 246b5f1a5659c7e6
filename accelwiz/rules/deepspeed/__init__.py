"""AW2xx DeepSpeed (the JSON, the YAML's `deepspeed_config`, and their agreement) and AW401-AW419 precision.

Most rules read effective values (`ctx.effective`, see accelwiz/effective.py) so that one rule covers both the
inline YAML settings and the DeepSpeed JSON. Raw values are read defensively: a wrong type is the schema
rules' business (AW0xx), so a rule that meets one simply says nothing.

Whether the JSON is launched through accelerate matters: with an Accelerate YAML, accelerate (and the HF
Trainer, which goes through accelerate) fill `"auto"` and refuse a JSON without `zero_optimization`; a JSON
checked alone may also be meant for the plain `deepspeed` launcher, and the rules judge it leniently where
that launcher would accept it (see `_shared.hf_launched`).

Importing the package registers every rule in its modules.
"""

from accelwiz.rules.deepspeed import (  # noqa: F401
    auto,  # AW225-AW228, AW232: "auto" values and who fills them
    batch,  # AW212-AW215: batch size and gradient accumulation
    offload,  # AW206-AW211: optimizer and parameter offload
    optimizer,  # AW221-AW223, AW233: optimizer, LR scheduler, autotuning
    precision,  # AW401-AW409: fp16/bf16 in the JSON and the YAML's mixed_precision
    reference,  # AW201-AW205: deepspeed_config_file, zero_optimization presence
    zero,  # AW216-AW220, AW224, AW229-AW231: ZeRO settings against the stage
)
