"""The journal's read API: its errors, its rows parsed, the whole-file checks and read-only connections.

The daemon (controller.daemon.journal), its recall and every tool that reads
a journal (``croupier journal``, the floor's uplink, signage's roads) read it
through these functions, never with SQL of their own, so a row that does not
parse or a missing row is the same :class:`JournalError` everywhere.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from controller.inputs import Input, InputError, input_from_dict
from controller.limits import TableLimits
from controller.rules_version import RULES_VERSION, UNRECORDED

JOURNAL_NAME: Final = "journal.sqlite3"
#: The header's key of the limits the journal's first row is played under (TableLimits as JSON; the
#: changes after it are ``limits`` rows: controller.daemon.journal_limits).
LIMITS_KEY: Final = "limits"


class JournalError(RuntimeError):
    """A journal the daemon must not start from: ``<file>[: row N]: <reason>``."""

    def __init__(self, path: Path, reason: str, row: int | None = None) -> None:
        self.path = path
        self.row = row
        self.reason = reason
        where = f"{path}" + (f": row {row}" if row is not None else "")
        super().__init__(f"{where}: {reason}")


class JournalMismatch(JournalError):
    """The table file's game or options, or the software's rules version, differ from the journal's."""


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


def read_entries(conn: sqlite3.Connection, path: Path, start: int, stop: int) -> Iterator[Entry]:
    """Rows ``start`` to ``stop`` of the journal at ``path``, parsed; :class:`JournalError` at a bad or
    missing row, whatever its bytes (a journal is copied between machines and read by tools: a row
    another program wrote must not end a tool with a traceback)."""
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
        except RecursionError:  # Python's JSON parser recurses: a row nested 1,000 deep is a bad row too
            raise JournalError(path, f"input does not parse: JSON nested too deeply ({str(text)[:80]!r})",
                               row_id) from None
        if not isinstance(at, float | int) or not isinstance(source, str):
            raise JournalError(path, f"bad time {at!r} or source {source!r}", row_id)
        yield Entry(row_id, float(at), source, inp, ref)
    if expected <= stop:
        raise JournalError(path, f"rows {expected}..{stop} are missing", expected)


def integrity_problem(conn: sqlite3.Connection) -> str | None:
    """``PRAGMA integrity_check`` on ``conn``: what it found wrong (its first five lines), or None."""
    check = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    return None if check == ["ok"] else "PRAGMA integrity_check failed: " + "; ".join(check[:5])


def verify_file(path: Path) -> str | None:
    """The checks of the whole file, on a read-only connection: what is wrong, or None.

    ``PRAGMA integrity_check`` and no row missing. SQLite does this work with
    Python's lock released, so a daemon can run it on a worker thread while it plays.
    """
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        problem = integrity_problem(conn)
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


def read_header(conn: sqlite3.Connection, path: Path) -> dict[str, str]:
    """The journal's header (its ``meta`` table: format, version, id, table, game, options, rules, limits)."""
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise JournalError(path, f"bad header: {exc}") from None


def starting_limits(header: dict[str, str], fallback: TableLimits) -> TableLimits:
    """The limits a replay of the journal starts under (its header's); ``fallback`` (the table file's)
    if the header does not say: written before limits were recorded and not started by a daemon since."""
    recorded = header.get(LIMITS_KEY)
    return fallback if recorded is None else TableLimits.model_validate_json(recorded)


def rules_mismatch(path: Path, header: Mapping[str, str],
                   remedy: Callable[[str], str]) -> JournalMismatch | None:
    """A :class:`JournalMismatch` if the journal at ``path`` was written under another rules version than
    this software plays (a header without one: :data:`UNRECORDED`), else None: its rows replayed by
    today's engine could come out differently. The daemon refuses to replay such a journal and the
    floor to uplink it; the check and the start of the reason are here once, so the two cannot drift,
    and ``remedy`` (given the journal's version) ends the reason with what the reader should do."""
    rules = header.get("rules", str(UNRECORDED))
    if rules == str(RULES_VERSION):
        return None
    return JournalMismatch(path, f"written under rules version {rules}; this software plays rules version "
                                 f"{RULES_VERSION}{remedy(rules)}")
