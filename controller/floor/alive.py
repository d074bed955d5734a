"""Uplinks' heartbeats: which tables are online, since when, and how long their journals are.

A row is published only when the table journals something, so a quiet table and a dead uplink
look the same in the stream. Each uplink therefore says every few seconds, on core NATS (not
stored: ``croupier.<table>.alive`` is outside the stream's subjects, and inside the table's own
``croupier.<table>.>`` permission), which journal it follows and how many rows it has. Recorders
keep the newest word of each and write it into ``tables`` (``heartbeat_at``, ``online_since``,
``journal_rows``); ``croupier floor tables`` calls a table online while its heartbeat is recent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

import psycopg

from controller.floor.wire import own_table

if TYPE_CHECKING:  # annotations only: `floor tables`/`recall` use OFFLINE_AFTER without loading nats-py
    from nats.aio.client import Client as NATS
    from nats.aio.msg import Msg

log = logging.getLogger("croupier.floor")

ALIVE_SUBJECTS: Final = "croupier.*.alive"
#: How often an uplink says it is alive, in seconds.
EVERY: Final = 5.0
#: A table whose uplink was silent this long is offline (three heartbeats missed).
OFFLINE_AFTER: Final = 3 * EVERY
#: A heartbeat's counts are written into ``bigint`` columns: one past it failed the whole batch's UPDATE.
_BIGINT: Final = 2**63


class Speaker(Protocol):
    """What a heartbeat says: the uplink's journal, its length and the last row the stream took."""

    journal_id: str | None
    journal_rows: int
    acked: int


def alive_subject(table_id: str) -> str:
    return f"croupier.{table_id}.alive"


async def beat(nc: NATS, table_id: str, state: Speaker, every: float, stop: asyncio.Event,
               extra: Callable[[], dict[str, Any]] | None = None, wake: asyncio.Event | None = None) -> None:
    """Publish ``{table, journal, journal_rows, acked, sent_at}`` from ``state`` (the uplink) and
    ``extra()`` (what it knows of its daemon) every ``every`` s until ``stop``, and at once when ``wake``
    is set. ``sent_at``: the table's clock when sent, by which the floor sees a clock off (docs/floor.md)."""
    wake = wake or asyncio.Event()
    while not stop.is_set():
        wake.clear()
        if state.journal_id is not None:
            body = {"table": table_id, "journal": state.journal_id, "journal_rows": state.journal_rows,
                    "acked": state.acked, **(extra() if extra else {}), "sent_at": time.time()}
            with contextlib.suppress(Exception):  # the floor being away is the uplink's business, not this
                await nc.publish(alive_subject(table_id), json.dumps(body).encode())
        waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(wake.wait())]
        await asyncio.wait(waits, timeout=every, return_when=asyncio.FIRST_COMPLETED)
        for task in waits:
            task.cancel()


def loads(data: bytes) -> dict[str, Any]:
    """A floor message from NATS (a heartbeat, an alert) as a JSON object, or ValueError saying why: not
    JSON (nor UTF-8), nested deeper than Python's stack (``json.loads`` raised RecursionError), a number
    that is not finite (``NaN``, ``1e999``: a browser's ``JSON.parse`` refuses the ``Infinity`` the board
    would write back), or another JSON value than an object."""
    try:
        d = json.loads(data, parse_constant=_not_json, parse_float=_finite)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    if not isinstance(d, dict):
        raise ValueError(f"a JSON {type(d).__name__}, not an object")
    return d


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    if not math.isfinite(value := float(text)):
        raise ValueError(f"the number {text[:24]} is out of range")
    return value


def _count(d: dict[str, Any], key: str) -> int:
    if key not in d:
        raise ValueError(f"no {key}")
    v = d[key]
    if type(v) is not int or not 0 <= v < _BIGINT:
        raise ValueError(f"{key} {v!r:.40} is not a count (a whole number, 0 to 2**63-1)")
    return v


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """What the floor reads of a heartbeat (the alert service reads its other fields)."""

    table: str
    journal: str
    journal_rows: int
    #: The last row the stream took (0 if it does not say).
    acked: int

    @classmethod
    def parse(cls, data: bytes, subject: str | None = None) -> Heartbeat:
        """The heartbeat in ``data``, heard on ``subject`` (None: not checked), whose table it must name;
        ValueError saying what is wrong: not a JSON object (:func:`loads`), a table or journal that is
        not a string, or ``journal_rows`` or ``acked`` not a count (``1e999`` raised OverflowError out of
        the listener; 2**70 failed the recorder's write of every table's heartbeats)."""
        return cls.of(loads(data), subject)

    @staticmethod
    def body(data: bytes, subject: str) -> dict[str, Any]:
        """The heartbeat in ``data`` as the JSON object the alert service's rules read (every field, not
        only this class's), held to :meth:`parse`'s checks; ValueError saying what is wrong."""
        d = loads(data)
        Heartbeat.of(d, subject)
        return d

    @classmethod
    def of(cls, d: dict[str, Any], subject: str | None = None) -> Heartbeat:
        """:meth:`parse` of a heartbeat already read as a JSON object by :func:`loads` (the alert service
        keeps the object: its rules read more of it)."""
        if subject is not None:
            own_table(d.get("table"), subject, "alive")
        table, journal = d.get("table"), d.get("journal")
        if not isinstance(table, str) or not isinstance(journal, str):
            raise ValueError(f"table {table!r:.40} and journal {journal!r:.40}: not both strings")
        return cls(table, journal, _count(d, "journal_rows"), _count(d, "acked") if "acked" in d else 0)


class Board:
    """The newest heartbeat of each table's journal, heard by a recorder and not written yet."""

    def __init__(self) -> None:
        self.heard: dict[tuple[str, str], int] = {}

    async def listen(self, nc: NATS) -> None:
        async def heard(msg: Msg) -> None:
            try:
                beat = Heartbeat.parse(msg.data, msg.subject)
            except ValueError as exc:  # what nats-py's callback raised was printed, the heartbeat lost
                log.warning("a heartbeat on %s that does not parse, not recorded: %s", msg.subject, exc)
                return
            self.heard[(beat.table, beat.journal)] = beat.journal_rows

        await nc.subscribe(ALIVE_SUBJECTS, cb=heard)

    def take(self) -> dict[tuple[str, str], int]:
        taken, self.heard = self.heard, {}
        return taken


def record(conn: psycopg.Connection[Any], heard: dict[tuple[str, str], int]) -> None:
    """Write heartbeats into ``tables`` (a journal the floor has no row of yet waits for its first row)."""
    if not heard:
        return
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(
            """
            UPDATE tables SET
                online_since = CASE WHEN heartbeat_at IS NULL
                                      OR heartbeat_at < now() - %s * interval '1 second'
                                    THEN now() ELSE online_since END,
                heartbeat_at = now(),
                journal_rows = GREATEST(journal_rows, %s)
            WHERE table_id = %s AND journal_id = %s
            """, [(OFFLINE_AFTER, rows, t, j) for (t, j), rows in sorted(heard.items())])
