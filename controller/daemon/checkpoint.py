"""Checkpoints: the table's state saved inside the journal, so start-up does not grow with its age.

The journal of inputs stays the record (every input, forever; recall and the
audit replay it from row 1). A checkpoint is derived from it: the state the
daemon holds after applying rows 1..N (the table, the event seq, the round
recorder and the ring of recent events), written into the same SQLite file,
in the ``checkpoints`` table, in one transaction, so it is there whole or not
at all. At start the daemon loads the newest checkpoint it can use and replays
only the rows after it, so a journal of a million inputs starts as fast as a
day-old one.

A checkpoint is taken at the first round end after every :data:`EVERY` inputs
(between rounds nobody waits for a card, so the few milliseconds it takes go
unnoticed), and the newest :data:`KEEP` are kept.

The state is Python's pickle of our own objects, tagged with a digest of the
engine's source (:func:`engine_code`): a checkpoint is only used by exactly the
code that wrote it. After an upgrade the first start replays the whole journal
(logged) and writes a fresh checkpoint; the inputs themselves are JSON and
outlive any code change. A checkpoint whose bytes do not match its SHA-256 is
skipped with an error in the log, and an older one (or row 1) is used: the
journal, not the checkpoint, is the truth. Pickle is safe here for the same
reason the journal is trusted at all: only the daemon writes this file.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import sqlite3
import time
from collections import deque
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from controller.daemon.journal import Journal
from controller.daemon.journal_schema import tables
from controller.daemon.recall import RoundRecorder
from controller.events import Event
from controller.table import Table

log = logging.getLogger("croupier.daemon")

#: Inputs between checkpoints (taken at the next round end): about 25 Baccarat rounds.
EVERY = 500
#: Checkpoints kept (older ones are deleted when a new one is written).
KEEP = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    row INTEGER PRIMARY KEY,   -- the state after applying inputs 1..row
    at REAL NOT NULL,          -- wall-clock time it was written
    seq INTEGER NOT NULL,      -- the seq of the last event at that row
    code TEXT NOT NULL,        -- engine_code() of the writer
    sha256 TEXT NOT NULL,      -- of state
    state BLOB NOT NULL        -- pickle of CheckpointState
)
"""


@dataclass(slots=True)
class CheckpointState:
    """Everything the daemon rebuilds by replaying rows 1..``row``."""

    row: int
    seq: int
    table: Table
    finished: list[dict[str, Any]]
    current: dict[str, Any] | None
    #: (seq, event class, field values): events rebuilt by their constructor load several
    #: times faster than pickle's generic dataclass state (2,000 of them at every start).
    recent: list[tuple[int, type[Event], tuple[Any, ...]]]

    def recent_events(self) -> list[tuple[int, Event]]:
        return [(seq, cls(*values)) for seq, cls, values in self.recent]


