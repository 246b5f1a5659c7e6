"""`estimate --zero-reduce-bucket-size N|auto` (issue 28): DeepSpeed's zero_optimization.reduce_bucket_size said on
the command line, as `--config` reads it from the JSON: the same estimate either way, the bytes the bucket moves,
the JSON's value beaten, and a one-line refusal where no ZeRO strategy has a bucket. That ZeRO-3's engines allocate
the bucket's copies as counted is tests/estimate/test_zero3_reduce_copy.py's (real engines on the CPU)."""

from __future__ import annotations

import json

import pytest

_RUN = ("--model", "llama-2-7b", "--system", "4xH100-80GB", "--seq-len", "512", "--gradient-checkpointing",
        "--precision", "bf16")
_YAML = "distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"


def _estimate(cli, *args: str) -> dict:
    result = cli("estimate", *args, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)["estimate"]


def _files(tmp_path, bucket: object | None) -> tuple[str, ...]:
    zero = {"stage": 3, **({"reduce_bucket_size": bucket} if bucket is not None else {})}
    (tmp_path / "ds.json").write_text(json.dumps({"train_micro_batch_size_per_gpu": 1, "zero_optimization": zero,
                                                  "bf16": {"enabled": True}}))
    (tmp_path / "acc.yaml").write_text(_YAML)
    return "--config", str(tmp_path / "acc.yaml"), "--model", "llama-2-7b", "--precision", "bf16"


@pytest.mark.parametrize("strategy", ["zero2", "zero3"])
def test_the_bucket_is_allocated_whole_in_two_bytes_an_element(cli, strategy):
    default = _estimate(cli, *_RUN, "--strategy", strategy)
    small = _estimate(cli, *_RUN, "--strategy", strategy, "--zero-reduce-bucket-size", "5e7")
    assert default["sizes"]["buffers"] - small["sizes"]["buffers"] >= 2 * (500_000_000 - 50_000_000)
    assert any("reduce_bucket_size 5e+07 elements" in line for line in small["assumptions"])
    # "auto" is hidden_size² (4096² for Llama-2-7B), as the HF Trainer fills it
    auto = _estimate(cli, *_RUN, "--strategy", strategy, "--zero-reduce-bucket-size", "auto")
    assert any(f"reduce_bucket_size {4096 * 4096:.3g} elements" in line for line in auto["assumptions"])


@pytest.mark.parametrize(("written", "said"), [(50_000_000, "5e7"), ("auto", "auto"), (500_000_000, "500000000")])
def test_the_flag_gives_the_estimate_the_json_gives(cli, tmp_path, written, said):
    from_json = _estimate(cli, *_files(tmp_path, written))
    from_flag = _estimate(cli, *_files(tmp_path, None), "--zero-reduce-bucket-size", said)
    assert from_flag["phases"] == from_json["phases"] and from_flag["sizes"] == from_json["sizes"]


def test_the_flag_beats_the_jsons_bucket(cli, tmp_path):
    beaten = _estimate(cli, *_files(tmp_path, 50_000_000), "--zero-reduce-bucket-size", "5e8")
    assert beaten["phases"] == _estimate(cli, *_files(tmp_path, None))["phases"]


@pytest.mark.parametrize(("args", "said"), [
    (("--zero-reduce-bucket-size", "5e7"), "no strategy is given"),
    (("--strategy", "fsdp", "--zero-reduce-bucket-size", "5e7"), "the strategy is FSDP2 full shard"),
    (("--strategy", "zero2", "--zero-reduce-bucket-size", "0"), "`0` is not a bucket size"),
    (("--strategy", "zero2", "--zero-reduce-bucket-size", "5.5"), "`5.5` is not a bucket size"),
    (("--strategy", "zero2", "--zero-reduce-bucket-size", "big"), "`big` is not a bucket size"),
])
def test_a_bucket_nothing_would_use_is_refused_in_one_line(cli, args, said):
    result = cli("estimate", *_RUN, *args)
    assert result.exit_code == 2 and result.stdout == ""
    assert said in result.stderr and "hint:" in result.stderr and "Traceback" not in result.stderr
