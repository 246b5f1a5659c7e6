"""Names shared by `init` (which writes them) and `run` (which reads them)."""

from pathlib import Path

# `accelwiz init` writes here by default and `accelwiz run` reads from here when --config is not given, so that
# `accelwiz init --defaults && accelwiz run` is a complete first experience. Never the global
# ~/.cache/huggingface/accelerate/default_config.yaml, which accelerate applies silently (accelerate#1133).
DEFAULT_CONFIG = Path("accelerate.yaml")
# The DeepSpeed JSON that `init` writes beside the YAML for DeepSpeed strategies.
DEFAULT_DEEPSPEED_CONFIG = Path("ds_config.json")
