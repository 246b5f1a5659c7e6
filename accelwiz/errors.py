"""Errors accelwiz expects and can explain: shown as one line plus a hint, never as a traceback.

Exit codes (documented in the README and in `accelwiz --help`):

====  =====================================================================
0     success; `check` found nothing worse than warnings
1     `check` found errors (or warnings under --strict); a launch failed; an internal error (a bug)
2     bad usage, unreadable input (missing, malformed, binary, too large), or a file that cannot be written
130   interrupted (Ctrl-C, or EOF at a prompt); nothing was written
====  =====================================================================

`run` passes the training process's own exit code through.
"""

from __future__ import annotations

from typing import ClassVar

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class AccelwizError(Exception):
    """An expected failure with a one-line message and an optional imperative hint."""

    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(AccelwizError):
    """A bad flag, a bad flag combination, or an unknown name."""

    exit_code = EXIT_USAGE


class InputError(AccelwizError):
    """A file that cannot be read or parsed at all."""

    exit_code = EXIT_USAGE


class WriteError(InputError):
    """A file could not be written (read-only folder, full disk, size limit, changed since it was read); nothing
    was. An InputError, so every caller that reports "cannot write" as one keeps doing so."""


class LaunchError(AccelwizError):
    """The training process could not be started."""

    exit_code = EXIT_FINDINGS

