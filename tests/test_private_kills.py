"""A kill inside the one call between making a file or folder and setting its mode leaves nothing narrow.

Under a umask like 0277, ``mkdir(0o700)`` gives 0500 and ``open(0o600)`` 0400 until the ``chmod`` that
follows. A first start killed between the two left a state dir, a key folder or the lock file with that
mode, and every later start kept it: refused ("Permission denied ... daemon.lock") or, for
``keys/authorized``, unable to authorise a key (a review, 2026-12-07). Both are now made under a
temporary name and take their name only once 0700 / 0600.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.daemon import private

pytestmark = pytest.mark.timeout(30)


class Killed(BaseException):
    """The process dying at that instant (nothing after it runs)."""


@pytest.fixture
def narrow_umask() -> Iterator[None]:
    old = os.umask(0o277)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_folder_killed_before_its_mode_was_set_is_made_0700_by_the_next_start(
        tmp_path: Path, narrow_umask: None, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state" / "keys"

    def killed(*args: object) -> None:
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(private.os, "chmod", killed)
        with pytest.raises(Killed):
            private.make_dir(state)
    assert not (tmp_path / "state").exists()  # only a temporary folder, under another name
    private.make_dir(state)
    assert _mode(tmp_path / "state") == 0o700 and _mode(state) == 0o700
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"]  # the leftover of this pid is gone


def test_a_lock_file_killed_before_its_mode_was_set_is_made_0600_by_the_next_start(
        tmp_path: Path, narrow_umask: None, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "daemon.lock"

    def killed(*args: object) -> None:
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(private.os, "fchmod", killed)
        with pytest.raises(Killed):
            private.os.close(private.open_private(lock, os.O_RDWR))
    assert not lock.exists()
    os.close(private.open_private(lock, os.O_RDWR))
    assert _mode(lock) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["daemon.lock"]


def test_an_existing_file_or_folder_keeps_its_mode(tmp_path: Path) -> None:
    """An admin's folder (install.sh's 0750 key folder) or file is never changed."""
    folder, lock = tmp_path / "keys", tmp_path / "daemon.lock"
    folder.mkdir(mode=0o750)
    os.chmod(folder, 0o750)
    lock.write_text("")
    os.chmod(lock, 0o640)
    private.make_dir(folder)
    os.close(private.open_private(lock, os.O_RDWR))
    assert _mode(folder) == 0o750 and _mode(lock) == 0o640


def test_a_folder_that_cannot_be_made_is_named_not_its_temporary_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parent the daemon may not write (a read-only /etc): the error names the folder asked for."""
    def refused(path: object, mode: int = 0o777) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(private.os, "mkdir", refused)
    with pytest.raises(PermissionError) as info:
        private.make_dir(tmp_path / "state")
    assert info.value.filename == str(tmp_path / "state")


def test_a_lock_file_on_a_file_system_without_hard_links_is_made_in_place(
        tmp_path: Path, narrow_umask: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(private.os, "link", no_links)
    os.close(private.open_private(tmp_path / "daemon.lock", os.O_RDWR))
    assert _mode(tmp_path / "daemon.lock") == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["daemon.lock"]
