"""The fuzz of issue 32's surfaces, shared by the suite (tests/hostile/test_fuzz_round_two.py, a few hundred
cases) and the slow tier (benchmarks/fuzz_hostile.py --round-two):

- the doctor's wire format: mutants of a real sealed record (bytes flipped, cut, grown, the JSON body changed
  and sealed again with the job's key, as a peer holding the secret but sending garbage would) through
  `wire.open_record`, which must return a record or raise BadRecord: any other exception is a crash;
- every flag that takes a file, given each hostile file (FIFO, /dev/zero, a link to it, a directory, a dangling
  link, a 7 GiB sparse file, binary, non-UTF-8, deep nesting, an escape sequence in the name): each command must
  end (alarm) with exit 0, 1 or 2, no uncaught exception, no raw control character, and no write through a link.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.hostile.mutants import Outcome, run_command

SECRET_KEY = b"k" * 32
SINGLE = 'distributed_type: "NO"\nnum_processes: 1\nmixed_precision: "no"\nuse_cpu: true\n'
DEEPSPEED = "distributed_type: DEEPSPEED\nnum_processes: 1\ndeepspeed_config:\n  zero_stage: 2\n"
FSDP1 = ("distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
         "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n")


# --- the doctor's wire format ---

def genuine_facts() -> str:
    from accelwiz.doctor.model import FolderCheck, GpuFacts, NodeFacts

    return NodeFacts(rank=1, hostname="node1", python="3.11.7", packages={"torch": "2.13.0", "trl": None},
                     gpus=GpuFacts(count=8, models=["NVIDIA H100 80GB HBM3"], memory_bytes=85_000_000_000),
                     network_env={"NCCL_SOCKET_IFNAME": "=ib0"}, usable_interfaces=["lo", "ib0"],
                     folders=[FolderCheck(role="output", path="/shared/out", writable=True,
                                          token=".accelwiz-preflight-0123456789ab-output-node1",
                                          nonce="0123456789ab")]).model_dump_json()


WIRE_MUTATIONS = ("flip a byte", "cut", "grow", "reseal a changed body", "reseal a non-UTF-8 body",
                  "reseal deep nesting", "reseal a huge number", "another rank's record", "empty")


def wire_mutant(seed: int) -> tuple[str, bytes]:
    """(mutation, the bytes a peer posts as node 1's facts)."""
    from accelwiz.doctor.wire import MAX_RECORD_BYTES, seal

    rng = random.Random(seed)
    mutation = WIRE_MUTATIONS[seed % len(WIRE_MUTATIONS)]
    body = genuine_facts()
    sealed = seal(SECRET_KEY, "facts", 1, body)
    if mutation == "flip a byte":
        at = rng.randrange(len(sealed))
        return mutation, sealed[:at] + bytes([sealed[at] ^ (1 << rng.randrange(8))]) + sealed[at + 1:]
    if mutation == "cut":
        return mutation, sealed[:rng.randrange(len(sealed))]
    if mutation == "grow":
        return mutation, sealed + b" " * rng.choice([1, MAX_RECORD_BYTES])
    if mutation == "reseal a changed body":
        data = json.loads(body)
        key = rng.choice(sorted(data))
        data[key] = rng.choice([None, -1, 10**30, "x" * 5000, [], {}, "\x1b[2J", "../../etc/passwd", True, 1.5e308])
        return mutation, seal(SECRET_KEY, "facts", 1, json.dumps(data))
    if mutation == "reseal a non-UTF-8 body":
        from accelwiz.doctor.wire import _mac

        raw = body.encode()[: rng.randrange(1, 200)] + bytes([0xff, 0xfe, rng.randrange(256)])
        return mutation, b"aw1 " + _mac(SECRET_KEY, "facts", 1, raw).encode() + b" " + raw
    if mutation == "reseal deep nesting":
        depth = rng.choice([100, 1000, 100_000])
        return mutation, seal(SECRET_KEY, "facts", 1, "[" * depth + "]" * depth)
    if mutation == "reseal a huge number":
        return mutation, seal(SECRET_KEY, "facts", 1, body.replace('"rank":1', '"rank":' + "9" * 5000))
    if mutation == "another rank's record":
        return mutation, seal(SECRET_KEY, "facts", 0, body)
    return mutation, b""


def open_wire_mutant(seed: int) -> tuple[str, str]:
    """(mutation, "accepted" | "refused" | "crash: ...") for one mutant through the real reader."""
    from accelwiz.doctor.model import NodeFacts
    from accelwiz.doctor.wire import BadRecord, open_record

    mutation, raw = wire_mutant(seed)
    try:
        open_record(SECRET_KEY, "facts", 1, raw, NodeFacts)
    except BadRecord:
        return mutation, "refused"
    except Exception as exc:  # noqa: BLE001 - what the fuzz looks for
        return mutation, f"crash: {type(exc).__name__}: {str(exc)[:120]}"
    return mutation, "accepted"


def fuzz_wire(count: int) -> tuple[dict[str, Counter], list[str]]:
    table: dict[str, Counter] = {}
    crashes = []
    for seed in range(count):
        mutation, verdict = open_wire_mutant(seed)
        table.setdefault(mutation, Counter())[verdict.split(":")[0]] += 1
        if verdict.startswith("crash") and len(crashes) < 20:
            crashes.append(f"seed {seed}, {mutation}: {verdict}")
    return table, crashes


# --- every flag that takes a file ---

HOSTILE_FILES = ("FIFO", "/dev/zero", "link to /dev/zero", "directory", "dangling link", "7 GiB sparse file",
                 "binary", "not UTF-8", "deep nesting", "escape in the name")


def hostile_file(kind: str, folder: Path, suffix: str) -> Path:
    path = folder / (f"evil\x1b[31m{suffix}" if kind == "escape in the name" else f"evil{suffix}")
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "/dev/zero":
        return Path("/dev/zero")
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling link":
        path.symlink_to(folder / "nowhere")
    elif kind == "7 GiB sparse file":
        with open(path, "wb") as handle:
            handle.truncate(7 * 2**30)
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    elif kind == "not UTF-8":
        path.write_bytes(b"key: \xff\xfe value\n")
    elif kind == "deep nesting":
        path.write_text("[" * 50_000 + "]" * 50_000)
    else:
        path.write_text('{"text": "a"}\n')
    return path


def file_flags(folder: Path) -> Iterator[tuple[str, str, Callable[[Path], list[str]]]]:
    """(flag, file suffix, argv for the hostile file) for every flag that takes a file."""
    for name, text in (("single.yaml", SINGLE), ("ds.yaml", DEEPSPEED), ("fsdp.yaml", FSDP1)):
        (folder / name).write_text(text)
    (folder / "train.py").write_text("print('hi')\n")
    (folder / "data.jsonl").write_text('{"text": "a"}\n')
    single, ds, fsdp = (str(folder / n) for n in ("single.yaml", "ds.yaml", "fsdp.yaml"))
    out = folder / "out"
    out.mkdir(exist_ok=True)
    yield "check FILE", ".yaml", lambda p: ["check", str(p)]
    yield "check -- --deepspeed FILE", ".json", lambda p: ["check", ds, "--", "--deepspeed", str(p)]
    yield "run --dry-run --data FILE", ".jsonl", lambda p: [
        "run", "--config", single, "--model", "tiny", "--dry-run", "--data", str(p)]
    yield "run --dry-run --data FILE (text)", ".txt", lambda p: [
        "run", "--config", single, "--model", "tiny", "--dry-run", "--data", str(p)]
    yield "run --dry-run SCRIPT", ".py", lambda p: ["run", "--config", single, "--dry-run", str(p)]
    yield "init --reward FILE:f", ".py", lambda p: [
        "init", "--defaults", "--kind", "grpo", "--reward", f"{p}:f", "-o", str(out / "g.yaml"), "--force"]
    yield "init --answers FILE", ".yaml", lambda p: ["init", "--answers", str(p), "-o", str(out / "a.yaml")]
    yield "estimate --model FILE", ".json", lambda p: ["estimate", "--model", str(p)]
    yield "check --system FILE", ".json", lambda p: ["check", single, "--system", str(p)]
    yield "migrate -o FILE", ".yaml", lambda p: ["migrate", fsdp, "-o", str(p)]
    yield "convert -o FILE", ".yaml", lambda p: ["convert", fsdp, "--to", "deepspeed", "-o", str(p)]
    yield "init -o FILE", ".yaml", lambda p: ["init", "--defaults", "-o", str(p)]
    yield "run --slurm FILE", ".sbatch", lambda p: ["run", "--config", single, "--slurm", str(p), "train.py"]


def fuzz_flags(folder: Path, *, timeout: float = 60.0) -> tuple[dict[tuple[str, str], Outcome], list[str]]:
    """Every (flag, hostile file) once; what each ended with, and the failures (with why)."""
    results: dict[tuple[str, str], Outcome] = {}
    failures = []
    flags = list(file_flags(folder))
    for index, kind in enumerate(HOSTILE_FILES):
        for number, (flag, suffix, argv) in enumerate(flags):
            case = folder / f"case{index}-{number}"
            case.mkdir()
            path = hostile_file(kind, case, suffix)
            before = Path("/dev/zero").stat().st_mode
            outcome = run_command(flag, argv(path), timeout=timeout)
            results[(flag, kind)] = outcome
            wrote_through = kind == "dangling link" and (case / "nowhere").exists()
            if not outcome.ok or wrote_through or Path("/dev/zero").stat().st_mode != before:
                why = ("wrote through the link" if wrote_through else "crash" if outcome.crash
                       else "hang" if outcome.hung else "raw control" if outcome.raw_control
                       else f"exit {outcome.exit_code}")
                failures.append(f"`{flag}` with {kind}: {why}")
    return results, failures
