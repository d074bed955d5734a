"""The shoe cursor read from the journal's rows: whatever was written, a reopen finds the same cursor.

Journal version 2 does not write a cursor row with every card: the cursor is
the frame of the last input row that has one, unless the ``shoe_cursor`` row
(frames that are not inputs, and every checkpoint) was written after it. A
restarted shoe reader resumes from it, so getting it wrong would deliver a
resent card twice or drop a new one (tests/test_shoe_exactly_once.py kills a
daemon around every commit; here, every order of writes is checked against a
model). Real SQLite files; nothing mocked.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_daemon_support import config_for

from controller import inputs as I
from controller.cards import parse_card
from controller.daemon import checkpoint
from controller.daemon.journal import Journal
from controller.daemon.journal_schema import read_shoe_cursor
from controller.daemon.service import TableService
from drivers.shoe import FrameId

pytestmark = pytest.mark.timeout(300)

#: One write: a card with its frame, an input without one, a frame without an input, a checkpoint.
Op = tuple[str, int]
OPS = st.lists(
    st.tuples(st.sampled_from(["card", "command", "frame", "checkpoint", "reopen"]), st.integers(0, 255)),
    max_size=30,
)


def _open(state: Path) -> TableService:
    state.mkdir(exist_ok=True)
    config = config_for(state)
    journal = Journal.open(config.state_dir, table=config.table_id, game=config.game_name,
                           options=config.options_dict(), fsync=False)
    service = TableService(config, journal, checkpoint_every=10**9)  # checkpoints only when the test says
    service.replay()
    return service


@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_the_cursor_after_a_reopen_is_the_last_frame_accepted_whatever_the_order(ops: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        service = _open(state)
        expected: FrameId | None = None
        session = 0
        for n, (op, seq) in enumerate(ops):
            if op == "card":
                expected = FrameId(f"s{session}", seq)
                service.submit(I.CardSeen(parse_card("AS"), burn=True), "shoe", frame=expected)
            elif op == "command":
                service.submit(I.CreditIn(1, 100 + n), "command:t")
            elif op == "frame":  # a new shoe session's HELLO, or a run of heartbeats
                session += seq % 2
                expected = FrameId(f"s{session}", seq)
                service.journal.record_shoe_frame(expected)
            elif op == "checkpoint":
                state_now = checkpoint.capture(service.journal.last_id, service.seq, service.table,
                                               service.recorder, service.recent)
                checkpoint.write(service.journal, state_now)
            else:
                service.journal.close()
                service = _open(state)
            assert service.journal.shoe_cursor == expected
        service.journal.close()
        again = _open(state)
        assert again.journal.shoe_cursor == expected
        again.journal.close()


def _steps_to_find_the_cursor(path: Path) -> int:
    """SQLite virtual-machine steps (in hundreds) spent finding the cursor: a count, not a time."""
    conn = sqlite3.connect(path)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn.set_progress_handler(count, 100)
    try:
        read_shoe_cursor(conn)
    finally:
        conn.close()
    return steps


@pytest.mark.parametrize("framed", [True, False], ids=["shoe table", "table without a shoe"])
def test_finding_the_cursor_reads_only_the_rows_after_the_newest_checkpoint(
    tmp_path: Path, framed: bool
) -> None:
    """A camera table's journal has no framed row at all: without the checkpoint's bound every start
    would read the whole journal looking for one."""
    counts = []
    for rows in (200, 5000):
        state = tmp_path / f"rows{rows}"
        service = _open(state)
        for n in range(rows):
            frame = FrameId("s", n % 256) if framed and n < 10 else None
            service.submit(I.CreditIn(1, 100 + n), "command:t", frame=frame)
        checkpoint.write(service.journal, checkpoint.capture(service.journal.last_id, service.seq,
                                                             service.table, service.recorder, service.recent))
        for n in range(20):
            service.submit(I.CreditIn(2, 100 + n), "command:t")
        path = service.journal.path
        service.journal.close()
        counts.append(_steps_to_find_the_cursor(path))
        assert _open(state).journal.shoe_cursor == (FrameId("s", 9) if framed else None)
    assert counts[1] == counts[0], f"VM steps grew with the rows before the checkpoint: {counts}"
