"""Legacy and removed keys with a successor, mended the way `check --fix` mends them (one owner: the fix table)."""

from __future__ import annotations

from pathlib import Path


def migrate_legacy_keys(text: str, name: str) -> tuple[str, list[str]]:
    """Legacy and removed keys with a successor (AW009, AW010) mended in one file, as `check --fix
    --unsafe-fixes --select AW009,AW010` would: DeepSpeed's `cpu_offload` -> `offload_optimizer`,
    `stage3_gather_fp16_weights_on_model_save` -> `..._16bit_...`, `bfloat16` -> `bf16`, the blocks 0.19 removed,
    accelerate's removed `ipex_config`. The file is checked alone, in a scratch directory."""
    import tempfile

    from accelwiz.atomic import atomic_write
    from accelwiz.errors import WriteError
    from accelwiz.fix.apply import plan_fixes
    from accelwiz.rules.registry import select_rules

    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory) / name
        try:
            atomic_write(scratch, text, create_parents=False)
        except WriteError as exc:
            raise WriteError(f"cannot migrate {name}: its scratch copy could not be written: "
                             f"{exc.message.split(': ', 1)[-1]}", hint=exc.hint) from None
        report = plan_fixes([scratch], select_rules(["AW009", "AW010"]), unsafe=True)
        fixed = report.fixed.get(scratch, text)
    return fixed, [f"{note.code}: {note.message} -> fixed" for note in report.applied]
