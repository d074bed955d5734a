"""The journal: every input, committed to SQLite before it is applied.

Why a journal of *inputs* and not of state: the core is deterministic, so
the inputs are the smallest complete record. Replaying them through a fresh
table rebuilds everything (the round in progress, wagers, credits, meters,
the shoe composition, tilts) and renumbers every event identically, so event
``seq`` numbers are never reused after a restart and a settlement that was
applied before a crash is not applied twice: it is the same settlement,
recomputed. Nothing but the journal and a marker file is kept on disk.

Durability: WAL mode with ``synchronous=FULL`` fsyncs the WAL at every
commit, and each input is its own transaction; the caller publishes the
input's events only after :meth:`Journal.append` returned. On a power cut,
an input whose commit returned is on disk; one whose commit did not return
was never applied or published, so the world never saw a state the journal
cannot rebuild. ``fsync=False`` (``synchronous=OFF``) is for benchmarks only.

Exactly once on the shoe path: a card's row also records the shoe frame it
came in (the shoe session and the frame's sequence number), and the
``shoe_cursor`` row (the last shoe frame the daemon accepted) is updated in
the same transaction. The shoe resends a frame until it is acknowledged and
the daemon acknowledges only after the commit, so after a crash the
restarted reader starts from this cursor and recognises the resend of a
frame it had already committed (docs/daemon.md, "Exactly once").

A write that fails (disk full, I/O error, read-only, locked) is a
:class:`JournalFault`: the journal refuses every later write with the same
reason until the daemon is restarted, because after a failed commit nothing
this process holds can be trusted to match the disk.

Refusing to start is better than starting empty: a journal that cannot be
read (bad header, ``PRAGMA integrity_check`` failing, a row that does not
parse, a missing row) or is missing where the state directory says one
existed raises :class:`JournalError` naming the file, the row and the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from controller.daemon import faults
from controller.inputs import Input, InputError, input_from_dict
from drivers.shoe.transport import FrameId

FORMAT: Final = "croupier-journal"
VERSION: Final = 1
JOURNAL_NAME: Final = "journal.sqlite3"
#: Written once a journal exists; its presence without the journal means the journal was lost.
MARKER_NAME: Final = "journal.marker"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE inputs (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,          -- wall-clock time (the core never sees it)
    source TEXT NOT NULL,      -- shoe, command, gpio, ...
    input TEXT NOT NULL,       -- Input.to_dict() as JSON
    ref TEXT UNIQUE,           -- a client's idempotency key, if it gave one
    shoe_session TEXT,         -- the shoe frame a shoe input came in: session ...
    shoe_seq INTEGER           -- ... and sequence number (NULL for other inputs)
);
CREATE TABLE shoe_cursor (     -- the last shoe frame accepted: where a restarted reader resumes
    id INTEGER PRIMARY KEY CHECK (id = 1),
    session TEXT NOT NULL,
    seq INTEGER NOT NULL
);
"""

#: Brings a journal written before the shoe cursor existed up to date (same format version: the
#: added columns and table are optional for reading, so older readers and replay are unaffected).
_UPGRADE: Final = (
    "ALTER TABLE inputs ADD COLUMN shoe_session TEXT",
    "ALTER TABLE inputs ADD COLUMN shoe_seq INTEGER",
    "CREATE TABLE shoe_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), session TEXT NOT NULL, "
    "seq INTEGER NOT NULL)",
)

#: Suffix of the file a new journal is built in before it is renamed into place.
NEW_SUFFIX: Final = ".new"


class JournalError(RuntimeError):
    """A journal the daemon must not start from: ``<file>[: row N]: <reason>``."""

    def __init__(self, path: Path, reason: str, row: int | None = None) -> None:
        self.path = path
        self.row = row
        self.reason = reason
        where = f"{path}" + (f": row {row}" if row is not None else "")
        super().__init__(f"{where}: {reason}")


class JournalMismatch(JournalError):
    """The table file's game or options differ from the journal's (it belongs to another table setup)."""


class JournalFault(JournalError):
    """A journal write failed: the table must halt. Nothing of the failed write was applied."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One journaled input."""

    id: int
    at: float
    source: str
    input: Input
    ref: str | None


