"""A simulated card shoe that speaks protocol v1 (or plain lines) on a real pty or loopback TCP.

It exists so the real reader can be tested end to end without hardware, and
so users can test their own integrations: it deals on demand and damages the
line on demand (corrupt or flipped bytes, dropped, duplicated, delayed or cut
frames, an unplug), always from ``random.Random(seed)`` so a failure replays.

It behaves as docs/shoe-protocol.md asks of firmware: one frame in flight
(stop and wait), resent until acknowledged, every 200 ms doubling up to 1 s;
a NAK for the frame in flight resends it at once; a heartbeat after a second
of silence; HELLO with sequence 0 at start and after RESET. One thread owns
the line; the public methods only queue work and wake it, so they are safe
to call from any thread (a test, stdin, the control socket).

This module is the shoe's face and its thread; its firmware (its state, the
host's commands, the frame due next: :mod:`drivers.shoe.simfirmware`), the stop-and-wait sender
(:mod:`drivers.shoe.simsender`), the line's noise (:mod:`drivers.shoe.simnoise`),
the cards and the shuffler's gate (:mod:`drivers.shoe.simcards`) and the pty or
socket (:mod:`drivers.shoe.simlink`) are modules of their own.
"""

from __future__ import annotations

import contextlib
import select
import threading
import time
from pathlib import Path

from controller.cards import Card, CardError, parse_card
from drivers.shoe.messages import (
    FAULT_CODES,
    CardMsg,
    Fault,
    Lid,
    ShoeEmpty,
    ShuffleComplete,
    ShuffleStarted,
)
from drivers.shoe.simcards import SimError, load_deck
from drivers.shoe.simfirmware import ShoeFirmware, SimStats
from drivers.shoe.simlink import Link, PtyLink, SocketLink
from drivers.shoe.simnoise import LINE_FAULTS, NOISE_KINDS
from drivers.shoe.simsender import MAX_RESEND_INTERVAL

__all__ = ["LINE_FAULTS", "MAX_RESEND_INTERVAL", "NOISE_KINDS", "SimError", "SimStats", "SimulatedShoe",
           "load_deck"]


