"""What `accelwiz convert` does around the backend mapping (accelwiz/fix/convert.py owns the mapping itself):
`unit` reads the input unit and refuses one convert cannot work from, `leftovers` names every DeepSpeed setting
FSDP has no meaning for, `numerics` explains how the numbers differ for the run's precision, `memory` puts the
per-GPU memory of both configs side by side from the estimator, `files` writes the converted YAML and JSON both or
neither.
"""
