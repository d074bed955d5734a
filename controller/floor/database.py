"""The floor services' PostgreSQL connection: each piece of work retried across the database's absences.

The recorder and the alert service both outlive PostgreSQL's restarts (a failover, ``pg_ctl stop -m
immediate`` in the chaos bench): their work is done whole or not at all (one transaction), so when
the database goes away mid-work it is simply done again on a new connection. The work runs on a
worker thread, so a slow or absent database never stalls the service's NATS traffic.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg

from controller.floor.uplink import Stopped

log = logging.getLogger("croupier.floor")

T = TypeVar("T")


def _connect(dsn: str) -> psycopg.Connection[Any]:
    return psycopg.connect(dsn, connect_timeout=5)


class Database:
    """One connection to ``dsn``, opened on first use and again after each loss."""

    def __init__(self, dsn: str, stop: asyncio.Event) -> None:
        self.dsn = dsn
        self.stop = stop
        self.conn: psycopg.Connection[Any] | None = None

    async def run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``work(conn)`` on a worker thread until it succeeds, reconnecting while the database is away
        (0.2 s, doubling up to 3 s); :class:`Stopped` on stop (whatever it was for stays undone, and
        unacknowledged: it is delivered again)."""
        delay = 0.2
        while True:
            try:
                conn = self.conn
                if conn is None or conn.closed:
                    conn = self.conn = await asyncio.to_thread(_connect, self.dsn)
                return await asyncio.to_thread(work, conn)
            except psycopg.OperationalError as exc:
                log.warning("database unavailable (%s): retrying in %.1f s", str(exc).strip(), delay)
                self.close()
            if self.stop.is_set():
                raise Stopped("stopped while the database was away")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 3.0)

    def close(self) -> None:
        """Close the connection (the next :meth:`run` opens another)."""
        if self.conn is not None:
            self.conn.close()
        self.conn = None
