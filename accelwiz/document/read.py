"""The one way accelwiz reads a file a user names (a config, an answers file, a config.json): as bounded data.

Before a byte is read the path must be a regular file: a FIFO would block `open` until a writer comes, and
/dev/zero or /dev/urandom report `st_size` 0 and never end, so a size check alone passes them and the read grows
without bound. The file is then opened with O_NONBLOCK (a FIFO swapped in after the check still cannot block),
checked again on the open descriptor, and read up to the cap and no further. Text must be UTF-8, as accelerate
reads it (`open(config_file, encoding="utf-8")` in accelerate/commands/config/config_args.py).
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path
from typing import BinaryIO

from accelwiz.errors import InputError

MAX_BYTES = 5 * 1024 * 1024  # the largest real config we have seen is 12 KB
_CHUNK = 1 << 16


def read_bytes(path: Path, *, what: str = "a config file", max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `max_bytes`; else one InputError."""
    try:
        info = os.stat(path)  # follows links: a link to /dev/zero is judged by what it names
    except FileNotFoundError:
        raise InputError(f"{path}: no such file", hint="check the path") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    _require_regular(path, info.st_mode, what)
    _require_size(path, info.st_size, max_bytes)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        _require_regular(path, os.fstat(descriptor).st_mode, what)  # the path may have been swapped since
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(descriptor, min(_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        _require_size(path, total, max_bytes)  # it grew while we read
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(descriptor)


def open_regular(path: Path, *, what: str) -> BinaryIO:
    """`path` opened for reading, after the same checks as `read_bytes` (a regular file, judged again on the open
    descriptor; never a FIFO's blocking open), for a reader that streams a file too large to hold whole (training
    data): it reads what it needs, and a caller that only samples stops where it likes."""
    try:
        _require_regular(path, os.stat(path).st_mode, what)
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file", hint="check the path") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        _require_regular(path, os.fstat(descriptor).st_mode, what)
    except InputError:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb")


def decode_text(raw: bytes, path: Path) -> str:
    """UTF-8 text (a UTF-8 byte-order mark stays, as `open(encoding="utf-8")` keeps it); UTF-16 and binary data
    are named as such, never shown."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _looks_utf16(raw):
        raise InputError(f"{path}: UTF-16 text; accelerate and DeepSpeed read config files as UTF-8",
                         hint="save the file as UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8`)")
    if b"\x00" in raw[:8192]:
        raise InputError(f"{path}: looks like a binary file, not YAML or JSON", hint="pass the config file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})", hint="save the file as UTF-8") from None


def read_text(path: Path, *, what: str = "a config file", max_bytes: int = MAX_BYTES) -> str:
    return decode_text(read_bytes(path, what=what, max_bytes=max_bytes), path)


def _require_regular(path: Path, mode: int, what: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a directory, not a file", hint=f"pass {what} inside it")
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
    raise InputError(f"{path}: is {kind}, not a regular file; nothing was read",
                     hint=f"pass {what}; to use a pipe's output, save it to a file first")


def _require_size(path: Path, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        shown = f"{size / 2**20:.1f} MiB" if size > max_bytes + 1 else f"more than {max_bytes / 2**20:g} MiB"
        raise InputError(f"{path}: {shown} is too large for a config file",
                         hint=f"config files are a few KB; accelwiz reads at most {max_bytes / 2**20:g} MiB")


def _looks_utf16(raw: bytes) -> bool:
    """UTF-16 without a byte-order mark: ASCII text with every other byte NUL."""
    head = raw[:64]
    return len(head) >= 4 and (head[1::2].count(0) == len(head[1::2]) or head[0::2].count(0) == len(head[0::2]))


def read_json_object(path: Path, *, what: str, hint: str) -> dict:
    """A strict JSON object from a file (a HF config.json, a machine profile), as `json.loads` reads it; every
    failure (syntax, nesting too deep, a number Python will not convert) is one InputError."""
    import json

    text = read_text(path, what=what)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}", hint=hint) from None
    except ValueError:  # more than 4300 digits (sys.get_int_max_str_digits)
        raise InputError(f"{path}: a number too long for json.loads to read", hint=hint) from None
    except RecursionError:
        raise InputError(f"{path}: nesting too deep for json.loads to read", hint=hint) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a JSON object", hint=hint)
    return data


def is_file(path: Path) -> bool:
    """`Path.is_file` for a path written inside a config or a name that may be one: False, not an exception, for
    a name too long for the file system (ENAMETOOLONG), an embedded NUL byte or a loop of links."""
    return _safely(path.is_file)


def is_dir(path: Path) -> bool:
    return _safely(path.is_dir)


def exists(path: Path) -> bool:
    return _safely(path.exists)


def _safely(test) -> bool:  # noqa: ANN001 - a bound Path method
    try:
        return test()
    except (OSError, ValueError):
        return False
