"""Protocol v1's sending side in the simulated shoe: one frame in flight, resent until acknowledged.

Split from :mod:`drivers.shoe.sim` along the protocol's own seam
(docs/shoe-protocol.md, "stop and wait"): the shoe decides what to say, this
numbers it, keeps the one unacknowledged frame, resends it every
``ack_timeout`` doubling up to :data:`MAX_RESEND_INTERVAL` (at once on a NAK
for it), and forgets it when acknowledged. The quirks that break exactly these
rules (``fixed_resend``, ``give_up``, ``ignore_nak``, ``no_stuffing``) live here too.
Not thread-safe on its own: the shoe calls it with its lock held.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from drivers.shoe.codec import encode_frame, unstuff
from drivers.shoe.messages import Message

#: Longest wait between resends of an unacknowledged frame.
MAX_RESEND_INTERVAL: Final = 1.0


class SenderStats(Protocol):
    frames: int
    resends: int
    acks: int
    naks: int


@dataclass
class InFlight:
    """The one frame sent and not yet acknowledged."""

    seq: int
    message: Message
    data: bytes
    due: float
    interval: float
    resends: int = 0


class StopAndWait:
    """Numbers, frames and resends the shoe's messages; each method returns the bytes to put on the line."""

    def __init__(self, ack_timeout: float, first_seq: int, quirks: frozenset[str],
                 stats: SenderStats) -> None:
        self.ack_timeout = ack_timeout
        self.first_seq = first_seq
        self.quirks = quirks
        self.stats = stats
        self.next_seq = first_seq
        self.in_flight: InFlight | None = None

    def restart(self) -> Message | None:
        """RESET: numbering starts again at ``first_seq``; returns the unacknowledged message to send again.

        (``reset_forgets``: broken on purpose, it is dropped.)
        """
        flight, self.in_flight, self.next_seq = self.in_flight, None, self.first_seq
        return None if flight is None or "reset_forgets" in self.quirks else flight.message

    def frame(self, message: Message, now: float) -> bytes:
        """The frame for ``message``, now in flight."""
        data = encode_frame(self.next_seq, message)
        if "no_stuffing" in self.quirks:
            data = data[:1] + unstuff(data[1:-1]) + data[-1:]
        self.in_flight = InFlight(self.next_seq, message, data, now + self.ack_timeout, self.ack_timeout)
        self.next_seq = (self.next_seq + 1) & 0xFF
        self.stats.frames += 1
        return data

    def ack(self, seq: int) -> None:
        """ACK ``seq``: the frame in flight, if it is that one, is done."""
        if self.in_flight is not None and seq == self.in_flight.seq:
            self.stats.acks += 1
            self.in_flight = None

    def nak(self, seq: int, now: float) -> bytes | None:
        """NAK ``seq``: the bytes to resend at once (the frame in flight), or None.

        A NAK of the sequence after the one in flight acknowledges it (NAK n acknowledges all before n).
        """
        if "ignore_nak" in self.quirks:
            return None
        self.stats.naks += 1
        flight = self.in_flight
        if flight is not None and seq == flight.seq:
            return self._resend(flight, now, backoff=False)
        if flight is not None and seq == (flight.seq + 1) & 0xFF:
            self.in_flight = None
        return None

    def due(self, now: float) -> bytes | None:
        """The bytes to resend now because the frame in flight timed out (the wait doubles), or None."""
        flight = self.in_flight
        if flight is None or now < flight.due:
            return None
        return self._resend(flight, now, backoff=True)

    def _resend(self, flight: InFlight, now: float, backoff: bool) -> bytes | None:
        self.stats.resends += 1
        flight.resends += 1
        if "give_up" in self.quirks and flight.resends > 3:
            self.in_flight = None  # broken on purpose: a frame never acknowledged is dropped
            return None
        if backoff and "fixed_resend" not in self.quirks:
            flight.interval = min(flight.interval * 2, MAX_RESEND_INTERVAL)
        flight.due = now + flight.interval
        return flight.data
