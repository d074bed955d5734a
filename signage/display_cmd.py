"""``croupier display TABLE_FILE... [--listen HOST:PORT]``: the signage display of one or more tables.

Reads each table file (its id, game, ZeroMQ endpoints and ``display:``
section), follows each table (:mod:`signage.feed`) and serves the page
(:mod:`signage.server`). It prints its address once it listens, so a
wrapper (``croupier demo``, a kiosk script) can open it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import os
import signal
import sys
from typing import Any

import zmq.asyncio

from controller.daemon.config import TableConfig, TableFileError, load_table
from controller.daemon.keys import ClientCredentials, KeyFileError
from controller.digits import whole_number
from controller.orphans import die_with_parent
from controller.quote import quote
from controller.tools.key_options import add_key_arguments, credentials, events_key
from signage.feed import TableFeed, run_feeds
from signage.view import limits_text

DEFAULT_LISTEN = "127.0.0.1:8080"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tables", nargs="+", metavar="TABLE_FILE", help="table files to show")
    parser.add_argument(
        "--listen",
        default=os.environ.get("CROUPIER_DISPLAY_LISTEN") or DEFAULT_LISTEN,
        help=f"HOST:PORT to serve the page on (default $CROUPIER_DISPLAY_LISTEN, else {DEFAULT_LISTEN}: "
        "the display unit's instance setting; port 0 picks a free one)",
    )
    parser.add_argument("--pub", help="override the (only) table's PUB endpoint")
    parser.add_argument("--snapshot", help="override the (only) table's snapshot endpoint")
    add_key_arguments(parser, key_help=(
        "the display's CURVE key (an observer's .key_secret), only for a table whose file says "
        "security.curve_events: true (then default $CROUPIER_KEY); plain events need none"))
    parser.add_argument("--log-level", default="WARNING", help="DEBUG, INFO, WARNING (default)")
    parser.add_argument(
        "--exit-with-parent",
        type=int,
        metavar="PID",
        help=argparse.SUPPRESS,  # internal: croupier demo stops its display with it
    )


def parse_listen(text: str) -> tuple[str, int]:
    """``--listen HOST:PORT`` (``[::1]:8080``; no host: 127.0.0.1); ValueError saying ``--listen: ...``.

    The port is ASCII digits, at most five, counted before int(): ``str.isdigit()`` took ``²``, which
    int() then refused in its own words, and int() raised its own ValueError past 4,300 digits.
    """
    host, sep, port_text = text.rpartition(":")
    if not sep or (port := whole_number(port_text, 5)) is None or port > 65535:
        raise ValueError(f"--listen: expected HOST:PORT such as 127.0.0.1:8080, not {quote(text, 60)}")
    return host.strip("[]") or "127.0.0.1", port


def settings_of(config: TableConfig) -> dict[str, Any]:
    spec = config.spec.display
    out = spec.model_dump()
    out["title"] = spec.title or config.spec.description or config.table_id
    currency = config.spec.currency
    symbol = spec.symbol if spec.symbol is not None else (f"{currency.code} " if currency.code else "")
    money = currency.currency()
    out["symbol"] = symbol
    out["limits_text"] = limits_text(symbol, money, config.limits.model_dump())
    if config.game_name == "baccarat":  # what each bet pays, as the table file says (players ask for it)
        options = config.options_dict()
        out["payouts"] = {"player": "1:1", "banker": options["banker_pays"], "tie": options["tie_pays"]}
    return out


def key_of(config: TableConfig, args: argparse.Namespace) -> ClientCredentials | None:
    """The display's key for ``config``'s table: none where its events are plain (a CURVE handshake
    with a plain socket never completes). :class:`KeyFileError` names a key that cannot be used."""
    key = events_key(args.key, config)
    if key is None and config.spec.security.curve_events:
        raise KeyFileError(f"table {config.table_id}: its file says security.curve_events, so the display "
                           "needs a key: --key FILE.key_secret (an observer's) or $CROUPIER_KEY")
    return credentials(key, args.server_key, config)


def build_feeds(
    configs: list[TableConfig], args: argparse.Namespace, ctx: zmq.asyncio.Context
) -> list[TableFeed]:
    feeds = []
    for config in configs:
        z = config.spec.zeromq
        feeds.append(
            TableFeed(
                config.table_id,
                config.game_name,
                args.pub or z.pub,
                args.snapshot or z.snapshot,
                settings_of(config),
                ctx,
                stale_after=config.spec.display.stale_after,
                key=key_of(config, args),
            )
        )
    return feeds


async def _watch_parent(pid: int, stop: asyncio.Event) -> None:
    while os.getppid() == pid:
        await asyncio.sleep(0.5)
    stop.set()


async def serve(feeds: list[TableFeed], host: str, port: int, parent: int | None = None) -> None:
    # Imported here, not at the top: every ``croupier`` command builds its parser from this module,
    # and aiohttp and its dependencies are a third of a table daemon's memory.
    from aiohttp import web

    from signage.limits import WebLimits, host_names
    from signage.server import make_app

    limits = WebLimits(hosts=host_names(host))
    app = make_app({f.table: f for f in feeds}, limits)
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0, **limits.runner_options())
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    shown = f"[{host}]" if ":" in host else host
    print(f"display: http://{shown}:{bound}/  ({', '.join(f.table for f in feeds)})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    task = asyncio.create_task(run_feeds(feeds))
    watch = asyncio.create_task(_watch_parent(parent, stop)) if parent is not None else None
    try:
        await stop.wait()
    finally:
        if watch is not None:
            watch.cancel()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await runner.cleanup()


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        host, port = parse_listen(args.listen)
        configs = [load_table(path) for path in args.tables]
    except (ValueError, TableFileError) as exc:
        print(f"croupier display: {exc}", file=sys.stderr)
        return 2
    ids = [c.table_id for c in configs]
    if len(set(ids)) != len(ids):
        print(f"croupier display: a table id appears twice: {ids}", file=sys.stderr)
        return 2
    if (args.pub or args.snapshot) and len(configs) != 1:
        print("croupier display: --pub/--snapshot need exactly one table file", file=sys.stderr)
        return 2
    ctx = zmq.asyncio.Context()
    try:
        feeds = build_feeds(configs, args, ctx)
    except KeyFileError as exc:
        ctx.destroy(linger=0)
        print(f"croupier display: {exc}", file=sys.stderr)
        return 2
    try:
        if args.exit_with_parent is not None:
            die_with_parent()
        asyncio.run(serve(feeds, host, port, args.exit_with_parent))
    except OSError as exc:
        in_use = exc.errno == errno.EADDRINUSE
        why = "the address is in use by another program" if in_use else exc.strerror or exc
        print(f"croupier display: cannot listen on {host}:{port}: {why} (--listen HOST:PORT moves it)",
              file=sys.stderr)
        return 1
    finally:
        ctx.destroy(linger=0)
    return 0
