"""``croupier ctl``: operator commands to a running table daemon (docs/commands.md).

``croupier ctl --table firmware_configs/tables/baccarat_sim.yaml open``,
``... bet 1 player 500``, ``... recall 10``, ``... status``; ``--json``
prints the daemon's reply as it is. With ``--table FILE`` (or
``--expect-table ID``) every request names its table, and a daemon of
another table refuses it without doing anything; every answer starts with
the table (and journal) that gave it. The exit status is 0 when the command
was carried out, 1 when it was refused or invalid, 2 when the daemon cannot
be reached, answers for another table or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Final

from controller.daemon.client import BadReply, CommandClient, DaemonUnavailable
from controller.daemon.config import TableFileError, ZmqSpec, load_table
from controller.daemon.endpoints import EndpointError
from controller.tools.watch import format_event, money

#: ctl word -> (command, positional fields); integers are converted where the command expects them.
WORDS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "open": ("open", ()),
    "close": ("close", ()),
    "burn": ("burn", ()),
    "void": ("void", ()),
    "clear-tilt": ("clear_tilt", ()),
    "new-shoe": ("new_shoe", ()),
    "bet": ("bet", ("seat", "spot", "amount")),
    "cancel": ("cancel", ("seat", "spot")),
    "decide": ("decide", ("seat", "action", "amount?")),
    "credit-in": ("credit_in", ("seat", "amount")),
    "credit-out": ("credit_out", ("seat", "amount")),
    "set-dp": ("set_dp", ("seat",)),
    "card": ("card", ("card", "burn?")),
    "status": ("status", ()),
    "meters": ("meters", ("seat?",)),
    "recall": ("recall", ("n?",)),
    "snapshot": ("snapshot", ()),
    "ping": ("ping", ()),
}
_INTS: Final = {"seat", "amount", "n", "round"}
#: A person is waiting: say within two seconds that nothing answers (``--timeout`` for slow links).
CLI_TIMEOUT: Final = 2.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--table",
        default=os.environ.get("CROUPIER_TABLE"),
        help="table file (for its command endpoint); default $CROUPIER_TABLE, else the default "
        "loopback endpoint tcp://127.0.0.1:5558 (the one `make demo` uses)",
    )
    parser.add_argument("--endpoint", help="command endpoint (overrides the table file)")
    parser.add_argument(
        "--expect-table", metavar="ID",
        help="refuse a daemon whose table id is not ID (default: the id in --table's file)",
    )
    parser.add_argument("--json", action="store_true", help="print the reply JSON")
    parser.add_argument(
        "--timeout", type=float, default=CLI_TIMEOUT,
        help=f"seconds to wait for the reply before saying nothing answers (default {CLI_TIMEOUT:g})",
    )
    parser.add_argument("--round", type=int, help="recall: this round only")
    parser.add_argument("--ref", help="idempotency key: a resend with the same ref is not applied twice")
    parser.add_argument("--raw", action="store_true", help="WORDS is one JSON request sent as is")
    parser.add_argument(
        "words", nargs="+", metavar="WORDS", help=f"command and its arguments: {', '.join(WORDS)}"
    )


def build_request(words: list[str], round_no: int | None = None, ref: str | None = None) -> dict[str, Any]:
    """``["bet", "1", "player", "500"]`` -> ``{"cmd": "bet", "seat": 1, ...}``; ValueError if wrong."""
    word, rest = words[0], words[1:]
    if word not in WORDS:
        raise ValueError(f"unknown command {word!r}; commands: {', '.join(WORDS)}")
    cmd, fields = WORDS[word]
    need = [f for f in fields if not f.endswith("?")]
    if not len(need) <= len(rest) <= len(fields):
        usage = " ".join(f"[{f[:-1].upper()}]" if f.endswith("?") else f.upper() for f in fields)
        raise ValueError(f"usage: {word} {usage}".rstrip())
    request: dict[str, Any] = {"cmd": cmd}
    for field, text in zip(fields, rest, strict=False):
        name = field.rstrip("?")
        if name == "burn":
            if text != "burn":
                raise ValueError(f"card CARD [burn]: expected the word 'burn', not {text!r}")
            request["burn"] = True
        elif name in _INTS:
            try:
                request[name] = int(text)
            except ValueError:
                raise ValueError(f"{word}: {name.upper()} must be a whole number, not {text!r}") from None
        else:
            request[name] = text
    if round_no is not None:
        request["round"] = round_no
    if ref is not None:
        request["ref"] = ref
    return request


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _seat_credits(credits: dict[str, int]) -> str:
    return ", ".join(f"{seat}: {c / 100:,.2f}" for seat, c in credits.items()) or "none"


def format_round(r: dict[str, Any]) -> list[str]:
    out = [
        f"Round {r['round']} ({r['game']}, {r['status']}) {_when(r['opened_at'])} .. {_when(r['ended_at'])}"
        f"  seq {r['first_seq']}..{r['last_seq']}"
    ]
    out.append("  credits before: " + _seat_credits(r["credits_before"]))
    for w in r["wagers"]:
        verb = "bet" if w["event"] == "wager_placed" else f"returned ({w['reason']})"
        out.append(f"  wager  seat {w['seat']} {w['spot']} {w['amount'] / 100:,.2f} {verb}")
    cards = [
        f"{c['card']}->{c['hand']}"
        if c["event"] == "card_dealt"
        else (f"{c['card']}->burn" if c["event"] == "card_burned" else "(burn declared)")
        for c in r["cards"]
    ]
    if cards:
        out.append("  cards  " + " ".join(cards))
    for d in r["decisions"]:
        out.append(
            f"  decide seat {d['seat']} {d['action']}"
            + (f" {d['amount'] / 100:,.2f}" if d["amount"] is not None else "")
        )
    for t in r["tilts"]:
        out.append(f"  {t['event']:<6} " + json.dumps({k: v for k, v in t.items() if k != "event"}))
    if r["result"]:
        out.append("  result " + json.dumps(r["result"]))
    for s in r["settlements"] or []:
        stake = f"{s['stake'] / 100:,.2f}"
        out.append(f"  settle seat {s['seat']} {s['spot']} stake {stake} net {money(s['net'])}")
    if r["house_net"] is not None:
        out.append(f"  house  {money(r['house_net'])}")
    if r["credits_after"] is not None:
        out.append("  credits after:  " + _seat_credits(r["credits_after"]))
    return out


def format_reply(request: dict[str, Any], reply: dict[str, Any]) -> str:
    if not reply.get("ok"):
        return f"error: {reply.get('error')}"
    cmd = request.get("cmd")
    if cmd == "status":
        lines = [
            f"table {reply['table']} ({reply['game']}): round {reply['round']} {reply['phase']}, "
            f"seq {reply['seq']}"
        ]
        if reply["due"]:
            lines.append(f"  due: {json.dumps(reply['due'])}")
        if reply["tilt"]:
            lines.append(f"  TILT: {reply['tilt']['reason']}: {reply['tilt']['detail']}")
        if reply["offline"]:
            lines.append(f"  offline: {json.dumps(reply['offline'])}")
        lines.append(
            "  credits: " + (", ".join(f"seat {s}: {c}" for s, c in reply["credits"].items()) or "none")
        )
        for w in reply["wagers"]:
            lines.append(f"  wager: seat {w['seat']} {w['spot']} {w['amount']}")
        j = reply["journal"]
        lines.append(
            f"  journal: {j['path']}, {j['rows']} inputs (replayed {j['replayed_at_start']} "
            f"in {j['replay_seconds']} s at start); fsync {'on' if reply['fsync'] else 'OFF'}"
        )
        shoe = reply.get("shoe_device")
        lines.append(
            "  shoe: none"
            if shoe is None
            else f"  shoe: {shoe['port']} ({shoe['protocol']}) "
            + ("connected" if shoe["connected"] else "NOT connected")
        )
        return "\n".join(lines)
    if cmd == "meters":
        t = reply["totals"]
        lines = [
            f"table: rounds settled {t['rounds_settled']}, voided {t['rounds_voided']}, "
            f"house net {t['house_net']}"
        ]
        for seat, m in reply["seats"].items():
            lines.append(f"  seat {seat}: " + ", ".join(f"{k} {v}" for k, v in m.items()))
        return "\n".join(lines)
    if cmd == "recall":
        lines = []
        for r in reply["rounds"]:
            lines.extend(format_round(r))
        return "\n".join(lines) or "no rounds played yet"
    if cmd in ("snapshot", "ping") or "row" not in reply:
        return json.dumps(reply, indent=1)  # a query ctl has no layout for, or a raw request
    if reply.get("duplicate"):
        return f"ok: already applied (journal row {reply['row']}); nothing done"
    lines = [f"ok: journal row {reply['row']}, seq {reply['seq']}"]
    lines.extend("  " + format_event(e) for e in reply.get("events", []))
    return "\n".join(lines)


def _fail(message: str) -> int:
    print(f"croupier ctl: {message}", file=sys.stderr)
    return 2


def answered_by(reply: dict[str, Any]) -> str:
    """``[table baccarat_sim, journal 3f2a9c1e]``: who answered (the journal id's first 8 digits)."""
    journal = str(reply.get("journal_id") or "?")[:8]
    return f"[table {reply.get('table', '?')}, journal {journal}]"


def run(args: argparse.Namespace) -> int:
    endpoint = args.endpoint
    expect = args.expect_table
    if endpoint is None and not args.table:
        endpoint = ZmqSpec().command
    if args.table:
        try:
            config = load_table(args.table)
        except TableFileError as exc:
            return _fail(str(exc))
        endpoint = endpoint or config.spec.zeromq.command
        expect = expect or config.table_id
    try:
        if args.raw:
            request = json.loads(" ".join(args.words))
            if not isinstance(request, dict):
                raise ValueError("--raw takes one JSON object, like '{\"cmd\": \"status\"}'")
        else:
            request = build_request(args.words, args.round, args.ref)
    except ValueError as exc:
        return _fail(str(exc))
    if expect is not None:
        request.setdefault("table", expect)  # the daemon refuses it if it is another table
    try:
        client = CommandClient(endpoint, args.timeout)
    except EndpointError as exc:
        return _fail(str(exc))
    try:
        reply = client.send_raw(json.dumps(request).encode())
    except (DaemonUnavailable, BadReply) as exc:
        return _fail(str(exc))
    finally:
        client.close()
    if reply.get("wrong_table") or (expect is not None and reply.get("table") not in (None, expect)):
        return _fail(f"{endpoint} is table {reply.get('table')!r}, not {expect!r}: refused, nothing done "
                     "(check --table/--endpoint)")
    if args.json:
        print(json.dumps(reply, indent=1))
    else:
        print(answered_by(reply))
        print(format_reply(request, reply))
    return 0 if reply.get("ok") else 1
