"""The journal file's format: its schema and version, bringing an older file up to date, and the shoe cursor.

The writer (controller.daemon.journal) creates and opens files with these;
nothing here writes an input (docs/daemon.md, "The journal").
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Final, NamedTuple

from controller.daemon import faults
from drivers.shoe.transport import FrameId

FORMAT: Final = "croupier-journal"
#: 2: the shoe cursor is read from the input rows (version 1 wrote a cursor row with every card);
#: a version 1 journal is brought up to version 2 when a daemon opens it (:func:`bring_up_to_date`),
#: and a daemon of version 1 refuses a version 2 journal instead of resuming from a stale cursor.
VERSION: Final = 2

SCHEMA: Final = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE inputs (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,          -- wall-clock time (the core never sees it)
    source TEXT NOT NULL,      -- shoe, command, gpio, ...
    input TEXT NOT NULL,       -- Input.to_dict() as JSON
    ref TEXT,                  -- a client's idempotency key, if it gave one (unique: inputs_ref)
    shoe_session TEXT,         -- the shoe frame a shoe input came in: session ...
    shoe_seq INTEGER           -- ... and sequence number (NULL for other inputs)
);
-- Partial: the inputs without a key (every card) write no index page.
CREATE UNIQUE INDEX inputs_ref ON inputs(ref) WHERE ref IS NOT NULL;
CREATE TABLE shoe_cursor (     -- a shoe frame accepted without an input, or a checkpoint's cursor
    id INTEGER PRIMARY KEY CHECK (id = 1),
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    row INTEGER NOT NULL       -- the last input row when it was written: a frame on a later row is newer
);
"""

INSERT: Final = (
    "INSERT INTO inputs(id, at, source, input, ref, shoe_session, shoe_seq) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
SET_CURSOR: Final = "INSERT OR REPLACE INTO shoe_cursor(id, session, seq, row) VALUES (1, ?, ?, ?)"

#: Suffix of the file a new journal is built in before it is renamed into place.
NEW_SUFFIX: Final = ".new"


def tables(conn: sqlite3.Connection) -> set[str]:
    """The names of the journal file's tables."""
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


#: The header versions this code opens (older ones are brought up to :data:`VERSION` first).
READS: Final = frozenset(str(v) for v in range(1, VERSION + 1))


def bring_up_to_date(conn: sqlite3.Connection, header: dict[str, str], last_id: int) -> None:
    """Make an older journal a version :data:`VERSION` one, in one transaction.

    Version 1 from before the shoe cursor: add the frame columns and the cursor table. Version 1
    with a cursor: it was written with every card, so it is the cursor as of the last row; it gets
    the row that carried its frame, else the last row. The input rows and their ``ref TEXT UNIQUE``
    index stay as they are.
    """
    if header.get("version") == str(VERSION):
        return
    existing = tables(conn)
    conn.execute("BEGIN IMMEDIATE")
    try:
        if "shoe_cursor" not in existing:
            conn.execute("ALTER TABLE inputs ADD COLUMN shoe_session TEXT")
            conn.execute("ALTER TABLE inputs ADD COLUMN shoe_seq INTEGER")
            conn.execute("CREATE TABLE shoe_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), "
                         "session TEXT NOT NULL, seq INTEGER NOT NULL, row INTEGER NOT NULL)")
        else:
            conn.execute("ALTER TABLE shoe_cursor ADD COLUMN row INTEGER NOT NULL DEFAULT 0")
            # The row that carries its frame, if one does: a card's is then known (its resend told from
            # another card under its SEQ); a cursor whose row does not carry it is a frame without an input.
            conn.execute("UPDATE shoe_cursor SET row = COALESCE((SELECT MAX(id) FROM inputs WHERE "
                         "shoe_session = shoe_cursor.session AND shoe_seq = shoe_cursor.seq), ?)", (last_id,))
        conn.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled it back itself (a full disk): keep that error
            conn.execute("ROLLBACK")
        raise
    header["version"] = str(VERSION)


class ShoeCursor(NamedTuple):
    """The last shoe frame accepted (None: none), the card it carried when the journal knows it (its code,
    and whether a burn; None: no card) and the input row that carried it (None: a frame without an input, a
    HELLO or a run of heartbeats, so no card either)."""

    frame: FrameId | None
    card: tuple[str, bool] | None
    row: int | None


#: A new journal's: no shoe frame taken yet.
NO_SHOE_CURSOR: Final = ShoeCursor(None, None, None)


def read_shoe_cursor(conn: sqlite3.Connection) -> ShoeCursor:
    """The shoe cursor: the frame of the newest input row after the cursor row and the newest checkpoint
    (which refreshed the cursor row in its own transaction, :meth:`Journal.save_cursor`), else the cursor
    row's, with its card read from the input row that carried it: that later row, or the row the cursor
    row names when that row carries the cursor's frame (a checkpoint rewrote the cursor after it)."""
    saved = conn.execute("SELECT session, seq, row FROM shoe_cursor WHERE id = 1").fetchone()
    later: tuple[Any, ...] | None = _later_framed_input(conn, saved)
    if later is None and saved is not None:
        later = conn.execute("SELECT shoe_session, shoe_seq, input, id FROM inputs WHERE id = ? AND "
                             "shoe_session = ? AND shoe_seq = ?", (saved[2], saved[0], saved[1])).fetchone()
    if later is None:
        return ShoeCursor(None if saved is None else FrameId(str(saved[0]), int(saved[1])), None, None)
    inp = json.loads(later[2])
    card = (str(inp["card"]), bool(inp.get("burn"))) if inp.get("input") == "card" else None
    return ShoeCursor(FrameId(str(later[0]), int(later[1])), card, int(later[3]))


def _later_framed_input(conn: sqlite3.Connection, saved: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    floor = 0 if saved is None else int(saved[2])
    if "checkpoints" in tables(conn):
        floor = max(floor, int(conn.execute("SELECT COALESCE(MAX(row), 0) FROM checkpoints").fetchone()[0]))
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT shoe_session, shoe_seq, input, id FROM inputs WHERE id > ? AND shoe_session IS NOT NULL "
        "ORDER BY id DESC LIMIT 1",
        (floor,),
    ).fetchone()
    return row


def connect(path: Path, fsync: bool) -> sqlite3.Connection:
    """The daemon's one read-write connection: WAL, and ``synchronous=FULL`` unless ``fsync`` is off."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'OFF'}")
    pages = faults.journal_max_pages()
    if pages is not None:
        conn.execute(f"PRAGMA max_page_count={pages}")
    return conn
