"""The same bytes fed to each library that consumes a DeepSpeed JSON, and to accelwiz: the verdicts agree.

The consumers' own code runs here, on the CPU: accelerate's `HfDeepSpeedConfig` (a YAML's
`deepspeed_config_file`), transformers' `HfTrainerDeepSpeedConfig` (`--deepspeed`), DeepSpeed's `load_ds_config`
(what `deepspeed.initialize` reads a path with, the `deepspeed` launcher's route).
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from accelwiz.config.training_args import parse_argv
from accelwiz.document import load_document
from accelwiz.document.consumers import raise_on_duplicate_keys, read_as_consumers
from accelwiz.errors import InputError
from accelwiz.rules.engine import check_paths, check_unit

BODY = '"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}'
# name -> the file's text; the verdicts are never written here: each library gives its own
TRICKY = {
    "strict": "{" + BODY + "}",
    "trailing-commas": '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2,},}',
    "slash-comment": "{\n  // ZeRO-2\n  " + BODY + "\n}",
    "hash-comment": "{\n  # ZeRO-2\n  " + BODY + "\n}",
    "block-comment": "{ /* ZeRO-2 */ " + BODY + "}",
    "byte-order-mark": codecs.BOM_UTF8.decode() + "{" + BODY + "}",
    "duplicate-top": '{"train_micro_batch_size_per_gpu": 4, "train_micro_batch_size_per_gpu": 8, '
                     '"zero_optimization": {"stage": 2}}',
    "duplicate-nested": '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2, "stage": 3}}',
    "nan": '{"train_micro_batch_size_per_gpu": 4, "gradient_clipping": NaN, "zero_optimization": {"stage": 2}}',
    "infinity-own-line": '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2},\n'
                         '"gradient_clipping": Infinity\n}',
    "missing-comma-at-eol": '{"train_micro_batch_size_per_gpu": 4\n "zero_optimization": {"stage": 2}}',
    "unquoted-keys": "{train_micro_batch_size_per_gpu: 4\n zero_optimization: {stage: 2}}",
    "single-quotes": "{'train_micro_batch_size_per_gpu': 4, 'zero_optimization': {'stage': 2}}",
    "text-after": "{" + BODY + "} trailing",
    "comment-after": "{" + BODY + "} // done",
    "empty-object": "{}",
    "double-comma": '{"train_micro_batch_size_per_gpu": 4,, "zero_optimization": {"stage": 2}}',
}


def _accepts(load, path: Path) -> bool:
    try:
        load(str(path))
    except Exception:  # noqa: BLE001 - any exception is a refusal: the run stops there
        return False
    return True


def _real_consumers() -> dict[str, object]:
    from accelerate.utils.deepspeed import HfDeepSpeedConfig
    from deepspeed.runtime.tensor_parallel.init_utils import load_ds_config
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    return {"accelerate": HfDeepSpeedConfig, "trainer": HfTrainerDeepSpeedConfig, "deepspeed": load_ds_config}


@pytest.fixture(scope="module")
def consumers():
    pytest.importorskip("deepspeed")
    return _real_consumers()


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_bytes(TRICKY[name].encode("utf-8"))
    return path


_READER_OF = {"accelerate": "json.load", "trainer": "json.load", "deepspeed": "hjson"}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_each_reader_verdict_is_the_consumers_own(consumers, tmp_path, name):
    path = _write(tmp_path, name)
    verdicts = read_as_consumers(path.read_text(encoding="utf-8"))
    for consumer, load in consumers.items():
        assert verdicts[_READER_OF[consumer]].accepted == _accepts(load, path), (consumer, verdicts)


def _yaml_naming(tmp_path: Path, json_path: Path) -> Path:
    yaml_path = tmp_path / "accelerate.yaml"
    yaml_path.write_text(f"distributed_type: DEEPSPEED\nnum_processes: 2\ndeepspeed_config:\n"
                         f"  deepspeed_config_file: {json_path}\n  zero3_init_flag: false\n")
    return yaml_path


def _refused_in_check(result, code: str = "AW015") -> bool:
    return bool(result.input_errors) or any(d.code == code for d in result.diagnostics)


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_check_refuses_exactly_what_accelerate_refuses(consumers, tmp_path, name):
    """A YAML names the JSON: `check` has an error (AW015, or the file cannot be read at all) iff accelerate's
    HfDeepSpeedConfig refuses the bytes."""
    path = _write(tmp_path, name)
    result = check_paths([_yaml_naming(tmp_path, path)])
    assert _refused_in_check(result) == (not _accepts(consumers["accelerate"], path))


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_check_refuses_exactly_what_the_trainer_refuses(consumers, tmp_path, name):
    path = _write(tmp_path, name)
    try:
        document = load_document(path)
    except InputError:
        refused = True
    else:
        arguments = parse_argv(["--deepspeed", str(path)])
        refused = any(d.code == "AW015" for d in check_unit([document], training_args=arguments).diagnostics)
    assert refused == (not _accepts(consumers["trainer"], path))


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_a_lone_json_names_deepspeeds_refusal_exactly_when_deepspeed_refuses(consumers, tmp_path, name):
    """Checked alone (no "auto": any library may read it), a refusal by DeepSpeed's own reader is named: AW013
    (duplicate keys), AW016 (only DeepSpeed refuses), AW015 (no library reads it) or an unreadable file."""
    if "auto" in TRICKY[name]:
        pytest.skip("an \"auto\" value says accelerate or the Trainer read it")
    path = _write(tmp_path, name)
    result = check_paths([path])
    named = [d for d in result.diagnostics if d.code == "AW013" or
             d.code == "AW015" and d.message.startswith("no library reads it") or
             d.code == "AW016" and "refused by DeepSpeed's own reader" in d.message]
    named_by_input_error = any("DeepSpeed's own reader (hjson): " in e.message and
                               "DeepSpeed's own reader (hjson): accepted" not in e.message
                               for e in result.input_errors)
    assert bool(named or named_by_input_error) == (not _accepts(consumers["deepspeed"], path))


def test_the_duplicate_key_hook_is_deepspeeds(consumers):
    from deepspeed.runtime.config_utils import dict_raise_error_on_duplicate_keys

    pairs = [("a", 1), ("b", 2), ("a", 3)]
    with pytest.raises(ValueError) as theirs:
        dict_raise_error_on_duplicate_keys(pairs)
    with pytest.raises(ValueError) as ours:
        raise_on_duplicate_keys(pairs)
    assert str(ours.value) == str(theirs.value)
    assert raise_on_duplicate_keys([("a", 1)]) == dict_raise_error_on_duplicate_keys([("a", 1)])


def test_the_refusal_is_in_the_readers_own_words(tmp_path):
    path = _write(tmp_path, "trailing-commas")
    result = check_paths([_yaml_naming(tmp_path, path)])
    (finding,) = [d for d in result.diagnostics if d.code == "AW015"]
    assert finding.message.startswith("accelerate reads it with json.load: Expecting property name enclosed in "
                                      "double quotes (line 1 column 77)")
    assert "fine for DeepSpeed's own reader" in finding.message
    assert result.exit_code() == 1


def test_a_comment_in_a_lone_json_says_who_accepts_and_who_refuses(tmp_path):
    result = check_paths([_write(tmp_path, "slash-comment")])
    (finding,) = [d for d in result.diagnostics if d.code == "AW016"]
    assert finding.message.startswith("fine for DeepSpeed's own reader")
    assert "refused by accelerate and the HF Trainer (json.load: Expecting property name" in finding.message
    assert (finding.line, result.exit_code()) == (1, 0)


def test_duplicates_read_by_accelerate_keep_the_last_value_as_a_warning(tmp_path):
    result = check_paths([_yaml_naming(tmp_path, _write(tmp_path, "duplicate-top"))])
    codes = {d.code: d for d in result.diagnostics}
    assert "AW013" not in codes
    assert codes["AW012"].message.endswith("json.load keeps the last value, 8")


ACCELERATE_JSON = {
    "strict": '{"distributed_type": "MULTI_GPU", "num_processes": 2}',
    "trailing-comma": '{"distributed_type": "MULTI_GPU", "num_processes": 2,}',
    "comment": '{\n  // two GPUs\n  "distributed_type": "MULTI_GPU", "num_processes": 2}',
    "duplicate": '{"distributed_type": "MULTI_GPU", "num_processes": 2, "num_processes": 4}',
}


@pytest.mark.parametrize("name", sorted(ACCELERATE_JSON))
def test_an_accelerate_config_named_json_is_refused_exactly_when_accelerates_loader_refuses_it(tmp_path, name):
    from accelerate.commands.config.config_args import load_config_from_file

    path = tmp_path / "accelerate.json"
    path.write_text(ACCELERATE_JSON[name])
    result = check_paths([path])
    assert _refused_in_check(result) == (not _accepts(load_config_from_file, path))
