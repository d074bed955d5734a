"""``croupier floor serve`` (the pit board) and ``croupier floor operator add NAME`` (who may acknowledge).

The floor's command line (``controller.floor.cli``) hands its ``floor`` sub-parsers to
:func:`register` with its NATS options, so the board takes the same ``--nats``, user, nkey and TLS
options as a recorder. aiohttp, nats-py and psycopg are imported only when the board runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.floor.gaming_day import add_starts_option

EXAMPLE = ("croupier floor serve --listen 127.0.0.1:8090 --nats nats://127.0.0.1:4222 \\\n    "
           "--db postgresql://croupier_board@127.0.0.1:5432/floor --operators /etc/croupier/operators.json")
SERVE_DOC = """The pit board: one tile per table of the floor, live, in a browser (docs/floor.md).

Fed by NATS (every table's rows from JetStream, the uplinks' heartbeats, the alerts) and by
PostgreSQL (each table's state at start, a table's recall and alerts). Clicking a tile opens the
table; an operator acknowledges an alert with the token `croupier floor operator add` gave them.
It prints its address once it listens."""


def register(floor_sub: argparse._SubParsersAction[argparse.ArgumentParser],
             nats_arguments: Callable[[argparse.ArgumentParser], None],
             nats_options: Callable[[str, argparse.Namespace], dict[str, Any] | None]) -> None:
    """Add ``serve`` and ``operator`` to ``croupier floor``."""
    s = floor_sub.add_parser("serve", help="the pit board: every table live in a browser",
                             description=SERVE_DOC + "\n\nExample:\n  " + EXAMPLE,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--listen", default="127.0.0.1:8090",
                   help="HOST:PORT to serve on (127.0.0.1:8090; port 0: any free port)")
    nats_arguments(s)
    s.add_argument("--db", required=True,
                   help="PostgreSQL URL (role croupier_board: the reader's, and acknowledging)")
    s.add_argument("--operators", required=True, type=Path, metavar="FILE",
                   help="the operators and their hashed tokens (croupier floor operator add)")
    add_starts_option(s)
    s.set_defaults(func=lambda args: serve(args, nats_options))
    o = floor_sub.add_parser("operator", help="who may acknowledge alerts on the pit board",
                             description="Operators of the pit board. `add NAME` gives NAME a new token "
                             "(replacing theirs) and prints it once; the file keeps only its hash (0600)."
                             "\n\nExample:\n  croupier floor operator add Ann --operators "
                             "/etc/croupier/operators.json")
    o.add_argument("action", choices=["add"], help="add: a new token for NAME")
    o.add_argument("name", help="the operator's name, as acknowledgements show it")
    o.add_argument("--operators", required=True, type=Path, metavar="FILE", help="the operators file")
    o.set_defaults(func=add_operator)


def add_operator(args: argparse.Namespace) -> int:
    from pitboard import operators

    try:
        token = operators.add(args.operators, args.name)
    except (operators.OperatorError, OSError) as exc:
        print(f"croupier floor operator: {exc}", file=sys.stderr)
        return 1
    print(f"operator {args.name}: token (shown only now; the file keeps its hash):\n{token}")
    return 0


def serve(args: argparse.Namespace,
          nats_options: Callable[[str, argparse.Namespace], dict[str, Any] | None]) -> int:
    from signage.display_cmd import parse_listen

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s pitboard %(levelname)s %(message)s")
    try:
        host, port = parse_listen(args.listen)
    except ValueError as exc:
        print(f"croupier floor serve: {exc}", file=sys.stderr)
        return 2
    options = nats_options("floor serve", args)
    if options is None:
        return 1
    try:
        asyncio.run(_serve(args, host, port, options))
    except OSError as exc:
        why = "the address is in use" if exc.errno == errno.EADDRINUSE else exc.strerror or exc
        print(f"croupier floor serve: cannot listen on {host}:{port}: {why}", file=sys.stderr)
        return 1
    return 0


async def _serve(args: argparse.Namespace, host: str, port: int, options: dict[str, Any]) -> None:
    from aiohttp import web

    from controller.floor.gaming_day import GamingDay
    from controller.floor.uplink import Stopped, connect
    from pitboard.board import Board, follow
    from pitboard.server import PUBLISH, make_app
    from signage.limits import WebLimits, host_names

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if args.exit_with_parent is not None:
        from controller.daemon.startup import watch_parent
        from controller.orphans import die_with_parent

        die_with_parent()
        watcher = asyncio.ensure_future(watch_parent(args.exit_with_parent, stop.set))
    board, limits = Board(args.db, GamingDay(args.gaming_day_starts)), WebLimits(hosts=host_names(host))
    app = make_app(board, args.operators, limits)
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0, **limits.runner_options())
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    print(f"pit board: http://{f'[{host}]' if ':' in host else host}:{bound}/", flush=True)
    nc = None
    try:
        nc = await connect(args.nats, stop, **options)
        app[PUBLISH].append(nc)
        await follow(board, nc, stop)
    except Stopped:
        pass
    finally:
        if args.exit_with_parent is not None:
            watcher.cancel()
        if nc is not None:
            with contextlib.suppress(Exception):
                await nc.close()
        await runner.cleanup()
