"""`accelwiz convert`: the same training on the other backend (DeepSpeed ZeRO <-> FSDP2).

`mapping` maps one backend's settings to the other's (the YAML edits and the new DeepSpeed JSON); around it,
`unit` reads the input unit and refuses one convert cannot work from, `leftovers` names every DeepSpeed setting
FSDP has no meaning for, `numerics` explains how the numbers differ for the run's precision, `memory` puts the
per-GPU memory of both configs side by side from the estimator, `files` writes the converted YAML and JSON both or
neither. The edits themselves are accelwiz/fix's (edits.py, yaml_edit.py), shared with `check --fix`.
"""
