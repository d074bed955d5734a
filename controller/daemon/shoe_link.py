"""The shoe's reader thread, joined to the daemon's loop without losing or doubling a card.

The reader (:class:`drivers.shoe.ShoeReader`) acknowledges a frame to the
shoe only when ``on_frame`` returns True. Here ``on_frame`` hands the frame
to the loop and *waits* until the loop has journaled it (the frame's id is
committed with its input, or as the shoe cursor): only then is it True. In
every other case (the daemon stopping, the loop gone, the journal faulted,
an exception) it is False, the frame is not acknowledged, and the shoe
sends it again, to this daemon or to the restarted one. The restarted
reader resumes from the journal's shoe cursor, so a resend of a frame that
was committed but not acknowledged is acknowledged and not delivered twice.
The wait polls a stop flag so shutting down never deadlocks on a loop that
is gone.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Final

from controller.daemon import faults
from drivers.shoe import FrameId, ShoeEvent, ShoeProfile, ShoeReader

log = logging.getLogger("croupier.daemon.shoe")

#: How often a waiting reader thread looks at the stop flag.
_POLL: Final = 0.2

#: On the loop: take a frame's event (None: a heartbeat); True once the frame is durable.
FrameSink = Callable[[FrameId | None, ShoeEvent | None], bool]


class ShoeLink:
    """Runs a :class:`ShoeReader` and delivers its frames and statuses to ``handle`` on ``loop``."""

    def __init__(
        self,
        profile: ShoeProfile,
        loop: asyncio.AbstractEventLoop,
        handle: FrameSink,
        resume: FrameId | None = None,
    ) -> None:
        self.profile = profile
        self._loop = loop
        self._handle = handle
        self._stopping = threading.Event()
        self.reader = ShoeReader(
            profile,
            self._on_status,
            on_frame=self._on_frame,
            resume=resume,
            on_acked=lambda _frame: faults.point("shoe_acked"),
        )

    def start(self) -> None:
        self.reader.start()

    async def stop(self) -> None:
        """Stop the reader without blocking the loop (its thread may be waiting on the loop)."""
        self._stopping.set()
        await self._loop.run_in_executor(None, self.reader.stop)

    def _on_status(self, event: ShoeEvent) -> None:
        """The line's statuses (connected, disconnected, framing errors): handed over, not acknowledged."""
        self._hand_over(None, event)

    def _on_frame(self, frame: FrameId | None, event: ShoeEvent | None) -> bool:
        """Reader thread: hand the frame over and wait until the loop has journaled it."""
        durable = self._hand_over(frame, event)
        if durable:
            faults.point("shoe_committed")
        return durable

    def _hand_over(self, frame: FrameId | None, event: ShoeEvent | None) -> bool:
        if self._stopping.is_set():
            return False
        done: concurrent.futures.Future[bool] = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(not self._stopping.is_set() and self._handle(frame, event))
            except BaseException as exc:  # the reader logs it; the frame is not acknowledged
                done.set_exception(exc)

        try:
            self._loop.call_soon_threadsafe(run)
        except RuntimeError:  # the loop is closed: we are shutting down
            return False
        faults.point("shoe_handover")
        while True:
            try:
                return done.result(timeout=_POLL)
            except concurrent.futures.TimeoutError:
                if self._stopping.is_set():
                    return False  # stopping: never acknowledged; the shoe resends it to the next daemon
