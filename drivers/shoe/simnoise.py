"""What the simulated line does to the bytes on it: damage asked for, random noise, and stalls.

Split from :mod:`drivers.shoe.sim` because it is the one part of the simulated
shoe that is about the wire rather than the shoe: the shoe decides what to
send, this decides what arrives. Every random choice comes from the shoe's
``random.Random(seed)``, so a failure replays. Not thread-safe on its own:
the shoe calls it with its lock held.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Final

#: Faults that damage the next transmission (``delay`` takes milliseconds).
LINE_FAULTS: Final = ("corrupt", "bitflip", "drop", "dup", "truncate", "delay")
#: What random noise picks from by default (``delay`` stalls the line, so it is opt-in).
NOISE_KINDS: Final = ("corrupt", "bitflip", "drop", "dup", "truncate")

Write = Callable[[bytes], None]


class LineNoise:
    """Damage for the next transmissions (injected first, then random at ``level``), and the FIFO stall."""

    def __init__(self, rng: random.Random, level: float, kinds: tuple[str, ...],
                 counts: dict[str, int]) -> None:
        self.rng = rng
        #: Chance (0..1) that a transmission with no injected fault gets a random one of ``kinds``.
        self.level = level
        self.kinds = kinds
        #: How often each kind hit (the shoe's ``stats.faults``).
        self.counts = counts
        self._injected: deque[tuple[str, float]] = deque()
        self._held: list[bytes] = []  # output stalled by a "delay" fault, in order
        self._hold_until = 0.0

    def inject(self, kind: str, arg: float = 0.0) -> None:
        """``kind`` (one of :data:`LINE_FAULTS`) hits the next transmission not already claimed."""
        self._injected.append((kind, arg))

    @property
    def stalled(self) -> bool:
        """Whether bytes are waiting for a stall to end."""
        return bool(self._held)

    @property
    def stall_ends(self) -> float | None:
        """When the bytes held by a stall go out (monotonic time), if any are held."""
        return self._hold_until if self._held else None

    def send(self, data: bytes, now: float, write: Write) -> None:
        """Put bytes on the line with ``write``, through an injected or random fault if one is due."""
        if self._injected:
            kind, arg = self._injected.popleft()
        elif self.level and self.rng.random() < self.level:
            kind, arg = self.rng.choice(self.kinds), 100.0
        else:
            kind, arg = "", 0.0
        if kind:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        rng = self.rng
        if kind == "corrupt":
            pos = rng.randrange(len(data))
            data = data[:pos] + bytes(((data[pos] + rng.randrange(1, 256)) & 0xFF,)) + data[pos + 1:]
        elif kind == "bitflip":
            pos = rng.randrange(len(data))
            data = data[:pos] + bytes((data[pos] ^ (1 << rng.randrange(8)),)) + data[pos + 1:]
        elif kind == "drop":
            return
        elif kind == "dup":
            data = data + data
        elif kind == "truncate":
            data = data[:rng.randrange(1, len(data))] if len(data) > 1 else b""
        elif kind == "delay":
            # A serial line is FIFO: a stall delays everything after it too, never reorders.
            self._hold_until = max(self._hold_until, now + arg / 1000.0)
        if self._held or now < self._hold_until:
            self._held.append(data)
        else:
            write(data)

    def flush(self, now: float, write: Write) -> None:
        """Once a stall has ended, everything it held goes out in one write, in order."""
        if self._held and now >= self._hold_until:
            held, self._held = self._held, []
            write(b"".join(held))
