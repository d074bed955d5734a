"""Files and folders the daemon creates: private from their first byte, and whole or absent after a crash.

A table's state holds its journal (every credit of every player) and its CURVE secret (who may
command it), so nothing the daemon creates may be readable by another local user even for an
instant: files are created 0600 and folders 0700 by the call that creates them, then set to
exactly that with an explicit ``chmod`` (the mode given to ``open``/``mkdir`` is masked by the
umask, which only ever removes bits; a umask like 0277 would otherwise leave a folder we cannot
write). And a power cut at any instant must leave either the old file or the new one: a file is
written under a temporary name, fsynced, renamed over its target, and the directory fsynced
(a rename is durable only once its directory is).

Fault points (controller.daemon.faults) sit at each step of :func:`write_atomic`, so the crash
tests can kill a first start inside every write.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, Final

from controller.daemon import faults
from controller.digits import whole_number

FILE_MODE: Final = 0o600
DIR_MODE: Final = 0o700


def _aside(path: Path) -> Path:
    """The temporary name a new file or folder is made under before it takes ``path``'s (this process's)."""
    return path.with_name(f".{path.name}.new-{os.getpid()}")


def _sweep(path: Path) -> None:
    """Remove the leftovers of :func:`_aside` for ``path`` (``.NAME.new-PID``) whose process is gone.

    A process killed between making its temporary file or folder and renaming (or linking) it into
    place leaves it behind, and only a later start with the same PID removed it, so they piled up
    across kills. One whose process is alive is left alone: that process may be making ``path`` right
    now. Only names of exactly that form with a PID of digits are touched, never followed. Best effort:
    a folder that cannot be listed (a drop box, mode 1733) or an entry that cannot be removed (another
    user's, in a shared folder) is left as it is, as before.
    """
    prefix = f".{path.name}.new-"
    try:
        with os.scandir(path.parent) as listing:
            entries = [entry for entry in listing if entry.name.startswith(prefix)]
    except OSError:
        return
    for entry in entries:
        if not _gone(entry.name[len(prefix):]):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                # make_dir's: always empty (its folder is renamed into place before anything is made in
                # it), so never a tree; one that is not empty is not ours and is kept (rmdir refuses).
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)  # open_private's empty file (or a link, itself: never its target)
        except OSError:  # removed meanwhile by another start, not empty, or not ours to remove
            pass


def _gone(pid_text: str) -> bool:
    """Whether ``pid_text`` is a PID as :func:`_aside` writes it (digits, no sign, no leading zero) of no
    live process. Alive, or not knowable (another user's process: EPERM; a number too large), is not gone."""
    if (pid := whole_number(pid_text, 10)) is None or pid_text.startswith("0"):
        return False
    try:
        os.kill(pid, 0)  # signal 0: nothing is sent, only whether the process exists
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False
    return False


def make_dir(path: Path) -> None:
    """``path`` and any missing parent, each created 0700 (an existing folder keeps its mode), each new
    one's parent fsynced. Each is made and set 0700 under a temporary name, then renamed into place: a
    kill between the ``mkdir`` and the ``chmod`` left a folder with the umask's mode (0500 under 0277)
    that every later start kept (a review, 2026-12-07); now it leaves an empty temporary folder, removed
    by the next make_dir of that folder once its process is gone (:func:`_sweep`)."""
    missing = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        made = _aside(folder)
        _sweep(folder)  # dead processes' leftovers of a kill
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(made)  # this pid's leftover of a kill
        try:
            os.mkdir(made, DIR_MODE)
        except OSError as exc:  # named as the folder asked for, not the temporary one
            raise OSError(exc.errno, exc.strerror, str(folder)) from None
        os.chmod(made, DIR_MODE)
        try:
            os.rename(made, folder)  # over nothing, or an empty folder made meanwhile
        except OSError as exc:  # made meanwhile by someone else, and not empty: theirs, mode and all
            os.rmdir(made)
            if not folder.is_dir():  # a file in the way: named, and the folder asked for (not the temporary)
                raise OSError(exc.errno, f"{exc.strerror}: {folder} is in the way", str(path)) from None
            continue
        fsync_folder(folder.parent)  # a new folder's name is durable only once its parent is


def create_empty(path: Path) -> None:
    """Create ``path`` empty and 0600 (it must not exist), durably: e.g. before SQLite opens it, so
    the database, and the ``-wal`` and ``-shm`` files SQLite gives the database's mode, are private."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        os.fsync(fd)
    finally:
        os.close(fd)


def open_private(path: Path, flags: int) -> int:
    """``os.open``, creating ``path`` 0600 whatever the umask if it is missing (the lock file); an
    existing file is opened as it is. A missing file is made and set 0600 under a temporary name, then
    linked into place (never over a file made meanwhile, which is opened instead): a kill between the
    ``open`` and the ``fchmod`` left a lock file 0400 under umask 0277 that every later start was
    refused (a review, 2026-12-07).

    Dead processes' temporary files are swept (:func:`_sweep`) whether ``path`` exists or not: a kill
    between the ``link`` and the ``unlink`` leaves one beside an existing file."""
    _sweep(path)
    try:
        return os.open(path, flags | os.O_CLOEXEC)
    except FileNotFoundError:
        pass
    made = _aside(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(made)  # this pid's leftover of a kill
    create_empty(made)
    try:
        os.link(made, path)
    except FileExistsError:
        pass  # made meanwhile: opened as it is
    except OSError:  # a file system without hard links (vfat): made in place, the mode set after
        os.unlink(made)
        return _open_in_place(path, flags)
    else:
        fsync_folder(path.parent)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(made)
    return os.open(path, flags | os.O_CLOEXEC)


def _open_in_place(path: Path, flags: int) -> int:
    """``path`` created 0600 where it goes (a kill before the ``fchmod`` can leave the umask's mode)."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        return os.open(path, flags | os.O_CLOEXEC)
    os.fchmod(fd, FILE_MODE)
    return fd


def open_log(path: Path, append: bool = True) -> BinaryIO:
    """A log file for a child process's output (a server's, a demo's child's), 0600 from its first byte
    whatever the umask: appended to, or emptied (``append`` False). A log grows as the child writes,
    so it cannot be written aside and renamed; it is private instead (it may hold a token or a key)."""
    flags = os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC)
    return os.fdopen(open_private(path, flags), "ab" if append else "wb")


def write_atomic(target: Path, text: str | bytes, mode: int = FILE_MODE, group: int = -1) -> None:
    """Replace ``target`` with ``text`` (UTF-8, or bytes as they are; 0600), atomically and durably:
    after a crash it holds the old text or the new, never part of either; a stale temporary file is
    overwritten by the next write.

    ``mode`` and ``group`` widen a file that another user's process must read (a public key the
    daemon's group reads): set on the empty file, before a byte is written and before it has its name.
    """
    write_atomic_parts(target, (text,), mode, group)


def write_atomic_parts(target: Path, parts: Iterable[str | bytes], mode: int = FILE_MODE,
                       group: int = -1) -> None:
    """:func:`write_atomic` of the concatenated ``parts``, written as they come (an export of a whole
    journal need not be held in memory); if taking the next part raises, ``target`` is left as it was
    and the exception propagates (the temporary file, whatever it holds, is overwritten next time)."""
    partial = target.with_name(f".{target.name}.partial")
    # Made anew, never opened as found: in a shared folder (an export's --out) another user could point the
    # temporary name at a file of ours to truncate, or make it first, so that the secret written into it is
    # in a file that user owns and holds open (a review, 2026-12-07). A stale one (a crash's) is removed;
    # O_EXCL with O_NOFOLLOW then fails on anything made there meanwhile rather than write into it.
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
    try:
        if group != -1:
            os.fchown(fd, -1, group)
        os.fchmod(fd, mode)
        faults.point("file_created")
        for part in parts:
            data = memoryview(part.encode("utf-8") if isinstance(part, str) else part)
            while data:
                data = data[os.write(fd, data):]
        faults.point("file_written")
        os.fsync(fd)
    finally:
        os.close(fd)
    faults.point("file_synced")
    os.replace(partial, target)
    faults.point("file_renamed")
    fsync_path(target.parent)


def fsync_path(path: Path) -> None:
    """Flush a file, or a directory (a rename is durable only once its directory is)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_folder(path: Path) -> None:
    """:func:`fsync_path` of a folder we may write but not read (a drop box, mode 1733: it cannot be
    opened to be fsynced): there, best effort (a review, 2026-12-05: make_dir failed in one)."""
    with contextlib.suppress(PermissionError):
        fsync_path(path)
