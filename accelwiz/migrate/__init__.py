"""`accelwiz migrate`: a config rewritten for the libraries it will run with, comments and key order kept.

`fsdp2` turns an FSDP1 `fsdp_config` into FSDP2 (what `accelerate to-fsdp2` does, without its leaks); `legacy`
mends legacy and removed keys that have a successor through check --fix's own fixes (AW009, AW010);
`accelerate_releases` (`--to-accelerate VERSION`) rewrites the keys whose form changed between accelerate
releases, each change with its release and pull request. Edits go through accelwiz/fix's editors.
"""
