"""What the built-in trainer reads, without launching it: the workload from flags, plan and DeepSpeed JSON (with
the source of each value), checkpoints and hub ids, text/JSONL/chat/datasets data, and the bad-input refusals
of `accelwiz run` (one line and a hint, exit 2, nothing written)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.errors import InputError, UsageError
from accelwiz.resolution.stack import installed_stack
from accelwiz.trainer.data import DataError, load_records, pack, read_jsonl, token_ids, training_sequences
from accelwiz.trainer.models import ModelChoiceError, locate_model
from accelwiz.trainer.options import parse_args
from accelwiz.trainer.settings import resolve_settings

SINGLE = "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nuse_cpu: true\nnum_processes: 1\n" \
         "num_machines: 1\nmixed_precision: 'no'\n"
ZERO2_JSON_YAML = "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_processes: 2\n" \
                  "num_machines: 1\nmixed_precision: 'no'\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
DS_JSON = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 16, "zero_optimization": {"stage": 2}}


def plan_text(model: str, source: str) -> str:
    return f"""schema_version: 1
files:
  accelerate: accelerate.yaml
system:
  name: local
model:
  name: {model}
  source: {source}
fine_tuning:
  method: lora
  lora_rank: 4
  lora_alpha: 32
  lora_targets: [q_proj, v_proj, lm_head]
training:
  micro_batch: 3
  gradient_accumulation: 5
  sequence_length: 48
  gradient_checkpointing: true
  precision: fp32
"""


def test_a_deepspeed_json_supplies_micro_batch_and_accumulation_and_a_contradicting_flag_is_refused(tmp_path, monkeypatch):
    """Regression: a JSON with gradient_accumulation_steps 16 trained with 1, and micro-batch 4 whatever it said."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ACCELERATE_DEEPSPEED_CONFIG_FILE", raising=False)
    (tmp_path / "accelerate.yaml").write_text(ZERO2_JSON_YAML)
    (tmp_path / "ds.json").write_text(json.dumps(DS_JSON))
    settings = resolve_settings(parse_args(["--config", "accelerate.yaml", "--model", "tiny"]))
    assert (settings.micro_batch.value, settings.micro_batch.source) == (2, "deepspeed json")
    assert (settings.gradient_accumulation.value, settings.gradient_accumulation.source) == (16, "deepspeed json")
    assert (settings.seq_len.source, settings.method.value, settings.model.value) == ("default", "full", "tiny")
    assert settings.deepspeed_json == Path("ds.json")
    # a flag the JSON contradicts is refused in one line, as check, estimate and run refuse it: accelerate keeps
    # the JSON's value under DeepSpeed ("Gradient accumulation steps mismatch ... Using DeepSpeed's value")
    with pytest.raises(UsageError, match="--gradient-accumulation 3 contradicts the deepspeed json's "
                                         "gradient_accumulation 16"):
        resolve_settings(parse_args(["--config", "accelerate.yaml", "--model", "tiny", "--gradient-accumulation", "3"]))


