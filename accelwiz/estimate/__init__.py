"""Training memory: a typed model registry, pure arithmetic per strategy, frozen results, a recommendation.

models.py (which model) → workload.py (how it is trained) → strategy.py (how it is spread) → memory.py
(bytes per GPU and per node, built from states.py and activations.py) → recommend.py (the fastest that fits).
published.py reproduces the ZeRO paper's and DeepSpeed's own model-state formulas for comparison.
No module here imports torch: `accelwiz estimate` starts in well under 0.3 s.
"""
