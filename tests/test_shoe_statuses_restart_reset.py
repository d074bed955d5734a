"""The shoe's statuses across a restart and a RESET, as a second reading found them (2026-12-07).

A shoe that reports its lid only in HEARTBEAT flags, its lid closed while the daemon was down: the restarted
reader's flags started all clear, so "closed" was no news and the table stayed halted (fixed: the reader
starts from the lid the journal left). A faulted HEARTBEAT that crossed the dealer's RESET faulted the shoe
again right after its HELLO (fixed: the frame held back by a RESET, when a HEARTBEAT, is the shoe's first
frame after its HELLO, and its flags are not taken: docs/shoe-protocol.md, host rule 9). Each fails before
its fix."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

import pytest
from test_daemon_shoe_corners import shoe_table
from wait_support import wait_for

from controller.daemon.client import CommandClient, local_key
from controller.daemon.config import TableConfig
from controller.daemon.runner import DaemonThread
from controller.daemon.server import Daemon
from drivers.shoe.codec import Frame, encode_frame
from drivers.shoe.messages import Fault, Heartbeat, Hello, Reset
from tests.shoe_support import RawShoe, is_ack

pytestmark = pytest.mark.timeout(90)


def said_hello(config: TableConfig, shoe: RawShoe, name: str) -> CommandClient:
    """A client of the running daemon, once its reader is connected and the shoe said HELLO (acknowledged)."""
    client = CommandClient(config.spec.zeromq.command, key=local_key(config))
    wait_for(lambda: client.call("status")["shoe_device"]["connected"], "the reader to connect")
    shoe.send(0, Hello(name, "1", name[0]))
    shoe.expect(is_ack(0))
    return client


def offline(client: CommandClient) -> dict[str, Any]:
    result: dict[str, Any] = client.call("status")["offline"]
    return result


def send_until_acked(shoe: RawShoe, seq: int, frame: bytes) -> None:
    """As a shoe does: the frame it holds again until it is acknowledged."""
    shoe.write(frame)
    for _ in range(100):
        with contextlib.suppress(AssertionError):
            shoe.expect(is_ack(seq), timeout=0.3)
            return
        shoe.write(frame)
    raise AssertionError(f"frame {seq} never acknowledged")


def test_a_lid_closed_while_the_daemon_was_down_is_seen_in_the_heartbeat_flags(
        tmp_path: Path, shoe: RawShoe) -> None:
    """A shoe that reports its lid only in HEARTBEAT flags (docs/daemon.md: "a shoe that reports its lid
    only in heartbeats halts play too"): the lid opened, the daemon restarted, the lid closed. The restarted
    reader's flags start all clear, so a heartbeat saying "lid closed" is no change to it, and the journal's
    ``shoe lid`` stays offline for ever: betting can never close until someone opens and closes the lid."""
    config = shoe_table(tmp_path, shoe)
    with DaemonThread(Daemon(config)):
        client = said_hello(config, shoe, "Beats")
        shoe.send(1, Heartbeat(lid_open=True))
        shoe.expect(is_ack(1))
        wait_for(lambda: "shoe lid" in offline(client), "the lid to halt play")
        client.close()
    shoe.drain(0.2)
    with DaemonThread(Daemon(config)):
        client = CommandClient(config.spec.zeromq.command, key=local_key(config))
        for seq in (2, 3, 4):  # the lid is closed now: every heartbeat says so
            send_until_acked(shoe, seq, encode_frame(seq, Heartbeat(lid_open=False)))
        with contextlib.suppress(AssertionError):
            wait_for(lambda: "shoe lid" not in offline(client), "the closed lid to end the halt", timeout=3)
        status = client.call("status")
        device = status["shoe_device"]
        assert device["last_heartbeat"]["lid_open"] is False and device["flags"]["lid_open"] is False
        assert "shoe lid" not in status["offline"], (
            f"the shoe says its lid is closed (flags {device['flags']}) "
            f"but the table is halted: {status['offline']}")
        client.close()


def is_reset(frame: Frame) -> bool:
    return isinstance(frame.message, Reset)


def test_a_heartbeat_that_crossed_the_reset_does_not_fault_the_shoe_again_after_its_hello(
        tmp_path: Path, shoe: RawShoe) -> None:
    """A jammed shoe beats with its faulted flag; the dealer clears the jam and runs ``shoe reset``. A
    HEARTBEAT the shoe sent just before it took the RESET reaches the host after it wrote the RESET: held
    back, not acknowledged (host rule 9), so the shoe sends it again after its HELLO, with a new number and
    the flags it had then (shoe: "any frame not yet acknowledged is sent again after the HELLO"). Host rule
    10 takes heartbeats before the RESET for this very reason ("sent after the HELLO it would carry stale
    flags"), but not one crossing it: its stale faulted flag faults the shoe again right after the HELLO
    cleared it, and only another HELLO clears that, though every later heartbeat says the shoe is fine."""
    config = shoe_table(tmp_path, shoe)
    with DaemonThread(Daemon(config)):
        client = said_hello(config, shoe, "Jam")
        shoe.send(1, Fault(1, "jam"))
        shoe.expect(is_ack(1))
        shoe.send(2, Heartbeat(faulted=True))
        shoe.expect(is_ack(2))
        wait_for(lambda: "shoe fault" in offline(client), "the jam to halt play")
        reply: dict[str, Any] = {}
        resetting = threading.Thread(target=lambda: reply.update(client.call("shoe", action="reset")))
        resetting.start()
        shoe.expect(is_reset)
        stale = Heartbeat(faulted=True)
        shoe.send(3, stale)  # left the shoe before it took the RESET: held back, not acknowledged
        assert not any(is_ack(3)(f) for f in shoe.drain(0.3))
        shoe.send(0, Hello("Jam", "1", "J"))  # the RESET's answer ...
        shoe.expect(is_ack(0))
        shoe.send(1, stale)  # ... then the frame it holds unacknowledged, numbered anew
        shoe.expect(is_ack(1))
        shoe.send(2, Heartbeat())  # the shoe is fine: every heartbeat from now on says so
        shoe.expect(is_ack(2))
        resetting.join(10)
        assert reply.get("ok"), reply
        with contextlib.suppress(AssertionError):
            wait_for(lambda: "shoe fault" not in offline(client), "the HELLO to clear the jam", timeout=3)
        assert "shoe fault" not in offline(client), (
            f"the shoe's HELLO answered the RESET and its heartbeats say it is fine, yet: {offline(client)}")
        client.close()
