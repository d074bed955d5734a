"""The journal: every input, committed to SQLite before it is applied.

Why a journal of *inputs* and not of state: the core is deterministic, so
the inputs are the smallest complete record. Replaying them through a fresh
table rebuilds everything (the round in progress, wagers, credits, meters,
the shoe composition, tilts) and renumbers every event identically, so event
``seq`` numbers are never reused after a restart and a settlement that was
applied before a crash is not applied twice: it is the same settlement,
recomputed. Nothing but the journal and a marker file is kept on disk.

Durability: WAL mode with ``synchronous=FULL`` fsyncs the WAL at every
commit, and each input is its own transaction (one INSERT, one page: the
card path's commit is most of its time); the caller publishes the
input's events only after :meth:`Journal.append` returned. On a power cut,
an input whose commit returned is on disk; one whose commit did not return
was never applied or published, so the world never saw a state the journal
cannot rebuild. ``fsync=False`` (``synchronous=OFF``) is for benchmarks only.

Exactly once on the shoe path: a card's row also records the shoe frame it
came in (the shoe session and the frame's sequence number), in the same
single-row commit. The shoe cursor (the last shoe frame the daemon accepted)
is the frame of the last input row that has one, unless the ``shoe_cursor``
row was written after that input: it holds frames that are not inputs (a new
shoe session, a run of heartbeats) and the row it was written after, and is
refreshed by every checkpoint, so finding the cursor at start reads only the
rows since the last checkpoint. The shoe resends a frame until it is
acknowledged and the daemon acknowledges only after the commit, so after a
crash the restarted reader starts from this cursor and recognises the resend
of a frame it had already committed (docs/daemon.md, "Exactly once").

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

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from controller.daemon import faults, private
from controller.daemon.journal_read import (
    JOURNAL_NAME,
    LIMITS_KEY,
    Entry,
    JournalError,
    JournalFault,
    JournalMismatch,
    integrity_problem,
    open_readonly,
    read_entries,
    read_header,
    rules_mismatch,
    starting_limits,
    verify_file,
)
from controller.daemon.journal_schema import (
    FORMAT,
    INSERT,
    NEW_SUFFIX,
    NO_SHOE_CURSOR,
    READS,
    SCHEMA,
    SET_CURSOR,
    VERSION,
    ShoeCursor,
    bring_up_to_date,
    connect,
    read_shoe_cursor,
)
from controller.inputs import Input
from controller.limits import TableLimits
from controller.rules_version import RULES_VERSION
from drivers.shoe.transport import FrameId

#: The read API (controller.daemon.journal_read) is offered here too: tools import it from this module.
__all__ = [
    "JOURNAL_NAME", "MARKER_NAME", "NEW_SUFFIX", "Entry", "Journal", "JournalError", "JournalFault",
    "JournalMismatch", "LIMITS_KEY", "open_readonly", "read_entries", "read_header", "rules_mismatch",
    "starting_limits", "verify_file",
]

#: Written once a journal exists; its presence without the journal means the journal was lost.
MARKER_NAME: Final = "journal.marker"


class Journal:
    """The journal of one table in ``state_dir``; :meth:`open` creates, checks or refuses it."""

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        header: dict[str, str],
        last_id: int,
        cursor: ShoeCursor = NO_SHOE_CURSOR,
    ) -> None:
        self.path = path
        self._conn = conn
        #: One cursor for every write: a new one per statement is an allocation on the card path.
        self._writer = conn.cursor()
        self.header = header
        self.last_id = last_id
        #: The last shoe frame accepted (committed with its input, or recorded alone).
        self.shoe_cursor = cursor.frame
        #: At opening, the card the cursor's frame carried when the journal knows it (code, burn): the shoe's
        #: resend of that frame is then told from another card under its SEQ (ShoeReader's ``resume_card``).
        self.shoe_cursor_card = cursor.card
        self.shoe_cursor_no_card = cursor.frame is not None and cursor.card is None  # no card's, or no input
        #: The input row that carried the cursor's frame (None: the cursor is a frame without an input).
        self._cursor_row = cursor.row
        #: Why the journal cannot be written (set once by the first failed write; then every write
        #: is refused with it until a restart).
        self.fault: JournalFault | None = None

    # --- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls, state_dir: Path, *, table: str, game: str, options: dict[str, Any], fsync: bool = True,
        verify: bool = True, limits: TableLimits | None = None, currency: str | None = None,
    ) -> Journal:
        """Open (or, in a brand-new state dir, create) the journal and check it against the table file.

        ``limits``: a new journal's starting limits, in its header from its first byte (so a reader,
        an uplink, never sees it without them: controller.daemon.journal_limits). ``currency``: the
        table file's currency code, in a new journal's header; an existing journal that records another
        is refused, as another game is (its amounts are that currency's: the floor would label them so).

        ``verify=False`` leaves out the checks that read the whole file (:func:`verify_file`);
        the daemon runs those after it is ready, so its start does not grow with the journal.
        """
        private.make_dir(state_dir)
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
            _no_orphan_log(path)
            return cls._create(path, marker, table, game, options_json, fsync, limits, currency)
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
        mismatch = rules_mismatch(path, h, lambda rules: (
            ", and replaying the journal could settle its rounds differently, so it is not replayed: "
            "archive it (croupier journal archive --state-dir "
            f"{state_dir} {state_dir.name}-rules{rules}.sqlite3), then run the table from a new state "
            "dir (or run the software that wrote it to cash out first)"))
        if mismatch is not None:
            journal.close()
            raise mismatch
        diffs = []
        if h.get("table") != table:  # the floor keys a journal's rows by table: renamed, counted twice
            diffs.append(f"table: journal has {h.get('table')!r}, table file has {table!r}")
        if h.get("game") != game:
            diffs.append(f"game: journal has {h.get('game')!r}, table file has {game!r}")
        # A code where none was is a label added, none where one was a label dropped (the journal's stays);
        # another code, the amounts read as another money.
        if currency and h.get("currency") not in (None, "", currency):
            diffs.append(f"currency.code: journal has {h['currency']!r}, table file has {currency!r}")
        if h.get("options") != options_json:
            old = json.loads(h.get("options", "{}"))
            for key in sorted(set(old) | set(options)):
                if old.get(key) != options.get(key):
                    diffs.append(
                        f"options.{key}: journal has {old.get(key)!r}, table file has {options.get(key)!r}"
                    )
        # A code recorded where none was (a journal from before, or made without one): the floor labels by it.
        if not diffs and currency and not h.get("currency"):
            journal.write("INSERT OR REPLACE INTO meta(key, value) VALUES ('currency', ?)", (currency,))
            h["currency"] = currency
        if diffs:
            journal.close()
            raise JournalMismatch(
                path,
                "the table file does not match this journal ("
                + "; ".join(diffs)
                + "); a table's name, game, options and currency cannot change under its journal: "
                "use a new state dir",
            )
        return journal

    @classmethod
    def _create(
        cls, path: Path, marker: Path, table: str, game: str, options_json: str, fsync: bool,
        limits: TableLimits | None = None, currency: str | None = None,
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
            "rules": str(RULES_VERSION),
            "created": str(time.time()),
        }
        if limits is not None:
            header[LIMITS_KEY] = limits.model_dump_json()
        if currency is not None:
            header["currency"] = currency
        private.create_empty(tmp)  # SQLite gives its -wal and -shm files the database's mode: 0600
        build = sqlite3.connect(tmp, isolation_level=None)
        try:
            build.execute("PRAGMA synchronous=FULL")
            build.execute("BEGIN")
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    build.execute(statement)
            build.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(header.items()))
            build.execute("COMMIT")
            build.execute("PRAGMA journal_mode=WAL")  # persistent in the file's header
        finally:
            build.close()  # checkpoints and removes the -wal file
        private.fsync_path(tmp)
        faults.point("journal_created")
        tmp.replace(path)
        private.fsync_path(path.parent)
        _write_marker(marker, header["id"])
        return cls(path, connect(path, fsync), header, 0)

    @classmethod
    def _open_existing(cls, path: Path, fsync: bool, verify: bool = True) -> Journal:
        try:
            conn = connect(path, fsync)
            problem = integrity_problem(conn) if verify else None
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
        if header.get("format") != FORMAT or header.get("version") not in READS or "id" not in header:
            conn.close()
            raise JournalError(
                path,
                f"bad header: format {header.get('format')!r} version "
                f"{header.get('version')!r} (expected {FORMAT!r} version {VERSION} or older)",
            )
        if last[0] != last[1]:
            conn.close()
            raise JournalError(path, f"{last[1]} inputs but the last id is {last[0]}: rows are missing")
        try:
            bring_up_to_date(conn, header, int(last[0]))
            cursor = read_shoe_cursor(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise JournalError(path, f"cannot bring this journal up to version {VERSION}: {exc}") from None
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
        session, seq = frame if frame is not None else (None, None)
        # The row's id is given, not taken: if another writer took it, the INSERT fails (a fault),
        # so a row is never committed out of order.
        self._write(INSERT, (expected, at, source, inp.to_json(), ref, session, seq))
        self.last_id = expected
        if frame is not None:
            self.shoe_cursor, self._cursor_row = frame, expected
        return expected

    def record_shoe_frame(self, frame: FrameId) -> None:
        """Make ``frame`` the shoe cursor without an input (a new shoe session, a run of heartbeats)."""
        self._write(SET_CURSOR, (frame.session, frame.seq, self.last_id))
        self.shoe_cursor, self._cursor_row = frame, None

    def write(self, statement: str, args: tuple[Any, ...]) -> None:
        """One statement on a table another module keeps in this file (the dealing shuffler's in
        controller.daemon.feed_state, the camera window's in controller.daemon.camera_window): committed
        alone, under the same fault rules as an input."""
        self._write(statement, args)

    def save_cursor(self, conn: sqlite3.Connection) -> None:
        """In a caller's transaction (a checkpoint's): write the cursor as of now, so a start reads only
        the input rows after it to find the cursor. Nothing to write if no shoe frame was ever taken:
        then no row up to now has one either. A cursor an input carried names that input's row (no later
        row has a frame): a start still finds its card there (journal_schema.read_shoe_cursor)."""
        if self.shoe_cursor is not None:
            row = self.last_id if self._cursor_row is None else self._cursor_row
            conn.execute(SET_CURSOR, (self.shoe_cursor.session, self.shoe_cursor.seq, row))

    def mark_fault(self, reason: str) -> JournalFault:
        """A write outside :meth:`append` failed (a checkpoint), or play must stop all the same (a limits
        change the round's end cannot make: controller.daemon.journal_limits): fault the journal as a
        failed append does, so every later input is refused until a restart."""
        if self.fault is None:
            self.fault = JournalFault(self.path, reason)
        return self.fault

    def _write(self, statement: str, args: tuple[Any, ...]) -> None:
        """One statement, committed by SQLite as its own transaction (the connection is in autocommit
        mode): all of it or none of it. Any failure is a :class:`JournalFault`, kept for every later
        write."""
        if self.fault is not None:
            raise self.fault
        try:
            faults.point("journal_write")
            self._writer.execute(statement, args)
        except (sqlite3.Error, OSError) as exc:
            raise self.mark_fault(f"write failed: {type(exc).__name__}: {exc}") from exc
        faults.point("journal_commit")

    def find_ref(self, ref: str) -> Entry | None:
        """The input journaled with this idempotency key (as journaled: controller.daemon.resend), if any.
        Read even once a write has faulted the journal: a resend of an input committed before the fault
        must get its first answer, not "not applied" (a cashier told so would pay out again)."""
        try:
            found = self._conn.execute("SELECT id FROM inputs WHERE ref = ?", (ref,)).fetchone()
        except sqlite3.Error as exc:
            raise self.mark_fault(f"read failed: {type(exc).__name__}: {exc}") from exc
        return None if found is None else next(self.entries(int(found[0]), int(found[0])))

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


def _no_orphan_log(path: Path) -> None:
    """Refuse to create a journal at ``path`` beside another journal's write-ahead log (``-wal``).

    Why: SQLite replays a ``-wal`` file it finds beside a database into it on the first open, whatever
    database wrote it. A daemon killed with writes still in the log, its journal (and marker) then
    removed by hand to "start anew", left a log that the next start's new journal took in: the old
    table's inputs and credits under the new journal's id, clashing with its first input. An empty log
    holds nothing: it and a stale shared-memory index (``-shm``, rebuilt from the log) are removed."""
    log, index = path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")
    if log.exists() and log.stat().st_size > 0:
        raise JournalError(
            path,
            f"missing, but {log} holds {log.stat().st_size} bytes of a journal's writes, which SQLite "
            "would replay into a new one; refusing to start: restore the journal beside it, or move "
            "the state dir away to start anew",
        )
    log.unlink(missing_ok=True)
    index.unlink(missing_ok=True)


def _write_marker(marker: Path, journal_id: str) -> None:
    """Atomically, and durably: a marker lost in a power cut would let a lost journal go unnoticed."""
    private.write_atomic(marker, journal_id + "\n")
