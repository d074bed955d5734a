"""One daemon per state dir: an exclusive ``flock`` on ``daemon.lock`` for the daemon's whole life.

Two daemons appending to one journal would interleave rows neither expects (an input answered as
failed but committed, a credit counted twice at the next start). The lock is taken before the
journal or any socket is opened, and the kernel drops it when the process ends however it ends
(SIGKILL, power cut), so a stale lock file never blocks a restart. The holder writes its PID into
the file so that the refused second daemon can name it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Final

from controller.daemon import private

LOCK_NAME: Final = "daemon.lock"


class StateDirBusy(RuntimeError):
    """Another live process holds the state dir (``croupier run`` exits 4)."""


class StateDirLock:
    """The held lock on one state dir; :meth:`release` (or process exit) gives it up."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, state_dir: Path) -> StateDirLock:
        """Lock ``state_dir`` (made 0700 if missing; the lock file 0600) or raise :class:`StateDirBusy`
        naming the holder."""
        private.make_dir(state_dir)
        path = state_dir / LOCK_NAME
        fd = private.open_private(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StateDirBusy(
                f"state dir {state_dir} is in use by another daemon (PID {holder}, lock {path}): "
                "one daemon per journal"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    def release(self) -> None:
        """Give the lock up (idempotent). The file stays: its content is only informative."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