def test_the_plan_beside_the_yaml_supplies_the_workload_and_the_model(tmp_path, monkeypatch, checkpoint):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    (tmp_path / "accelerate.plan.yaml").write_text(plan_text(str(checkpoint), "checkpoint"))
    settings = resolve_settings(parse_args(["--config", "accelerate.yaml", "--seq-len", "16"]))
    report = settings.for_report()
    assert {name: (item["value"], item["source"]) for name, item in report.items() if isinstance(item, dict)} == {
        "model": (str(checkpoint), "plan"),
        "micro_batch": (3, "plan"),
        "gradient_accumulation": (5, "plan"),
        "seq_len": (16, "flag"),
        "gradient_checkpointing": (True, "plan"),
        "weights_dtype": ("fp32", "default"),  # the built-in trainer loads fp32 and autocasts
        "optimizer_kernel": ("foreach", "default"),  # torch.optim.AdamW's default
        "method": ("lora", "plan"),
        "lora_rank": (4, "plan"),
        "lora_alpha": (32, "plan"),
        "lora_targets": (["q_proj", "v_proj", "lm_head"], "plan"),
        "lora_dropout": (0.0, "default"),
        "lora_modules_to_save": ([], "default"),
        "precision": ("fp32", "accelerate yaml"),  # the YAML's mixed_precision: what the launcher computes in
        "optimizer": ("adamw", "plan"),
        "attention": ("sdpa", "plan"),
        "varying_lengths": (False, "default"),  # the built-in trainer packs windows of seq_len (issue 28)
        "loss_dtype": ("fp32", "default"),  # transformers' loss on the model's labels
        "loss_kernel": ("standard", "default"),  # no Liger kernel in the built-in trainer
        "expandable_segments": (False, "default"),  # no PYTORCH_CUDA_ALLOC_CONF in the tests (conftest.py)
        # the library versions it trains with, from this environment's package metadata (resolution/stack.py)
        "stack": (installed_stack().as_json(), "installed"),
    }
    assert report["plan_file"] == "accelerate.plan.yaml"


def test_a_plan_for_an_estimator_preset_trains_its_hub_weights_or_refuses(tmp_path, monkeypatch, cli):
    """Issue 16: a plan for llama-3.1-8b trained the random `tiny` model (exit 0). The preset is its hub repository;
    weights that are not in the cache are refused before launching, with the command that fetches them."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    (tmp_path / "accelerate.plan.yaml").write_text(plan_text("llama-3.2-1b", "preset"))
    model = resolve_settings(parse_args(["--config", "accelerate.yaml"])).model
    assert (model.value, model.source) == ("meta-llama/Llama-3.2-1B", "plan") and "llama-3.2-1b" in model.note
    refused = cli("run", "--config", "accelerate.yaml", "--steps", "1")
    assert refused.exit_code == 2 and not (tmp_path / "accelwiz-run").exists(), refused.stderr
    assert "`hf download meta-llama/Llama-3.2-1B`" in refused.stderr and "Traceback" not in refused.stderr


def test_a_plan_sized_by_a_count_or_no_model_at_all_trains_nothing(tmp_path, monkeypatch, cli):
    """`init --defaults` without a model plans `none`: run refused it only inside run_report.json, training tiny."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    counted_plan = plan_text("none", "parameters").replace(
        "  method: lora\n  lora_rank: 4\n  lora_alpha: 32\n  lora_targets: [q_proj, v_proj, lm_head]\n", "  method: full\n")
    (tmp_path / "accelerate.plan.yaml").write_text(counted_plan)
    counted = cli("run", "--config", "accelerate.yaml", "--steps", "1")
    assert counted.exit_code == 2 and "names no model to train" in counted.stderr and "--model tiny" in counted.stderr
    (tmp_path / "accelerate.plan.yaml").unlink()
    nothing = cli("run", "--config", "accelerate.yaml", "--steps", "1")
    assert nothing.exit_code == 2 and "no model to train" in nothing.stderr
    assert not (tmp_path / "accelwiz-run").exists()


