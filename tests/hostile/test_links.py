"""One rule for links (issue 32): accelwiz never writes a file it creates through a link (`migrate -o`,
`convert -o`, `init -o`, `run --slurm`: refused, or with --force the link itself replaced), and never follows a
link that neither the user nor the folder's owner owns (the kernel's fs.protected_symlinks, in user space: this
container runs with it off). The links are planted by another user for real: root forks a child that drops to
`nobody` (os.setuid) and creates them, in a sticky world-writable folder like /tmp and in a shared folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.hostile.test_writes import FIXABLE, FSDP1

NOBODY = 65534
VICTIM = "root's secret: mode 0600\n"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="planting a link as another user needs root")


def _as_nobody(action) -> None:  # noqa: ANN001 - a function run in the child
    """Run `action` in a forked child whose uid and gid are nobody's; fail the test if it failed."""
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            action()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child running as nobody failed"


@pytest.fixture()
def shared(tmp_path):  # noqa: ANN201 - (sticky folder, plain world-writable folder, the victim file)
    """Folders nobody can reach (pytest's own are mode 0700): one sticky and world-writable, like /tmp, one
    world-writable without the sticky bit, like a badly set project space."""
    top = Path(tempfile.mkdtemp(prefix="accelwiz-links-"))
    os.chmod(top, 0o755)
    sticky, plain = top / "sticky", top / "plain"
    sticky.mkdir()
    plain.mkdir()
    os.chmod(sticky, 0o1777)
    os.chmod(plain, 0o777)
    victim = tmp_path / "victim"
    victim.write_text(VICTIM)
    os.chmod(victim, 0o600)
    yield sticky, plain, victim
    shutil.rmtree(top)


def _plant(link: Path, target: Path) -> None:
    _as_nobody(lambda: os.symlink(target, link))
    assert link.is_symlink() and link.lstat().st_uid == NOBODY


def _outputs(cli, folder: Path, tmp_path: Path):  # noqa: ANN001, ANN202 - (label, argv, the output) per command
    fsdp = tmp_path / "fsdp.yaml"
    fsdp.write_text(FSDP1)
    multi = tmp_path / "multi.yaml"
    multi.write_text("distributed_type: MULTI_GPU\nnum_processes: 4\nnum_machines: 2\nmain_process_ip: 10.0.0.1\n"
                     "main_process_port: 29600\nmixed_precision: bf16\n")
    (tmp_path / "train.py").write_text("")
    return [
        ("migrate -o", ["migrate", str(fsdp), "-o", str(folder / "out.yaml")], folder / "out.yaml"),
        ("convert -o", ["convert", str(fsdp), "--to", "deepspeed", "-o", str(folder / "conv.yaml")],
         folder / "conv.yaml"),
        ("init -o", ["init", "--defaults", "-o", str(folder / "init.yaml")], folder / "init.yaml"),
        ("run --slurm", ["run", "--config", str(multi), "--slurm", str(folder / "job.sbatch"),
                         str(tmp_path / "train.py")], folder / "job.sbatch"),
    ]


def test_a_link_planted_by_nobody_in_a_sticky_folder_is_never_written_through(cli, shared, tmp_path):
    """The issue's case: root, without --force, overwrote a mode-0600 file through nobody's link."""
    sticky, _, victim = shared
    for label, argv, output in _outputs(cli, sticky, tmp_path):
        _plant(output, victim)
        result = cli(*argv)
        assert result.exit_code == 2, (label, result.stdout, result.stderr)
        # one line: the link named as such, or (convert, init) the existing name --force is asked for
        assert "is a symbolic link" in result.stderr or "exists" in result.stderr, (label, result.stderr)
        assert "--force" in result.stderr and "Traceback" not in result.stderr, (label, result.stderr)
        assert victim.read_text() == VICTIM and victim.stat().st_mode & 0o777 == 0o600, label
        assert output.is_symlink(), label


@pytest.mark.parametrize("command", ["migrate -o", "convert -o", "init -o"])
def test_force_replaces_the_link_itself_never_its_target(cli, shared, tmp_path, command):
    sticky, _, victim = shared
    [(label, argv, output)] = [o for o in _outputs(cli, sticky, tmp_path) if o[0] == command]
    _plant(output, victim)
    result = cli(*argv, "--force")
    assert result.exit_code in (0, 1), (label, result.stdout, result.stderr)  # 1: the check of the output found
    assert victim.read_text() == VICTIM, label
    assert not output.is_symlink() and output.stat().st_uid == 0, label
    assert not output.with_name(output.name + ".bak").exists(), label  # no copy of what the link named


def test_a_link_owned_by_neither_the_user_nor_the_folders_owner_is_not_followed(cli, shared, tmp_path):
    """In a world-writable folder without the sticky bit the kernel follows any link; accelwiz does not: nobody's
    link to root's config is neither edited by `check --fix` nor by `migrate`, and root's file keeps its bytes."""
    _, plain, _ = shared
    config = tmp_path / "mine.yaml"
    config.write_text(FIXABLE)
    fsdp = tmp_path / "fsdp.yaml"
    fsdp.write_text(FSDP1)
    for argv, link, target in ((["check", "--fix"], plain / "fix.yaml", config),
                               (["migrate"], plain / "mig.yaml", fsdp)):
        _plant(link, target)
        before = target.read_bytes()
        result = cli(*argv, str(link))
        assert result.exit_code == 2, (argv, result.stdout, result.stderr)
        assert f"owned by uid {NOBODY}" in result.stderr and "protected_symlinks" in result.stderr, result.stderr
        assert target.read_bytes() == before, argv


def test_a_users_own_link_is_still_followed(cli, tmp_path):
    """The rule keeps what users do: their own link to their own config is edited where it points."""
    real = tmp_path / "real.yaml"
    real.write_text(FIXABLE)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    assert cli("check", "--fix", str(link)).exit_code in (0, 1)
    assert link.is_symlink() and real.read_text() != FIXABLE
