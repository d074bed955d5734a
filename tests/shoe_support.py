"""What the shoe tests share: a collector of the events a ShoeReader hands to its callback."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from drivers.shoe.events import ShoeCard, ShoeEvent, ShoeStatus


class ShoeEvents:
    """Events from the reader thread (with their arrival times), and a wait for a condition on them."""

    def __init__(self) -> None:
        self.events: list[ShoeEvent] = []
        self.times: list[float] = []
        self._cond = threading.Condition()  # an RLock: predicates may call the accessors below

    def __call__(self, event: ShoeEvent) -> None:
        with self._cond:
            self.events.append(event)
            self.times.append(time.monotonic())
            self._cond.notify_all()

    def wait(self, pred: Callable[[], bool], timeout: float = 10.0) -> None:
        with self._cond:
            assert self._cond.wait_for(pred, timeout), f"timed out; last events {self.events[-5:]}"

    def cards(self) -> list[ShoeCard]:
        with self._cond:
            return [e for e in self.events if isinstance(e, ShoeCard)]

    def codes(self) -> list[str]:
        """The cards' canonical text, in arrival order."""
        return [c.card.code for c in self.cards()]

    def status(self, name: str) -> list[ShoeStatus]:
        with self._cond:
            return [e for e in self.events if isinstance(e, ShoeStatus) and e.status == name]
