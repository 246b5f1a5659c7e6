"""Every broken case in corpus/broken that is statically detectable is caught by the rule meant for it.

`CAUGHT` maps a case to the codes that must appear (others may appear too); `NOT_DETECTABLE` says why a
case cannot be caught from the files alone. docs/corpus.md renders this table for readers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from accelwiz.rules.engine import check_paths
from accelwiz.rules.registry import select_rules

# case -> (files to check together, --system preset or None, codes that must be reported, what they catch)
CAUGHT: dict[str, tuple[tuple[str, ...], str | None, set[str], str]] = {
    "accelerate#1316": (("huggingface-accelerate__1316.yaml",), None, {"AW106"},
                        "MULTI_GPU with gpu_ids '0' and one process: accelerate refuses to launch"),
    "accelerate#1116": (("huggingface-accelerate__1116.yaml",), None, {"AW105"},
                        "main_process_ip 'example' is a placeholder; the 2x1-GPU layout itself is valid today"),
    "accelerate#3894": (("huggingface-accelerate__3894.yaml",), None, {"AW107"},
                        "node 2 lists 2 GPUs for the 5 processes per node accelerate will start"),
    "accelerate#3894 node 1": (("huggingface-accelerate__3894_node1.yaml",), None, {"AW108"},
                               "node 1 lists 8 GPUs for 5 processes per node"),
    "accelerate#1943": (("huggingface-accelerate__1943.yaml",), None, {"AW002"},
                        "fsdp_backward_prefetch_policy is ignored (renamed fsdp_backward_prefetch)"),
    "accelerate#3798": (("huggingface-accelerate__3798.yaml",), None, {"AW314"},
                        "TP-only parallelism_config under FSDP2 has no shard dimension"),
    "accelerate#2298": (("huggingface-accelerate__2298.yaml",), None, {"AW002", "AW206"},
                        "inline train_micro_batch_size_per_gpu is ignored; param offload at ZeRO-2 is ignored"),
    "accelerate#941": (("huggingface-accelerate__941.yaml", "huggingface-accelerate__941.json"), None,
                       {"AW201", "AW214"}, "deepspeed_config_file plus inline DeepSpeed keys; GA 1 vs 10"),
    "accelerate#3369": (("huggingface-accelerate__3369.yaml",), None, {"AW215"},
                        "the YAML's gradient_accumulation_steps overrides Accelerator(gradient_accumulation_steps)"),
    "DeepSpeed#2820": (("deepspeedai-DeepSpeed__2820.yaml",), None, {"AW001"},
                       "the malformed key `bf16:enabled` inside deepspeed_config is ignored"),
    "MOSS#272": (("OpenMOSS-MOSS__272.yaml",), None, {"AW002"},
                 "zero_force_ds_cpu_optimizer inside the YAML's deepspeed_config is ignored"),
    "LLaMA-Factory#201": (("hiyouga-LlamaFactory__201.yaml",), None, {"AW215"},
                          "the inline GA (4) overrides the Trainer's --gradient_accumulation_steps"),
    "transformers#16495": (("huggingface-transformers__16495.json",), None, {"AW232"},
                           "hidden-size 'auto' keys below ZeRO-3"),
    "transformers#39849": (("huggingface-transformers__39849.json",), None, {"AW403"},
                           "fp16 fixed in the JSON: a bf16 launcher or Trainer is refused"),
    "DeepSpeed#4872": (("deepspeedai-DeepSpeed__4872.json",), None, {"AW210"},
                       "partial offload ratio with NVMe"),
    "DeepSpeed#7653": (("deepspeedai-DeepSpeed__7653.json",), None, {"AW404"},
                       "communication_data_type differs from the training precision"),
    "DeepSpeed#8260": (("deepspeedai-DeepSpeed__8260.json",), None, {"AW218"},
                       "reduce_bucket_size 0: ZeroDivisionError in backward"),
    "DeepSpeed#1784": (("deepspeedai-DeepSpeed__1784.json",), None, {"AW405"},
                       "bf16 with ZeRO stage 0 (refused by older DeepSpeed)"),
    "DeepSpeed#3024": (("deepspeedai-DeepSpeed__3024.json",), None, {"AW002", "AW003"},
                       "accelerate's mixed_precision inside the JSON; bf16.enabled as the string 'true'"),
    "LLaMA-Factory#1116": (("hiyouga-LlamaFactory__1116.json",), None, {"AW005"},
                           "gradient_accumulation_steps as the string '8'"),
    "axolotl#2964": (("axolotl-ai-cloud-axolotl__2964.json",), None, {"AW225"},
                     "'auto' on alias keys that accelerate does not fill"),
    "dolly#11": (("databrickslabs-dolly__11.json",), "8xV100-32GB", {"AW703"},
                 "with the Trainer's command line (`-- --bf16`, as dolly's trainer.py passes it): bf16 'auto' is "
                 "filled with true on a V100 without bf16 tensor cores"),
}

# case -> the training command line after `--` (the HF Trainer's arguments, AW7xx)
TRAINER_ARGUMENTS: dict[str, list[str]] = {
    "dolly#11": ["--bf16", "--deepspeed", "databrickslabs-dolly__11.json", "--per_device_train_batch_size", "8"],
}

# case -> the library versions it broke under, where the finding is about that version (issue 29: findings
# are true for the installed stack): checked against the 8 x V100 profile with those versions
REPORTERS_STACK: dict[str, dict[str, str]] = {"transformers#16495": {"transformers": "4.17.0"}}

NOT_DETECTABLE = {
    "trl#3208": ("huggingface-trl__3208.yaml", "the pasted YAML is not YAML at all (`key:value` without a space): "
                 "accelwiz refuses it as unreadable (exit 2); the original num_processes: 1 is not in the issue"),
}


@pytest.mark.parametrize("case", sorted(CAUGHT))
def test_broken_case_is_caught(corpus, case):
    files, system, expected, _ = CAUGHT[case]
    context = {}
    if system:
        from accelwiz.probe.profiles import load_system

        context["system"] = load_system(system)
    if case in REPORTERS_STACK:
        from accelwiz.probe.profiles import load_system

        profile = load_system(str(Path(__file__).resolve().parents[1] / "fixtures" / "systems" / "8xV100-32GB.json"))
        context["system"] = profile.model_copy(update={"packages": {**profile.packages, **REPORTERS_STACK[case]}})
    if case in TRAINER_ARGUMENTS:
        from accelwiz.config.training_args import parse_argv

        argv = [str(corpus / "broken" / a) if a.endswith(".json") else a for a in TRAINER_ARGUMENTS[case]]
        context["training_args"] = parse_argv(argv)
    result = check_paths([corpus / "broken" / f for f in files], select_rules(), **context)
    assert not result.input_errors
    reported = {d.code for d in result.diagnostics}
    assert expected <= reported, f"{case}: expected {sorted(expected)}, got {sorted(reported)}"


def test_every_broken_config_is_accounted_for(corpus):
    covered = {f for files, *_ in CAUGHT.values() for f in files} | {f for f, _ in NOT_DETECTABLE.values()}
    on_disk = {p.name for p in (corpus / "broken").iterdir() if p.suffix in (".yaml", ".json")}
    assert on_disk == covered


def test_unreadable_broken_case_is_an_input_error(corpus):
    result = check_paths([corpus / "broken" / "huggingface-trl__3208.yaml"], select_rules())
    assert result.input_errors and result.exit_code() == 2
