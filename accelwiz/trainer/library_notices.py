"""Library lines that are false or meaningless in a built-in trainer run, each kept out by the narrowest means.

DeepSpeed's CPU-fallback notice in a run that does not use DeepSpeed. With deepspeed installed, accelerate's
`extract_model_from_parallel` (accelerate 1.16, accelerate/utils/other.py:321-322, `if is_deepspeed_available():
from deepspeed import DeepSpeedEngine`) imports deepspeed only to add DeepSpeedEngine to an isinstance check; the
built-in trainer reaches it through `Accelerator.unwrap_model` (saving the model, the rank report), and TRL's
trainers through theirs. On a machine without a GPU, importing deepspeed runs its accelerator detection, which logs
"Setting accelerator to CPU. If you have GPU or other accelerator, we were unable to detect it." on the
"DeepSpeed" logger at WARNING (deepspeed 0.19.8, deepspeed/accelerator/real_accelerator.py:213, in
get_accelerator), to stdout, once per process: a DeepSpeed message in a run DeepSpeed takes no part in. accelwiz
cannot avoid the import (accelerate makes it whenever deepspeed is installed), so a filter on that one logger drops
that one record, by its module, function, level and text, in the training process only, and only where the run
does not use DeepSpeed: every other DeepSpeed line, and this one in a DeepSpeed run, is shown as before.
"""

from __future__ import annotations

import logging
from pathlib import PurePath

DEEPSPEED_LOGGER = "DeepSpeed"  # deepspeed/utils/logging.py: LoggerFactory.create_logger(name="DeepSpeed")
CPU_FALLBACK = "Setting accelerator to CPU."


class _NotDeepSpeedsCpuFallback(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.WARNING and record.funcName == "get_accelerator"
                    and PurePath(record.pathname).parts[-3:] == ("deepspeed", "accelerator", "real_accelerator.py")
                    and record.getMessage().startswith(CPU_FALLBACK))


def quiet_unused_libraries(*, uses_deepspeed: bool) -> None:
    """In the training process, before accelerate or TRL can import deepspeed: drop DeepSpeed's CPU-fallback notice
    where the run does not use DeepSpeed. Installed once (a second call adds nothing)."""
    if uses_deepspeed:
        return
    logger = logging.getLogger(DEEPSPEED_LOGGER)  # the same object deepspeed configures when it is imported
    if not any(isinstance(f, _NotDeepSpeedsCpuFallback) for f in logger.filters):
        logger.addFilter(_NotDeepSpeedsCpuFallback())
