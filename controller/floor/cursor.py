"""Where an uplink resumes: read from the stream itself, including rows a crash left out below its last one.

Rows are published with a window. An uplink whose client sent its buffer on reconnecting, while rows
written into the dying connection were lost, left the stream holding row 478 without rows 471-472
(the uplink now keeps nothing for a reconnect: see controller.floor.uplink); had it died before
publishing those again, the last row alone would be a wrong cursor. So every message also says which
rows were stored when it was sent (:data:`STORED`: all rows up to ``row``, the last of them at stream
sequence ``seq``). At start the uplink reads the last message on its journal's subject, then walks the
subject forward from that ``seq`` (a few messages: at most a window's worth) and publishes again exactly
the rows it does not find. Each journal has its own subject, so another journal of the table sent at the
same time (a restored old journal's uplink beside the live one's) moves no cursor: with one subject per
table (before 2026-12-07) its rows made the live journal's uplink, restarted, publish its journal again
from row 1 (a review found it).
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass, field
from typing import Final

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg

from controller.floor.wire import MSG_ID, STREAM, earlier_subject, journals_of, parse_msg_id, subject

log = logging.getLogger("croupier.floor")

#: Header: ``<row>:<seq>``: every row up to ``row`` of this journal was stored, none later than ``seq``.
STORED: Final = "Croupier-Stored"


@dataclass
class Stored:
    """The rows of one journal known to be in the stream: all up to :attr:`row`, and some above it."""

    row: int = 0
    seq: int = 0
    above: dict[int, int] = field(default_factory=dict)

    def add(self, row: int, seq: int) -> None:
        """Row ``row`` is in the stream at ``seq``."""
        if row > self.row:
            self.above[row] = seq
        while self.row + 1 in self.above:
            self.row += 1
            self.seq = max(self.seq, self.above.pop(self.row))

    def header(self) -> str:
        return f"{self.row}:{self.seq}"


@dataclass
class Tail:
    """What the stream holds of a journal: its last row, and the rows below it that are missing."""

    last: int
    missing: list[int]
    stored: Stored
    #: The body of the stream's message of row :attr:`last` (None when it holds no row of the journal).
    body: bytes | None = None


def _parse_stored(text: str | None) -> tuple[int, int]:
    if not text:
        return 0, 0
    row, seq = text.split(":")
    return int(row), int(seq)


async def read_tail(js: JetStreamContext, table_id: str, journal_id: str,
                    finished: dict[str, int] | None = None) -> Tail:
    """The stream's record of ``journal_id``: its own subject's (:func:`controller.floor.wire.subject`), else
    what an earlier floor's one subject per table holds of it (its last message of this journal: the
    uplink resumes after it), else nothing (a new journal starts at row 1; the table's earlier journal is
    checked for rows never published, :func:`_short_of`)."""
    try:
        last = await js.get_last_msg(STREAM, subject(table_id, journal_id))
        return await _walk(js, subject(table_id, journal_id), last, journal_id)
    except nats.js.errors.NotFoundError:
        pass
    try:
        earlier = await js.get_last_msg(STREAM, earlier_subject(table_id))
    except nats.js.errors.NotFoundError:
        earlier = None
    if earlier is not None and _id_of(earlier)[1] == journal_id:
        return await _walk(js, earlier_subject(table_id), earlier, journal_id)
    newest = await _newest_of(js, table_id, earlier)
    if newest is not None:
        _, held_journal, last_row = _id_of(newest)
        _short_of(str(newest.subject), held_journal, last_row, newest.data or b"",
                  (finished or {}).get(held_journal) == last_row)
    return Tail(0, [], Stored())


def _id_of(msg: RawStreamMsg) -> tuple[str, str, int]:
    headers = msg.headers or {}
    if MSG_ID not in headers:
        raise RuntimeError(f"message {msg.seq} on {msg.subject} has no {MSG_ID} header")
    return parse_msg_id(headers[MSG_ID])


async def _walk(js: JetStreamContext, subj: str, last: RawStreamMsg, journal_id: str) -> Tail:
    """The journal's rows on ``subj`` (whose last message is ``last``, of this journal): every row up to the
    last's ``Croupier-Stored`` mark, and those found walking the subject forward from it."""
    last_row = _id_of(last)[2]
    row, seq = _parse_stored((last.headers or {}).get(STORED))
    stored = Stored(row, seq)
    position = seq + 1
    last_seq = int(last.seq or 0)
    while position <= last_seq:
        msg = await js.get_msg(STREAM, seq=position, subject=subj, next=True)
        _, msg_journal, msg_row = _id_of(msg)
        if msg_journal == journal_id:
            stored.add(msg_row, int(msg.seq or 0))
        position = int(msg.seq or 0) + 1
    missing = [r for r in range(stored.row + 1, last_row) if r not in stored.above]
    return Tail(last_row, missing, stored, last.data or b"")


async def _newest_of(js: JetStreamContext, table_id: str,
                     earlier: RawStreamMsg | None) -> RawStreamMsg | None:
    """The table's newest message of any journal (each journal's subject's last, and ``earlier``, the last
    on an earlier floor's subject), or None."""
    found = [earlier] if earlier is not None else []
    info = await js.stream_info(STREAM, subjects_filter=journals_of(table_id))
    for subj in (info.state.subjects or {}) if info.state is not None else {}:
        with contextlib.suppress(nats.js.errors.NotFoundError):
            found.append(await js.get_last_msg(STREAM, subj))
    return max(found, key=lambda m: int(m.seq or 0), default=None)


def _short_of(subj: str, journal_id: str, row: int, body: bytes, seen_end: bool = False) -> None:
    """Say so when the subject's last message, of an earlier journal, is not that journal's last row (its
    body's ``journal_rows``): an uplink stopped mid hand-over, then started on the table's new journal,
    leaves the earlier journal's last rows unpublished, and nothing else would say so (a review,
    2026-12-07). The floor's ``floor tables`` shows the shortfall too (``EARLIER JOURNAL N rows short``).

    A last message that was its journal's last row when sent proves nothing when the uplink was not running
    as the journal was replaced: the table may have written rows after it (the uplink stopped first, as
    systemd stops it before its daemon, or killed), and neither the stream nor the floor can know
    (helper-321). Unless this process saw that journal's end itself (``seen_end``: it followed the journal
    to its last row and handed over), that is said as an ERROR too: a person compares the archived
    journal's length."""
    try:
        rows = int(json.loads(body)["journal_rows"])
    except (ValueError, KeyError, TypeError):
        return
    if row >= rows and not seen_end:
        log.error("%s: journal %s was replaced while this uplink was not following it: the stream holds "
                  "its rows up to %d, its length when that row was sent; rows written after it, if any, were "
                  "never published and nothing here can tell: compare with that journal's last row (croupier "
                  "journal verify) and, if it has more, restore it in a state dir and run its uplink",
                  subj, journal_id, row)
    elif row < rows:
        log.error("%s: the stream's last message is row %d of journal %s, which had %d rows: rows %d..%d of "
                  "it were never published, and the floor's record of it stops there; restore that journal "
                  "in a state dir and run its uplink to send them",
                  subj, row, journal_id, rows, row + 1, rows)
