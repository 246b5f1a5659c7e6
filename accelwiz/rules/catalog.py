"""Imports every module that registers rules (registration happens at import)."""

from accelwiz.rules import (  # noqa: F401
    deepspeed,  # AW2xx, AW401-AW419: DeepSpeed, YAML <-> JSON agreement, "auto", precision
    fsdp,  # AW3xx, AW420-AW449: FSDP, parallelism, Megatron, fp8 and dynamo settings
    hardware,  # AW6xx: against a machine profile (--system)
    memory,  # AW5xx: against a memory estimate (--model)
    schema_rules,  # AW0xx: keys, types, values
    topology,  # AW1xx: processes, machines, ranks, launcher keys
)
