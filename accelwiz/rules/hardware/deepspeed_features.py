"""AW619: DeepSpeed JSON keys newer than the installed DeepSpeed.

`zero_optimization` and its offload blocks are pydantic models that forbid unknown fields
(`DeepSpeedConfigModel`, deepspeed/runtime/config_utils.py), so a release older than a key refuses the whole
config ("extra fields not permitted") in `deepspeed.initialize`, on every rank. The schema rules (AW001) know
the keys of the DeepSpeed accelwiz was built against; this rule compares what a file writes with the release
the probe found.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelwiz.document import KeyPath
from accelwiz.rules.context import CheckContext
from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import Needs, rule

# (key path in the JSON, the first DeepSpeed release that accepts it, the feature). Each release is the first
# tag that contains the commit adding the field to the pydantic model (`git tag --contains`, deepspeedai/DeepSpeed).
NEWER_KEYS: tuple[tuple[KeyPath, str, str], ...] = (
    # ZeRO++ (#3784, deepspeed/runtime/zero/config.py); OpenRLHF#63 and DeepSpeed#3827 ran 0.9.5
    (("zero_optimization", "zero_hpz_partition_size"), "0.10.0", "ZeRO++ hierarchical partitioning"),
    (("zero_optimization", "zero_quantized_weights"), "0.10.0", "ZeRO++ quantized weights"),
    (("zero_optimization", "zero_quantized_gradients"), "0.10.0", "ZeRO++ quantized gradients"),
    (("zero_optimization", "zero_quantized_nontrainable_weights"), "0.10.2", "ZeRO++ quantized frozen weights"),
    # partial ("twin-flow") optimizer offload (#4636, deepspeed/runtime/zero/offload_config.py)
    (("zero_optimization", "offload_optimizer", "ratio"), "0.12.3", "partial optimizer offload"),
    (("zero_optimization", "stage3_module_granularity_threshold"), "0.16.0", "ZeRO-3 module granularity"),
    (("zero_optimization", "zenflow"), "0.17.5", "ZenFlow"),
)


@rule("AW619", "deepspeed-key-newer-than-installed", Severity.ERROR, needs=Needs.SYSTEM,
      fix="Upgrade DeepSpeed to the release the key needs, or remove the key")
def deepspeed_key_newer_than_installed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds keys in the DeepSpeed JSON that the installed DeepSpeed (the probe's, or a saved profile's) is too old
    to know: the ZeRO++ keys (`zero_hpz_partition_size`, `zero_quantized_weights`, `zero_quantized_gradients`,
    DeepSpeed 0.10.0), `zero_quantized_nontrainable_weights` (0.10.2), `offload_optimizer.ratio` (0.12.3),
    `stage3_module_granularity_threshold` (0.16.0) and `zenflow` (0.17.5).

    ## Why is this bad?
    `zero_optimization` is a pydantic model that forbids unknown fields, so an older DeepSpeed refuses the whole
    config in `deepspeed.initialize` ("1 validation error for DeepSpeedZeroConfig ... extra fields not
    permitted"), on every rank, after the model is loaded. Frameworks write these keys for you: OpenRLHF's
    config always sets the ZeRO++ keys, which DeepSpeed 0.9.5 refused (OpenRLHF#63).

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 1,
     "zero_optimization": {"stage": 3, "stage3_module_granularity_threshold": 12000}}
    ```
    ```console
    accelwiz check --system 8xV100-32GB.json ds_config.json
    ```
    with deepspeed 0.13.1 (the profile's packages), which has no `stage3_module_granularity_threshold` (0.16.0).
    Use instead: DeepSpeed >= 0.16.0, or the config without the key.
    ```json
    {"train_micro_batch_size_per_gpu": 1,
     "zero_optimization": {"stage": 3}}
    ```
    """
    json, system = ctx.deepspeed, ctx.system
    if json is None or system is None:
        return
    for path, release, feature in NEWER_KEYS:
        if json.get(*path) is None:
            continue
        installed = system.installed_older_than("deepspeed", release)
        if installed:
            yield Finding("deepspeed", path, f"`{'.'.join(path)}` ({feature}) needs DeepSpeed >= {release}; "
                                             f"{installed} is installed, which refuses the config")
