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
import subprocess
import sys
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


def _dead_pid() -> int:
    """The PID of a process that has ended and been reaped (reused only after the PIDs wrap around)."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_leftovers_of_dead_processes_are_removed_and_those_of_live_ones_kept(tmp_path: Path) -> None:
    """A kill inside the window left ``.NAME.new-PID``, and only a start with that PID removed it, so
    they piled up across kills. Now making NAME removes those of gone processes, a folder or a file;
    one of a live process (it may be making NAME now) and names not of exactly that form are kept."""
    dead, live = _dead_pid(), os.getppid()
    keys, lock = tmp_path / "keys", tmp_path / "daemon.lock"
    (tmp_path / f".keys.new-{dead}").mkdir()  # make_dir's leftover: an empty folder
    (tmp_path / f".keys.new-{live}").mkdir()
    (tmp_path / f".daemon.lock.new-{dead}").write_text("")  # open_private's: an empty file
    (tmp_path / f".daemon.lock.new-{live}").write_text("")
    others = [f".keys.new-{dead}x", f".keys.new-0{dead}", f".keys.new-+{dead}", f".other.new-{dead}"]
    for name in others:
        (tmp_path / name).write_text("")
    private.make_dir(keys)
    os.close(private.open_private(lock, os.O_RDWR))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["keys", "daemon.lock", f".keys.new-{live}", f".daemon.lock.new-{live}", *others])


def test_a_leftover_beside_an_existing_file_is_removed(tmp_path: Path) -> None:
    """A kill between the ``link`` and the ``unlink`` leaves the temporary file beside the lock file."""
    lock = tmp_path / "daemon.lock"
    lock.write_text("")
    os.link(lock, tmp_path / f".daemon.lock.new-{_dead_pid()}")
    os.close(private.open_private(lock, os.O_RDWR))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["daemon.lock"]
