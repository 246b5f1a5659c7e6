"""AW6xx: what the config asks of the machine that the machine (or its installed libraries) cannot give.

These rules need a machine profile (`check --system local|PRESET|FILE`). Facts a profile does not know are
skipped, never guessed: presets list no packages, so version rules stay silent for them, and only a local
probe can inspect an NVMe path on disk. The modules (devices, gpu_precision, nvme, versions) hold the rules;
accelwiz/rules/catalog.py lists them.
"""
