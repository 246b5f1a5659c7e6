"""What a model is, before anything is done with it: `ModelSpec` (its tensors and the features its family has), the
preset table, the lookup of a name, a parameter count, a folder or a hub id, and the spec built from a config.json.

It sits below the resolution: the resolution names the planned model with it, and the estimator, the rules, the
wizard and the trainer read the same spec. It imports nothing of accelwiz but errors and the bounded reader.
"""
