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

Refusing to start is better than starting empty: a journal that cannot be
read (bad header, ``PRAGMA integrity_check`` failing, a row that does not
parse, a missing row) or is missing where the state directory says one
existed raises :class:`JournalError` naming the file, the row and the reason.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from controller.inputs import Input, InputError, input_from_dict

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
    ref TEXT UNIQUE            -- a client's idempotency key, if it gave one
);
"""


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

    def __init__(self, path: Path, conn: sqlite3.Connection, header: dict[str, str], last_id: int) -> None:
        self.path = path
        self._conn = conn
        self.header = header
        self.last_id = last_id

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
        conn = _connect(path, fsync)
        header = {
            "format": FORMAT,
            "version": str(VERSION),
            "id": str(uuid.uuid4()),
            "table": table,
            "game": game,
            "options": options_json,
            "created": str(time.time()),
        }
        with conn:
            conn.executescript(_SCHEMA)
            conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(header.items()))
        _write_marker(marker, header["id"])
        return cls(path, conn, header, 0)

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
        return cls(path, conn, header, int(last[0]))

    # --- writing -------------------------------------------------------------------------------

    def append(self, inp: Input, source: str, at: float, ref: str | None = None) -> int:
        """Commit one input (durable when this returns); its row id."""
        cur = self._conn.execute(
            "INSERT INTO inputs(at, source, input, ref) VALUES (?, ?, ?, ?)",
            (at, source, json.dumps(inp.to_dict()), ref),
        )
        row = cur.lastrowid
        assert row is not None
        if row != self.last_id + 1:
            raise JournalError(self.path, f"expected to write row {self.last_id + 1}, SQLite gave {row}", row)
        self.last_id = row
        return row

    def find_ref(self, ref: str) -> int | None:
        """The row of an input sent with this idempotency key, if one was journaled."""
        found = self._conn.execute("SELECT id FROM inputs WHERE ref = ?", (ref,)).fetchone()
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
    last = conn.execute("SELECT COALESCE(MAX(id), 0) FROM inputs").fetchone()[0]
    return conn, path, int(last)


def _connect(path: Path, fsync: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'OFF'}")
    return conn


def _write_marker(marker: Path, journal_id: str) -> None:
    """Atomically, and durably: a marker lost in a power cut would let a lost journal go unnoticed."""
    tmp = marker.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(journal_id + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(marker)
    dir_fd = os.open(marker.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
