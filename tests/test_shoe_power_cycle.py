"""A shoe power-cycled while the daemon is down: its HELLO reaches the restarted daemon, whatever the cursor.

The real ``croupier run``, the simulated shoe on a real pty, the journal a real SQLite file. The
daemon is killed by a fault point at the exact instant that made the restart unsafe: right after it
acknowledged the shoe's HELLO 0, so the journal's shoe cursor is frame 0. The shoe is then
power-cycled (a new simulated shoe on the same line: HELLO 0 again, in flight) and the daemon
restarted. Its greeting used to be "NAK 1" (resend from the frame after the cursor), which a shoe
takes as the ACK of its HELLO 0 (docs/shoe-protocol.md, "Delivery", shoe rule 4): the HELLO was
acknowledged without ever being delivered, so it started no new session, and a HELLO that must halt
the table (another protocol version) went unseen.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_daemon_crash import wait_ready
from test_shoe_exactly_once import Rig

from controller.daemon.client import CommandClient
from controller.daemon.journal_schema import read_shoe_cursor
from drivers.shoe.sim import SimulatedShoe

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = Rig(tmp_path, seed=4)
    yield r
    r.close()


def shoe_rows(rig: Rig) -> list[tuple[str, int]]:
    """(shoe session, shoe seq) of every journaled card, in order."""
    conn = sqlite3.connect(f"file:{rig.journal}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT shoe_session, shoe_seq FROM inputs WHERE source = 'shoe' "
                            "AND shoe_session IS NOT NULL AND input LIKE '%\"card\"%' ORDER BY id").fetchall()
    finally:
        conn.close()
    return [(str(s), int(q)) for s, q in rows]


def killed_right_after_hello_then_power_cycled(rig: Rig, tmp_path: Path, **firmware: Any) -> str:
    """Kill the daemon right after its ACK of HELLO 0; swap in a power-cycled shoe; the old session id."""
    proc = rig.start("shoe_acked:1:kill")
    deadline = time.monotonic() + 30
    while proc.poll() is None:
        assert time.monotonic() < deadline, "the fault point never fired"
        time.sleep(0.01)
    assert proc.returncode == -signal.SIGKILL, rig.stderr()
    conn = sqlite3.connect(f"file:{rig.journal}?mode=ro", uri=True)
    try:
        cursor = read_shoe_cursor(conn).frame
    finally:
        conn.close()
    assert cursor is not None and cursor.seq == 0  # the instant: the journal's last frame is HELLO 0
    rig.shoe.close()  # the power cycle: a new shoe on the same line, HELLO 0 in flight
    rig.shoe = SimulatedShoe("v1", seed=5, ack_timeout=0.05, serial="SIM-0002", **firmware)
    rig.shoe.open_pty(tmp_path / "shoe-pty")
    return cursor.session


def test_the_power_cycled_shoes_hello_is_delivered_and_no_card_is_lost_or_doubled(
        rig: Rig, tmp_path: Path) -> None:
    """The new shoe speaks protocol version 2: its HELLO must halt the table (a fault, not play on),
    start a new session before it is acknowledged, and the cards after it are journaled once each."""
    old = killed_right_after_hello_then_power_cycled(rig, tmp_path, misbehave=["hello_version_2"])
    for card in ("2C", "7H"):  # read while the daemon is down: queued behind the HELLO
        rig.shoe.deal(card)
        rig.dealt.append(card)
    proc = rig.start()
    wait_ready(proc, rig.command, rig.key)
    rig.wait_cards(2)
    rig.shoe.deal("KD")
    rig.dealt.append("KD")
    rig.wait_cards(3)
    client = CommandClient(rig.command, timeout=5, key=rig.key)
    try:
        offline = client.call("status")["offline"]
    finally:
        client.close()
    time.sleep(0.3)  # a card doubled by a late resend would show up now
    rig.stop()
    assert "protocol version 2" in offline.get("shoe fault", ""), offline
    assert rig.journal_cards() == rig.dealt
    rows = shoe_rows(rig)
    assert [seq for _, seq in rows][:2] == [1, 2]  # the new shoe's numbering (a HEARTBEAT may come between)
    sessions = {session for session, _ in rows}
    assert len(sessions) == 1 and old not in sessions, (old, rows)  # the HELLO was journaled first
