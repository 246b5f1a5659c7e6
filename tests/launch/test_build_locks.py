"""A lock an interrupted op build left is found and removed; a build's fresh lock is left alone. torch's own
FileBaton is the judge: after the clean-up it can take the lock, where before it would have waited forever."""

from __future__ import annotations

import os
import time

from torch.utils.file_baton import FileBaton

from accelwiz.launch.build_locks import STALE_AFTER_S, clear_stale_build_locks, extensions_folder, stale_build_locks


def _lock(path, age_s: float):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def test_only_a_lock_older_than_any_build_is_removed(tmp_path):
    old = _lock(tmp_path / "py311_cpu" / "deepspeed_shm_comm" / "lock", STALE_AFTER_S + 60)
    fresh = _lock(tmp_path / "py311_cpu" / "cpu_adam" / "lock", 30)  # a build running now
    flat = _lock(tmp_path / "fused_adam" / "lock", 3 * STALE_AFTER_S)  # TORCH_EXTENSIONS_DIR/<op>/lock
    assert stale_build_locks(tmp_path) == sorted([old, flat])
    assert not FileBaton(str(old)).try_acquire()  # torch would wait on it
    assert clear_stale_build_locks(tmp_path) == sorted([old, flat])
    assert FileBaton(str(old)).try_acquire() and fresh.exists()


def test_the_folder_is_torchs_own_choice():
    assert str(extensions_folder({"TORCH_EXTENSIONS_DIR": "/x/ext", "HOME": "/h"})) == "/x/ext"
    assert str(extensions_folder({"HOME": "/h"})) == "/h/.cache/torch_extensions"
    assert str(extensions_folder({"HOME": "/h", "XDG_CACHE_HOME": "/c"})) == "/c/torch_extensions"
