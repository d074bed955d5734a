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
import time
from collections.abc import Callable
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


class Board:
    """The newest heartbeat of each table's journal, heard by a recorder and not written yet."""

    def __init__(self) -> None:
        self.heard: dict[tuple[str, str], int] = {}

    async def listen(self, nc: NATS) -> None:
        async def heard(msg: Msg) -> None:
            try:
                d = json.loads(msg.data)
                own_table(d["table"], msg.subject, "alive")
                self.heard[(str(d["table"]), str(d["journal"]))] = int(d["journal_rows"])
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("a heartbeat on %s that does not parse: %s", msg.subject, exc)

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
