"""One journal row as a floor message: subject, message id and JSON body; built on the Pi, read on the floor.

The body carries everything the floor needs so that it never replays a game itself: the input as
journaled (with its source, idempotency key and time), the events it caused exactly as the daemon
published them (numbered by ``seq``), and, when the row ended a round, the round's record as
``ctl recall`` gives it. The message id ``<table>:<journal_id>:<row>`` lets JetStream drop a resend,
and the primary keys in PostgreSQL make a redelivery harmless.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Final

#: The stream every table publishes into, and the subjects it holds: one per journal of each table
#: (``croupier.<table>.rows.<journal_id>``), so that the subject's last message is that journal's last row
#: published whatever other journal of the table is sent at the same time (the uplink's cursor).
STREAM: Final = "CROUPIER"
SUBJECTS: Final = "croupier.*.rows.*"
#: The one subject per table of a floor made before 2026-12-07, kept in its stream: its rows are read
#: (the recorders take every subject of the stream) and an uplink resumes after its last row there.
EARLIER_SUBJECTS: Final = "croupier.*.rows"
MSG_ID: Final = "Nats-Msg-Id"
#: Version of the body's layout (a recorder refuses a body it does not know).
FORMAT: Final = 1
#: Messages a recorder writes per transaction, at most: a batch is what the consumer has when asked, so
#: a light load gives small batches (no wait for a full one) and a backlog large ones, where the
#: database's cost per batch (the statements, the commit) is shared by more rows (docs/floor.md,
#: "How fast").
RECORD_BATCH: Final = 1024
#: Batches a recorder writes at once, each in its own transaction on its own connection: PostgreSQL
#: works a connection on one core, so with one writer the other cores wait while the recorder
#: fetches and acknowledges (docs/floor.md, "How fast"). Writers of one journal take turns on its
#: ``tables`` row lock, as separate recorders do.
RECORD_WRITERS: Final = 2
#: The range of PostgreSQL's ``bigint``, which the recorder casts every row, seq and amount to.
_BIGINT: Final = 2**63


class UnknownFormat(ValueError):
    """A body of another format than this code's (a newer uplink's): not this recorder's to judge."""


def subject(table_id: str, journal_id: str) -> str:
    """The subject a table publishes one journal's rows on (a table id has no '.', '*' or '>': see the table
    file; a journal id is a UUID)."""
    return f"croupier.{table_id}.rows.{journal_id}"


def earlier_subject(table_id: str) -> str:
    """The subject of a table's rows on a floor made before 2026-12-07 (:data:`EARLIER_SUBJECTS`)."""
    return f"croupier.{table_id}.rows"


def journals_of(table_id: str) -> str:
    """The subjects of every journal of a table, as a filter."""
    return f"croupier.{table_id}.rows.*"


def subject_table(subject: str, kind: str = "rows") -> str | None:
    """The table whose ``kind`` subject (``croupier.TABLE.rows.JOURNAL`` or an earlier floor's
    ``croupier.TABLE.rows``, ``croupier.TABLE.alive``) ``subject`` is, or None. A table's NATS user may
    publish only on its own subjects (docs/floor.md), so what a message says of its table is believed only
    when its subject says the same: one table's uplink must not write another's rows or heartbeats."""
    parts = subject.split(".")
    sizes = (3, 4) if kind == "rows" else (3,)
    return parts[1] if len(parts) in sizes and parts[0] == "croupier" and parts[2] == kind else None


def own_table(named: object, subject: str, kind: str = "rows") -> None:
    """ValueError unless ``named``, the table a message's body names, is the table of the ``kind`` subject
    it came on (:func:`subject_table`): the one check of the recorder, the heartbeat listeners, the alert
    service and the pit board."""
    table = subject_table(subject, kind)
    if table is None or named != table:
        raise ValueError(f"it names table {named!r}, on {subject}: not that subject's table")


def msg_id(table_id: str, journal_id: str, row: int) -> str:
    return f"{table_id}:{journal_id}:{row}"


def parse_msg_id(text: str) -> tuple[str, str, int]:
    """(table, journal_id, row) of a message id; ValueError if it is not one of ours."""
    table_id, journal_id, row = text.rsplit(":", 2)
    return table_id, journal_id, int(row)


