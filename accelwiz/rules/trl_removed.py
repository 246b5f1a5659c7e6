"""AW815: arguments of TRL's configs that trl 1.16 no longer has.

SFTConfig, DPOConfig and GRPOConfig are TrainingArguments subclasses read by TrlParser (HfArgumentParser): an
option no dataclass of the script defines stops the run at start-up ("Some specified arguments are not used by
the HfArgumentParser"; from a recipe file, TrlParser.parse_args_and_config's "Unknown arguments from config file"),
and `SFTConfig(max_seq_length=...)` in a script is a TypeError. TRL renamed or dropped these fields, so recipes,
blog posts and issue threads written for older releases fail with today's TRL. Each entry is the field's removal in
trl's history (the PR that removed it) and what trl 1.16 reads instead; tests/rules/test_trl_removed.py parses the
old and the new spelling with the installed trl's own configs. A removed name that is a prefix of a current field
(vllm_max_model_len) is completed by argparse on the command line and fails only in a recipe file or in Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from accelwiz.rules.diagnostic import Finding, Severity
from accelwiz.rules.rule import rule

if TYPE_CHECKING:
    from accelwiz.rules.context import CheckContext

# config -> removed field -> (where it went, what to write instead)
REMOVED: dict[str, dict[str, tuple[str, str]]] = {
    "sft": {
        "max_seq_length": ("renamed by trl#2895, removed by trl#3704", "write --max_length"),
    },
    "dpo": {
        "max_prompt_length": ("removed by the DPO refactor trl#3906",
                              "leave it out: --max_length bounds prompt and completion together"),
    },
    "grpo": {
        "max_prompt_length": ("removed by trl#4847",
                              "leave it out: GRPO no longer truncates prompts, so shorten or filter them in the "
                              "dataset"),
        "vllm_device": ("removed by trl#3364",
                        "leave it out: run `trl vllm-serve` on GPUs of its own (--vllm_mode server) or share the "
                        "training GPUs (--vllm_mode colocate)"),
        "vllm_max_model_len": ("removed by trl#3364; the context window is vllm_max_model_length (trl#4300)",
                               "write --vllm_max_model_length"),
        "use_liger_loss": ("removed by trl#4847", "write --use_liger_kernel"),
    },
}
CONFIG_NAMES = {"sft": "SFTConfig", "dpo": "DPOConfig", "grpo": "GRPOConfig"}
# removed names that are a prefix of a field the config still has: argparse's allow_abbrev completes them on the
# command line (--vllm_max_model_len sets vllm_max_model_length), so only a recipe file or Python code fails
ABBREVIATES = {("grpo", "vllm_max_model_len"): "vllm_max_model_length"}


def _config(args: object) -> str | None:
    """Which TRL config reads the arguments: check --kind dpo|grpo, or --trl (an SFTConfig)."""
    kind = getattr(args, "kind", None)
    if kind in ("dpo", "grpo"):
        return kind
    return "sft" if getattr(args, "trl_config", None) == "sft" else None


@rule("AW815", "trl-argument-removed", Severity.ERROR,
      fix="Write the argument as trl 1.16 names it (the message says which), or leave it out")
def trl_argument_removed(ctx: CheckContext) -> Iterator[Finding]:
    """
    ## What it does
    Finds arguments that TRL's SFTConfig, DPOConfig or GRPOConfig no longer has in trl 1.16, given on the
    command line or in the recipe file of `check --trl` or `check --kind dpo|grpo`: SFT's `max_seq_length`
    (now `max_length`), GRPO's `max_prompt_length`, `vllm_device`, `vllm_max_model_len` and `use_liger_loss`,
    DPO's `max_prompt_length`.

    ## Why is this bad?
    TrlParser refuses an argument no dataclass of the script defines before anything loads, and a config built in
    Python raises a TypeError; recipes written for older TRL releases stop at start-up (trl#5970 fixed
    `max_seq_length` in TRL's own docs).

    ## Example
    ```yaml
    # accelwiz check accelerate.yaml --kind grpo -- --max_prompt_length 512 --num_generations 8
    distributed_type: MULTI_GPU
    num_processes: 8
    ```
    Use instead: drop `--max_prompt_length`.
    """
    args = getattr(ctx, "training_args", None)
    config = _config(args) if args is not None else None
    if config is None:
        return
    from_file = getattr(args, "path", None) is not None
    for name in getattr(args, "unread", ()):
        if name in REMOVED[config] and (from_file or (config, name) not in ABBREVIATES):
            history, instead = REMOVED[config][name]
            yield Finding(None, (), f"--{name} ({args.source}) is no {CONFIG_NAMES[config]} field in trl 1.16 "
                                    f"({history}): {instead}")
