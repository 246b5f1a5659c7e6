"""Every write goes through accelwiz.atomic: planted links, lost updates, line endings, owners, and the ways a
write fails (issue 21). Real files, real links, real mounts and limits where the machine allows them."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from accelwiz.atomic_update import Snapshot, read_for_update, restore_layout, update
from accelwiz.errors import WriteError

REPO = Path(__file__).resolve().parents[2]
FSDP1 = ("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_processes: 2\nmixed_precision: no\n"
         "fsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
         "  fsdp_offload_params: false\n")
FIXABLE = "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: no\n"  # AW008: quote the 'no'


def _accelwiz(*args: str, cwd: Path, limit_bytes: int | None = None) -> subprocess.CompletedProcess:
    """A real process (a real file-size limit, two commands at once)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run([sys.executable, "-m", "accelwiz", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300,
                          preexec_fn=limit if limit_bytes is not None else None)


def _temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


# --- planted links ---

def test_init_force_never_writes_its_bak_through_a_planted_link(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("init", "--defaults", "-o", "out.yaml").exit_code == 0
    before = (tmp_path / "out.yaml").read_bytes()
    (tmp_path / "victim").write_text("precious\n")
    (tmp_path / "out.yaml.bak").symlink_to(tmp_path / "victim")
    # a different plan, so the old file is really replaced and kept as .bak (identical files are left as they are)
    assert cli("init", "--defaults", "-o", "out.yaml", "--force", "--processes", "2").exit_code == 0
    assert (tmp_path / "out.yaml").read_bytes() != before
    assert (tmp_path / "victim").read_text() == "precious\n"
    assert not (tmp_path / "out.yaml.bak").is_symlink() and (tmp_path / "out.yaml.bak").read_bytes() == before


@pytest.mark.parametrize("command", [["check", "--fix"], ["migrate"]])
def test_a_symlinked_config_is_edited_where_the_link_points(cli, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "cfg.yaml").write_text(FSDP1)
    (tmp_path / "link.yaml").symlink_to("real/cfg.yaml")
    result = cli(*command, "link.yaml")
    assert result.exit_code in (0, 1), result.stderr
    assert (tmp_path / "link.yaml").is_symlink() and os.readlink(tmp_path / "link.yaml") == "real/cfg.yaml"
    edited = (tmp_path / "real" / "cfg.yaml").read_text()
    assert edited != FSDP1 and ("'no'" in edited if command[0] == "check" else "fsdp_version: 2" in edited)
    if command == ["migrate"]:
        assert (tmp_path / "link.yaml.bak").read_text() == FSDP1


def test_migrate_bak_through_a_planted_link_leaves_the_target_alone(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.yaml").write_text(FSDP1)
    (tmp_path / "victim").write_text("precious\n")
    (tmp_path / "cfg.yaml.bak").symlink_to("victim")
    assert cli("migrate", "cfg.yaml").exit_code in (0, 1)
    assert (tmp_path / "victim").read_text() == "precious\n" and (tmp_path / "cfg.yaml.bak").read_text() == FSDP1


# --- lost updates ---

def test_a_file_edited_between_read_and_write_is_refused_and_keeps_the_users_edit(tmp_path):
    from accelwiz.fix.apply import plan_fixes, write_fixes
    from accelwiz.rules.registry import select_rules

    path = tmp_path / "accelerate.yaml"
    path.write_text(FIXABLE)
    report = plan_fixes([path], select_rules(), unsafe=False)
    assert report.changed
    path.write_text(FIXABLE + "debug: true\n")  # the user saves in an editor meanwhile
    with pytest.raises(WriteError, match="changed since accelwiz read it"):
        write_fixes(report)
    assert path.read_text() == FIXABLE + "debug: true\n" and _temporaries(tmp_path) == []


def test_a_file_replaced_by_a_same_content_copy_is_still_a_change(tmp_path):
    """Inode, not only content: another writer replaced the file meanwhile (its lock guarded the old inode)."""
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n")
    snapshot = read_for_update(path)
    (tmp_path / "copy").write_text("a: 1\n")
    os.replace(tmp_path / "copy", path)
    with pytest.raises(WriteError):
        update(snapshot, "a: 2\n")


def test_migrate_and_fix_at_once_keep_both_edits(tmp_path):
    """Issue 21 lost one command's edit in 6-9 of 10 rounds with both reporting success. Each command holds the
    file's flock for its whole read-modify-write, so the second reads what the first wrote: both edits, always."""
    path = tmp_path / "cfg.yaml"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for _ in range(4):
        path.write_text(FSDP1)
        argv = [sys.executable, "-m", "accelwiz"]
        migrate = subprocess.Popen([*argv, "migrate", "cfg.yaml"], cwd=tmp_path, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        fix = subprocess.Popen([*argv, "check", "--fix", "--select", "AW008", "cfg.yaml"], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        (_, migrate_err), (_, fix_err) = migrate.communicate(timeout=300), fix.communicate(timeout=300)
        # migrate exits 1 when the migrated file still has findings (the unquoted `no`), 0 when fixed first
        assert migrate.returncode in (0, 1) and fix.returncode == 0, (migrate_err, fix_err)
        text = path.read_text()
        assert "fsdp_version: 2" in text and "mixed_precision: 'no'" in text, text
        assert _temporaries(tmp_path) == []


# --- line endings, encoding, final newline ---

@pytest.mark.parametrize("command", [["check", "--fix"], ["migrate"]])
def test_crlf_stays_crlf_and_the_bak_is_the_original(cli, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    original = FSDP1.replace("\n", "\r\n").encode()
    (tmp_path / "cfg.yaml").write_bytes(original)
    assert cli(*command, "cfg.yaml").exit_code in (0, 1)
    written = (tmp_path / "cfg.yaml").read_bytes()
    assert written != original and written.count(b"\n") == written.count(b"\r\n")
    if command == ["migrate"]:
        assert (tmp_path / "cfg.yaml.bak").read_bytes() == original


def test_mixed_endings_bom_and_no_final_newline_survive_a_fix(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    original = b"\xef\xbb\xbfdistributed_type: MULTI_GPU\r\nnum_processes: 2\nmixed_precision: no\r\ndebug: false"
    (tmp_path / "cfg.yaml").write_bytes(original)
    assert cli("check", "--fix", "cfg.yaml").exit_code == 0
    assert (tmp_path / "cfg.yaml").read_bytes() == original.replace(b"no\r\n", b"'no'\r\n")


def _snapshot(raw: bytes) -> Snapshot:
    return Snapshot(Path("x"), Path("x"), raw, (0, 0))


@pytest.mark.parametrize("raw,edited,expected", [
    (b"a: 1\r\nb: 2\r\n", "a: 1\nb: 3\n", b"a: 1\r\nb: 3\r\n"),
    (b"a: 1\r\nb: 2\r\n", "a: 1\nb: 2\nc: 4\n", b"a: 1\r\nb: 2\r\nc: 4\r\n"),  # new lines take the file's ending
    (b"a: 1\nb: 2", "a: 1\nb: 2\nc: 3\n", b"a: 1\nb: 2\nc: 3"),  # no final newline before, none after
    (b"a: 1\nb: 2\r\nc: 3\n", "a: 9\nb: 2\nc: 3\n", b"a: 9\nb: 2\r\nc: 3\n"),  # untouched lines keep their bytes
    (b"\xef\xbb\xbfa: 1\n", "a: 2\n", b"\xef\xbb\xbfa: 2\n"),
])
def test_restore_layout(raw, edited, expected):
    assert restore_layout(_snapshot(raw), edited).encode() == expected


# --- owner and mode ---

@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
@pytest.mark.parametrize("command", [["check", "--fix"], ["migrate"]])
def test_root_fixing_another_users_file_leaves_it_theirs(cli, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "cfg.yaml"
    path.write_text(FSDP1)
    os.chown(path, 65534, 65534)
    path.chmod(0o640)
    assert cli(*command, "cfg.yaml").exit_code in (0, 1)
    info = path.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o7777) == (65534, 65534, 0o640)
    assert path.read_text() != FSDP1


# --- write failures: one line, exit 2, nothing written, no temporary file left ---

@pytest.fixture()
def mount(tmp_path):
    """A 64 KiB tmpfs (root: a real full disk and a real read-only file system); skipped where mount is refused."""
    point = tmp_path / "mnt"
    point.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    yield point
    subprocess.run(["umount", "-l", str(point)], check=False)


WRITERS = [["check", "--fix", "cfg.yaml"], ["migrate", "cfg.yaml"], ["init", "--defaults", "-o", "new.yaml"],
           ["convert", "cfg.yaml", "--to", "deepspeed", "-o", "conv.yaml"]]


def _assert_one_line_and_untouched(result, folder: Path, reason: str) -> None:
    assert result.exit_code == 2, result.stderr
    assert reason in result.stderr and "nothing was written" in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("error:") == 1
    assert (folder / "cfg.yaml").read_text() == FSDP1
    assert not (folder / "new.yaml").exists() and not (folder / "conv.yaml").exists()
    assert _temporaries(folder) == []


@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0])
def test_a_full_disk(cli, mount, monkeypatch, argv):
    (mount / "cfg.yaml").write_text(FSDP1)
    with (mount / "fill").open("wb") as stream, pytest.raises(OSError):
        stream.write(b"\0" * (128 * 1024))
    monkeypatch.chdir(mount)
    _assert_one_line_and_untouched(cli(*argv), mount, "the disk is full")


@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0])
def test_a_read_only_file_system(cli, mount, monkeypatch, argv):
    (mount / "cfg.yaml").write_text(FSDP1)
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
    monkeypatch.chdir(mount)
    _assert_one_line_and_untouched(cli(*argv), mount, "the file system is read-only")


@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0])
def test_a_file_size_limit(tmp_path, argv):
    """`ulimit -f`: Python ignores SIGXFSZ, so the write fails with EFBIG instead of killing the process."""
    (tmp_path / "cfg.yaml").write_text(FSDP1)
    done = _accelwiz(*argv, cwd=tmp_path, limit_bytes=64)
    assert done.returncode == 2, done.stderr
    assert "the file size limit is reached (ulimit -f)" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "cfg.yaml").read_text() == FSDP1 and _temporaries(tmp_path) == []
    assert not (tmp_path / "new.yaml").exists() and not (tmp_path / "conv.yaml").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a mode-555 folder; the read-only mount covers it")
