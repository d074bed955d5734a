"""The shoe's reader on the daemon's loop: a card is read, journaled and acknowledged on one thread.

The reader (:class:`drivers.shoe.ShoeReader`) runs on the daemon's event loop
(``start_on``): the loop watches the serial port's file descriptor, decodes
the frame and calls ``on_frame`` here, which journals it (through the
daemon's ``on_shoe_frame``) and says whether it is durable; the reader writes
the ACK right after, still on the loop. So a frame is acknowledged only once
its input is committed, never while the daemon is stopping, after a journal
fault or after an exception: then the shoe sends it again, to this daemon or
to the restarted one. The restarted reader resumes from the journal's shoe
cursor, so a resend of a frame that was committed but not acknowledged is
acknowledged and not delivered twice. No thread and no hand-over between
threads: nothing to wait for, and nothing that can deadlock at shutdown.

The line's ``connected`` and ``disconnected`` reach the daemon once per
outage, and ``connected`` only once the shoe speaks (its first frame after
the port reopened): the reader reopens the port of a dead shoe every few
seconds, and a halt must not clear with each retry (a pty or a USB adapter
opens fine while the shoe behind it is hung). A line profile has no frames
to wait for: the open port is all it knows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from controller.cards import parse_card
from controller.daemon import faults
from drivers.shoe import FrameId, ShoeEvent, ShoeProfile, ShoeReader, ShoeStatus
from drivers.shoe.messages import CardMsg

log = logging.getLogger("croupier.daemon.shoe")

#: On the loop: take a frame's event (None: a heartbeat); True once the frame is durable.
FrameSink = Callable[[FrameId | None, ShoeEvent | None], bool]


class ShoeLink:
    """Runs a :class:`ShoeReader` on ``loop`` and delivers its frames and statuses to ``handle``."""

    def __init__(
        self,
        profile: ShoeProfile,
        loop: asyncio.AbstractEventLoop,
        handle: FrameSink,
        resume: FrameId | None = None,
        resume_card: tuple[str, bool] | None = None,
        resume_no_card: bool = False,
    ) -> None:
        self.profile = profile
        self._loop = loop
        self._handle = handle
        self._stopping = False
        #: What the daemon was last told of the line (None: nothing yet).
        self._up: bool | None = None
        #: The port's ``connected``, held back until the shoe's first frame proves the shoe is there.
        self._opened: ShoeEvent | None = None
        self.reader = ShoeReader(
            profile,
            self._on_status,
            on_frame=self._on_frame,
            resume=resume,
            # The journal's card of that frame (code, burn), if it knows it: its resend is told from another.
            resume_card=None if resume_card is None else CardMsg(parse_card(resume_card[0]), resume_card[1]),
            resume_no_card=resume_no_card,
            on_acked=lambda _frame: faults.point("shoe_acked"),
        )

    def start(self) -> None:
        """On the loop's thread: the reader's sessions become a task of the loop."""
        self.reader.start_on(self._loop)

    async def stop(self) -> None:
        """Stop the reader: no frame is taken (nor acknowledged) from now on; the port is closed."""
        self._stopping = True
        await self.reader.aclose()

    def _on_status(self, event: ShoeEvent) -> None:
        """The line's statuses (connected, disconnected, framing errors): not acknowledged."""
        if self._stopping:
            return
        status = event.status if isinstance(event, ShoeStatus) else None
        if status == "connected":
            self._opened = event
            if self.profile.protocol != "v1":
                self._shoe_speaks()
            return
        if status == "disconnected":
            self._opened = None
            if self._up is False:
                return  # a retry of the port of a shoe still silent: nothing changed
            self._up = False
        self._handle(None, event)

    def _shoe_speaks(self) -> None:
        """The shoe's first frame since the port opened: now it is connected (once per outage)."""
        opened, self._opened = self._opened, None
        if opened is not None and self._up is not True:
            self._up = True
            self._handle(None, opened)

    def _on_frame(self, frame: FrameId | None, event: ShoeEvent | None) -> bool:
        """Loop: journal the frame; True (acknowledge it) only once it is durable."""
        if self._stopping:
            return False  # never acknowledged: the shoe resends it to the next daemon
        faults.point("shoe_received")
        self._shoe_speaks()  # before the frame: a card is never taken as if the shoe were still away
        durable = self._handle(frame, event)
        if durable:
            faults.point("shoe_committed")
        return durable
