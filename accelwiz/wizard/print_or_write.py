"""The files init rendered, printed (--dry-run) or written: all or none, files identical to what is there left
alone, files that differ replaced only with --force or a yes on a terminal (keeping .bak copies)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelwiz.console import Console
from accelwiz.errors import UsageError

if TYPE_CHECKING:
    from accelwiz.wizard.session import InitRequest


def print_or_write(
    files: list[Any], request: InitRequest, console: Console, *, interactive: bool
) -> list[Path]:
    """--dry-run: the files on stdout. Otherwise all of them on disk, or none."""
    from accelwiz.wizard.write import write_files

    if request.dry_run:
        for file in files:
            console.data(f"# ==> {file.path} <==\n{file.text}")
        return []
    same = [f for f in files if _unchanged(f)]
    changed = [f for f in files if f not in same]
    if changed and not request.force and not interactive:
        _refuse_differing(changed, request)
    if same:  # the quickstart pasted twice: what is there is what this init writes, byte for byte
        console.info("unchanged: " + ", ".join(str(f.path) for f in same) + " (identical to what this init writes)")
    if not changed:
        return [f.path for f in files]
    confirm = _confirm_overwrite if interactive else None
    for backup in write_files(changed, force=request.force, confirm_overwrite=confirm):
        console.info(f"kept the previous file as {backup}")
    console.info("wrote " + ", ".join(str(f.path) for f in changed))
    return [f.path for f in files]


def _unchanged(file: Any) -> bool:
    """A regular file (no link: those are write.py's to refuse or replace) whose bytes are the ones init writes."""
    path, data = Path(file.path), file.text.encode("utf-8")  # as atomic_stage.write_all encodes it
    try:
        # the size first: a large file there is not read at all
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def _refuse_differing(changed: list[Any], request: InitRequest) -> None:
    """A second init whose files differ from those there: one line naming them and both ways on."""
    import shlex

    from accelwiz.defaults import DEFAULT_CONFIG
    from accelwiz.document.read import exists

    differ = [str(f.path) for f in changed if exists(f.path)]
    if not differ:
        return
    config = request.output
    command = request.command if "--force" in request.command.split() else f"{request.command} --force"
    run = "accelwiz run" if config == DEFAULT_CONFIG else f"accelwiz run --config {shlex.quote(str(config))}"
    one = len(differ) == 1
    raise UsageError(
        f"{' and '.join(differ)} already {'exists and differs' if one else 'exist and differ'} from what this init "
        "writes; nothing was written",
        hint=f"replace {'it' if one else 'them'} (keeping a .bak copy): `{command}`; or train with the "
        f"file{'' if one else 's'} there: `{run}`",
    )


def _confirm_overwrite(path: Path) -> bool:
    return _confirm(f"{path} exists. Replace it (a .bak copy is kept)?", default=False)


def _confirm(prompt: str, *, default: bool) -> bool:
    import questionary

    try:
        return bool(questionary.confirm(prompt, default=default).unsafe_ask())
    except EOFError:
        raise KeyboardInterrupt from None
