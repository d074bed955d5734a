"""``GET /report`` on the pit board: ``croupier floor report``'s page for a time range and grouping.

The same code as the command (controller/floor/report.py aggregates, report_page.py draws), so the
page and ``croupier floor report --json`` never disagree. Query string: ``from`` and ``to`` (as the
command takes them; default: the current gaming day so far, the very "today" of the tiles'
``house_today``: one definition, controller/floor/gaming_day.py, the board's ``--gaming-day-starts``;
it was UTC midnight while the tiles used local midnight, two "todays" off UTC), ``by`` (table, game,
dealer or hour; default table) and ``table`` (one table only).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Final

import psycopg
from aiohttp import web

from controller.floor.gaming_day import MIDNIGHT, GamingDay
from controller.floor.queries import parse_when
from controller.floor.report import aggregate, from_floor
from controller.floor.report_page import render
from controller.floor.report_par import NoPar

GROUPINGS: Final = ("table", "game", "dealer", "hour")


def _range(query: web.Request, day: GamingDay, now: float) -> tuple[float, float, str | None]:
    """The range asked for (a missing ``from``: the gaming day's start; ``to``: now), then which gaming
    day it is when neither was asked for (None: a range shown by its times alone)."""
    start = query.query.get("from")
    end = query.query.get("to")
    named = None if start or end else f"{day.describe(now)} so far"
    return (parse_when(start) if start else day.start(now), parse_when(end) if end else now, named)


def report_handler(dsn: str, day: GamingDay = MIDNIGHT) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The handler for ``/report`` reading the floor database at ``dsn``, "today" being ``day``'s."""

    async def report(request: web.Request) -> web.Response:
        by = request.query.get("by", "table")
        if by not in GROUPINGS:
            raise web.HTTPBadRequest(text=f"by: one of {', '.join(GROUPINGS)}, not {by!r}")
        try:
            start, end, named = _range(request, day, time.time())
        except ValueError as exc:
            raise web.HTTPBadRequest(text=f"from/to: {exc}") from None
        table = request.query.get("table") or None

        def build() -> str:
            with psycopg.connect(dsn, connect_timeout=5) as conn:
                rounds = from_floor(conn, start, end, table)
            return render(aggregate(rounds, by, start, end), named)

        try:
            page = await asyncio.to_thread(build)
        except (NoPar, ValueError) as exc:
            raise web.HTTPBadRequest(text=f"report: {exc}") from None
        return web.Response(text=page, content_type="text/html", charset="utf-8")

    return report
