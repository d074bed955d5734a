"""``croupier watch``: follow a table's events live (snapshot first, then every newer event).

It is the reference subscriber of docs/zeromq.md: it subscribes, takes a
snapshot, prints only events newer than the snapshot's ``seq``, and when a
``seq`` is missing it says so and re-syncs through the snapshot socket.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from controller.daemon.client import (
    DEFAULT_STALE_AFTER,
    DaemonUnavailable,
    Subscriber,
)
from controller.daemon.config import TableFileError, load_table
from controller.daemon.endpoints import EndpointError
from controller.daemon.keys import ClientCredentials, KeyFileError
from controller.money import DEFAULT_CURRENCY, Currency
from controller.tools.demo_table import demo_zeromq
from controller.tools.event_text import credits_text, format_event, result_text
from controller.tools.key_options import add_key_arguments, credentials, events_key


def format_lamps(p: dict[str, Any]) -> str:
    """``lamps: seat 2 [hit stand double] spots [main] | dealer [close_betting] | tower in_play``.

    Lit lamps only; a blinking decision lamp (the seat is to act) is marked
    ``*``, and the tilt pattern is written once rather than per lamp.
    """
    if p.get("fault"):
        dealer = " ".join(p.get("dealer", {}))
        lit = f"[{dealer}]" if dealer else "dark"
        return f"lamps: FAULT pattern on every seat | dealer {lit} | tower fault"
    parts = []
    for seat, lamps in p.get("seats", {}).items():
        words = [w + ("*" if m == "blink" else "") for w, m in lamps.get("buttons", {}).items()]
        text = f"seat {seat}" + (f" [{' '.join(words)}]" if words else "")
        if lamps.get("spots"):
            text += f" spots [{' '.join(lamps['spots'])}]"
        if words or lamps.get("spots"):
            parts.append(text)
    if p.get("dealer"):
        parts.append(f"dealer [{' '.join(p['dealer'])}]")
    tower = [name for name in p.get("tower", {}) if name != "fault"] + (
        ["fault"] if "fault" in p.get("tower", {}) else [])
    parts.append(f"tower {' '.join(tower) or 'dark'}")
    return "lamps: " + " | ".join(parts)


def format_feed(kind: str, data: dict[str, Any], stale_after: float) -> str:
    """The line a display shows when its feed goes quiet (``stale``) or comes back (``live``)."""
    if kind == "stale":
        return (f"== STALE: nothing from the table for {stale_after:g} s (daemon down or network?); "
                f"showing seq {data.get('seq')}")
    return f"== live again ({data.get('event', 'message')} from {data.get('table', '?')})"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--table",
        action="append",
        metavar="FILE",
        help="table file: its id and endpoints; repeat for several tables side by side (live view); "
        "default $CROUPIER_TABLE, else the PUB and snapshot endpoints of the table `make demo` runs "
        "(firmware_configs/tables/baccarat_7seat_sim.yaml)",
    )
    parser.add_argument(
        "--plain", action="store_true",
        help="one line per event instead of the live view, for logs and pipes (automatic when stdout "
        "is not a terminal, and with --json, --count or --idle-exit)",
    )
    parser.add_argument("--pub", help="PUB endpoint (overrides the table file)")
    parser.add_argument("--snapshot", help="snapshot endpoint (overrides the table file)")
    parser.add_argument("--json", action="store_true", help="print each event as its JSON line")
    add_key_arguments(parser, key_help=(
        "your CURVE key, only for a table whose file says security.curve_events: true (then default "
        "$CROUPIER_KEY); a table with plain events (the default) is followed without one, whatever "
        "$CROUPIER_KEY says"))
    parser.add_argument(
        "--count", type=int, default=0, help="stop after N events (default: run until Ctrl-C)"
    )
    parser.add_argument("--idle-exit", type=float, default=0.0,
                        help="stop after N seconds without events (exit 1 if the table could not be "
                             "reached, or refused the key, for that long)")
    parser.add_argument("--no-lamps", action="store_true", help="do not print the panels' lamp lines")
    parser.add_argument(
        "--stale-after", type=float, default=DEFAULT_STALE_AFTER,
        help=f"say the feed is stale after N seconds without any message (heartbeats come every second; "
        f"default {DEFAULT_STALE_AFTER:g})",
    )


def watch(
    sub: Subscriber, out: TextIO, as_json: bool, count: int = 0, idle: float = 0.0, lamps: bool = True
) -> int:
    """Print the table's events (and, if ``sub.side``, lamp lines and shoe statuses) until done."""
    seen = 0
    cur = DEFAULT_CURRENCY  # the snapshot names the table's currency before any event
    last_lamps = ""
    for kind, data in sub.events(timeout=idle or None):
        if kind in ("stale", "live"):
            out.write(format_feed(kind, data, sub.stale_after) + "\n")
            out.flush()
            continue
        if kind == "side":
            if data["event"] == "heartbeat" or (data["event"] == "lamps" and not lamps):
                continue  # the Subscriber acts on heartbeats (gaps, new journal, lamps): not news
            if as_json:
                out.write(json.dumps(data) + "\n")
            elif data["event"] == "lamps":
                line = format_lamps(data)
                if line == last_lamps:
                    continue  # unchanged: a lamp line is news only when a lamp changed
                last_lamps = line
                out.write(line + "\n")
            else:
                rest = {k: v for k, v in data.items() if k not in ("event", "table", "at")}
                out.write(f"        {data['event']:<14} {result_text(rest) or '(no detail)'}\n")
            out.flush()
            continue
        if kind == "snapshot":
            state = data["state"]
            cur = Currency.from_dict(data.get("currency"))
            if as_json:
                out.write(
                    json.dumps(
                        {"event": "snapshot", "table": data["table"], "journal_id": data.get("journal_id"),
                         "seq": data["seq"], "state": state, "journal_fault": data.get("journal_fault")}
                    )
                    + "\n"
                )
            else:
                gap = " (re-synced after a gap)" if sub.gaps else ""
                if sub.redraws:
                    gap = f" (NEW JOURNAL {str(data.get('journal_id'))[:8]}: everything redrawn)"
                out.write(
                    f"== {data['table']}: snapshot at seq {data['seq']}{gap}: {state['game']} round "
                    f"{state['round']} {state['phase']}; credits {credits_text(state['credits'], cur)}\n"
                )
                if fault := data.get("journal_fault"):  # the table is halted: said first, as a tilt is
                    out.write(f"!! JOURNAL FAULT {fault.get('file')}: {fault.get('error')}: "
                              "the table is halted\n")
                if sub.side and lamps and "lamps" in data:
                    out.write(format_lamps(data["lamps"]) + "\n")
        else:
            out.write((json.dumps(data) if as_json else format_event(data, cur)) + "\n")
            seen += 1
        out.flush()
        if count and seen >= count:
            break
    return seen


