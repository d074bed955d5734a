"""``GET /report`` on the pit board: ``croupier floor report``'s page for a time range and grouping.

The same code as the command (controller/floor/report.py aggregates, report_page.py draws), so the
page and ``croupier floor report --json`` never disagree. Query string: ``from`` and ``to`` (as the
command takes them; default: today in UTC so far), ``by`` (table, game, dealer or hour; default
table) and ``table`` (one table only).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Final

import psycopg
from aiohttp import web

from controller.floor.queries import parse_when
from controller.floor.report import aggregate, from_floor
from controller.floor.report_page import render
from controller.floor.report_par import NoPar

GROUPINGS: Final = ("table", "game", "dealer", "hour")


def _range(query: web.Request) -> tuple[float, float]:
    """The range asked for, or today (UTC) up to now."""
    now = time.time()
    midnight = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start = query.query.get("from")
    end = query.query.get("to")
    return (parse_when(start) if start else midnight.timestamp(), parse_when(end) if end else now)


def report_handler(dsn: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The handler for ``/report`` reading the floor database at ``dsn``."""

    async def report(request: web.Request) -> web.Response:
        by = request.query.get("by", "table")
        if by not in GROUPINGS:
            raise web.HTTPBadRequest(text=f"by: one of {', '.join(GROUPINGS)}, not {by!r}")
        try:
            start, end = _range(request)
        except ValueError as exc:
            raise web.HTTPBadRequest(text=f"from/to: {exc}") from None
        table = request.query.get("table") or None

        def build() -> str:
            with psycopg.connect(dsn, connect_timeout=5) as conn:
                rounds = from_floor(conn, start, end, table)
            return render(aggregate(rounds, by, start, end))

        try:
            page = await asyncio.to_thread(build)
        except (NoPar, ValueError) as exc:
            raise web.HTTPBadRequest(text=f"report: {exc}") from None
        return web.Response(text=page, content_type="text/html", charset="utf-8")

    return report
