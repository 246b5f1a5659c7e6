"""Launching: what `accelwiz run` reads from the config, the exact command it builds, and the one place that
starts it.

`spec` reads the launch-relevant values from an Accelerate YAML; `command`, `environment` and `slurm` are pure
functions of a spec (golden-tested, shown by `--dry-run`); `execute` is the only code that starts a process.
"""
