"""The built-in trainer that `accelwiz run` launches when no script is given.

A tiny causal LM (random init, no download) trained on a byte-level text corpus through a plain `Accelerator`
loop, so one command shows that a config really trains: DDP, DeepSpeed ZeRO-1/2/3 and FSDP on GPUs, and
1-process, 2-process DDP and 2-process DeepSpeed on a CPU-only machine. `train.py` is the script (launched by
path); the modules beside it hold the pieces, and none of them imports torch at module level except those that
only the training process imports.
"""