def _endpoints(
    args: argparse.Namespace, path: str | None
) -> tuple[str, str, str, ClientCredentials | None]:
    """(table id or "", PUB, snapshot, CURVE key) for one ``--table`` (or none: ``make demo``'s endpoints).

    ``TableFileError`` or ``KeyFileError`` if the table file or the key cannot be used.
    """
    table = ""
    pub, snap = args.pub, args.snapshot
    cfg = None
    if path:
        cfg = load_table(path)
    # Plain PUB and snapshot sockets (the default) fail a CURVE handshake: a key is used only where the
    # table file says its events need one (or, with no table file, when --key is given outright).
    key_path = args.key
    if cfg is not None:
        key_path = events_key(args.key, cfg)
    key = credentials(key_path, args.server_key, cfg)
    if cfg is not None:
        table = cfg.table_id
        pub = pub or cfg.spec.zeromq.pub
        snap = snap or cfg.spec.zeromq.snapshot
    if pub and snap:
        return table, pub, snap, key
    defaults = demo_zeromq()  # no table file: the demo's endpoints, so `croupier watch` follows `make demo`
    return table, pub or defaults.pub, snap or defaults.snapshot, key


def run(args: argparse.Namespace) -> int:
    paths: list[str | None] = list(args.table or [os.environ.get("CROUPIER_TABLE")])
    try:
        tables = [_endpoints(args, path) for path in paths]
    except (TableFileError, KeyFileError) as exc:
        print(f"croupier watch: {exc}", file=sys.stderr)
        return 2
    plain = args.plain or args.json or args.count or args.idle_exit or not sys.stdout.isatty()
    if not plain:
        return _run_live(args, tables)
    if len(tables) > 1:
        print("croupier watch: the line output (--plain, --json, a pipe) follows one table; "
              "run one watch per table", file=sys.stderr)
        return 2
    table, pub, snap, key = tables[0]
    try:
        sub = Subscriber(pub, snap, table, timeout=2.0, side=True, stale_after=args.stale_after,
                         key=key)
    except EndpointError as exc:
        print(f"croupier watch: {exc}", file=sys.stderr)
        return 2
    try:
        failing_since: float | None = None
        while True:
            try:
                watch(sub, sys.stdout, args.json, args.count, args.idle_exit, lamps=not args.no_lamps)
                return 0
            except (RuntimeError, DaemonUnavailable) as exc:  # daemon gone or refusing: say so, retry
                now = time.monotonic()
                failing_since = now if failing_since is None else failing_since
                if args.idle_exit and now - failing_since >= args.idle_exit:
                    # Nothing arrives while the table cannot be reached (or refuses our key): that is
                    # idle too, and a script waiting on --idle-exit must not wait for ever.
                    print(f"croupier watch: {exc}; no events for {args.idle_exit:g} s (--idle-exit): "
                          "giving up", file=sys.stderr)
                    return 1
                print(f"croupier watch: {exc}; retrying", file=sys.stderr)
                time.sleep(1.0)
    except KeyboardInterrupt:
        return 0
    finally:
        sub.close()


def _run_live(args: argparse.Namespace, tables: list[tuple[str, str, str, ClientCredentials | None]]) -> int:
    from controller.tools.live_view import TableView, run_live  # rich is loaded only for the live view

    views = [TableView(table or pub) for table, pub, _, _ in tables]

    def subscriber(
        table: str, pub: str, snap: str, key: ClientCredentials | None
    ) -> Callable[[], Subscriber]:
        return lambda: Subscriber(pub, snap, table, timeout=2.0, side=True, stale_after=args.stale_after,
                                  key=key)

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a technician leaves the view
        run_live(views, [subscriber(*t) for t in tables])
    return 0
