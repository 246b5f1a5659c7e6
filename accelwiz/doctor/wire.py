"""What travels through node 0's store, and how a node tells a peer's record from anything else that reached the
port: every record is sealed with an HMAC of the job's secret, and opened (checked, bounded, decoded, validated)
before a field of it is read.

The store itself (torch's TCPStore) has no authentication: any process that reaches its port can set any key.
So the records carry their own: `aw1 <hex HMAC-SHA256(key, "phase/rank" NUL body)> <body>`. The phase and rank
are inside the MAC, so a record cannot be replayed under another phase or rank's key. The key comes from
ACCELWIZ_DOCTOR_SECRET, which `accelwiz run` sets for every node it launches (the sbatch script exports one per
job; the per-node commands carry one per `run`); a manual `accelwiz doctor` without it derives the key from the
allocation (every node's flags), which proves nothing against a local process and is said so in the report.

A record that fails any of this is a `BadRecord`: the preflight names the peer (Problem.UNTRUSTED, exit 9),
never an internal error.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import TypeVar

from pydantic import BaseModel, ValidationError

SECRET_ENV = "ACCELWIZ_DOCTOR_SECRET"
MAX_RECORD_BYTES = 256 * 1024  # a node's facts are ~2 KB; 128 NCCL_* variables of 1 KB each still fit
_MAGIC = b"aw1 "
_MAC_HEX = 64
_NONCE = re.compile(r"[0-9a-f]{12}")

Model = TypeVar("Model", bound=BaseModel)


class BadRecord(Exception):  # noqa: N818 - a peer's fault the preflight reports, not a bug
    """A peer's record that is not a sealed, well-formed record of this job; `reason` says which check failed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def job_key(environ: Mapping[str, str], *, nodes: int, main: str, store_port: int) -> tuple[bytes, bool]:
    """The MAC key and whether it is a secret: ACCELWIZ_DOCTOR_SECRET when set, else one derived from what
    every node of the allocation was given (so honest nodes still agree, and garbage on the port is refused)."""
    secret = environ.get(SECRET_ENV, "")
    if secret:
        return hashlib.sha256(b"accelwiz-doctor\0" + secret.encode("utf-8", "surrogateescape")).digest(), True
    public = f"accelwiz-doctor-public\0{nodes}\0{main}\0{store_port}".encode("utf-8", "surrogateescape")
    return hashlib.sha256(public).digest(), False


def seal(key: bytes, phase: str, rank: int, body: str) -> bytes:
    data = body.encode("utf-8")
    return _MAGIC + _mac(key, phase, rank, data).encode("ascii") + b" " + data


def open_record(key: bytes, phase: str, rank: int, raw: bytes, model: type[Model]) -> Model:
    """The record `raw` (posted under `phase/rank`) as `model`; a BadRecord for anything else, checked in this
    order: size, framing, MAC (before a byte of the body is parsed), UTF-8, JSON, schema, the rank inside."""
    if len(raw) > MAX_RECORD_BYTES:
        raise BadRecord(f"{len(raw):,} bytes, more than the {MAX_RECORD_BYTES:,} a record may have")
    head, body = raw[:len(_MAGIC) + _MAC_HEX + 1], raw[len(_MAGIC) + _MAC_HEX + 1:]
    if not head.startswith(_MAGIC) or len(head) != len(_MAGIC) + _MAC_HEX + 1 or not head.endswith(b" "):
        raise BadRecord("not a sealed preflight record (another program, or an accelwiz without the job secret)")
    # bytes against bytes: compare_digest refuses a str with non-ASCII characters (a flipped byte did it)
    if not hmac.compare_digest(head[len(_MAGIC):-1], _mac(key, phase, rank, body).encode("ascii")):
        raise BadRecord(f"its seal does not match the job secret ({SECRET_ENV} differs, or the record was forged)")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRecord(f"not UTF-8 (byte {exc.start})") from None
    try:
        record = model.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the record"
        raise BadRecord(f"not a valid {phase} record: {where}: {first.get('msg', 'invalid')}") from None
    if getattr(record, "rank", rank) != rank:
        raise BadRecord(f"posted as node {rank} but says it is node {record.rank}")  # type: ignore[attr-defined]
    return record


def valid_nonce(nonce: str | None) -> bool:
    return nonce is not None and _NONCE.fullmatch(nonce) is not None


def _mac(key: bytes, phase: str, rank: int, body: bytes) -> str:
    return hmac.new(key, f"{phase}/{rank}".encode() + b"\0" + body, hashlib.sha256).hexdigest()
