"""The pit board's web side: the page, one Server-Sent Events stream of the whole floor, a table's detail,
and the one authenticated action, acknowledging an alert (aiohttp, as the table display).

Routes: ``/`` the page, ``/feed`` the stream (each message the whole board as JSON), ``/board`` the
same JSON once, ``/tables/ID`` a table's recall and alerts, ``POST /alerts/ID/ack`` with
``Authorization: Bearer TOKEN`` (an operator's, :mod:`pitboard.operators`), ``/report`` the
reports page (``croupier floor report``'s: :mod:`pitboard.report_route`), ``/static/...`` the page's
files. Its bounds (header timeout, streams at once, bad-request log lines) are the display's,
:mod:`signage.limits`, and so is the stream itself (:func:`signage.server.stream`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from aiohttp import web

from controller.floor import alerts
from pitboard import operators
from pitboard.board import Board
from pitboard.history import table_detail
from pitboard.report_route import report_handler
from signage.limits import StreamSlots, WebLimits, host_check
from signage.server import no_icon, stream

if TYPE_CHECKING:
    from nats.aio.client import Client as NATS

log = logging.getLogger("croupier.pitboard")

STATIC = Path(__file__).resolve().parent / "static"
BOARD: web.AppKey[Board] = web.AppKey("board", Board)
STREAMS: web.AppKey[StreamSlots] = web.AppKey("streams", StreamSlots)
OPERATORS: web.AppKey[Path] = web.AppKey("operators", Path)
#: Where an acknowledgement is published (set once NATS is connected; None: not yet).
PUBLISH: web.AppKey[list[NATS]] = web.AppKey("publish", list)


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def feed(request: web.Request) -> web.StreamResponse:
    slots = request.app[STREAMS]
    if not slots.take():
        raise web.HTTPServiceUnavailable(
            text=f"this board already serves {slots.limit} live streams (its limit)",
            headers={"Retry-After": "5"})
    try:
        return await stream(request, request.app[BOARD])
    finally:
        slots.give_back()


async def board_json(request: web.Request) -> web.Response:
    return web.Response(text=request.app[BOARD].payload, content_type="application/json")


async def table(request: web.Request) -> web.Response:
    table_id = request.match_info["table"]
    detail = await asyncio.to_thread(table_detail, request.app[BOARD].dsn, table_id)
    if detail is None:
        raise web.HTTPNotFound(text=f"the floor has no table {table_id!r}")
    return web.json_response(detail)


def _operator(request: web.Request) -> str:
    """The operator the request's bearer token names; 401 if none does (nothing is changed then)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    name = None
    if scheme.lower() == "bearer" and token.strip():
        try:
            name = operators.who(request.app[OPERATORS], token.strip())
        except operators.OperatorError as exc:  # the file's path and state are the log's, not a caller's
            log.error("%s", exc)
            raise web.HTTPInternalServerError(
                text="the pit board's operators file cannot be used: its log says why") from None
    if name is None:
        raise web.HTTPUnauthorized(text="an operator's token is needed (croupier floor operator add NAME)",
                                   headers={"WWW-Authenticate": 'Bearer realm="pit board"'})
    return name


async def acknowledge(request: web.Request) -> web.Response:
    """Record the operator's acknowledgement, publish the alert's new state, answer it. A repeated
    acknowledgement answers the first one (by whom and when), unchanged."""
    by = _operator(request)
    try:
        alert_id = int(request.match_info["alert"])
    except ValueError:
        raise web.HTTPNotFound(text="no such alert") from None

    def ack() -> alerts.Alert | None:
        with psycopg.connect(request.app[BOARD].dsn, connect_timeout=5) as conn:
            return alerts.acknowledge(conn, alert_id, by)

    alert = await asyncio.to_thread(ack)
    if alert is None:
        raise web.HTTPNotFound(text=f"no alert {alert_id}")
    body = alert.message()
    for nc in request.app[PUBLISH]:
        await nc.publish(alerts.subject(alert.table_id), json.dumps(body).encode())
    request.app[BOARD].take_alert(json.dumps(body).encode())  # this board at once, NATS or not
    log.info("alert %s (%s, %s) acknowledged by %s", alert.id, alert.table_id, alert.kind, alert.acked_by)
    return web.json_response(body)


def make_app(board: Board, operators_file: Path, limits: WebLimits | None = None) -> web.Application:
    """The app; run it with ``AppRunner(app, **limits.runner_options())`` so its timeouts hold."""
    limits = limits or WebLimits()
    app = web.Application(middlewares=[host_check(limits.hosts)])
    app[BOARD] = board
    app[STREAMS] = StreamSlots(limits.max_streams)
    app[OPERATORS] = operators_file
    app[PUBLISH] = []
    app.router.add_get("/", index)
    app.router.add_get("/feed", feed)
    app.router.add_get("/board", board_json)
    app.router.add_get("/tables/{table}", table)
    app.router.add_post("/alerts/{alert}/ack", acknowledge)
    app.router.add_get("/report", report_handler(board.dsn, board.day))
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_static("/static/", STATIC)
    return app

