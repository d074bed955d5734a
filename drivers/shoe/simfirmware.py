"""The simulated shoe's firmware: its state, what it does with the host's bytes, and which frame is due next.

:class:`ShoeFirmware` is the inside of :class:`drivers.shoe.sim.SimulatedShoe`
(the public face and the thread that owns the line, in :mod:`drivers.shoe.sim`):
every method here runs with the shoe's lock held, on that thread or on a caller's
that queued work. It behaves as docs/shoe-protocol.md asks of firmware; the rules
it breaks on purpose are the quirks of :mod:`drivers.shoe.simquirks`.
"""

from __future__ import annotations

import contextlib
import heapq
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from controller.cards import Card
from drivers.shoe.codec import Frame, FrameDecoder, FramingError, encode_line
from drivers.shoe.messages import (
    FAULT_CODES,
    Ack,
    CardMsg,
    Dispense,
    Fault,
    Heartbeat,
    Hello,
    Message,
    Nak,
    PayloadError,
    Reset,
    ShoeEmpty,
    StatusRequest,
    decode_payload,
)
from drivers.shoe.simcards import Gate, SimError, fill
from drivers.shoe.simlink import Link
from drivers.shoe.simnoise import LINE_FAULTS, NOISE_KINDS, LineNoise
from drivers.shoe.simquirks import check_quirks
from drivers.shoe.simsender import StopAndWait


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



class ShoeFirmware:
    """The simulated shoe's state and its rules; :class:`~drivers.shoe.sim.SimulatedShoe` drives it."""

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
        if not 0.0 <= noise <= 1.0:
            raise SimError(f"--noise must be 0..1 (a probability), not {noise}")
        if not 1 <= decks <= 255:
            raise SimError(f"--decks must be 1..255, not {decks}")
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
        if not item.bad_crc or len(body) < 5:
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
