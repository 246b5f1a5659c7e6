"""Imports every module that registers rules (registration happens at import)."""

from accelwiz.rules import (  # noqa: F401
    deepspeed,  # AW2xx, AW401-AW419: DeepSpeed, YAML <-> JSON agreement, "auto", precision (a package)
    fsdp,  # AW301-AW309: FSDP1 and FSDP2 settings
    hardware,  # AW6xx: against a machine profile (--system) (a package)
    memory,  # AW5xx: against a memory estimate (--model)
    parallelism,  # AW310-AW315: N-D parallelism sizes, Megatron-LM degrees
    precision_settings,  # AW420-AW449: fp8 and dynamo settings
    schema_rules,  # AW0xx: keys, types, values
    topology,  # AW1xx: processes, machines, ranks, launcher keys
)
