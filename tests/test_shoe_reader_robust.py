"""The shoe reader never dies silently: rfc2217:// and socket:// ports, a port that cannot be opened,
an exception anywhere: ``disconnected``, one log line per outage, retried, and back when it can be.

The RFC 2217 server is pyserial's own (``serial.rfc2217.PortManager``) in front of the simulated
shoe's pty, bridged to a TCP socket on 127.0.0.1 the way pyserial's example server does it.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import serial  # type: ignore[import-untyped]
import serial.rfc2217  # type: ignore[import-untyped]
from test_daemon_support import write_table
from test_shoe_transport import profile

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import load_table
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from drivers.shoe.sim import SimulatedShoe
from drivers.shoe.transport import ShoeReader
from tests.shoe_support import ShoeEvents

pytestmark = pytest.mark.timeout(90)


class _Writer:
    """What PortManager writes its telnet answers to (pyserial's example wraps the socket the same way)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)


class PtySerial(serial.Serial):  # type: ignore[misc]
    """A serial port on a pty: a pty has no modem lines, so their ioctls are answered as idle lines."""

    cts = dsr = ri = cd = False

    def _update_rts_state(self) -> None:
        pass

    def _update_dtr_state(self) -> None:
        pass


class Rfc2217Server:
    """pyserial's RFC 2217 PortManager serving one serial port (a pty) to one TCP client at a time."""

    def __init__(self, port_path: str) -> None:
        self.serial = PtySerial(port_path, timeout=0.05)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.url = f"rfc2217://127.0.0.1:{self.listener.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(0.05)
            manager = serial.rfc2217.PortManager(self.serial, _Writer(conn))
            done = threading.Event()

            def serial_to_net(conn: socket.socket = conn, manager: Any = manager, done: threading.Event = done
                              ) -> None:
                while not done.is_set() and not self._stop.is_set():
                    data = self.serial.read(self.serial.in_waiting or 1)
                    if data:
                        try:
                            conn.sendall(b"".join(manager.escape(data)))
                        except OSError:
                            done.set()

            pump = threading.Thread(target=serial_to_net, daemon=True)
            pump.start()
            while not done.is_set() and not self._stop.is_set():
                try:
                    data = conn.recv(1024)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if not data:
                    break
                self.serial.write(b"".join(manager.filter(data)))
            done.set()
            pump.join()
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.listener.close()
        self.serial.close()


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[SimulatedShoe]:
    shoe = SimulatedShoe("v1", seed=5)
    yield shoe
    shoe.close()


def run_reader(url: str, **extra: Any) -> tuple[ShoeReader, ShoeEvents]:
    events = ShoeEvents()
    reader = ShoeReader(profile(url, heartbeat_timeout=2.0, **extra), events)
    reader.start()
    return reader, events


def test_an_rfc2217_port_reads_cards_through_pyserials_own_server(sim: SimulatedShoe, tmp_path: Path) -> None:
    sim.open_pty(tmp_path / "pty")
    server = Rfc2217Server(str(tmp_path / "pty"))
    reader, events = run_reader(server.url)
    try:
        events.wait(lambda: bool(events.status("hello")), timeout=20)
        for card in ("AS", "TD", "3C"):
            sim.deal(card)
        events.wait(lambda: events.codes() == ["AS", "TD", "3C"], timeout=20)
        assert not events.status("disconnected")
    finally:
        reader.stop()
        server.close()


def test_a_socket_port_reads_cards(sim: SimulatedShoe) -> None:
    reader, events = run_reader(sim.listen())
    try:
        sim.deal("KH")
        events.wait(lambda: events.codes() == ["KH"], timeout=20)
    finally:
        reader.stop()


def test_a_port_that_cannot_be_opened_is_one_warning_and_comes_up_when_it_appears(
    sim: SimulatedShoe, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    link = tmp_path / "later"
    caplog.set_level(logging.INFO, logger="croupier.shoe")
    reader, events = run_reader(str(link))
    try:
        events.wait(lambda: bool(events.status("disconnected")))
        time.sleep(0.8)  # several retries (backoff 0.05 .. 0.2 s): none reported again
        down = events.status("disconnected")
        assert len(down) == 1 and "cannot open" in down[0].detail["reason"]
        logged = [r for r in caplog.records if r.name == "croupier.shoe" and "cannot open" in r.getMessage()]
        assert len(logged) == 1 and logged[0].levelno == logging.WARNING
        sim.open_pty(link)
        sim.deal("9S")
        events.wait(lambda: events.codes() == ["9S"], timeout=20)
        assert events.status("connected")
    finally:
        reader.stop()


class FailingReads(serial.Serial):  # type: ignore[misc]
    """A port whose driver raises what no port should (TypeError) on the first reads of 3 sessions."""

    failures = 0

    def read(self, size: int = 1) -> bytes:
        if FailingReads.failures < 3:
            FailingReads.failures += 1
            raise TypeError("driver bug")
        data: bytes = super().read(size)
        return data


def test_an_exception_in_the_reader_is_a_disconnect_logged_once_then_retried(
    sim: SimulatedShoe, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reached through pyserial's own ``alt://PORT?class=NAME`` handler, as any port class would be."""
    sim.open_pty(tmp_path / "pty")
    monkeypatch.setattr(serial, "FailingReads", FailingReads, raising=False)
    caplog.set_level(logging.INFO, logger="croupier.shoe")
    reader, events = run_reader(f"alt://{tmp_path / 'pty'}?class=FailingReads")
    try:
        sim.deal("2D")
        events.wait(lambda: events.codes() == ["2D"], timeout=30)
        assert reader._thread is not None and reader._thread.is_alive()
        down = [e.detail["reason"] for e in events.status("disconnected")]
        assert down == ["reader error: TypeError: driver bug"] * 3
        errors = [r for r in caplog.records
                  if r.levelno >= logging.ERROR and "retried every" in r.getMessage()]
        assert len(errors) == 1 and "TypeError: driver bug" in errors[0].getMessage()
        assert errors[0].exc_info is not None  # a bug: its traceback is in the log, once
    finally:
        reader.stop()


def test_the_daemon_starts_with_an_absent_shoe_port_offline_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shoe_profile = tmp_path / "shoe.yaml"
    shoe_profile.write_text(
        f"port: {tmp_path / 'no-such-tty'}\nprotocol: v1\nbaud: 115200\nheartbeat_timeout: 1.0\n"
        "reconnect: {initial: 0.05, max: 0.2}\n"
    )
    config = load_table(write_table(tmp_path, shoe=str(shoe_profile)))
    caplog.set_level(logging.WARNING)
    with DaemonThread(Daemon(config)):
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=local_key(config))
        try:
            deadline = time.monotonic() + 20
            while "shoe" not in (status := client.call("status"))["offline"]:
                assert time.monotonic() < deadline, status
                time.sleep(0.05)
            assert status["shoe_device"]["state"] == "device_offline"
            assert not status["shoe_device"]["connected"]
        finally:
            client.close()
    warnings = [r.getMessage() for r in caplog.records
                if r.levelno == logging.WARNING and "no-such-tty" in r.getMessage()]
    # The reader's one warning, however often it retries; and the table's own line per device gone offline
    # (the shoe, and the self-test's shoe hello), once each.
    assert len([w for w in warnings if "OFFLINE" not in w]) == 1, warnings
    offline = sorted(w.split(" OFFLINE")[0] for w in warnings if "OFFLINE" in w)
    assert offline == ["table t1: shoe", "table t1: shoe hello"], warnings