def test_a_sequence_beyond_the_models_positions_is_refused_before_launch(tmp_path, monkeypatch, cli, checkpoint):
    """Issue 16: a plan for 2048 tokens on a 256-position checkpoint died in an IndexError traceback."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    positions = json.loads((checkpoint / "config.json").read_text())["max_position_embeddings"]
    result = cli("run", "--config", "accelerate.yaml", "--model", str(checkpoint), "--seq-len", str(positions + 1))
    assert result.exit_code == 2 and f"longer than the {positions} positions" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "accelwiz-run").exists()
    settings = resolve_settings(parse_args(["--config", "accelerate.yaml", "--model", str(checkpoint)]))
    assert (settings.seq_len.value, settings.seq_len.source) == (min(2048, positions), "default")


def test_a_checkpoint_directory_is_located_and_incomplete_ones_are_named(checkpoint, tmp_path):
    assert locate_model(str(checkpoint)).kind == "checkpoint"
    assert locate_model("tiny").kind == "preset"
    no_tokenizer, no_weights = tmp_path / "no-tokenizer", tmp_path / "no-weights"
    no_tokenizer.mkdir(), no_weights.mkdir()
    for name in ("config.json", "model.safetensors"):
        (no_tokenizer / name).write_bytes((checkpoint / name).read_bytes())
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        (no_weights / name).write_bytes((checkpoint / name).read_bytes())
    with pytest.raises(ModelChoiceError, match="has weights but no tokenizer"):
        locate_model(str(no_tokenizer))
    with pytest.raises(ModelChoiceError, match="has a tokenizer but no weights"):
        locate_model(str(no_weights))
    # Regression: a directory holding only config.json trained silently from random weights. A directory is a
    # checkpoint; a random init is asked for by passing the config.json file itself (the hint says so).
    config_only = tmp_path / "config-only"
    config_only.mkdir()
    (config_only / "config.json").write_bytes((checkpoint / "config.json").read_bytes())
    with pytest.raises(ModelChoiceError, match="has a config.json but no weights") as refused:
        locate_model(str(config_only))
    assert str(config_only / "config.json") in refused.value.hint
    assert locate_model(str(config_only / "config.json")).kind == "config"
    # a sharded checkpoint whose index names a shard that is not there
    sharded = tmp_path / "sharded"
    sharded.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (sharded / name).write_bytes((checkpoint / name).read_bytes())
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (sharded / "model.safetensors.index.json").write_text(json.dumps(index))
    (sharded / "model-00001-of-00002.safetensors").write_bytes(b"")
    with pytest.raises(ModelChoiceError, match="shards that are missing: model-00002-of-00002.safetensors"):
        locate_model(str(sharded))


def test_a_plan_for_a_config_only_directory_trains_its_config_json(tmp_path, monkeypatch, checkpoint):
    """init writes `source: config` for a directory with only config.json: the plan asked for a random init."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "arch").mkdir()
    (tmp_path / "arch" / "config.json").write_bytes((checkpoint / "config.json").read_bytes())
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    (tmp_path / "accelerate.plan.yaml").write_text(plan_text("arch", "config"))
    model = resolve_settings(parse_args(["--config", "accelerate.yaml"])).model
    assert (Path(model.value).resolve(), model.source) == (tmp_path / "arch" / "config.json", "plan")
    assert locate_model(model.value).kind == "config"


