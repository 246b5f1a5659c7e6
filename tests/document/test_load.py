from __future__ import annotations

from pathlib import Path

import pytest

from accelwiz.document import Span, load_document, parse_text
from accelwiz.errors import InputError


def test_yaml_keeps_key_positions_and_plain_booleans(write):
    doc = load_document(write("a.yaml", "distributed_type: NO\ndeepspeed_config:\n  zero_stage: 3\n"))
    assert doc.kind == "accelerate" and doc.syntax == "yaml"
    assert doc.key_spans[("deepspeed_config", "zero_stage")] == Span(3, 3)
    assert doc.data["distributed_type"] is False
    assert doc.plain_scalars[("distributed_type",)] == "NO"
    assert doc.get("deepspeed_config", "zero_stage") == 3
    assert doc.get("deepspeed_config", "missing", default="d") == "d"


def test_yaml_1_1_reads_exponent_without_dot_as_string(write):
    doc = load_document(write("a.yaml", "fsdp_config:\n  fsdp_min_num_params: 1e8\n"))
    assert doc.data["fsdp_config"]["fsdp_min_num_params"] == "1e8"


def test_json_positions_comments_and_trailing_commas(write):
    text = '{\n  // hjson comment\n  "zero_optimization": {"stage": 3,},\n  "train_batch_size": 5e8\n}\n'
    doc = load_document(write("ds.conf", text))
    assert doc.kind == "deepspeed" and doc.syntax == "json"
    assert doc.key_spans[("zero_optimization", "stage")] == Span(3, 25)
    assert doc.data["train_batch_size"] == 5e8 and isinstance(doc.data["train_batch_size"], float)


@pytest.mark.parametrize("syntax,text", [
    ("yaml", "debug: true\ndebug: false\ndistributed_type: 'NO'\n"),
    ("json", '{"fp16": {}, "fp16": {}}'),
])
def test_duplicate_keys_are_recorded(write, syntax, text):
    doc = load_document(write(f"d.{syntax}", text))
    assert [p for p, _ in doc.duplicate_keys] == [("debug",) if syntax == "yaml" else ("fp16",)]


def test_kind_is_decided_by_content_not_extension(write):
    assert load_document(write("cfg.sh", "distributed_type: MULTI_GPU\nnum_processes: 2\n")).kind == "accelerate"
    assert load_document(write("cfg.yaml", '{"train_batch_size": 8}')).kind == "deepspeed"


@pytest.mark.parametrize("name,content,needle", [
    ("empty.yaml", "", "empty"),
    ("list.yaml", "- a\n- b\n", "not a mapping"),
    ("scalar.yaml", "hello\n", "not a mapping"),
    ("bad.yaml", "a: b: c\n", "invalid YAML"),
    ("bad.json", '{"a": 1,, }', "invalid JSON"),
    ("tag.yaml", "a: !!python/object:os.system {}\n", "unsupported YAML"),
    ("scalar-tag.yaml", "a: !!python/name:os.system ''\n", "unsupported YAML"),
    ("two.yaml", "a: 1\n---\nb: 2\n", "invalid YAML"),
])
def test_bad_input_is_one_clear_error(write, name, content, needle):
    with pytest.raises(InputError) as info:
        load_document(write(name, content))
    assert needle in info.value.message


def test_missing_file_directory_and_binary(tmp_path: Path):
    with pytest.raises(InputError, match="no such file"):
        load_document(tmp_path / "nope.yaml")
    with pytest.raises(InputError, match="is a directory"):
        load_document(tmp_path)
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"\x7fELF\x00\x00\x01")
    with pytest.raises(InputError, match="binary"):
        load_document(binary)


def test_alias_bomb_is_refused(write):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 10)}]")
    with pytest.raises(InputError, match="alias bomb"):
        load_document(write("bomb.yaml", "\n".join(lines) + "\n"))


@pytest.mark.parametrize("syntax", ["yaml", "json"])
def test_deep_nesting_is_refused(write, syntax):
    depth = 2000
    text = "[" * depth + "]" * depth if syntax == "json" else "a: " + "[" * depth + "]" * depth
    text = '{"a": ' + text + "}" if syntax == "json" else text
    with pytest.raises(InputError):
        load_document(write(f"deep.{syntax}", text))


def test_oversized_file_is_refused(tmp_path: Path):
    big = tmp_path / "big.yaml"
    with big.open("w") as fh:
        fh.write("a: 1\n")
        fh.write("#" * (50 * 1024 * 1024))
    with pytest.raises(InputError, match="too large"):
        load_document(big)


def test_parse_text_without_a_file():
    doc = parse_text("distributed_type: 'NO'\n", Path("<generated>"))
    assert doc.data == {"distributed_type": "NO"}
