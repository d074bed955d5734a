"""What the shoe tests share: a collector of the events a ShoeReader hands to its callback, and a
raw shoe on a real pty whose every byte the test writes (as pyserial's test_pty does)."""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from drivers.shoe.codec import Frame, FrameDecoder, encode_frame
from drivers.shoe.events import ShoeCard, ShoeEvent, ShoeStatus
from drivers.shoe.messages import Ack, Message
from drivers.shoe.profile import ShoeProfile, parse_profile
from drivers.shoe.transport import ShoeReader


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

    def wait(self, pred: Callable[[], bool], timeout: float = 30.0) -> None:
        """Until ``pred`` holds; the timeout bounds a broken reader, it measures nothing (CI is loaded)."""
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


class RawShoe:
    """The master side of a pty: write frames, read back what the host sent."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self._decoder = FrameDecoder()
        # A test may read from the loop's thread (inside a callback) while another thread waits in
        # expect(): one lock, and a non-blocking fd, so neither steals the other's bytes between
        # select and read and then blocks for ever in os.read (seen once in CI: a 60 s timeout).
        os.set_blocking(self.master, False)
        self._reading = threading.Lock()

    def send(self, seq: int, message: Message) -> None:
        self.write(encode_frame(seq, message))

    def write(self, data: bytes) -> None:
        """Write every byte, waiting while the pty's buffer is full (the fd is non-blocking)."""
        view = memoryview(data)
        while view:
            select.select([], [self.master], [], 1.0)
            try:
                view = view[os.write(self.master, view):]
            except BlockingIOError:
                continue

    def expect(self, want: Callable[[Frame], bool], timeout: float = 30.0) -> list[Frame]:
        """Read host frames until one satisfies ``want``; return all read so far. The timeout bounds a
        host that never sends it: a loaded CI machine may take seconds, and a pass returns at once."""
        got: list[Frame] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got += self._read_some(0.05)
            if any(want(f) for f in got):
                return got
        raise AssertionError(f"the host never sent the expected frame; got {got}")

    def drain(self, seconds: float) -> list[Frame]:
        """Every host frame read during ``seconds``."""
        got: list[Frame] = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            got += self._read_some(min(left, 0.05))
        return got

    def _read_some(self, wait: float) -> list[Frame]:
        """The frames in whatever the host has written within ``wait`` seconds (none if nothing)."""
        with self._reading:
            ready, _, _ = select.select([self.master], [], [], wait)
            if not ready:
                return []
            try:
                data = os.read(self.master, 4096)
            except BlockingIOError:
                return []
            return [f for f in self._decoder.feed(data) if isinstance(f, Frame)]

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


def profile(port: str, protocol: str = "v1", **extra: Any) -> ShoeProfile:
    data: dict[str, Any] = {"port": port, "protocol": protocol, "baud": 115200,
                            "reconnect": {"initial": 0.05, "max": 0.2}}
    if protocol == "v1":
        data["heartbeat_timeout"] = 5.0
    data.update(extra)
    return parse_profile(data, "test")


def is_ack(seq: int) -> Callable[[Frame], bool]:
    return lambda f: isinstance(f.message, Ack) and f.seq == seq


@pytest.fixture
def shoe() -> Iterator[RawShoe]:
    raw = RawShoe()
    yield raw
    raw.close()


@pytest.fixture
def run_reader() -> Iterator[Callable[[ShoeProfile], tuple[ShoeReader, ShoeEvents]]]:
    readers: list[ShoeReader] = []

    def start(prof: ShoeProfile) -> tuple[ShoeReader, ShoeEvents]:
        events = ShoeEvents()
        reader = ShoeReader(prof, events)
        readers.append(reader)
        reader.start()
        events.wait(lambda: bool(events.status("connected")))
        return reader, events

    yield start
    for reader in readers:
        reader.stop()
