"""The browsers waiting for a live page's next change, and how they are woken (display and pit board).

Each browser's stream (:func:`signage.server.stream`) waits on its own event; a change sets them all,
and each stream then sends the newest text, so a slow browser skips states instead of queueing them.
"""

from __future__ import annotations

import asyncio


class Watched:
    """Something browsers follow: it counts its changes in :attr:`version` and wakes them at each."""

    def __init__(self) -> None:
        self.version = 0
        self._waiters: set[asyncio.Event] = set()

    def watch(self) -> asyncio.Event:
        """An event set at every change (the browser's handler then sends the newest payload)."""
        waiter = asyncio.Event()
        self._waiters.add(waiter)
        return waiter

    def unwatch(self, waiter: asyncio.Event) -> None:
        self._waiters.discard(waiter)

    @property
    def watchers(self) -> int:
        return len(self._waiters)

    def wake(self) -> None:
        """One change: a new version, every browser woken."""
        self.version += 1
        for waiter in self._waiters:
            waiter.set()
