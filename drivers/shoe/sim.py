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
from typing import Final, Literal

from controller.cards import DECK, Card, CardError, parse_card
from drivers.shoe.codec import Frame, FrameDecoder, FramingError, encode_frame, encode_line, unstuff
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
from drivers.shoe.simlink import Link, PtyLink, SocketLink
from drivers.shoe.simquirks import check_quirks

#: Faults that damage the next transmission (``delay`` takes milliseconds).
LINE_FAULTS: Final = ("corrupt", "bitflip", "drop", "dup", "truncate", "delay")
#: What random noise picks from by default (``delay`` stalls the line, so it is opt-in).
NOISE_KINDS: Final = ("corrupt", "bitflip", "drop", "dup", "truncate")
#: Longest wait between resends of an unacknowledged frame.
MAX_RESEND_INTERVAL: Final = 1.0


class SimError(ValueError):
    """A request the simulated shoe cannot do (empty shoe, no such message on the plain profile...)."""


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


@dataclass
class _InFlight:
    seq: int
    message: Message
    data: bytes
    due: float
    interval: float
    resends: int = 0


def load_deck(path: Path | str) -> list[Card]:
    """Cards in shoe order from a text file: whitespace separated, ``#`` starts a comment."""
    cards: list[Card] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        for text in line.split("#", 1)[0].split():
            try:
                cards.append(parse_card(text))
            except CardError as exc:
                raise SimError(f"{path}:{number}: {exc}") from None
    if not cards:
        raise SimError(f"{path}: no cards in the file")
    return cards


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
        self.feed_delay = feed_delay
        self._feed_faults: deque[str] = deque()
        self.noise_kinds = tuple(noise_kinds)
        if unknown := set(self.noise_kinds) - set(LINE_FAULTS):
            raise SimError(f"unknown noise kinds {sorted(unknown)}; known: {', '.join(LINE_FAULTS)}")
        if not 0.0 <= noise <= 1.0 or not 1 <= decks <= 255:
            raise SimError(f"noise must be 0..1 and decks 1..255, got {noise} and {decks}")
        self.protocol = protocol
        self.noise = noise
        self.ack_timeout = ack_timeout
        self.heartbeat_interval = heartbeat_interval * (2.2 if "slow_heartbeat" in self.quirks else 1)
        self.stats = SimStats()
        self._rng = random.Random(seed)
        self._fixed_deck = list(deck) if deck is not None else None
        self._decks = decks
        self._shoe: deque[Card] = deque()
        self._hello = Hello(model, firmware, serial, protocol=2 if "hello_version_2" in self.quirks else 1)
        self._first_seq = 1 if "hello_seq_1" in self.quirks else 0
        self._on_log = on_log
        self._lock = threading.Condition()
        self._queue: deque[Message] = deque()
        self._in_flight: _InFlight | None = None
        self._next_seq = self._first_seq
        self._line_faults: deque[tuple[str, float]] = deque()
        self._held: list[bytes] = []  # output stalled by a "delay" fault, in order
        self._hold_until = 0.0
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
        """Stop the loop and unplug. Idempotent."""
        self._closed.set()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
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
                self._line_faults.append((fault, arg))
            else:
                raise SimError(f"unknown fault {fault!r}; known: {', '.join(LINE_FAULTS)}, disconnect, "
                               f"{', '.join(FAULT_CODES)}")
        self._wake()

    def feed(self, kind: str, arg: float = 0.0) -> None:
        """Misfeeds of a dealing shuffler: ``jam`` (the next DISPENSE jams: FAULT, the card stays),
        ``lose`` (the next DISPENSE is never answered), ``empty`` (no card left), ``slow`` (each
        card comes ``arg`` ms after its DISPENSE), ``normal`` (cards come at once again)."""
        with self._lock:
            if kind in ("jam", "lose"):
                self._feed_faults.append(kind)
            elif kind == "empty":
                self._shoe.clear()
            elif kind == "slow":
                self.feed_delay = arg / 1000.0
            elif kind == "normal":
                self.feed_delay = 0.0
                self._feed_faults.clear()
            else:
                raise SimError(f"unknown feed {kind!r}; known: jam, lose, empty, slow MS, normal")

    def wait_idle(self, timeout: float) -> bool:
        """Wait until everything queued was sent and (v1) acknowledged; False on timeout."""
        with self._lock:
            return self._lock.wait_for(
                lambda: not self._queue and self._in_flight is None and not self._held, timeout)

    # --- internals (the lock is held) ----------------------------------------------------------------

    def _v1_only(self, what: str) -> None:
        if self.protocol != "v1":
            raise SimError(f"the plain-line profile has no way to report {what}")

    def _refill(self) -> None:
        if self._fixed_deck is not None:
            cards = list(self._fixed_deck)
        else:
            cards = list(DECK) * self._decks
            self._rng.shuffle(cards)
        self._shoe = deque(cards)
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
        """Put bytes on the line, through an injected or random fault if one is due."""
        self._last_tx = now
        if self._line_faults:
            kind, arg = self._line_faults.popleft()
        elif self.noise and self._rng.random() < self.noise:
            kind, arg = self._rng.choice(self.noise_kinds), 100.0
        else:
            kind, arg = "", 0.0
        if kind:
            self.stats.faults[kind] = self.stats.faults.get(kind, 0) + 1
        if kind == "corrupt":
            pos = self._rng.randrange(len(data))
            data = data[:pos] + bytes(((data[pos] + self._rng.randrange(1, 256)) & 0xFF,)) + data[pos + 1:]
        elif kind == "bitflip":
            pos = self._rng.randrange(len(data))
            data = data[:pos] + bytes((data[pos] ^ (1 << self._rng.randrange(8)),)) + data[pos + 1:]
        elif kind == "drop":
            return
        elif kind == "dup":
            data = data + data
        elif kind == "truncate":
            data = data[:self._rng.randrange(1, len(data))] if len(data) > 1 else b""
        elif kind == "delay":
            # A serial line is FIFO: a stall delays everything after it too, never reorders.
            self._hold_until = max(self._hold_until, now + arg / 1000.0)
        if self._held or now < self._hold_until:
            self._held.append(data)
        elif self._link is not None:
            self._link.write(data)

    def _on_host_bytes(self, data: bytes, now: float) -> None:
        for decoded in self._decoder.feed(data):
            item = decoded if isinstance(decoded, Frame) else self._bad_crc_taken(decoded)
            if item is None:
                continue  # damaged host frame: the host will NAK or we will resend on timeout
            msg, seq, flight = item.message, item.seq, self._in_flight
            if isinstance(msg, Ack):
                if flight is not None and seq == flight.seq:
                    self.stats.acks += 1
                    self._in_flight = None
            elif isinstance(msg, Nak) and "ignore_nak" not in self.quirks:
                self.stats.naks += 1
                if flight is not None and seq == flight.seq:
                    self._resend(flight, now, backoff=False)
                elif flight is not None and seq == (flight.seq + 1) & 0xFF:
                    self._in_flight = None  # NAK n acknowledges everything before n
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
            forget = self._in_flight is None or "reset_forgets" in self.quirks
            pending = [] if forget or self._in_flight is None else [self._in_flight.message]
            self._queue = deque([self._hello, *pending, *self._queue])
            self._in_flight, self._next_seq = None, self._first_seq
            self._faulted = self._faulted and "fault_stays" in self.quirks
            # A card still on its way is void: the host asks again after the HELLO.
            self._timers = [t for t in self._timers if t[2] != "feed"]
            heapq.heapify(self._timers)

    def _dispense(self) -> None:
        self.stats.dispense_requests += 1
        if self.mode == "dealing_shuffler":
            if self._faulted:
                self._log("DISPENSE ignored: jammed until RESET")
                return
            fault = self._feed_faults.popleft() if self._feed_faults else ""
            if fault == "jam":
                self._faulted = True
                self._queue.append(Fault(FAULT_CODES["jam"], "card jammed at the gate"))
                return
            if fault == "lose":
                self._log("DISPENSE lost (feed lose)")
                return
            if self.feed_delay > 0 and self._shoe:
                self._timer(self.feed_delay, "feed")
                return
        self._feed_card()

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

    def _resend(self, flight: _InFlight, now: float, backoff: bool) -> None:
        self.stats.resends += 1
        flight.resends += 1
        if "give_up" in self.quirks and flight.resends > 3:
            self._in_flight = None  # broken on purpose: a frame never acknowledged is dropped
            return
        if backoff and "fixed_resend" not in self.quirks:
            flight.interval = min(flight.interval * 2, MAX_RESEND_INTERVAL)
        flight.due = now + flight.interval
        self._transmit(flight.data, now)

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
        if self._held and now >= self._hold_until:
            held, self._held = self._held, []
            if self._link is not None:
                self._link.write(b"".join(held))
        if self.protocol == "plain":
            while self._queue:
                msg = self._queue.popleft()
                if isinstance(msg, CardMsg):
                    self.stats.frames += 1
                    self._transmit(encode_line(msg), now)
            return
        flight = self._in_flight
        if flight is not None and now >= flight.due:
            self._resend(flight, now, backoff=True)
        if self._in_flight is None and not self._queue and now - self._last_tx >= self.heartbeat_interval:
            self._queue.append(self._heartbeat())
        if self._in_flight is None and self._queue:
            message = self._queue.popleft()
            data = encode_frame(self._next_seq, message)
            if "no_stuffing" in self.quirks:
                data = data[:1] + unstuff(data[1:-1]) + data[-1:]
            due = now + self.ack_timeout
            self._in_flight = _InFlight(self._next_seq, message, data, due, self.ack_timeout)
            self._next_seq = (self._next_seq + 1) & 0xFF
            self.stats.frames += 1
            self._transmit(data, now)

    def _next_deadline(self, now: float) -> float:
        deadlines = [now + self.heartbeat_interval]
        if self._in_flight is not None:
            deadlines.append(self._in_flight.due)
        if self._held:
            deadlines.append(self._hold_until)
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