#: A journal row's own fields (:attr:`RowMessage.row_key`, :func:`controller.floor.derive.entry_key`).
RowKey = tuple[float, str, str | None, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class RowMessage:
    """One journal row and what it caused, as the recorder stores it."""

    table_id: str
    journal_id: str
    row: int
    at: float
    source: str
    ref: str | None
    input: dict[str, Any]
    first_seq: int
    events: list[dict[str, Any]]
    game: str
    options: dict[str, Any]
    journal_rows: int
    round: dict[str, Any] | None
    #: The table's currency (code, minor units): how the floor's queries show amounts.
    currency: dict[str, Any]

    def body(self) -> bytes:
        return json.dumps({
            "format": FORMAT, "table": self.table_id, "journal": self.journal_id, "row": self.row,
            "at": self.at, "source": self.source, "ref": self.ref, "input": self.input,
            "first_seq": self.first_seq, "events": self.events, "game": self.game,
            "options": self.options, "journal_rows": self.journal_rows, "round": self.round,
            "currency": self.currency,
        }, separators=(",", ":")).encode()

    @property
    def id(self) -> str:
        return msg_id(self.table_id, self.journal_id, self.row)

    @property
    def row_key(self) -> RowKey:
        """The journal row itself (its time, source, ref and input): what a resend carries unchanged and
        another history under the same row number does not (the rest is derived, or the moment's)."""
        return self.at, self.source, self.ref, self.input

    @classmethod
    def parse(cls, data: bytes) -> RowMessage:
        """The message in ``data``; ValueError if it is not a floor row message this code reads
        (:class:`UnknownFormat` if it is another format's).

        As strict as the recorder's SQL (controller.floor.store), so that a body read here is one the
        database takes: integers are JSON integers within ``bigint`` (not ``true``), times finite
        numbers, no NaN, no ``\\u0000`` nor lone surrogate in any string (``jsonb`` refuses both),
        every event an object with an integer ``seq`` and a string ``event``, and a round null or an
        object with the fields its row in ``rounds`` needs."""
        try:
            d = json.loads(data, parse_constant=_no_constant)
            if not isinstance(d, dict) or "format" not in d:  # no format's at all: malformed, not newer
                raise ValueError(f"not a floor row message: a JSON {type(d).__name__} without a format field")
            fmt = d.get("format")
            if fmt != str(FORMAT) and not (type(fmt) is int and fmt == FORMAT):  # what d->>'format' compares
                raise UnknownFormat(f"format {fmt!r}, this recorder reads {FORMAT}")
            _check_strings(d)
            events = _list(d, "events")
            for e in events:
                if not isinstance(e, dict):
                    raise ValueError(f"event {e!r} is not an object")
                _int(e, "seq")
                _str(e, "event")
            r = d["round"]
            if r is not None:
                if not isinstance(r, dict):
                    raise ValueError(f"round {r!r} is neither null nor an object")
                _str(r, "status")
                for key in ("round", "first_seq", "last_seq"):
                    _int(r, key)
                for key in ("opened_at", "ended_at"):  # nullable columns, as house_net
                    if r.get(key) is not None:
                        _float(r, key)
                if r.get("house_net") is not None:
                    _int(r, "house_net")
            ref = d["ref"]
            if ref is not None and not isinstance(ref, str):
                raise ValueError(f"ref {ref!r} is neither null nor a string")
            return cls(_str(d, "table"), _str(d, "journal"), _int(d, "row"), _float(d, "at"),
                       _str(d, "source"), ref, _dict(d, "input"), _int(d, "first_seq"), events,
                       _str(d, "game"), _dict(d, "options"), _int(d, "journal_rows"), r, _dict(d, "currency"))
        except (KeyError, TypeError, AttributeError, UnicodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not a floor row message: {exc!r}") from None
        except RecursionError:  # nested past Python's stack: it escaped, and stopped the recorder
            raise ValueError("not a floor row message: nested too deep") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (PostgreSQL's jsonb refuses it)")


def _check_strings(value: Any) -> None:
    """ValueError if a string or key anywhere in ``value`` is one ``jsonb`` refuses."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_strings(k)
            _check_strings(v)
    elif isinstance(value, list):
        for v in value:
            _check_strings(v)
    elif isinstance(value, str):
        value.encode("utf-8")  # a lone surrogate: UnicodeEncodeError
        if "\x00" in value:
            raise ValueError("a string holds \\u0000")


def _int(d: dict[str, Any], key: str) -> int:
    v = d[key]
    if type(v) is not int or not -_BIGINT <= v < _BIGINT:
        raise ValueError(f"{key} {v!r} is not an integer of 64 bits")
    return v


def _float(d: dict[str, Any], key: str) -> float:
    v = d[key]
    if type(v) not in (int, float):
        raise ValueError(f"{key} {v!r} is not a number")
    try:
        f = float(v)
    except OverflowError:
        f = math.inf
    if not math.isfinite(f):
        raise ValueError(f"{key} {v!r} is not a finite double")
    return f


def _str(d: dict[str, Any], key: str) -> str:
    v = d[key]
    if not isinstance(v, str):
        raise ValueError(f"{key} {v!r} is not a string")
    return v


def _dict(d: dict[str, Any], key: str) -> dict[str, Any]:
    v = d[key]
    if not isinstance(v, dict):
        raise ValueError(f"{key} {v!r} is not an object")
    return v


def _list(d: dict[str, Any], key: str) -> list[Any]:
    v = d[key]
    if not isinstance(v, list):
        raise ValueError(f"{key} {v!r} is not a list")
    return v
