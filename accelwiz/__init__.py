"""accelwiz: probe, plan, check and launch Accelerate / DeepSpeed training."""

__version__ = "0.1.0"