def test_jsonl_text_and_chat_messages_are_tokenized_with_the_chat_template_and_packed(checkpoint, tmp_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    data = tmp_path / "data.jsonl"
    chat = [{"role": "user", "content": "Shall I compare thee"}, {"role": "assistant", "content": "to a summer's day"}]
    data.write_text(json.dumps({"text": "From fairest creatures"}) + "\n\n" + json.dumps({"messages": chat}) + "\n")
    records = read_jsonl(data)
    assert records == [{"text": "From fairest creatures"}, {"messages": chat}]
    ids = token_ids(records, tokenizer)
    assert tokenizer.decode(ids) == ("From fairest creatures<|eos|><|user|> Shall I compare thee\n"
                                     "<|assistant|> to a summer's day\n<|eos|>")
    packed = pack(ids, 8)
    assert packed.shape == (len(ids) // 8, 8) and packed.flatten().tolist() == ids[: packed.numel()]


def test_a_datasets_directory_is_read_like_jsonl(checkpoint, tmp_path):
    from datasets import Dataset, DatasetDict
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    texts = ["Shall I compare thee to a summer's day?", "Thou art more lovely and more temperate"] * 4
    DatasetDict({"train": Dataset.from_dict({"text": texts})}).save_to_disk(str(tmp_path / "ds"))
    assert load_records(tmp_path / "ds") == [{"text": t} for t in texts]
    sequences = training_sequences(tmp_path / "ds", tokenizer, 16)
    assert sequences.shape[1] == 16 and sequences.shape[0] >= 4


@pytest.mark.parametrize(("line", "problem"), [
    ('{"text": "fine"}\n{"text": unquoted}\n', ":2: not JSON"),
    ('{"text": "fine"}\n\n{"prompt": "x"}\n', ":3: has neither a `text` string nor a `messages` list (found keys prompt)"),
    ('["a", "list"]\n', ":1: has neither a `text` string nor a `messages` list (found list)"),
])
def test_a_malformed_jsonl_line_is_named_by_file_and_line(tmp_path, line, problem):
    data = tmp_path / "data.jsonl"
    data.write_text(line)
    with pytest.raises(DataError, match="data.jsonl" + __import__("re").escape(problem)):
        read_jsonl(data)


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, prelude: str = "") -> subprocess.CompletedProcess:
    """The real `accelwiz run` (refused before anything is launched, so this is quick)."""
    import os

    code = f"{prelude}import sys; from accelwiz.cli import main; sys.argv = ['accelwiz', 'run', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def one_line_and_a_hint(result: subprocess.CompletedProcess, message: str) -> None:
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert "hint:" in result.stderr and "Traceback" not in result.stderr


@pytest.fixture()
def workdir(tmp_path, checkpoint):
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    return tmp_path


@pytest.mark.parametrize("case", ["no-weights", "no-tokenizer", "not-json", "no-text", "hub-offline", "qlora",
                                  "config-only", "qlora-random-init", "lora-target"])
def test_bad_input_is_one_line_and_a_hint_and_nothing_is_written(workdir, checkpoint, case):
    broken = workdir / "broken"
    broken.mkdir()
    keep = {"no-weights": ("config.json", "tokenizer.json", "tokenizer_config.json"),
            "no-tokenizer": ("config.json", "model.safetensors"), "config-only": ("config.json",)}.get(case, ())
    for name in keep:
        (broken / name).write_bytes((checkpoint / name).read_bytes())
    (workdir / "bad.jsonl").write_text('{"text": "ok"}\n' + ('{"text": "x",}\n' if case == "not-json" else '{"t": 1}\n'))
    args = {
        "no-weights": ("--model", "broken"),
        "no-tokenizer": ("--model", "broken"),
        "not-json": ("--model", str(checkpoint), "--data", "bad.jsonl"),
        "no-text": ("--model", str(checkpoint), "--data", "bad.jsonl"),
        "hub-offline": ("--model", "accelwiz-tests/not-in-any-cache"),
        "qlora": ("--model", str(checkpoint), "--method", "qlora"),
        "config-only": ("--model", "broken"),
        # regression: these two were refused only inside the launched trainer (accelerate traceback, exit 1)
        "qlora-random-init": ("--model", "tiny", "--method", "qlora"),
        "lora-target": ("--model", str(checkpoint), "--method", "lora", "--", "--lora-targets", "q_proj,c_attn"),
    }[case]
    expected = {
        "no-weights": "has a tokenizer but no weights",
        "no-tokenizer": "has weights but no tokenizer",
        "not-json": "bad.jsonl:2: not JSON",
        "no-text": "bad.jsonl:2: has neither a `text` string nor a `messages` list",
        "hub-offline": "is not in the local huggingface cache and HF_HUB_OFFLINE is set",
        "qlora": "cannot train with QLoRA: QLoRA needs bitsandbytes, which is not installed",
        "config-only": "has a config.json but no weights",
        "qlora-random-init": "QLoRA quantizes pretrained weights, and --model 'tiny' is a random initialisation",
        "lora-target": "LoRA target module(s) c_attn not in the model (lora_targets from the flag)",
    }[case]
    # QLoRA without bitsandbytes, as on a machine where it is not installed: the import is blocked, nothing faked
    prelude = "import sys; sys.modules['bitsandbytes'] = None; " if case == "qlora" else ""
    result = run_cli("--output-dir", "out", *args, cwd=workdir, prelude=prelude,
                     env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(workdir / "hf-home")})
    one_line_and_a_hint(result, expected)
    assert not (workdir / "out").exists()


