"""A table's journal read read-only and replayed with the daemon's own code, one floor message per row.

The uplink must send, for each row, the very events the daemon published for it. It gets them the
way the daemon's start-up replay does (``TableService.replay``): a fresh :class:`Table` of the game
the journal's header names, ``Table.apply`` on each journaled input in row order, events numbered by
``seq`` from 1 and put on the wire by :func:`event_payload`, rounds recorded by :class:`RoundRecorder`.
The journal is only read (``open_readonly``, ``read_entries``): in WAL mode a reader never makes the
daemon's commit wait, and each read is one short statement so the WAL can still be checkpointed.
"""

from __future__ import annotations

import json
import os
from typing import Any

from controller.daemon import checkpoint
from controller.daemon.config import TableConfig
from controller.daemon.journal import (
    JOURNAL_NAME,
    Entry,
    JournalError,
    JournalMismatch,
    open_readonly,
    read_entries,
    read_header,
    rules_mismatch,
    starting_limits,
)
from controller.daemon.journal_export import game_of
from controller.daemon.journal_schema import tables
from controller.daemon.recall import RoundRecorder
from controller.daemon.service import event_payload
from controller.floor.wire import RowKey, RowMessage
from controller.table import Table


class JournalSource:
    """The journal of the table in ``config``, opened read-only; notices when a new journal replaces it."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        for _ in range(3):
            # The file's inode before it is opened and after its header is read, the same: a journal
            # replaced between the two paired the old journal's id with the new file's inode, and the
            # new journal was never noticed (a review, 2026-12-07).
            inode = _inode(config.state_dir / JOURNAL_NAME)
            self.conn, self.path, _ = open_readonly(config.state_dir)
            try:
                self.header = read_header(self.conn, self.path)
            except JournalError:
                self.conn.close()
                raise
            self.inode = inode
            if inode == _inode(self.path):
                break
            self.conn.close()
        else:
            raise JournalError(config.state_dir / JOURNAL_NAME, "replaced again and again while opened")
        problem = self._not_ours(config)
        if problem is not None:
            self.conn.close()
            raise problem

    def _not_ours(self, config: TableConfig) -> JournalError | None:
        """Why this journal cannot be uplinked as the table's: another table's, or written under another
        rules version (replayed by today's engine, its events would not be those the daemon published;
        the daemon refuses to replay it too)."""
        h = self.header
        if h.get("table") != config.table_id:
            return JournalMismatch(self.path,
                                   f"this journal is table {h.get('table')!r}'s, not {config.table_id!r}'s")
        return rules_mismatch(self.path, h, lambda _rules: ": uplink it with the software that wrote it")

    @property
    def journal_id(self) -> str:
        return self.header["id"]

    def last_row(self) -> int:
        return int(self.conn.execute("SELECT COALESCE(MAX(id), 0) FROM inputs").fetchone()[0])

    def entries(self, start: int, stop: int) -> list[Entry]:
        """Rows ``start``..``stop`` (all read at once: no read transaction left open)."""
        return list(read_entries(self.conn, self.path, start, stop))

    def rewritten(self, last: Entry | None) -> str | None:
        """Why the file is no longer the journal replayed up to ``last`` (its last row replayed; None: none
        yet), or None. A copy restored *in place* (SQLite's backup API, ``.restore``, ``cp`` over it) keeps
        the file's inode, so :meth:`replaced` does not see it: its rows from the copy's end are other inputs
        under the row numbers replayed, or another journal's (a review, helper-321)."""
        header_id = read_header(self.conn, self.path).get("id")
        if header_id != self.journal_id:
            return f"its id is now {header_id}"
        if last is None:
            return None
        now = self.entries(last.id, last.id) if self.last_row() >= last.id else []
        if not now or entry_key(now[0]) != entry_key(last):
            return f"its row {last.id} is not the one replayed"
        return None

    def replaced(self) -> bool:
        """A new journal file stands at the path (the table was given a new journal); none there: being
        replaced right now, look again later."""
        now = _inode(self.path)
        return now is not None and now != self.inode

    def close(self) -> None:
        self.conn.close()


class Replay:
    """The daemon's engine, driven row by row: each row's events and, at a round's end, its record."""

    def __init__(self, source: JournalSource) -> None:
        config = source.config
        self.table_id = config.table_id
        self.journal_id = source.journal_id
        self.game = source.header.get("game", config.game_name)
        self.options: dict[str, Any] = json.loads(source.header.get("options", "{}"))
        # The game as the journal's header names it, as the daemon played it: the table file may have
        # changed since (a restored journal uplinked again), and its options would settle otherwise.
        self.table = Table(game_of(source.header, source.path),
                           starting_limits(source.header, config.limits))
        #: The journal's currency code (its header's; a journal from before it was recorded: the table
        #: file's), with the decimals in force at the last row replayed (a ``limits`` row may change
        #: them: rows before it keep theirs). The table file's alone labelled a new journal's amounts with
        #: the currency the uplink started under (a review, 2026-12-07).
        self.currency: dict[str, Any] = {"code": source.header.get("currency") or config.spec.currency.code,
                                         "minor_units": self.table.limits.minor_units}
        self.recorder = RoundRecorder(keep=1)
        self.seq = 0
        self.row = 0
        #: The last row replayed, or the checkpoint's row the state came from (None: none yet).
        self.last: Entry | None = None

    def resume(self, source: JournalSource, bound: int) -> int:
        """Start from the daemon's newest usable checkpoint at or before row ``bound`` (as the daemon's
        own start does: same engine code; its limits are the journal's at its row), so a year-old
        journal is not replayed from row 1; the row it starts after (0: none usable)."""
        if self.row or "checkpoints" not in tables(source.conn):
            return 0
        saved = checkpoint.load(source.conn, source.path, bound)
        if saved is None:
            return 0
        self.table, self.seq, self.row = saved.table, saved.seq, saved.row
        self.recorder.current = saved.current
        # The row the state stands at, for the uplink's in-place check (JournalSource.rewritten): with None it
        # compared only the journal's id, which a copy of the journal restored in place keeps (a review).
        [self.last] = source.entries(saved.row, saved.row)
        return saved.row

    def message(self, entry: Entry, journal_rows: int) -> RowMessage:
        """Apply ``entry`` (the next row) and describe it; rows must come in order, each once."""
        if entry.id != self.row + 1:
            raise ValueError(f"row {entry.id} replayed after row {self.row}")
        events = self.table.apply(entry.input)
        first = self.seq + 1
        finished = self.recorder.finished[-1] if self.recorder.finished else None
        self.recorder.observe(first, entry.at, entry.source, entry.input, events, self.table)
        ended = self.recorder.finished[-1] if self.recorder.finished else None
        payloads = [event_payload(self.table_id, first + i, e) for i, e in enumerate(events)]
        self.seq += len(events)
        self.row = entry.id
        self.last = entry
        if self.currency["minor_units"] != self.table.limits.minor_units:  # a limits row changed them
            self.currency = {**self.currency, "minor_units": self.table.limits.minor_units}
        return RowMessage(
            self.table_id, self.journal_id, entry.id, entry.at, entry.source, entry.ref,
            entry.input.to_dict(), first, payloads, self.game, self.options, journal_rows,
            ended if ended is not finished else None, self.currency)


def entry_key(entry: Entry) -> RowKey:
    """A journal entry's :attr:`controller.floor.wire.RowMessage.row_key`, as its message carries it."""
    return entry.at, entry.source, entry.ref, entry.input.to_dict()


def _inode(path: os.PathLike[str] | str) -> int | None:
    """The file's inode, or None while no file stands there."""
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None
