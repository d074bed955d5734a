"""The shoe's reader thread, joined to the daemon's loop without losing or doubling a card.

The reader (:class:`drivers.shoe.ShoeReader`) acknowledges a frame to the
shoe only after its ``on_event`` returns. So ``on_event`` here hands the
event to the loop and *waits* until the loop has journaled it: if the
daemon dies before the commit, the frame was never acknowledged and the
shoe sends it again to the restarted daemon; if it dies after, the card is
in the journal and the reader's duplicate check (or the restarted shoe
session) never delivers it twice. The wait polls a stop flag so shutting
down never deadlocks on a loop that is gone.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Final

from drivers.shoe import ShoeEvent, ShoeProfile, ShoeReader

log = logging.getLogger("croupier.daemon.shoe")

#: How often a waiting reader thread looks at the stop flag.
_POLL: Final = 0.2


class ShoeLink:
    """Runs a :class:`ShoeReader` and delivers its events to ``handle`` on ``loop``, one at a time."""

    def __init__(
        self, profile: ShoeProfile, loop: asyncio.AbstractEventLoop, handle: Callable[[ShoeEvent], None]
    ) -> None:
        self.profile = profile
        self._loop = loop
        self._handle = handle
        self._stopping = threading.Event()
        self.reader = ShoeReader(profile, self._on_event)

    def start(self) -> None:
        self.reader.start()

    async def stop(self) -> None:
        """Stop the reader without blocking the loop (its thread may be waiting on the loop)."""
        self._stopping.set()
        await self._loop.run_in_executor(None, self.reader.stop)

    def _on_event(self, event: ShoeEvent) -> None:
        """Reader thread: hand over and wait until the loop has dealt with it (journaled it)."""
        if self._stopping.is_set():
            return
        done: concurrent.futures.Future[None] = concurrent.futures.Future()

        def run() -> None:
            try:
                if not self._stopping.is_set():
                    self._handle(event)
                done.set_result(None)
            except BaseException as exc:  # the reader logs it; the frame is not acknowledged late
                done.set_exception(exc)

        try:
            self._loop.call_soon_threadsafe(run)
        except RuntimeError:  # the loop is closed: we are shutting down
            return
        while not self._stopping.is_set():
            try:
                done.result(timeout=_POLL)
                return
            except concurrent.futures.TimeoutError:
                continue