class SimulatedShoe(ShoeFirmware):
    """A shoe on the far end of a pty (:meth:`open_pty`) or a loopback socket (:meth:`listen`)."""

    # --- setting up the line -------------------------------------------------------------------

    def open_pty(self, link: Path | str | None = None) -> str:
        """Create a pty and return the path a reader opens (``link``, kept pointing at it, if given)."""
        return self._start(PtyLink(link))

    def listen(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on loopback TCP; return the ``socket://`` URL a reader opens."""
        return self._start(SocketLink(host, port))

    def _start(self, link: Link) -> str:
        if self._link is not None:
            raise SimError("the simulated shoe is already on a line")
        url = link.open()
        self._link = link
        self._thread = threading.Thread(target=self._loop, name=f"sim-shoe {url}", daemon=True)
        self._thread.start()
        self._log(f"shoe on {url}" + (f" (pty {link.path})" if isinstance(link, PtyLink) else ""))
        return url

    @property
    def url(self) -> str:
        """What a reader opens now (a pty without a link changes after a replug)."""
        if self._link is None:
            raise SimError("not on a line yet: call open_pty() or listen()")
        return self._link.url

    @property
    def client_connected(self) -> bool | None:
        """On TCP, whether a reader is connected; None on a pty, where the master cannot tell."""
        with self._lock:
            return self._link.has_client if isinstance(self._link, SocketLink) else None

    @property
    def closed(self) -> threading.Event:
        return self._closed

    def close(self) -> None:
        """Stop the loop and unplug. Idempotent, and safe from two threads at once."""
        self._closed.set()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with self._teardown:
            if self._torn_down:
                return
            self._torn_down = True
            if self._link is not None:
                self._link.close()
                self._link.release()
            for sock in (self._wake_r, self._wake_w):
                sock.close()

    # --- what the shoe does ----------------------------------------------------------------------

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._shoe)

    def deal(self, card: Card | str | None = None, burn: bool = False) -> Card:
        """Report a card: the next one in the shoe, or ``card`` as given (the shoe is not touched)."""
        with self._lock:
            if burn and self.protocol == "plain":  # refused before a card leaves the shoe, not after
                raise SimError("the plain-line profile cannot report a burn")
            if card is None:
                if not self._shoe:
                    self._send(ShoeEmpty())
                    raise SimError("the shoe is empty (sent SHOE_EMPTY); use 'shuffle'")
                card = self._shoe.popleft()
            elif isinstance(card, str):
                try:
                    card = parse_card(card)
                except CardError as exc:
                    raise SimError(str(exc)) from None
            self._dealt += 1
            self._send(CardMsg(card, burn))
            return card

    def shuffle(self) -> None:
        """Refill the shoe (seeded shuffle, or the deck file's order) and report it."""
        with self._lock:
            if self.protocol == "v1":
                self._send(ShuffleStarted())
            self._refill()
            if self.protocol == "v1":
                self._send(ShuffleComplete(self._decks))

    def lid(self, open_: bool) -> None:
        self._v1_only("a lid")
        with self._lock:
            self._lid_open = open_
            self._send(Lid(open_))

    def empty(self) -> None:
        self._v1_only("an empty shoe")
        with self._lock:
            self._send(ShoeEmpty())

    def fault(self, kind: str | int, text: str = "") -> None:
        """Report a device fault: ``jam``, ``misread``... or a numeric code."""
        self._v1_only("a fault")
        code = kind if isinstance(kind, int) else FAULT_CODES.get(kind)
        if code is None:
            raise SimError(f"unknown fault {kind!r}; known: {', '.join(FAULT_CODES)} or a code 1..255")
        with self._lock:
            self._faulted = True
            self._send(Fault(code, text))

    def inject(self, fault: str, arg: float = 0.0) -> None:
        """Damage the line: one of :data:`LINE_FAULTS` hits the next transmission
        (``delay`` stalls the line ``arg`` ms); ``disconnect`` unplugs for ``arg`` seconds;
        ``jam``/``misread`` report a device fault."""
        if fault in FAULT_CODES:
            self.fault(fault)
            return
        with self._lock:
            if fault == "disconnect":
                self._timer(0.0, "unplug", arg)
            elif fault in LINE_FAULTS:
                self._line.inject(fault, arg)
            else:
                raise SimError(f"unknown fault {fault!r}; known: {', '.join(LINE_FAULTS)}, disconnect, "
                               f"{', '.join(FAULT_CODES)}")
        self._wake()

    def feed(self, kind: str, arg: float = 0.0) -> None:
        """Misfeeds of a dealing shuffler: ``jam`` (the next DISPENSE jams: FAULT, the card stays),
        ``lose`` (the next DISPENSE is never answered), ``empty`` (no card left), ``slow`` (each
        card comes ``arg`` ms after its DISPENSE), ``normal`` (cards come at once again)."""
        with self._lock:
            if kind == "empty":
                self._shoe.clear()
            elif not self._gate.misfeed(kind, arg):
                raise SimError(f"unknown feed {kind!r}; known: jam, lose, empty, slow MS, normal")

    def wait_idle(self, timeout: float) -> bool:
        """Wait until everything queued was sent and (v1) acknowledged; False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._queue and self._sender.in_flight is None
                                       and not self._line.stalled, timeout)

    def _loop(self) -> None:
        while not self._closed.is_set():
            with self._lock:
                now = time.monotonic()
                self._tick(now)
                self._lock.notify_all()
                timeout = self._next_deadline(now)
                link = self._link
                fds = (link.filenos() if link is not None else []) + [self._wake_r.fileno()]
            try:
                ready, _, _ = select.select(fds, [], [], timeout)
            except (OSError, ValueError):  # an fd closed under us by an unplug: look again
                continue
            with self._lock:
                now = time.monotonic()
                for fd in ready:
                    if fd == self._wake_r.fileno():
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(4096)
                    elif link is not None and link is self._link:
                        data = link.read(fd)
                        if data:
                            self._on_host_bytes(data, now)
