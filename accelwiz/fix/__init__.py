"""Machine-applicable fixes for `accelwiz check --fix` / `--diff` (ruff's model).

table.py is the explicit table (rule code -> fix function, safe | unsafe); edits.py the edits as data;
yaml_edit.py and json_edit.py apply them without re-dumping the files; apply.py finds, applies and verifies them.
`accelwiz convert` (accelwiz/convert/) and `accelwiz migrate` (accelwiz/migrate/) edit files through the same
edits and editors.
"""