@cache
def engine_code() -> str:
    """A digest of every source file of ``controller`` (the engine, the games, the recorder).

    Two builds with the same digest rebuild the same state from the same
    inputs, so a checkpoint written by one can be read by the other.
    """
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:32]


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the checkpoints table in a journal that has none yet (journals from before checkpoints)."""
    conn.execute(_SCHEMA)


def capture(row: int, seq: int, table: Table, recorder: RoundRecorder,
            recent: deque[tuple[int, Event]]) -> CheckpointState:
    flat = [(s, type(e), tuple(getattr(e, name) for name in _fields_of(e))) for s, e in recent]
    return CheckpointState(row, seq, table, list(recorder.finished), recorder.current, flat)


def _fields_of(event: Event) -> tuple[str, ...]:
    names: tuple[str, ...] = event.__match_args__  # the constructor's fields, in order
    return names


def write(journal: Journal, state: CheckpointState, *, keep: int = KEEP) -> int:
    """Store ``state`` atomically (one transaction, older ones beyond ``keep`` pruned); its size in bytes.

    The same transaction writes the journal's shoe cursor as of ``state.row``: a start then looks for
    a later cursor in the input rows after the newest checkpoint only (controller.daemon.journal).
    """
    blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.sha256(blob).hexdigest()
    conn = journal.connection
    conn.execute("BEGIN IMMEDIATE")
    try:
        journal.save_cursor(conn)
        conn.execute(
            "INSERT OR REPLACE INTO checkpoints(row, at, seq, code, sha256, state) VALUES (?, ?, ?, ?, ?, ?)",
            (state.row, time.time(), state.seq, engine_code(), digest, blob),
        )
        conn.execute(
            "DELETE FROM checkpoints WHERE row NOT IN "
            "(SELECT row FROM checkpoints ORDER BY row DESC LIMIT ?)",
            (keep,),
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled it back itself (a full disk): keep that error
            conn.execute("ROLLBACK")
        raise
    return len(blob)


def rows(conn: sqlite3.Connection) -> list[int]:
    """The rows that have a checkpoint, oldest first."""
    return [int(r[0]) for r in conn.execute("SELECT row FROM checkpoints ORDER BY row")]


def load(conn: sqlite3.Connection, path: Path, last_row: int, *,
         at_row: int | None = None) -> CheckpointState | None:
    """The newest usable checkpoint at or before ``last_row`` (exactly ``at_row`` if given), or None.

    Skipped, each with a log line saying why: one written by other engine code,
    one whose bytes fail their digest, one that does not unpickle.
    """
    query = "SELECT row, code, sha256, state FROM checkpoints WHERE row <= ? ORDER BY row DESC"
    args: tuple[int, ...] = (last_row,)
    if at_row is not None:
        query, args = "SELECT row, code, sha256, state FROM checkpoints WHERE row = ?", (at_row,)
    code = engine_code()
    for row, their_code, digest, blob in conn.execute(query, args):
        if their_code != code:
            log.warning("%s: checkpoint at row %d was written by other engine code (%s, this is %s): "
                        "not used, replaying from an older one or row 1", path, row, their_code, code)
            continue
        if hashlib.sha256(blob).hexdigest() != digest:
            log.error("%s: checkpoint at row %d fails its SHA-256: not used", path, row)
            continue
        try:
            state = pickle.loads(blob)  # noqa: S301 - written by this daemon into its own journal
        except Exception as exc:  # a damaged checkpoint costs time, never the table: the journal rebuilds it
            log.error("%s: checkpoint at row %d does not load (%s): not used", path, row, exc)
            continue
        if not isinstance(state, CheckpointState) or state.row != row:
            log.error("%s: checkpoint at row %d holds something else: not used", path, row)
            continue
        return state
    return None


def none_usable(conn: sqlite3.Connection, path: Path, last_row: int) -> str:
    """Why no checkpoint at or before ``last_row`` is usable, in words (a replay from row 1 says it).

    Mostly because the daemon keeps only its newest :data:`KEEP`: a row older than the oldest of them
    (about ``KEEP * EVERY`` inputs back) has none before it; with fewer kept none was ever pruned, so
    the row is older than the first one taken (e.g. journaled by a daemon from before checkpoints).
    Else the ones before it were written by other engine code (an upgrade since: the daemon's next
    start writes fresh ones) or are damaged.
    """
    saved = rows(conn) if "checkpoints" in tables(conn) else []
    if not saved:
        return f"{path} holds no checkpoint"
    before = [r for r in saved if r <= last_row]
    if not before and len(saved) < KEEP:  # none was ever pruned: none was taken before the first
        return f"the daemon took its first checkpoint at row {saved[0]:,}, after row {last_row:,}"
    if not before:
        return (f"the daemon keeps only its newest {KEEP} checkpoints, the oldest at row {saved[0]:,}, "
                f"after row {last_row:,}")
    return (f"the checkpoints at row{'s' if len(before) > 1 else ''} {', '.join(f'{r:,}' for r in before)} "
            "were written by other engine code (the software changed since) or are damaged (logged above)")

