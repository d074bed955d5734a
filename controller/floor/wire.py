"""One journal row as a floor message: subject, message id and JSON body; built on the Pi, read on the floor.

The body carries everything the floor needs so that it never replays a game itself: the input as
journaled (with its source, idempotency key and time), the events it caused exactly as the daemon
published them (numbered by ``seq``), and, when the row ended a round, the round's record as
``ctl recall`` gives it. The message id ``<table>:<journal_id>:<row>`` lets JetStream drop a resend,
and the primary keys in PostgreSQL make a redelivery harmless.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

#: The stream every table publishes into, and the subjects it holds.
STREAM: Final = "CROUPIER"
SUBJECTS: Final = "croupier.*.rows"
MSG_ID: Final = "Nats-Msg-Id"
#: Version of the body's layout (a recorder refuses a body it does not know).
FORMAT: Final = 1


def subject(table_id: str) -> str:
    """The subject a table publishes its rows on (a table id has no '.', '*' or '>': see the table file)."""
    return f"croupier.{table_id}.rows"


def msg_id(table_id: str, journal_id: str, row: int) -> str:
    return f"{table_id}:{journal_id}:{row}"


def parse_msg_id(text: str) -> tuple[str, str, int]:
    """(table, journal_id, row) of a message id; ValueError if it is not one of ours."""
    table_id, journal_id, row = text.rsplit(":", 2)
    return table_id, journal_id, int(row)


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

    @classmethod
    def parse(cls, data: bytes) -> RowMessage:
        """The message in ``data``; ValueError if it is not a floor row message this code reads."""
        try:
            d = json.loads(data)
            if d.get("format") != FORMAT:
                raise ValueError(f"format {d.get('format')!r}, this recorder reads {FORMAT}")
            return cls(str(d["table"]), str(d["journal"]), int(d["row"]), float(d["at"]), str(d["source"]),
                       d["ref"], dict(d["input"]), int(d["first_seq"]), list(d["events"]), str(d["game"]),
                       dict(d["options"]), int(d["journal_rows"]), d["round"], dict(d["currency"]))
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not a floor row message: {exc!r}") from None
