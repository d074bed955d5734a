"""Thin transport: a serial port (any pyserial URL) read on an event loop, ACKs, duplicates, reconnects.

This module knows the port and the delivery rules of protocol v1 (ACK what
you accepted, deliver a sequence number once, ask for a resend with NAK when
bytes were damaged) but nothing of how a frame is laid out: that is
:mod:`drivers.shoe.codec`, fed with whatever bytes the port returned.

A shoe gets unplugged, a USB hub browns out, a pty's other end goes away, a
firmware hangs while the port stays open. All of these end a *session*: the
port is closed, ``disconnected`` is reported with the reason, and the port is
reopened after a backoff that doubles up to the profile's maximum. The last
accepted sequence number is kept across sessions, so the frame the shoe
resends after a replug is recognised as a duplicate if it was already
delivered, and nothing is lost or doubled.

One thread: the reader runs on an asyncio loop, the daemon's own
(:meth:`ShoeReader.start_on`) or, for a program without one, a loop on a thread
of the reader's (:meth:`ShoeReader.start`). The loop watches the port's file
descriptor (``add_reader``), so the bytes are read, decoded, handed to the
consumer (which journals a card) and the ACK written on that one thread, with
no hop between threads on the card's path. Only a pyserial URL handler that
has no file descriptor (``rfc2217://``, ``loop://``) gets a pump thread that
reads and posts the bytes to the loop; all the rest still runs on the loop.

Exactly once across a host restart: a frame is acknowledged only once its
consumer says it is safe (``on_frame`` returned True: the daemon has
journaled it), never when the consumer refused it, raised, or the reader is
stopping. The consumer records each accepted frame's :class:`FrameId` (a
session per HELLO, and the sequence number), and a restarted reader is
given the last one (``resume``): the shoe's resend of that frame is then
acknowledged and not delivered again.

Any exception in the reader (opening, reading, writing, a bug) ends the
session like an unplugged shoe: ``disconnected`` with the cause, logged once
per outage (WARNING for a port that cannot be opened, ERROR for anything
else), and the port is retried with the backoff. The reader never dies while
it is running.

:class:`ShoeReader` is this module's (starting, stopping, commands to the
shoe); it stands on :mod:`drivers.shoe.reconnect` (the port, its sessions and
the backoff) and :mod:`drivers.shoe.delivery` (frames delivered once, ACK and
NAK), which stand on :mod:`drivers.shoe.linehealth` (error bursts, device flags).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable

import serial  # type: ignore[import-untyped]  # no stubs in the dev deps (types-pyserial)

from drivers.shoe.codec import Frame, UndecodableFrame
from drivers.shoe.delivery import RESET_CONFIRM_WAIT, FrameHandler, FrameId, ShoeError, new_session
from drivers.shoe.events import ShoeEvent
from drivers.shoe.linehealth import DeviceFlags, ErrorBursts
from drivers.shoe.messages import CardMsg, Dispense, Heartbeat, Message, Reset, StatusRequest
from drivers.shoe.profile import ShoeProfile
from drivers.shoe.reconnect import SessionLoop

__all__ = ["FrameHandler", "FrameId", "ShoeError", "ShoeReader", "new_session"]


class ShoeReader(SessionLoop):
    """Reads a shoe described by a profile and calls ``on_event`` (on the reader's loop) per event.

    ``on_event`` must be quick and must not block on the shoe: it runs on the
    reader's loop, and a frame is acknowledged only after it returns, so the
    shoe does not send the next card until the previous one was handed over.
    An exception from it is logged and the frame is not acknowledged (the shoe
    sends it again). ``on_frame``, if given, takes the shoe's frames instead
    (``on_event`` then gets only the line's statuses) and decides whether each
    is acknowledged; ``resume`` is the last frame it accepted in an earlier
    run; ``on_acked`` is called after each ACK went out (fault injection).
    """

    def __init__(
        self,
        profile: ShoeProfile,
        on_event: Callable[[ShoeEvent], None],
        *,
        on_frame: FrameHandler | None = None,
        resume: FrameId | None = None,
        resume_card: CardMsg | None = None,
        resume_no_card: bool = False,
        on_acked: Callable[[FrameId], None] | None = None,
    ) -> None:
        self.profile = profile
        self._on_event = on_event
        self._on_frame = on_frame
        self._on_acked = on_acked
        #: The session of the frames now arriving: the journal's on a resume, new at each HELLO.
        self._session = resume.session if resume is not None else new_session()
        #: True until the first frame after a resume: only an exact resend of ``resume`` is old.
        self._resuming = resume is not None
        self._lock = threading.Lock()
        self._port: serial.SerialBase | None = None
        self._stopping = threading.Event()
        #: Who runs the sessions: a thread of its own (:meth:`start`) or a task on the daemon's loop.
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Set on the loop when a stop is asked for (ends the backoff); the running session's end.
        self._stop_event: asyncio.Event | None = None
        self._ended: asyncio.Future[None] | None = None
        #: Sequence of the last frame delivered; kept across reconnects for duplicate suppression.
        self._last_seq: int | None = resume.seq if resume is not None else None
        #: The last frame delivered as it came (None: none yet, or only the journal's SEQ after a resume):
        #: a frame of its SEQ is a resend only with the same message (docs/shoe-protocol.md). After a resume
        #: whose frame the journal holds as a card (``resume_card``), that card: another under its SEQ is no
        #: resend (it was acknowledged as one and lost unseen, the halt with it).
        self._last_frame: Frame | UndecodableFrame | None = (
            Frame(resume.seq, resume_card) if resume is not None and resume_card is not None else None)
        #: After a resume whose frame the journal holds as no card (a FAULT's, a lid's row): a card under its
        #: SEQ is none of its resends (it was acknowledged as one and lost unseen while the shoe was jammed).
        self._resume_no_card = resume is not None and resume_no_card
        #: SEQ of the next host command; restarts at 0 with every session (docs/shoe-protocol.md).
        self._cmd_seq = 0
        #: When a RESET was asked for or went out, until the HELLO that answers it (None: none).
        self._reset_at: float | None = None
        #: Whether that RESET is on the line yet (before it, the last card's resend is acknowledged).
        self._reset_written = False
        #: The newest frame acknowledged is a card and no later frame has shown that the shoe got the
        #: ACK. After a resume the journal's last frame may be such a card: assume it is.
        self._unconfirmed_card = resume is not None
        #: The SEQs of the cards held back since the RESET was asked for (each comes again after the
        #: HELLO: a dealing shuffler's DISPENSE it answered is not void, see :attr:`held_a_card`).
        self._held_cards: set[int] = set()
        #: A HEARTBEAT was held back by a RESET: the shoe's first frame after its HELLO is that one again,
        #: with the flags it had before the RESET (host rule 9): they are not taken (a review, 2026-12-07:
        #: a stale faulted flag faulted the shoe again right after the HELLO had cleared it).
        self._stale_beat = False
        #: Makes the reader's hold check and card marking one step against a RESET's.
        self._reset_lock = threading.Lock()
        #: The shoe's status from its latest HEARTBEAT (answer to :meth:`request_status`).
        self.last_heartbeat: Heartbeat | None = None
        #: Framing errors and NAKs, reported and sent at a bounded rate.
        self.bursts = ErrorBursts()
        #: What the shoe has told us of its lid, contents and faults (HEARTBEAT flags add to it).
        self.flags = DeviceFlags()
        #: Frames of unknown shoe-to-host TYPEs, acknowledged and ignored, counted per type.
        self.unknown_types: dict[int, int] = {}


    # --- public API --------------------------------------------------------------------------

    def start(self) -> None:
        """Run the reader on a thread of its own (with its own event loop) until :meth:`stop`.

        For a program without an event loop (``croupier sim watch``, the tests of the driver);
        the daemon runs it on its loop instead (:meth:`start_on`). Both run the same code.
        """
        self._claim()
        name = f"shoe-reader {self.profile.port}"
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), name=name, daemon=True)
        self._thread.start()

    def start_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run the reader on ``loop`` (call it on the loop's thread): every callback runs there, and
        :meth:`aclose` stops it. No thread of its own for a port with a file descriptor."""
        self._claim()
        self._task = loop.create_task(self._serve(), name=f"shoe-reader {self.profile.port}")

    def stop(self) -> None:
        """Close the port and join the reader thread. Idempotent; a no-op before :meth:`start`."""
        if self._thread is None:
            return
        self._stopping.set()
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already finished
                loop.call_soon_threadsafe(self._wake)
        if self._thread is not threading.current_thread():
            self._thread.join()

    async def aclose(self) -> None:
        """Stop a reader started with :meth:`start_on` (on its loop): the port is closed on return."""
        self._stopping.set()
        if self._task is None:
            return
        self._wake()
        await self._task

    def _claim(self) -> None:
        if self._thread is not None or self._task is not None:
            raise RuntimeError("ShoeReader started twice (a stopped reader cannot restart)")

    def request_card(self) -> None:
        """Ask a dealing shuffler to dispense the next card. No-op on the plain profile.

        Not retried: a repeated request could dispense two cards, so the
        caller decides what to do if no card comes. :class:`ShoeError` if the
        shoe is not connected.
        """
        if self.profile.protocol == "v1":
            self._send_command(Dispense())

    def request_status(self) -> None:
        """Ask the shoe for a HEARTBEAT now; its status lands in :attr:`last_heartbeat`."""
        if self.profile.protocol == "v1":
            self._send_command(StatusRequest())

    def reset(self, wait: float = RESET_CONFIRM_WAIT) -> None:
        """Ask the shoe to restart its protocol state (it answers with HELLO, sequence 0); until that
        HELLO, its other frames are held back (see ``FrameReader._held_by_reset``).

        A RESET makes the shoe send again, under a new number, every frame it holds unacknowledged,
        so it must not reach a shoe still holding a card this host delivered (the card's ACK lost
        on the line): that card would be dealt twice. :meth:`prepare_reset` holds the shoe's new
        frames back and waits (at most ``wait`` s) until the shoe shows that it got the last card's
        ACK; on an event loop that runs the reader, call it in a worker thread first and this with
        ``wait=0`` (it never blocks then). The RESET is marked as sent, in one step with the last
        check, before it is written: the reader thread may take the answering HELLO before this
        thread runs again. A shoe of the plain profile has no RESET: refused (ShoeError), never
        reported as sent."""
        self.prepare_reset(wait)
        with self._reset_lock:
            if self._unconfirmed_card:  # a power-cycle HELLO lifted the hold and a card came since
                self._reset_at, self._reset_written = None, False
                raise self._unconfirmed(wait)
            self._reset_at, self._reset_written = time.monotonic(), True
        try:
            self._send_command(Reset())
        except ShoeError:
            self.cancel_reset()
            raise

    def prepare_reset(self, wait: float = RESET_CONFIRM_WAIT) -> None:
        """Hold the shoe's new cards back and wait (at most ``wait`` s) until it holds no card taken here.

        Blocks (polling every 10 ms); the daemon runs it in a worker thread before :meth:`reset`.
        Proof that the shoe got the ACK of the last card is any later frame from it (stop and wait:
        it sends the next frame only then; an idle shoe sends a HEARTBEAT within 1 s); a resend of
        that card is acknowledged again meanwhile. ShoeError, and nothing held, if no proof comes:
        the RESET is not sent.
        """
        if self.profile.protocol != "v1":
            raise ShoeError(f"the shoe on {self.profile.port} speaks the plain profile: it has no RESET")
        with self._reset_lock:
            if self._reset_at is None or self._reset_written:
                self._reset_at, self._reset_written = time.monotonic(), False
                self._held_cards = set()
        deadline = time.monotonic() + wait
        while True:
            with self._reset_lock:
                if not self._unconfirmed_card:
                    return
            if time.monotonic() >= deadline or not self.connected:
                self.cancel_reset()
                raise self._unconfirmed(wait)
            time.sleep(0.01)

    def _unconfirmed(self, wait: float) -> ShoeError:
        return ShoeError(
            f"RESET not sent: for {wait:g} s the shoe on {self.profile.port} has not shown that it "
            f"received the ACK of the last card (frame {self._last_seq}); a RESET now could make it "
            f"send that card again as a new one. Try again; a shoe that stays silent is "
            f"disconnected or hung")

    def cancel_reset(self) -> None:
        """Take the shoe's frames again: a RESET prepared was not sent after all."""
        with self._reset_lock:
            self._reset_at, self._reset_written = None, False

    @property
    def held_a_card(self) -> bool:
        """Whether a card was held back since the RESET was asked for: the shoe sends it again after
        its HELLO, so a dealing shuffler's DISPENSE it answered is answered after all."""
        return bool(self._held_cards)

    @property
    def connected(self) -> bool:
        with self._lock:
            return self._port is not None

    def _send_command(self, message: Message) -> None:
        try:
            self._write(self._command_frame(message))
        except (OSError, serial.SerialException) as exc:
            raise ShoeError(f"cannot send {type(message).__name__} to {self.profile.port}: {exc}") from exc