@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0])
def test_a_read_only_folder(cli, tmp_path, monkeypatch, argv):
    (tmp_path / "cfg.yaml").write_text(FSDP1)
    tmp_path.chmod(0o555)
    monkeypatch.chdir(tmp_path)
    try:
        _assert_one_line_and_untouched(cli(*argv), tmp_path, "permission denied")
    finally:
        tmp_path.chmod(0o755)


def test_a_write_killed_with_sigkill_leaves_a_temp_file_that_the_next_write_removes(tmp_path):
    """Issue 21: SIGKILL during a write left a stray temp file (no `finally` runs). The writer's temporary files
    name their process; the next write of the same file removes those of a process that is gone, and keeps a live
    writer's."""
    import signal
    import time

    target = tmp_path / "accelerate.yaml"
    target.write_text("old: 1\n")
    # a writer stopped inside its write (fsync never returns), then killed for real
    code = ("import os, sys, time; from pathlib import Path; import accelwiz.atomic as a\n"
            "os.fsync = lambda fd: time.sleep(600)\n"
            "a.atomic_write(Path(sys.argv[1]), 'half: 1\\n')\n")
    writer = subprocess.Popen([sys.executable, "-c", code, str(target)])
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".accelerate.yaml.accelwiz-*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    stray = list(tmp_path.glob(".accelerate.yaml.accelwiz-*.tmp"))
    assert len(stray) == 1 and f"accelwiz-{writer.pid}." in stray[0].name
    live = tmp_path / f".accelerate.yaml.accelwiz-{os.getpid()}.live.tmp"  # a writer still running: kept
    live.write_text("")
    from accelwiz.atomic import atomic_write

    atomic_write(target, "new: 1\n")
    assert target.read_text() == "new: 1\n" and not stray[0].exists() and live.exists()