class Journal:
    """The journal of one table in ``state_dir``; :meth:`open` creates, checks or refuses it."""

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        header: dict[str, str],
        last_id: int,
        shoe_cursor: FrameId | None = None,
    ) -> None:
        self.path = path
        self._conn = conn
        self.header = header
        self.last_id = last_id
        #: The last shoe frame accepted (committed with its input, or recorded alone).
        self.shoe_cursor = shoe_cursor
        #: Why the journal cannot be written (set once by the first failed write; then every write
        #: is refused with it until a restart).
        self.fault: JournalFault | None = None

    # --- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls, state_dir: Path, *, table: str, game: str, options: dict[str, Any], fsync: bool = True,
        verify: bool = True,
    ) -> Journal:
        """Open (or, in a brand-new state dir, create) the journal and check it against the table file.

        ``verify=False`` leaves out the checks that read the whole file (:func:`verify_file`);
        the daemon runs those after it is ready, so its start does not grow with the journal.
        """
        state_dir.mkdir(parents=True, exist_ok=True)
        path = state_dir / JOURNAL_NAME
        marker = state_dir / MARKER_NAME
        options_json = json.dumps(options, sort_keys=True)
        if not path.exists():
            if marker.exists():
                raise JournalError(
                    path,
                    f"missing, but {marker} says a journal was created here "
                    f"({marker.read_text(encoding='utf-8').strip()}); refusing to start "
                    "empty: restore the journal, or move the state dir away to start anew",
                )
            return cls._create(path, marker, table, game, options_json, fsync)
        journal = cls._open_existing(path, fsync, verify)
        h = journal.header
        if marker.exists():
            if marker.read_text(encoding="utf-8").strip() != h.get("id"):
                journal.close()
                raise JournalError(
                    path,
                    f"journal id {h.get('id')} is not the one {marker} names: "
                    "this is another table's journal",
                )
        else:
            _write_marker(marker, h["id"])
        diffs = []
        if h.get("game") != game:
            diffs.append(f"game: journal has {h.get('game')!r}, table file has {game!r}")
        if h.get("options") != options_json:
            old = json.loads(h.get("options", "{}"))
            for key in sorted(set(old) | set(options)):
                if old.get(key) != options.get(key):
                    diffs.append(
                        f"options.{key}: journal has {old.get(key)!r}, table file has {options.get(key)!r}"
                    )
        if diffs:
            journal.close()
            raise JournalMismatch(
                path,
                "the table file does not match this journal ("
                + "; ".join(diffs)
                + "); a table's game and options cannot change under its journal: "
                "use a new state dir",
            )
        return journal

    @classmethod
    def _create(
        cls, path: Path, marker: Path, table: str, game: str, options_json: str, fsync: bool
    ) -> Journal:
        """Build the whole journal (schema and header, one transaction) aside, then rename it into place.

        A crash at any instant leaves either no journal (a half-built ``.new`` file, removed at the
        next start) or a complete one: never a journal without its header.
        """
        tmp = path.with_name(path.name + NEW_SUFFIX)
        for leftover in (tmp, *(tmp.with_name(tmp.name + s) for s in ("-wal", "-shm", "-journal"))):
            leftover.unlink(missing_ok=True)
        header = {
            "format": FORMAT,
            "version": str(VERSION),
            "id": str(uuid.uuid4()),
            "table": table,
            "game": game,
            "options": options_json,
            "created": str(time.time()),
        }
        build = sqlite3.connect(tmp, isolation_level=None)
        try:
            build.execute("PRAGMA synchronous=FULL")
            build.execute("BEGIN")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    build.execute(statement)
            build.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(header.items()))
            build.execute("COMMIT")
            build.execute("PRAGMA journal_mode=WAL")  # persistent in the file's header
        finally:
            build.close()  # checkpoints and removes the -wal file
        _fsync(tmp)
        tmp.replace(path)
        _fsync(path.parent)
        _write_marker(marker, header["id"])
        return cls(path, _connect(path, fsync), header, 0)

    @classmethod
    def _open_existing(cls, path: Path, fsync: bool, verify: bool = True) -> Journal:
        try:
            conn = _connect(path, fsync)
            problem = _integrity(conn) if verify else None
        except sqlite3.DatabaseError as exc:
            raise JournalError(path, f"not a readable SQLite journal: {exc}") from None
        if problem is not None:
            conn.close()
            raise JournalError(path, problem)
        try:
            header = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            count = "COUNT(*)" if verify else "COALESCE(MAX(id), 0)"
            last = conn.execute(f"SELECT COALESCE(MAX(id), 0), {count} FROM inputs").fetchone()  # noqa: S608
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise JournalError(path, f"bad header: {exc}") from None
        if header.get("format") != FORMAT or header.get("version") != str(VERSION) or "id" not in header:
            conn.close()
            raise JournalError(
                path,
                f"bad header: format {header.get('format')!r} version "
                f"{header.get('version')!r} (expected {FORMAT!r} version {VERSION})",
            )
        if last[0] != last[1]:
            conn.close()
            raise JournalError(path, f"{last[1]} inputs but the last id is {last[0]}: rows are missing")
        try:
            cursor = _shoe_cursor(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise JournalError(path, f"cannot add the shoe cursor to this journal: {exc}") from None
        return cls(path, conn, header, int(last[0]), cursor)

    # --- writing -------------------------------------------------------------------------------

    def append(
        self, inp: Input, source: str, at: float, ref: str | None = None, frame: FrameId | None = None
    ) -> int:
        """Commit one input (durable when this returns); its row id.

        ``frame``: the shoe frame the input came in; it becomes the shoe cursor in the same
        transaction. :class:`JournalFault` if the write fails: then nothing was applied, and the
        journal refuses every later write.
        """
        expected = self.last_id + 1

        def insert(conn: sqlite3.Connection) -> None:
            cur = conn.execute(
                "INSERT INTO inputs(at, source, input, ref, shoe_session, shoe_seq) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (at, source, json.dumps(inp.to_dict()), ref, *(frame or (None, None))),
            )
            if cur.lastrowid != expected:  # another writer: never commit a row out of order
                raise sqlite3.IntegrityError(
                    f"expected to write row {expected}, SQLite gave {cur.lastrowid} (another writer?)"
                )
            if frame is not None:
                _set_cursor(conn, frame)

        self._write(insert)
        self.last_id = expected
        if frame is not None:
            self.shoe_cursor = frame
        return expected

    def record_shoe_frame(self, frame: FrameId) -> None:
        """Make ``frame`` the shoe cursor without an input (a new shoe session, a run of heartbeats)."""
        self._write(lambda conn: _set_cursor(conn, frame))
        self.shoe_cursor = frame

    def mark_fault(self, reason: str) -> JournalFault:
        """A write outside :meth:`append` failed (a checkpoint): fault the journal as a failed append does."""
        if self.fault is None:
            self.fault = JournalFault(self.path, reason)
        return self.fault

    def _write(self, body: Callable[[sqlite3.Connection], None]) -> None:
        """One transaction; any failure is a :class:`JournalFault`, kept for every later write."""
        if self.fault is not None:
            raise self.fault
        conn = self._conn
        try:
            faults.point("journal_write")
            conn.execute("BEGIN IMMEDIATE")
            try:
                body(conn)
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
        except (sqlite3.Error, OSError) as exc:
            raise self.mark_fault(f"write failed: {type(exc).__name__}: {exc}") from exc
        faults.point("journal_commit")

    def find_ref(self, ref: str) -> int | None:
        """The row of an input sent with this idempotency key, if one was journaled."""
        if self.fault is not None:
            raise self.fault
        try:
            found = self._conn.execute("SELECT id FROM inputs WHERE ref = ?", (ref,)).fetchone()
        except sqlite3.Error as exc:
            raise self.mark_fault(f"read failed: {type(exc).__name__}: {exc}") from exc
        return None if found is None else int(found[0])

    @property
    def connection(self) -> sqlite3.Connection:
        """The journal's connection, for the checkpoints in the same file (controller.daemon.checkpoint)."""
        return self._conn

    # --- reading -------------------------------------------------------------------------------

    def entries(self, start: int = 1, stop: int | None = None) -> Iterator[Entry]:
        """Every input from row ``start`` to ``stop``, parsed; :class:`JournalError` at a bad row."""
        return read_entries(self._conn, self.path, start, stop if stop is not None else self.last_id)

    def close(self) -> None:
        self._conn.close()


def read_entries(conn: sqlite3.Connection, path: Path, start: int, stop: int) -> Iterator[Entry]:
    expected = start
    cursor = conn.execute(
        "SELECT id, at, source, input, ref FROM inputs WHERE id BETWEEN ? AND ? ORDER BY id", (start, stop)
    )
    for row_id, at, source, text, ref in cursor:
        if row_id != expected:
            raise JournalError(path, f"row {expected} is missing (next is {row_id})", expected)
        expected += 1
        try:
            data = json.loads(text)
            inp = input_from_dict(data)
        except (ValueError, TypeError, InputError) as exc:
            raise JournalError(path, f"input does not parse: {exc} ({str(text)[:80]!r})", row_id) from None
        if not isinstance(at, float | int) or not isinstance(source, str):
            raise JournalError(path, f"bad time {at!r} or source {source!r}", row_id)
        yield Entry(row_id, float(at), source, inp, ref)
    if expected <= stop:
        raise JournalError(path, f"rows {expected}..{stop} are missing", expected)


def _integrity(conn: sqlite3.Connection) -> str | None:
    check = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    return None if check == ["ok"] else "PRAGMA integrity_check failed: " + "; ".join(check[:5])


def verify_file(path: Path) -> str | None:
    """The checks of the whole file, on a read-only connection: what is wrong, or None.

    ``PRAGMA integrity_check`` and no row missing. SQLite does this work with
    Python's lock released, so a daemon can run it on a worker thread while it plays.
    """
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        problem = _integrity(conn)
        if problem is None:
            last, count = conn.execute("SELECT COALESCE(MAX(id), 0), COUNT(*) FROM inputs").fetchone()
            if last != count:
                problem = f"{count} inputs but the last id is {last}: rows are missing"
        return problem
    except sqlite3.DatabaseError as exc:
        return f"not a readable SQLite journal: {exc}"
    finally:
        conn.close()


def open_readonly(state_dir: Path) -> tuple[sqlite3.Connection, Path, int]:
    """A read-only connection for tools and recall of old rounds (never writes, never creates)."""
    path = state_dir / JOURNAL_NAME
    if not path.exists():
        raise JournalError(path, "no journal here")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    try:
        last = conn.execute("SELECT COALESCE(MAX(id), 0) FROM inputs").fetchone()[0]
    except sqlite3.DatabaseError as exc:  # not SQLite, or no inputs table: a tool's one-line error
        conn.close()
        raise JournalError(path, f"not a readable SQLite journal: {exc}") from None
    return conn, path, int(last)


def _shoe_cursor(conn: sqlite3.Connection) -> FrameId | None:
    """The journal's shoe cursor, adding the cursor's columns and table first to an older journal."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "shoe_cursor" not in tables:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _UPGRADE:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    row = conn.execute("SELECT session, seq FROM shoe_cursor WHERE id = 1").fetchone()
    return None if row is None else FrameId(str(row[0]), int(row[1]))


def _set_cursor(conn: sqlite3.Connection, frame: FrameId) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO shoe_cursor(id, session, seq) VALUES (1, ?, ?)", (frame.session, frame.seq)
    )


def _connect(path: Path, fsync: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'OFF'}")
    pages = faults.journal_max_pages()
    if pages is not None:
        conn.execute(f"PRAGMA max_page_count={pages}")
    return conn


def _write_marker(marker: Path, journal_id: str) -> None:
    """Atomically, and durably: a marker lost in a power cut would let a lost journal go unnoticed."""
    tmp = marker.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(journal_id + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(marker)
    _fsync(marker.parent)


def _fsync(path: Path) -> None:
    """Flush a file, or a directory (a rename is durable only once its directory is)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
