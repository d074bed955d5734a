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

This module is the shoe's face and its thread; the stop-and-wait sender
(:mod:`drivers.shoe.simsender`), the line's noise (:mod:`drivers.shoe.simnoise`),
the cards and the shuffler's gate (:mod:`drivers.shoe.simcards`) and the pty or
socket (:mod:`drivers.shoe.simlink`) are modules of their own.
"""

from __future__ import annotations

import contextlib
import heapq
import random
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from controller.cards import Card, CardError, parse_card
from drivers.shoe.codec import Frame, FrameDecoder, FramingError, encode_line
from drivers.shoe.messages import (
    FAULT_CODES,
    Ack,
    CardMsg,
    Dispense,
    Fault,
    Heartbeat,
    Hello,
    Lid,
    Message,
    Nak,
    PayloadError,
    Reset,
    ShoeEmpty,
    ShuffleComplete,
    ShuffleStarted,
    StatusRequest,
    decode_payload,
)
from drivers.shoe.simcards import Gate, SimError, fill, load_deck
from drivers.shoe.simlink import Link, PtyLink, SocketLink
from drivers.shoe.simnoise import LINE_FAULTS, NOISE_KINDS, LineNoise
from drivers.shoe.simquirks import check_quirks
from drivers.shoe.simsender import MAX_RESEND_INTERVAL, StopAndWait

__all__ = ["LINE_FAULTS", "MAX_RESEND_INTERVAL", "NOISE_KINDS", "SimError", "SimStats", "SimulatedShoe",
           "load_deck"]


@dataclass
class SimStats:
    """Counters, so a test can check that the faults it asked for really happened."""

    frames: int = 0
    resends: int = 0
    acks: int = 0
    naks: int = 0
    commands: int = 0
    #: DISPENSE commands received, and cards dealt in answer to them.
    dispense_requests: int = 0
    dispensed: int = 0
    faults: dict[str, int] = field(default_factory=dict)


class SimulatedShoe:
    """A shoe on the far end of a pty (:meth:`open_pty`) or a loopback socket (:meth:`listen`)."""

    def __init__(
        self,
        protocol: Literal["v1", "plain"] = "v1",
        *,
        seed: int = 0,
        deck: Sequence[Card] | None = None,
        decks: int = 1,
        ack_timeout: float = 0.2,
        heartbeat_interval: float = 1.0,
        noise: float = 0.0,
        noise_kinds: Iterable[str] = NOISE_KINDS,
        model: str = "Croupier SimShoe",
        firmware: str = "1.0.0",
        serial: str = "SIM-0001",
        on_log: Callable[[str], None] | None = None,
        mode: Literal["reader", "dealing_shuffler"] = "reader",
        feed_delay: float = 0.0,
        misbehave: Iterable[str] = (),
    ) -> None:
        #: Rules broken on purpose (drivers/shoe/simquirks.py), for the conformance kit's tests.
        self.quirks = frozenset(misbehave)
        try:
            check_quirks(set(self.quirks))
        except ValueError as exc:
            raise SimError(str(exc)) from None
        if protocol not in ("v1", "plain"):
            raise SimError(f"protocol must be 'v1' or 'plain', not {protocol!r}")
        if mode not in ("reader", "dealing_shuffler") or (mode == "dealing_shuffler" and protocol != "v1"):
            raise SimError(f"mode must be 'reader', or 'dealing_shuffler' on v1; got {mode!r} on {protocol}")
        #: ``dealing_shuffler``: a card comes out only on DISPENSE, ``feed_delay`` seconds later.
        self.mode = mode
        self._gate = Gate(feed_delay)
        self.noise_kinds = tuple(noise_kinds)
        if unknown := set(self.noise_kinds) - set(LINE_FAULTS):
            raise SimError(f"unknown noise kinds {sorted(unknown)}; known: {', '.join(LINE_FAULTS)}")
        if not 0.0 <= noise <= 1.0 or not 1 <= decks <= 255:
            raise SimError(f"noise must be 0..1 and decks 1..255, got {noise} and {decks}")
        self.protocol = protocol
        self.heartbeat_interval = heartbeat_interval * (2.2 if "slow_heartbeat" in self.quirks else 1)
        self.stats = SimStats()
        self._rng = random.Random(seed)
        self._line = LineNoise(self._rng, noise, self.noise_kinds, self.stats.faults)
        self._fixed_deck = list(deck) if deck is not None else None
        self._decks = decks
        self._shoe: deque[Card] = deque()
        self._hello = Hello(model, firmware, serial, protocol=2 if "hello_version_2" in self.quirks else 1)
        first_seq = 1 if "hello_seq_1" in self.quirks else 0
        self._sender = StopAndWait(ack_timeout, first_seq, self.quirks, self.stats)
        self._on_log = on_log
        self._lock = threading.Condition()
        self._queue: deque[Message] = deque()
        self._timers: list[tuple[float, int, str, float]] = []  # (when, tiebreak, action, arg)
        self._tiebreak = 0
        self._last_tx = 0.0
        self._lid_open = self._faulted = False
        self._dealt = 0
        self._link: Link | None = None
        self._decoder = FrameDecoder()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)  # a full wake buffer means "already awake", never a wait
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        #: close() may run on two threads at once ('quit' on stdin, and the CLI's own exit): the link's
        #: fds and its claim are let go by exactly one of them.
        self._teardown = threading.Lock()
        self._torn_down = False
        self._refill()
        if protocol == "v1":
            self._queue.append(self._hello)

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
            if burn and self.protocol == "plain":
                raise SimError("the plain-line profile cannot report a burn")
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

    # --- internals (the lock is held) ----------------------------------------------------------------

    def _v1_only(self, what: str) -> None:
        if self.protocol != "v1":
            raise SimError(f"the plain-line profile has no way to report {what}")

    def _refill(self) -> None:
        self._shoe = fill(self._fixed_deck, self._decks, self._rng)
        self._dealt = 0

    def _send(self, message: Message) -> None:
        self._queue.append(message)
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # already awake (buffer full), or closing
            self._wake_w.send(b"x")

    def _timer(self, delay: float, action: str, arg: float = 0.0) -> None:
        self._tiebreak += 1
        heapq.heappush(self._timers, (time.monotonic() + delay, self._tiebreak, action, arg))

    def _log(self, text: str) -> None:
        if self._on_log is not None:
            self._on_log(text)

    def _transmit(self, data: bytes, now: float) -> None:
        """Put bytes on the line, through the line's noise (:mod:`drivers.shoe.simnoise`)."""
        if data:
            self._last_tx = now
            self._line.send(data, now, self._write)

    def _write(self, data: bytes) -> None:
        if self._link is not None:
            self._link.write(data)

    def _on_host_bytes(self, data: bytes, now: float) -> None:
        for decoded in self._decoder.feed(data):
            item = decoded if isinstance(decoded, Frame) else self._bad_crc_taken(decoded)
            if item is None:
                continue  # damaged host frame: the host will NAK or we will resend on timeout
            msg, seq = item.message, item.seq
            if isinstance(msg, Ack):
                self._sender.ack(seq)
            elif isinstance(msg, Nak):
                self._transmit(self._sender.nak(seq, now) or b"", now)
            elif isinstance(msg, StatusRequest | Dispense | Reset):
                self.stats.commands += 1
                self._command(msg)

    def _command(self, msg: Message) -> None:
        if isinstance(msg, StatusRequest):
            if "no_status" not in self.quirks:
                self._queue.append(self._heartbeat())
        elif isinstance(msg, Dispense):
            self._dispense()
        else:  # Reset: numbering restarts at HELLO 0; anything unacknowledged is sent again after it.
            pending = self._sender.restart()
            self._queue = deque([self._hello, *([] if pending is None else [pending]), *self._queue])
            self._faulted = self._faulted and "fault_stays" in self.quirks
            # A card still on its way is void: the host asks again after the HELLO.
            self._timers = [t for t in self._timers if t[2] != "feed"]
            heapq.heapify(self._timers)

    def _dispense(self) -> None:
        self.stats.dispense_requests += 1
        shuffler = self.mode == "dealing_shuffler"
        outcome = self._gate.dispense(self._faulted, bool(self._shoe)) if shuffler else "now"
        if outcome == "jam":
            self._faulted = True
            self._queue.append(Fault(FAULT_CODES["jam"], "card jammed at the gate"))
        elif outcome == "later":
            self._timer(self._gate.delay, "feed")
        elif outcome == "now":
            self._feed_card()
        else:
            jammed = outcome == "jammed"
            self._log("DISPENSE ignored: jammed until RESET" if jammed else "DISPENSE lost (feed lose)")

    def _heartbeat(self) -> Heartbeat:
        lid = self._lid_open and "no_lid_flag" not in self.quirks
        return Heartbeat(lid, not self._shoe, self._faulted, self._dealt & 0xFFFF)

    def _bad_crc_taken(self, item: object) -> Frame | None:
        """The ``accept_bad_crc`` quirk: a host frame failing only its CRC is taken as good."""
        if "accept_bad_crc" not in self.quirks or not isinstance(item, FramingError):
            return None
        body = item.raw
        if "CRC mismatch" not in item.reason or len(body) < 5:
            return None
        try:
            return Frame(body[0], decode_payload(body[1], body[3:-2]))
        except PayloadError:
            return None

    def _feed_card(self) -> None:
        if "double_dispense" in self.quirks and self._shoe:
            self._queue.append(CardMsg(self._shoe.popleft()))
        if self._shoe:
            self._dealt += 1
            self.stats.dispensed += 1
            self._queue.append(CardMsg(self._shoe.popleft()))
        else:
            self._queue.append(ShoeEmpty())

    def _tick(self, now: float) -> None:
        while self._timers and self._timers[0][0] <= now:
            _, _, action, arg = heapq.heappop(self._timers)
            if action == "unplug" and self._link is not None and self._link.is_open:
                self._link.close()
                self._decoder = FrameDecoder()
                self._log(f"unplugged for {arg:g} s")
                self._timer(arg, "replug")
            elif action == "replug" and self._link is not None and not self._link.is_open:
                self._log(f"plugged in again on {self._link.open()}")
            elif action == "feed":
                self._feed_card()
        self._line.flush(now, self._write)
        if self.protocol == "plain":
            while self._queue:
                msg = self._queue.popleft()
                if isinstance(msg, CardMsg):
                    self.stats.frames += 1
                    self._transmit(encode_line(msg), now)
            return
        sender = self._sender
        self._transmit(sender.due(now) or b"", now)
        if sender.in_flight is None and not self._queue and now - self._last_tx >= self.heartbeat_interval:
            self._queue.append(self._heartbeat())
        if sender.in_flight is None and self._queue:
            self._transmit(sender.frame(self._queue.popleft(), now), now)

    def _next_deadline(self, now: float) -> float:
        deadlines = [now + self.heartbeat_interval]
        if self._sender.in_flight is not None:
            deadlines.append(self._sender.in_flight.due)
        if (stall_ends := self._line.stall_ends) is not None:
            deadlines.append(stall_ends)
        if self._timers:
            deadlines.append(self._timers[0][0])
        return max(0.0, min(deadlines) - now)

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
