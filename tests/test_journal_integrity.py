"""The journal under a full disk, a failing write, a crash at its first start, and a second daemon.

Real SQLite files in tmp dirs; a full disk is a journal capped by SQLite's ``max_page_count``
(no root needed) or, when the test runs as root, a small tmpfs.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from panel_support import swap_hand_table
from test_contract import check
from test_daemon_support import write_table

from controller.cards import parse_card
from controller.daemon.config import load_table
from controller.daemon.journal import JOURNAL_NAME, NEW_SUFFIX, Journal, JournalError, JournalFault
from controller.daemon.server import Daemon
from controller.daemon.statelock import StateDirBusy, StateDirLock
from controller.inputs import CardSeen, CreditIn
from drivers.shoe import FrameId

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(120)


def _journal(state: Path) -> Journal:
    return Journal.open(state, table="t1", game="baccarat", options={})


def test_a_card_and_its_frame_are_one_commit_and_the_cursor_survives_a_reopen(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    assert journal.shoe_cursor is None
    journal.append(CreditIn(1, 500), "command:t", 1.0)
    journal.append(CardSeen(parse_card("AS")), "shoe", 2.0, frame=FrameId("abc", 7))
    journal.record_shoe_frame(FrameId("def", 0))  # a new shoe session, no input
    journal.close()
    again = _journal(tmp_path)
    assert again.shoe_cursor == FrameId("def", 0)
    conn = sqlite3.connect(tmp_path / JOURNAL_NAME)
    rows = conn.execute("SELECT id, source, shoe_session, shoe_seq FROM inputs ORDER BY id").fetchall()
    assert rows == [(1, "command:t", None, None), (2, "shoe", "abc", 7)]
    conn.close()
    again.close()


def _version_1(path: Path, with_cursor: bool) -> None:
    """Rebuild a version 1 layout: ``ref TEXT UNIQUE``; no frame columns or cursor table (the first
    journals), or a cursor row without ``row``, written with every card."""
    conn = sqlite3.connect(path)
    frame_columns = ", shoe_session TEXT, shoe_seq INTEGER" if with_cursor else ""
    conn.executescript(
        f"CREATE TABLE old AS SELECT id, at, source, input, ref{', shoe_session, shoe_seq' * with_cursor} "
        "FROM inputs; DROP TABLE inputs; "
        "CREATE TABLE inputs (id INTEGER PRIMARY KEY, at REAL NOT NULL, source TEXT NOT NULL, "
        f"input TEXT NOT NULL, ref TEXT UNIQUE{frame_columns}); INSERT INTO inputs SELECT * FROM old; "
        "DROP TABLE old; DROP TABLE shoe_cursor; UPDATE meta SET value = '1' WHERE key = 'version';"
    )
    if with_cursor:
        last = conn.execute("SELECT shoe_session, shoe_seq FROM inputs WHERE shoe_session IS NOT NULL "
                            "ORDER BY id DESC LIMIT 1").fetchone()
        conn.executescript("CREATE TABLE shoe_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), "
                           "session TEXT NOT NULL, seq INTEGER NOT NULL);")
        conn.execute("INSERT INTO shoe_cursor VALUES (1, ?, ?)", last)
        conn.commit()
    conn.close()


def _version(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0])
    finally:
        conn.close()


def test_a_journal_from_before_the_shoe_cursor_is_brought_up_to_date(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL_NAME
    journal = _journal(tmp_path)
    journal.append(CreditIn(1, 500), "command:t", 1.0)
    journal.close()
    _version_1(path, with_cursor=False)
    old = _journal(tmp_path)
    assert old.shoe_cursor is None and old.last_id == 1
    assert _version(path) == "2" and old.header["version"] == "2"
    old.append(CardSeen(parse_card("2C")), "shoe", 3.0, frame=FrameId("s", 1))
    assert [e.input for e in old.entries()] == [CreditIn(1, 500), CardSeen(parse_card("2C"))]
    old.close()
    assert _journal(tmp_path).shoe_cursor == FrameId("s", 1)


def test_a_version_1_journal_keeps_its_cursor_and_idempotency_keys_when_brought_up_to_date(
    tmp_path: Path,
) -> None:
    path = tmp_path / JOURNAL_NAME
    journal = _journal(tmp_path)
    journal.append(CardSeen(parse_card("AS")), "shoe", 1.0, frame=FrameId("a", 5))
    journal.append(CreditIn(1, 500), "command:t", 2.0, ref="r1")
    journal.close()
    _version_1(path, with_cursor=True)
    old = _journal(tmp_path)
    assert old.shoe_cursor == FrameId("a", 5) and _version(path) == "2"
    # Its card known though a row without a frame came after it: its resend is no other card (a card under
    # the SEQ of a frame that carried none halts the table after a restart).
    assert old.shoe_cursor_card == ("AS", False) and not old.shoe_cursor_no_card
    with pytest.raises(JournalFault, match="UNIQUE constraint failed: inputs.ref"):
        old.append(CreditIn(1, 500), "command:t", 3.0, ref="r1")  # the old UNIQUE index still holds
    old.close()
    again = _journal(tmp_path)
    entry = again.find_ref("r1")
    assert again.shoe_cursor == FrameId("a", 5) and entry is not None and entry.id == 2
    again.append(CardSeen(parse_card("KD")), "shoe", 4.0, frame=FrameId("a", 6))
    again.close()
    assert _journal(tmp_path).shoe_cursor == FrameId("a", 6)


def test_a_journal_of_a_newer_version_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL_NAME
    _journal(tmp_path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '3' WHERE key = 'version'")
    conn.commit()
    conn.close()
    with pytest.raises(JournalError, match=r"bad header: format 'croupier-journal' version '3' \(expected "
                                           r"'croupier-journal' version 2 or older\)"):
        _journal(tmp_path)


def test_a_full_journal_is_a_fault_that_refuses_every_later_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = _journal(tmp_path)
    pages = journal._conn.execute("PRAGMA page_count").fetchone()[0]
    journal._conn.execute(f"PRAGMA max_page_count={pages + 1}")
    committed = 0
    with pytest.raises(JournalFault) as fault:
        for i in range(10_000):
            journal.append(CreditIn(1, 100 + i), "command:t", float(i), ref=f"r{i}-" + "x" * 150)
            committed += 1
    assert "database or disk is full" in str(fault.value) and str(tmp_path / JOURNAL_NAME) in str(fault.value)
    assert journal.last_id == committed > 0
    journal._conn.execute("PRAGMA max_page_count=1000000")  # space again: still refused until a restart
    with pytest.raises(JournalFault):
        journal.append(CreditIn(1, 1), "command:t", 0.0)
    with pytest.raises(JournalFault):
        journal.record_shoe_frame(FrameId("s", 1))
    journal.close()
    again = _journal(tmp_path)
    assert again.last_id == committed
    assert [e.input for e in again.entries()] == [CreditIn(1, 100 + i) for i in range(committed)]
    again.close()


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs (root only): ENOSPC from the kernel, not from SQLite's page cap."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the max_page_count test covers a full journal")
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_filesystem_that_fills_up_is_a_fault_and_nothing_acknowledged_is_lost(small_tmpfs: Path) -> None:
    journal = _journal(small_tmpfs)
    committed = 0
    with pytest.raises(JournalFault) as fault:
        for i in range(100_000):
            journal.append(CreditIn(1, 100 + i), "command:t", float(i), ref=f"r{i}-" + "y" * 180)
            committed += 1
    assert "full" in str(fault.value) or "I/O" in str(fault.value)
    journal.close()
    subprocess.run(["mount", "-o", "remount,size=4m", str(small_tmpfs)], check=True)  # more space
    again = _journal(small_tmpfs)
    assert again.last_id == committed
    assert [e.input for e in again.entries()][-1] == CreditIn(1, 100 + committed - 1)
    again.close()


CREATE = """
import sys
from pathlib import Path
from controller.daemon.journal import Journal
Journal.open(Path(sys.argv[1]), table="t1", game="baccarat", options={}).close()
"""


def test_a_crash_at_any_instant_of_the_first_start_leaves_no_journal_or_a_whole_one(tmp_path: Path) -> None:
    rng = random.Random(11)
    outcomes = {"none": 0, "complete": 0}
    # At least 25 kills, and on until both outcomes were seen (a run whose kills all landed on one
    # side, on a machine faster or slower than the widening expects, proved only half).
    for attempt in range(80):
        if attempt >= 25 and outcomes["none"] and outcomes["complete"]:
            break
        state = tmp_path / f"s{attempt}"
        proc = subprocess.Popen([sys.executable, "-c", CREATE, str(state)], cwd=ROOT)
        # The import takes most of the time; aim the kill at the creation itself.
        deadline = time.monotonic() + 10
        while not state.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.0005)
        time.sleep(rng.random() * 0.006 * (attempt + 1))  # widening: on a slow machine too
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
        if (state / JOURNAL_NAME).exists():
            outcomes["complete"] += 1
        else:
            outcomes["none"] += 1
        journal = _journal(state)  # never "bad header": either created now, or complete
        assert journal.header["game"] == "baccarat" and journal.last_id == 0
        journal.close()
        assert not (state / (JOURNAL_NAME + NEW_SUFFIX)).exists()
    assert outcomes["none"] and outcomes["complete"], outcomes


def test_two_daemons_on_one_state_dir_the_second_is_refused_naming_the_holder(tmp_path: Path) -> None:
    table = write_table(tmp_path)
    first = Daemon(load_table(table))
    first.open()
    try:
        second = Daemon(load_table(table))
        with pytest.raises(StateDirBusy) as busy:
            second.open()
        assert f"PID {os.getpid()}" in str(busy.value) and str(tmp_path / "t1-state") in str(busy.value)
        assert second.service is None
    finally:
        assert first.service is not None
        first.service.journal.close()
        assert first._lock is not None
        first._lock.release()
    StateDirLock.acquire(tmp_path / "t1-state").release()  # free again once released


def test_croupier_run_on_a_held_state_dir_exits_4_at_once_with_the_pid(tmp_path: Path) -> None:
    table = write_table(tmp_path)
    lock = StateDirLock.acquire(tmp_path / "t1-state")
    try:
        done = subprocess.run([sys.executable, "-m", "controller.cli", "run", str(table), "--no-shoe"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    finally:
        lock.release()
    assert done.returncode == 4, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"PID {os.getpid()}" in lines[0] and "t1-state" in lines[0]
    assert not (tmp_path / "t1-state" / JOURNAL_NAME).exists()  # refused before opening anything


def test_a_journal_fault_puts_every_panel_lamp_in_its_fault_pattern(tmp_path: Path) -> None:
    t = swap_hand_table(tmp_path)
    context = zmq.Context.instance()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    for topic in ("journal_fault", "heartbeat"):
        sub.setsockopt(zmq.SUBSCRIBE, f"{t.daemon.config.table_id}.{topic}".encode())
    sub.connect(t.daemon.config.spec.zeromq.pub)
    try:
        assert sub.poll(10_000) and sub.recv_multipart()  # a heartbeat: the SUB is connected
        journal = t.daemon.service.journal if t.daemon.service is not None else None
        assert journal is not None and t.daemon._loop is not None
        capped = threading.Event()

        def cap() -> None:  # on the loop thread, which owns the connection
            pages = journal.connection.execute("PRAGMA page_count").fetchone()[0]
            journal.connection.execute(f"PRAGMA max_page_count={pages}")
            capped.set()

        t.daemon._loop.call_soon_threadsafe(cap)
        assert capped.wait(10)
        for i in range(2000):
            reply = t.call("credit_in", seat=1, amount=1, ref=f"fill-{i}-" + "f" * 150)
            if not reply["ok"]:
                break
        assert reply.get("journal_fault"), reply
        lamps = t.lamps()
        assert lamps["tower fault"]["mode"] == "fault"
        seat_lamps = {k: v["mode"] for k, v in lamps.items() if k.startswith("seat ")}
        assert seat_lamps and set(seat_lamps.values()) == {"fault"}
        dealer_lamps = {k: v["mode"] for k, v in lamps.items() if k.startswith("dealer ")}
        assert dealer_lamps and set(dealer_lamps.values()) == {"off"}  # void is refused too: not offered
        assert t.status()["journal_fault"]["file"] == str(journal.path)
        topic = b""
        while not topic.endswith(b".journal_fault"):
            assert sub.poll(5000), "no <table>.journal_fault message"
            topic, payload = sub.recv_multipart()
        message = json.loads(payload)
        check("JournalFaultMessage", message)  # the side topic, as docs/schema/ says
        check("side_topic", message)
        assert message["file"] == str(journal.path)
    finally:
        sub.close()
        t.close()


def test_a_journal_fault_found_at_start_is_said_before_ready(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The start's own checkpoint (after a long replay) fails on a full disk: the table is halted, and
    says so as it comes up (the CRITICAL line, the self-test, status), not at the first input (a
    helper's review, 2026-12-07: the self-test passed, READY was sent, and nothing was said until an
    input was refused)."""
    from controller import inputs as I
    from controller.daemon.client import CommandClient, local_key
    from controller.daemon.runner import DaemonThread
    from controller.daemon.service import TableService

    config = load_table(write_table(tmp_path))
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), limits=config.limits)
    service = TableService(config, journal, checkpoint_every=10**9)
    service.replay()
    for n in range(600):  # past the checkpoint interval: the start writes one at the replay's end
        service.submit(I.CreditIn(1 + n % 7, 100), "test")
    pages = journal.connection.execute("PRAGMA page_count").fetchone()[0]
    journal.close()
    monkeypatch.setenv("CROUPIER_FAULT_JOURNAL_PAGES", str(pages))
    key = local_key(config, "operator", "olive")
    with caplog.at_level("CRITICAL", logger="croupier.daemon"), DaemonThread(Daemon(config, use_shoe=False)):
        assert "JOURNAL FAULT" in caplog.text and "database or disk is full" in caplog.text
        client = CommandClient(config.spec.zeromq.command, timeout=10, key=key)
        try:
            status = client.call("status")
        finally:
            client.close()
        assert not status["selftest"]["passed"]
        assert "database or disk is full" in status["selftest"]["checks"]["journal"]
        assert status["journal_fault"]["file"] == str(config.state_dir / JOURNAL_NAME)