def test_qlora_is_refused_when_bitsandbytes_cannot_quantize_here_and_accepted_when_it_can():
    """Whatever is installed, the answer is bitsandbytes' own: it quantizes a tensor on this device or not."""
    from accelwiz.trainer.finetune import qlora_unsupported_reason

    reason = qlora_unsupported_reason()
    try:
        import bitsandbytes  # noqa: F401
    except ImportError:
        assert reason == "QLoRA needs bitsandbytes, which is not installed"
        return
    assert reason is None or reason.startswith("bitsandbytes ")


def test_check_inputs_turns_model_errors_into_input_errors(tmp_path):
    from accelwiz.trainer.inputs import check_inputs

    with pytest.raises(InputError, match="is not a preset"):
        check_inputs(parse_args(["--model", str(tmp_path / "nowhere" / "x.bin")]), uses_deepspeed=False)


def test_a_hub_id_resolves_through_the_huggingface_cache_offline(checkpoint, tmp_path):
    """The cache laid out as a download leaves it (models--org--name/refs/main -> snapshots/<commit>/)."""
    repo = tmp_path / "hf-home" / "hub" / "models--accelwiz-tests--llama-tiny"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for item in checkpoint.iterdir():
        (snapshot / item.name).write_bytes(item.read_bytes())
    code = ("from accelwiz.trainer.models import locate_model; "
            "ref = locate_model('accelwiz-tests/llama-tiny'); print(ref.kind, ref.path, ref.hub_id)")
    import os

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")}
    env.pop("HF_HUB_CACHE", None)
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == ["checkpoint", str(snapshot), "accelwiz-tests/llama-tiny"]


def test_lora_takes_pefts_all_linear_as_the_plan_from_init_writes_it():
    """Regression: init's plan says `lora_targets: [all-linear]` (PEFT's shorthand), and the trainer refused it as
    a module name. Alone it goes to peft as the string, which peft expands to every linear but the output head."""
    from peft import LoraConfig, get_peft_model

    from accelwiz.trainer.finetune import MethodError, lora_targets
    from accelwiz.trainer.models import build_config, build_model

    model = build_model(build_config("tiny"))
    assert lora_targets(model, ["all-linear"]) == lora_targets(model, ["ALL_LINEAR"]) == "all-linear"
    adapted = get_peft_model(model, LoraConfig(r=4, target_modules=lora_targets(model, ["all-linear"])))
    wrapped = {name.rsplit(".", 2)[-2] for name, _ in adapted.named_modules() if name.endswith(".lora_A")}
    assert wrapped == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    # beside other names it is expanded here the same way (by leaf name), and the head can be added explicitly
    fresh = build_model(build_config("tiny"))
    assert lora_targets(fresh, ["all-linear", "lm_head"]) == sorted(wrapped) + ["lm_head"]
    with pytest.raises(MethodError, match="c_attn not in the model"):
        lora_targets(fresh, ["all-linear", "c_attn"])


def test_the_trainer_entry_point_ends_an_accelwiz_error_as_one_line_and_records_its_exit_status(
    tmp_path, monkeypatch, capsys
):
    """Regression: an error inside the launched trainer reached the shell as accelerate's traceback and exit 1.
    The entry point prints one line and a hint, and records its status where `accelwiz run` reads it."""
    from accelwiz.launch.child import EXIT_DIR_ENV, recorded_status
    from accelwiz.trainer.train import entry

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(EXIT_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("RANK", "0")
    (tmp_path / "accelerate.yaml").write_text(SINGLE)
    assert entry(["--config", "accelerate.yaml", "--model", "tiny", "--method", "qlora", "--output-dir", "out"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: QLoRA quantizes pretrained weights") and "hint: pass a checkpoint" in err
    assert "Traceback" not in err and recorded_status(tmp_path) == 2 and not (tmp_path / "out").exists()
