"""The authorised keys as the daemon's ZAP handler and command loop look them up: re-read from the key folder
when it changes, so a key authorised or removed takes effect without a restart (docs/security.md).

Why apart from :mod:`controller.daemon.keys`: that module makes, reads and checks key files for every tool;
this is the running daemon's view of one folder, shared by two threads.
"""

from __future__ import annotations

import logging
import threading
import time

from controller.daemon.keys import KeyFolder, KeyInfo

log = logging.getLogger("croupier.auth")


class KeyRegistry:
    """The authorised keys, re-read when the folder changes (a new key works without a restart).

    Used from the ZAP thread and the loop thread: the dict is replaced whole,
    never mutated, so a reader sees the old set or the new one. The folder is
    looked at no more than once per :attr:`RECHECK` seconds, so a flood costs
    no disk reads.
    """

    RECHECK: float = 1.0

    def __init__(self, folder: KeyFolder) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._stamp: tuple[float, int] | None = None
        self._keys: dict[bytes, KeyInfo] = {}
        self._checked = float("-inf")
        self._bad = ""
        self.refresh()

    def _current_stamp(self) -> tuple[float, int]:
        d = self.folder.authorized
        try:
            files = list(d.glob("*.key"))
            latest = max([d.stat().st_mtime, *(f.stat().st_mtime for f in files)])
            return latest, len(files)
        except (OSError, ValueError):
            return 0.0, 0

    def refresh(self, unusable: list[str] | None = None) -> None:
        """Re-read the folder if it changed; a bad file there raises KeyFileError (at start: a fault),
        or, with ``unusable``, is named there and left out (:meth:`KeyFolder.load_authorized`)."""
        with self._lock:
            stamp = self._current_stamp()
            if stamp != self._stamp:
                self._keys = self.folder.load_authorized(unusable)
                self._stamp = stamp

    def lookup(self, public_z85: bytes) -> KeyInfo | None:
        now = time.monotonic()
        if now - self._checked >= self.RECHECK:
            self._checked = now
            # The good files are the set, the bad ones left out and said once: keeping the last good set
            # whole kept a key removed meanwhile working (a review, 2026-12-07).
            unusable: list[str] = []
            self.refresh(unusable)
            if unusable and "; ".join(unusable) != self._bad:
                self._bad = "; ".join(unusable)
                log.error("authorised keys: an unusable file is left out: %s", self._bad)
        return self._keys.get(public_z85)

    def __len__(self) -> int:
        return len(self._keys)
