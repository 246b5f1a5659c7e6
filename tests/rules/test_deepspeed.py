"""AW2xx: each DeepSpeed rule fires on a config with the mistake and stays quiet on a close one without it;
the broken corpus cases in this area are caught with the expected codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.rules.helpers import codes, diagnostics

DEEPSPEED = ("AW2",)
BASE = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
        "zero_optimization": {"stage": 2}}
YAML_DS = "distributed_type: DEEPSPEED\nnum_processes: 8\n"


def ds(**changes) -> str:
    """The base JSON with top-level keys replaced (None removes a key)."""
    data = {**BASE, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not None})


def zero(**keys) -> dict:
    return {"stage": 2, **keys}


# (code, bad JSON, close good JSON), each checked alone.
JSON_CASES = [
    ("AW205", ds(zero_optimization=None), ds()),
    ("AW206", ds(zero_optimization=zero(offload_param={"device": "cpu"})),
     ds(zero_optimization=zero(stage=3, offload_param={"device": "cpu"}))),
    ("AW207", ds(zero_optimization=zero(stage=3, offload_param={"device": "nvme"})),
     ds(zero_optimization=zero(stage=3, offload_param={"device": "nvme", "nvme_path": "/nvme"}))),
    ("AW208", ds(zero_optimization=zero(offload_optimizer={"device": "nvme", "nvme_path": "/nvme"})),
     ds(zero_optimization=zero(stage=3, offload_optimizer={"device": "nvme", "nvme_path": "/nvme"}))),
    ("AW209", ds(zero_optimization=zero(offload_optimizer={"device": "cpu", "ratio": 0.5})),
     ds(zero_optimization=zero(stage=3, offload_optimizer={"device": "cpu", "ratio": 0.5}))),
    ("AW210", ds(zero_optimization=zero(stage=3, offload_optimizer={"device": "nvme", "nvme_path": "/n",
                                                                    "ratio": 0.5})),
     ds(zero_optimization=zero(stage=3, offload_optimizer={"device": "cpu", "ratio": 0.5}))),
    ("AW211", ds(zero_optimization=zero(stage=0, offload_optimizer={"device": "cpu"})),
     ds(zero_optimization=zero(stage=1, offload_optimizer={"device": "cpu"}))),
    ("AW212", ds(train_batch_size=15, train_micro_batch_size_per_gpu=2, gradient_accumulation_steps=8),
     ds(train_batch_size=32, train_micro_batch_size_per_gpu=2, gradient_accumulation_steps=8)),
    ("AW213", ds(train_micro_batch_size_per_gpu=None),
     ds(train_micro_batch_size_per_gpu=None, train_batch_size=8)),
    ("AW218", ds(zero_optimization=zero(reduce_bucket_size=0)),
     ds(zero_optimization=zero(reduce_bucket_size=5e8))),
    ("AW219", ds(gradient_allreduce_op="sum", zero_optimization=zero(stage=3)),
     ds(gradient_allreduce_op="sum", zero_optimization=zero(stage=2))),
    ("AW220", ds(zero_optimization=zero(stage=3, compute_grad_norm=False)),
     ds(gradient_clipping=0.0, zero_optimization=zero(compute_grad_norm=False))),
    ("AW220", ds(zero_optimization=zero(compute_grad_norm=False)),  # clipping defaults to 1.0 since 0.19.3
     ds(gradient_clipping=0.0, zero_optimization=zero(compute_grad_norm=False))),
    ("AW221", ds(optimizer={"type": "AdamW", "params": {"lr": 1e-4, "max_grad_norm": 1.0}}),
     ds(optimizer={"type": "AdamW", "params": {"lr": 1e-4}}, gradient_clipping=1.0)),
    ("AW222", ds(optimizer={"type": "AdamWeightDecay", "params": {}}), ds(optimizer={"type": "adamw"})),
    ("AW222", ds(optimizer={"type": "sgd"}), ds(optimizer={"type": "SGD"})),
    ("AW223", ds(scheduler={"type": "CosineAnnealing"}), ds(scheduler={"type": "WarmupCosineLR"})),
    ("AW224", ds(pipeline={"stages": 4}), ds(pipeline={"stages": 4}, zero_optimization=zero(stage=1))),
    ("AW225", ds(train_micro_batch_size_per_gpu="auto", zero_optimization=zero(sub_group_size="auto")),
     ds(train_micro_batch_size_per_gpu="auto", zero_optimization=zero(reduce_bucket_size="auto"))),
    ("AW226", ds(zero_optimization=zero(stage=3, stage3_max_live_parameters="auto")),
     ds(zero_optimization=zero(stage=3, stage3_max_live_parameters=1e9))),
    ("AW229", ds(zero_optimization=zero(stage=3, stage3_max_live_parameters=1e9, max_live_parameters=1e9)),
     ds(zero_optimization=zero(stage=3, max_live_parameters=1e9))),
    ("AW229", ds(zero_optimization=zero(cpu_offload=True, offload_optimizer={"device": "cpu"})),
     ds(zero_optimization=zero(offload_optimizer={"device": "cpu"}))),
    ("AW230", ds(zero_optimization=zero(stage=1, legacy_stage1=True)), ds(zero_optimization=zero(stage=1))),
    ("AW231", ds(prescale_gradients=True), ds(prescale_gradients=True, zero_optimization=zero(stage=1))),
    ("AW231", ds(gradient_predivide_factor=2.0, zero_optimization=zero(stage=3)),
     ds(gradient_predivide_factor=1.0, zero_optimization=zero(stage=3))),
    ("AW232", ds(zero_optimization=zero(stage3_prefetch_bucket_size="auto")),
     ds(zero_optimization=zero(stage=3, stage3_prefetch_bucket_size="auto"))),
]


@pytest.mark.parametrize("code,bad,good", JSON_CASES)
def test_json_rule_fires_on_the_mistake_only(write, code, bad, good):
    assert code in codes(write("bad.json", bad), select=(code,))
    assert code not in codes(write("good.json", good), select=(code,))


def pair(write, yaml: str, json_text: str | None = None) -> Path:
    """An Accelerate YAML that names ds.json (written when given)."""
    if json_text is not None:
        write("ds.json", json_text)
        yaml += "deepspeed_config:\n  deepspeed_config_file: {}\n".format(Path(write("ds.json", json_text)))
    return write("accelerate.yaml", yaml)


def inline(write, settings: str, top: str = YAML_DS) -> Path:
    lines = "".join(f"  {setting}\n" for setting in settings.split(";"))
    return write("accelerate.yaml", f"{top}deepspeed_config:\n{lines}")


def test_accelerate_fields_next_to_deepspeed_file(write):
    json_path = write("ds.json", ds())
    yaml = write("a.yaml", f"{YAML_DS}mixed_precision: 'no'\ndeepspeed_config:\n  deepspeed_config_file: "
                           f"{json_path}\n  zero_stage: 3\n  zero3_init_flag: true\n")
    found = [(d.code, d.dotted_path) for d in diagnostics(yaml, select=("AW201",))]
    assert found == [("AW201", "mixed_precision"), ("AW201", "deepspeed_config.zero_stage")]
    clean = write("b.yaml", f"{YAML_DS}deepspeed_config:\n  deepspeed_config_file: {json_path}\n"
                            "  zero3_init_flag: false\n")
    assert "AW201" not in codes(clean, select=("AW201",))


def test_deepspeed_file_missing_and_relative_to_yaml(write, tmp_path, monkeypatch):
    yaml = write("configs/a.yaml", f"{YAML_DS}deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    assert codes(yaml, select=("AW202", "AW203")) == {"AW202"}
    write("configs/ds.json", ds())
    monkeypatch.chdir(tmp_path)
    assert codes(yaml, select=("AW202", "AW203")) == {"AW203"}
    monkeypatch.chdir(tmp_path / "configs")
    assert codes(yaml, select=("AW202", "AW203")) == set()


def test_zero_optimization_required_through_accelerate(write):
    yaml = pair(write, YAML_DS, ds(zero_optimization=None))
    assert codes(yaml, select=("AW204", "AW205")) == {"AW204"}
    assert codes(write("alone.json", ds(zero_optimization=None)), select=("AW204", "AW205")) == {"AW205"}


def test_batch_identity_uses_the_yaml_world_size_and_deepspeed_text(write):
    yaml = pair(write, YAML_DS, ds(train_batch_size=60, train_micro_batch_size_per_gpu=2,
                                   gradient_accumulation_steps=3))
    [finding] = diagnostics(yaml, select=("AW212",))
    assert finding.message.startswith("Check batch related parameters. train_batch_size is not equal to "
                                      "micro_batch_per_gpu * gradient_acc_step * world_size 60 != 2 * 3 * 8")
    good = pair(write, YAML_DS, ds(train_batch_size=48, train_micro_batch_size_per_gpu=2,
                                   gradient_accumulation_steps=3))
    assert codes(good, select=("AW212",)) == set()


def test_batch_identity_with_inferred_accumulation(write):
    # accelerate adds gradient_accumulation_steps: 1, so 24 / 3 needs a world size of 8
    assert codes(pair(write, YAML_DS, ds(train_batch_size=24, train_micro_batch_size_per_gpu=3,
                                         gradient_accumulation_steps=None)), select=("AW212",)) == set()
    json_text = ds(train_batch_size=24, train_micro_batch_size_per_gpu=3, gradient_accumulation_steps=None)
    four_processes = pair(write, YAML_DS.replace("8", "4"), json_text)
    assert codes(four_processes, select=("AW212",)) == {"AW212"}


def test_auto_batch_values_are_not_checked_against_the_world_size(write):
    yaml = pair(write, YAML_DS, ds(train_batch_size="auto", train_micro_batch_size_per_gpu="auto"))
    assert codes(yaml, select=("AW212",)) == set()


@pytest.mark.parametrize("code,bad,good", [
    ("AW206", "zero_stage: 2;offload_param_device: cpu", "zero_stage: 3;offload_param_device: cpu"),
    ("AW207", "zero_stage: 3;offload_param_device: nvme", "zero_stage: 3;offload_param_device: cpu"),
    ("AW208", "zero_stage: 2;offload_optimizer_device: nvme", "zero_stage: 3;offload_optimizer_device: nvme"),
    ("AW211", "zero_stage: 0;offload_optimizer_device: cpu", "zero_stage: 1;offload_optimizer_device: cpu"),
    ("AW215", "zero_stage: 2;gradient_accumulation_steps: 4", "zero_stage: 2"),
    ("AW216", "zero_stage: 2;zero3_init_flag: true", "zero_stage: 3;zero3_init_flag: true"),
    ("AW217", "zero_stage: 3;zero3_init_flag: false", "zero_stage: 3;zero3_init_flag: true"),
    ("AW228", "zero_stage: 2;gradient_clipping: auto", "zero_stage: 2;gradient_clipping: 0.0"),
    ("AW228", "zero_stage: 2", "zero_stage: 2;gradient_clipping: 1.0"),
])
def test_inline_yaml_rule_fires_on_the_mistake_only(write, code, bad, good):
    assert code in codes(inline(write, bad), select=(code,))
    assert code not in codes(inline(write, good), select=(code,))


def test_default_stage_of_the_inline_plugin_is_two(write):
    # no zero_stage: accelerate uses 2, so parameter offload is ignored
    assert "AW206" in codes(inline(write, "offload_param_device: cpu"), select=("AW206",))


def test_yaml_and_json_disagree_on_gradient_accumulation(write):
    json_path = write("ds.json", ds(gradient_accumulation_steps=10))
    yaml = write("a.yaml", f"{YAML_DS}deepspeed_config:\n  deepspeed_config_file: {json_path}\n"
                           "  gradient_accumulation_steps: 1\n")
    assert {"AW201", "AW214"} <= codes(yaml, select=("AW201", "AW214"))


def test_auto_only_the_trainer_fills(write):
    json_text = ds(optimizer={"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto"}})
    found = [d.dotted_path for d in diagnostics(pair(write, YAML_DS, json_text), select=("AW227",))]
    assert found == ["optimizer.params.betas", "optimizer.params.eps"]
    assert codes(pair(write, YAML_DS, json_text), select=("AW225",)) == set()  # lr is filled via DummyOptim


def test_auto_in_a_plain_deepspeed_json_is_dropped_not_refused(write):
    path = write("plain.json", ds(zero_optimization=zero(stage=3, stage3_max_live_parameters="auto")))
    [finding] = diagnostics(path, select=("AW225", "AW226"))
    assert finding.code == "AW226" and "1000000000" in finding.message
    # the same JSON through accelerate is refused in prepare()
    assert codes(pair(write, YAML_DS, path.read_text()), select=("AW225", "AW226")) == {"AW225"}


def test_deepspeed_native_auto_is_not_reported_for_plain_deepspeed(write):
    path = write("pipe.json", ds(pipeline={"stages": "auto"}, zero_optimization=zero(stage=1)))
    assert codes(path, select=("AW225", "AW226")) == set()


def test_unknown_optimizer_hint_names_the_torch_spelling(write):
    [finding] = diagnostics(write("a.json", ds(optimizer={"type": "rmsprop"})), select=("AW222",))
    assert finding.fix == "Use `RMSprop` (torch.optim names are case-sensitive)"


def test_torch_optimizer_list_matches_torch():
    import torch.optim

    from accelwiz.rules.deepspeed.optimizer import TORCH_OPTIMIZERS

    available = {name for name in dir(torch.optim) if isinstance(getattr(torch.optim, name), type)
                 and issubclass(getattr(torch.optim, name), torch.optim.Optimizer) and name != "Optimizer"}
    assert available <= TORCH_OPTIMIZERS | {"Optimizer"}
    assert available >= TORCH_OPTIMIZERS


def test_deepspeed_lists_match_deepspeed_source():
    from deepspeed.runtime import lr_schedules
    from deepspeed.runtime.config import DEEPSPEED_OPTIMIZERS

    from accelwiz.rules.deepspeed import optimizer as rules

    assert set(DEEPSPEED_OPTIMIZERS) == rules.DEEPSPEED_OPTIMIZERS
    assert set(lr_schedules.VALID_LR_SCHEDULES) == set(rules.DEEPSPEED_SCHEDULERS)


@pytest.mark.parametrize("data", [
    {"zero_optimization": "3"}, {"zero_optimization": {"stage": None, "offload_param": []}},
    {"optimizer": [], "scheduler": {"type": 3}}, {"zero_optimization": True, "bf16": "yes"},
    {"train_batch_size": "x", "train_micro_batch_size_per_gpu": [], "fp16": 1},
])
def test_rules_never_crash_on_malformed_json(write, data):
    path = write("odd.json", json.dumps(data))
    yaml = write("a.yaml", f"{YAML_DS}deepspeed_config:\n  deepspeed_config_file: {path}\n")
    diagnostics(path, select=("AW2", "AW4"))
    diagnostics(yaml, select=("AW2", "AW4"))


# --- the broken corpus cases --------------------------------------------------------------------------------

BROKEN_CASES = {
    # case: (files, expected codes among AW0/AW2/AW4, key paths that must be reported)
    "huggingface-accelerate__2298": (["yaml"], {"AW002", "AW206", "AW215"},
                                     {"deepspeed_config.train_micro_batch_size_per_gpu",
                                      "deepspeed_config.offload_param_device"}),
    "huggingface-accelerate__3369": (["yaml"], {"AW215", "AW228"},
                                     {"deepspeed_config.gradient_accumulation_steps"}),
    "huggingface-transformers__39849": (["json"], {"AW205", "AW213", "AW403"}, {"fp16.enabled"}),
    "huggingface-transformers__16495": (["json"], {"AW232"}, {"zero_optimization.reduce_bucket_size"}),
    "deepspeedai-DeepSpeed__4872": (["json"], {"AW210"}, {"zero_optimization.offload_optimizer.ratio"}),
    "deepspeedai-DeepSpeed__7653": (["json"], {"AW404"}, {"communication_data_type"}),
    "deepspeedai-DeepSpeed__8260": (["json"], {"AW218"}, {"zero_optimization.reduce_bucket_size"}),
    "deepspeedai-DeepSpeed__1784": (["json"], {"AW213", "AW403", "AW405"}, {"bf16.enabled"}),
    "deepspeedai-DeepSpeed__2820": (["yaml"], {"AW001", "AW215"}, {"deepspeed_config.bf16:enabled"}),
    "deepspeedai-DeepSpeed__3024": (["json"], {"AW002", "AW003", "AW215", "AW234", "AW402", "AW403"},
                                    {"mixed_precision", "bf16.enabled"}),
    "hiyouga-LlamaFactory__1116": (["json"], {"AW005", "AW205"}, {"gradient_accumulation_steps"}),
    # The Trainer's --gradient_accumulation_steps 2 is on the command line, not in the file: what is visible
    # is the fixed YAML value that the Trainer will compare against.
    "hiyouga-LlamaFactory__201": (["yaml"], {"AW215"}, {"deepspeed_config.gradient_accumulation_steps"}),
    "OpenMOSS-MOSS__272": (["yaml"], {"AW002", "AW009", "AW215"},
                           {"deepspeed_config.zero_force_ds_cpu_optimizer"}),
    "axolotl-ai-cloud-axolotl__2964": (["json"], {"AW225", "AW403"},
                                       {"zero_optimization.prefetch_bucket_size",
                                        "zero_optimization.param_persistence_threshold"}),
}


# The library versions a case broke under, where the finding is about that version (issue 29: findings true for
# the installed stack): the 8 x V100 profile (a real `probe --save`) with the reporter's versions.
REPORTERS_STACK = {"huggingface-transformers__16495": {"transformers": "4.17.0"}}


def _reporters_stack(case: str) -> dict:
    if case not in REPORTERS_STACK:
        return {}
    from accelwiz.probe.profiles import load_system

    profile = load_system(str(Path(__file__).resolve().parent.parent / "fixtures" / "systems" / "8xV100-32GB.json"))
    return {"system": profile.model_copy(update={"packages": {**profile.packages, **REPORTERS_STACK[case]}})}


def _ours(found: set[str]) -> set[str]:
    return {c for c in found if c.startswith(("AW0", "AW2", "AW40", "AW41"))}


@pytest.mark.parametrize("case", sorted(BROKEN_CASES))
def test_broken_case_is_caught(corpus, case):
    suffixes, expected, paths = BROKEN_CASES[case]
    files = [corpus / "broken" / f"{case}.{s}" for s in suffixes]
    found = diagnostics(*files, **_reporters_stack(case))
    assert _ours({d.code for d in found}) == expected
    assert paths <= {d.dotted_path for d in found}


def test_broken_941_yaml_with_its_json(corpus, tmp_path, monkeypatch):
    # the YAML names 'ds_config.json' relative to the directory accelerate is launched from
    shutil.copy(corpus / "broken" / "huggingface-accelerate__941.yaml", tmp_path / "accelerate.yaml")
    shutil.copy(corpus / "broken" / "huggingface-accelerate__941.json", tmp_path / "ds_config.json")
    monkeypatch.chdir(tmp_path)
    found = diagnostics(Path("accelerate.yaml"))
    refused = {d.dotted_path for d in found if d.code == "AW201"}
    assert refused == {f"deepspeed_config.{k}" for k in ("gradient_accumulation_steps", "gradient_clipping",
                                                         "zero_stage", "offload_optimizer_device",
                                                         "offload_param_device", "zero3_save_16bit_model")}
    assert "AW214" in {d.code for d in found}  # 1 in the YAML, 10 in the JSON


def test_batch_identity_counts_data_parallel_ranks_only(write):
    # DeepSpeedExamples' AutoSP config: 2 processes, sequence parallel 2 -> one data-parallel rank
    json_text = ds(train_batch_size=1, train_micro_batch_size_per_gpu=1, sequence_parallel_size=2)
    assert codes(pair(write, YAML_DS.replace("8", "2"), json_text), select=("AW212",)) == set()


@pytest.mark.parametrize("batch", [
    {"train_batch_size": 63, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": None},
    {"train_batch_size": 63, "train_micro_batch_size_per_gpu": None, "gradient_accumulation_steps": 4},
])
def test_a_json_alone_whose_batch_fails_for_every_world_size(write, batch):
    # DeepSpeed infers the missing value by floor division, so 63 // 4 can never multiply back to 63
    assert codes(write("ds.json", ds(**batch)), select=("AW212",)) == {"AW212"}
    divisible = {k: (64 if k == "train_batch_size" else v) for k, v in batch.items()}
    assert codes(write("ds.json", ds(**divisible)), select=("AW212",)) == set()


def test_deepspeed_file_that_accelerate_cannot_open_although_the_path_reads_fine(write, tmp_path, monkeypatch):
    # HfDeepSpeedConfig opens the string as given: no `~` expansion, and only the lowercase "none" means no file
    monkeypatch.setenv("HOME", str(tmp_path))
    write("ds.json", ds())
    monkeypatch.chdir(tmp_path)
    home = write("a.yaml", f"{YAML_DS}deepspeed_config:\n  deepspeed_config_file: ~/ds.json\n")
    assert codes(home, select=("AW202",)) == {"AW202"}
    capitalised = write("b.yaml", f"{YAML_DS}deepspeed_config:\n  deepspeed_config_file: None\n")
    assert codes(capitalised, select=("AW202",)) == {"AW202"}
    for fine in ("ds.json", "none", str(tmp_path / "ds.json")):
        good = write("c.yaml", f"{YAML_DS}deepspeed_config:\n  deepspeed_config_file: {fine}\n")
        assert codes(good, select=("AW202",)) == set(), fine


def test_inline_fields_next_to_a_json_given_beside_the_yaml(write):
    # the Trainer's `deepspeed=ds.json` builds DeepSpeedPlugin(hf_ds_config=...), whose checks refuse the inline
    # keys the launcher exported in ACCELERATE_CONFIG_DS_FIELDS, exactly as with deepspeed_config_file
    json_path = write("ds.json", ds())
    yaml = write("a.yaml", f"{YAML_DS}mixed_precision: bf16\ndeepspeed_config:\n  zero_stage: 3\n")
    found = [d.dotted_path for d in diagnostics(yaml, json_path, select=("AW201",))]
    assert found == ["mixed_precision", "deepspeed_config.zero_stage"]
    assert codes(yaml, select=("AW201",)) == set()  # alone, the inline config is the whole story
    other = write("b.yaml", "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\n")
    assert codes(other, json_path, select=("AW201",)) == set()  # no DeepSpeed launcher, no exported fields
