"""``croupier ctl``: operator commands to a running table daemon (docs/commands.md).

``croupier ctl --table firmware_configs/tables/baccarat_sim.yaml open``,
``... bet 1 player 5.00``, ``... recall 10``, ``... status``. Amounts are
typed and shown in the table's currency (``5`` and ``5.00`` are the same
bet; ``995.00`` credits); ``--json`` prints the daemon's reply as it is, in
integer minor units. With ``--table FILE`` (or ``--expect-table ID``) every
request names its table, and a daemon of another table refuses it without
doing anything; every answer starts with the table (and journal) that gave
it. The exit status is 0 when the command was carried out, 1 when the table refused it or it was invalid,
2 when the daemon cannot be reached, answers for another table or the arguments are wrong, 3 when it was
carried out but tilted the table (the reply says what to do).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Final

from controller.daemon.client import (
    BadReply,
    CommandClient,
    DaemonUnavailable,
)
from controller.daemon.config import TableConfig, TableFileError, load_table
from controller.daemon.endpoints import EndpointError
from controller.daemon.keys import KeyFileError
from controller.digits import whole_number
from controller.money import AmountError, Currency, round_decimals
from controller.quote import quote
from controller.tools.demo_table import demo_zeromq
from controller.tools.event_text import (
    credits_text,
    due_text,
    format_event,
    meters_text,
    offline_text,
    result_text,
    wager_text,
)
from controller.tools.key_options import add_key_arguments, credentials

#: ctl word -> (command, positional fields); integers are converted where the command expects them.
WORDS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "open": ("open", ()),
    "close": ("close", ()),
    "burn": ("burn", ()),
    "void": ("void", ()),
    "clear-tilt": ("clear_tilt", ()),
    "take": ("take", ()),
    "new-shoe": ("new_shoe", ()),
    "bet": ("bet", ("seat", "spot", "amount")),
    "cancel": ("cancel", ("seat", "spot")),
    "decide": ("decide", ("seat", "action", "amount?")),
    "credit-in": ("credit_in", ("seat", "amount")),
    "credit-out": ("credit_out", ("seat", "amount")),
    "set-dp": ("set_dp", ("seat",)),
    "dealer-in": ("dealer_in", ("name",)),
    "dealer-out": ("dealer_out", ()),
    "card": ("card", ("card", "burn?")),
    "status": ("status", ()),
    "meters": ("meters", ("seat?",)),
    "recall": ("recall", ("n?",)),
    "snapshot": ("snapshot", ()),
    "ping": ("ping", ()),
    "shoe": ("shoe", ("action",)),
}
_INTS: Final = {"seat", "n", "round"}
#: Exit status when the command was applied but its effect was a tilt.
TILTED: Final = 3
#: A person is waiting: say within two seconds that nothing answers (``--timeout`` for slow links).
CLI_TIMEOUT: Final = 2.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--table",
        default=os.environ.get("CROUPIER_TABLE"),
        help="table file (for its command endpoint); default $CROUPIER_TABLE, else the command endpoint "
        "of the table `make demo` runs (firmware_configs/tables/baccarat_7seat_sim.yaml)",
    )
    parser.add_argument(
        "--endpoint", help="command endpoint, e.g. tcp://127.0.0.1:5558 (overrides the table file)"
    )
    add_key_arguments(parser)
    parser.add_argument(
        "--expect-table", metavar="ID",
        help="refuse a daemon whose table id is not ID (default: the id in --table's file)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the daemon's reply as JSON (amounts in minor units)"
    )
    parser.add_argument(
        "--timeout", type=float, default=CLI_TIMEOUT,
        help=f"seconds to wait for the reply before saying nothing answers (default {CLI_TIMEOUT:g})",
    )
    parser.add_argument("--round", type=int, help="recall: this round only")
    parser.add_argument("--ref", help="idempotency key: a resend with the same ref is not applied twice")
    parser.add_argument("--raw", action="store_true", help="WORDS is one JSON request sent as is")
    parser.add_argument(
        "words",
        nargs="+",
        metavar="WORDS",
        help=f"command and its arguments: {', '.join(WORDS)}. AMOUNT is in the table's currency "
        "(5 or 5.00: five units; never cents)",
    )


def build_request(
    words: list[str], cur: Currency | None, round_no: int | None = None, ref: str | None = None
) -> dict[str, Any]:
    """``["bet", "1", "player", "5.00"]`` -> ``{"cmd": "bet", "seat": 1, "amount": 500, ...}``.

    ``ValueError`` (naming the word) if wrong; amounts are read in ``cur`` and sent in minor units
    (``cur`` None: only the words' shape is checked and amounts stay text).
    """
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
        elif name == "amount":
            try:
                request[name] = text if cur is None else cur.parse(text)
            except AmountError as exc:
                raise ValueError(f"{word}: AMOUNT: {exc}") from None
        elif name in _INTS:
            # ASCII digits only: int() took "1_0" for seat 10 and "١" for seat 1 (a review, 2026-12-07).
            if (number := whole_number(text, 18)) is None:
                raise ValueError(f"{word}: {name.upper()} must be a whole number, not {quote(text, 40)}")
            request[name] = number
        else:
            request[name] = text
    if round_no is not None:
        request["round"] = round_no
    if ref is not None:
        request["ref"] = ref
    return request


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def format_round(r: dict[str, Any], cur: Currency) -> list[str]:
    """One recalled round as lines for a person: amounts at the decimals it was played under."""
    cur = Currency(cur.code, round_decimals(r, cur.to_dict()))
    m = cur.format
    dealt = f"{r['status']}, dealer {r['dealer']}" if r.get("dealer") else r["status"]  # older: none
    out = [
        f"Round {r['round']} ({r['game']}, {dealt}) {_when(r['opened_at'])} .. {_when(r['ended_at'])}"
        f"  seq {r['first_seq']}..{r['last_seq']}"
    ]
    out.append("  credits before: " + credits_text(r["credits_before"], cur))
    out.extend(f"  by     {line}" for line in inputs_text(r.get("inputs", [])))
    for w in r["wagers"]:
        out.append(f"  wager  {wager_text(w, cur)}")
    cards = [_card_text(c) for c in r["cards"]]
    if cards:
        out.append("  cards  " + " ".join(cards))
    for d in r["decisions"]:
        out.append(
            f"  decide seat {d['seat']} {d['action']}"
            + (f" {m(d['amount'])}" if d["amount"] is not None else "")
        )
    for t in r["tilts"]:
        out.append("  " + format_event(t, cur))
    if r["result"]:
        out.append("  result " + result_text(r["result"]))
    for s in r["settlements"] or []:
        out.append(f"  settle seat {s['seat']} {s['spot']} stake {m(s['stake'])} net {cur.signed(s['net'])}")
    if r["house_net"] is not None:
        out.append(f"  house  {cur.signed(r['house_net'])}")
    if r["credits_after"] is not None:
        out.append("  credits after:  " + credits_text(r["credits_after"], cur))
    return out


def inputs_text(inputs: list[dict[str, Any]]) -> list[str]:
    """Who did what in a round: ``operator: open_betting, place_wager x4 (3 refused)``, per source."""
    who: dict[str, dict[str, list[int]]] = {}
    for inp in inputs:
        done, refused = who.setdefault(inp["source"], {}).setdefault(inp["input"], [0, 0])
        who[inp["source"]][inp["input"]] = [done + 1, refused + ("refused" in inp)]
    lines = []
    for source, kinds in who.items():  # key names of commands, devices
        words = []
        for kind, (n, refused) in kinds.items():
            word = kind + (f" x{n}" if n > 1 else "")
            if refused:
                word += " (refused)" if n == 1 else f" ({refused} refused)"
            words.append(word)
        lines.append(f"{source}: {', '.join(words)}")
    return lines


def format_reply(request: dict[str, Any], reply: dict[str, Any], cur: Currency) -> str:
    """The daemon's reply for a person: amounts in the table's currency, a tilt or refusal said first."""
    if not reply.get("ok"):
        again = " (a resend: the first answer, repeated)" if reply.get("duplicate") else ""
        return f"{'REFUSED' if reply.get('refused') else 'error'}: {reply.get('error')}{again}"
    cmd = request.get("cmd")
    if cmd == "status":
        lines = [
            f"table {reply['table']} ({reply['game']}): round {reply['round']} {reply['phase']}, "
            f"seq {reply['seq']}, " + (f"dealer {reply['dealer']}" if reply.get("dealer") else "no dealer in")
        ]
        lines.append("  " + due_text(reply))
        if reply["tilt"]:
            tilt = reply["tilt"]
            lines.append(f"  TILT: {tilt['reason']}: {tilt['detail']}; {tilt_advice(tilt['reason'])}")
            if tilt.get("held"):
                lines.append(f"  cards held by the tilt, in order: {' '.join(tilt['held'])}; once its cause "
                             "is resolved, take (ctl take) or burn (ctl burn) each in turn, or void")
            refused = tilt.get("refused_cards")
            if refused:
                lines.append(f"  cards refused during the tilt (out of the shoe): {' '.join(refused)}; once "
                             "it is resolved, key each as the due card (card X) or as a burn (card X burn)")
        lines.extend(f"  {line}" for line in offline_text(reply["offline"]))
        if new := reply.get("limits_pending"):  # docs/daemon.md, "Limits"
            lines.append(f"  LIMITS PENDING (the table file's, once this round ends): {new['seats']} seats, "
                         f"bets {cur.format(new['min_bet'])}..{cur.format(new['max_bet'])}")
        lines.append("  credits: " + credits_text(reply["credits"], cur))
        for w in reply["wagers"]:
            lines.append(f"  wager: seat {w['seat']} {w['spot']} {cur.format(w['amount'])}")
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
        if (camera := reply.get("camera")) is not None:  # docs/vision.md: the camera's last reading
            last = camera["last"] or {"status": "nothing yet", "card": None, "reason": ""}
            seen = last["card"] or last["status"] + (f" ({last['reason']})" if last["reason"] else "")
            lines.append(f"  camera: {camera['source']}, deck {camera['deck']}, "
                         f"{'online' if camera['online'] else 'OFFLINE'}; {camera['frames']} frames read, "
                         f"{camera['cards']} cards dealt; last read: {seen}")
        return "\n".join(lines)
    if cmd == "meters":
        return "\n".join(meters_text(reply, cur))
    if cmd == "recall":
        lines = []
        for r in reply["rounds"]:
            lines.extend(format_round(r, cur))
        return "\n".join(lines) or "no rounds played yet"
    if cmd == "shoe":
        return (f"ok: {reply['sent']} sent to the shoe (its HELLO will say it is back)" if reply["sent"]
                else "ok: shoe fault cleared (a plain line has no RESET: nothing sent)")
    if cmd == "ping":
        money = reply.get("currency") or {}
        code = f"in {money['code']} " if money.get("code") else ""
        decimals = money.get("minor_units", 2)
        return f"ok: the table answers (seq {reply['seq']}; amounts {code}with {decimals} decimals)"
    if cmd == "snapshot":
        state = reply["state"]
        return (f"state at seq {reply['seq']}: {state['game']} round {state['round']} {state['phase']}; "
                f"{due_text(state)}; credits {credits_text(state['credits'], cur)} (--json: the whole state)")
    if "row" not in reply:
        return json.dumps(reply, indent=1)  # a raw request ctl has no layout for: as the daemon sent it
    if reply.get("duplicate"):
        return f"ok: already applied (journal row {reply['row']}); nothing done"
    events = reply.get("events", [])
    tilt = next((e for e in events if e["event"] == "tilt"), None)
    head = "ok" if tilt is None else f"TILT ({tilt['reason']}): {tilt_advice(tilt['reason'])}"
    if cmd == "bet" and tilt is None:  # the amount typed; the events below give the spot's new total
        head = f"ok: {cur.format(request['amount'])} bet on seat {request['seat']} {request['spot']}"
    lines = [f"{head}: journal row {reply['row']}, seq {reply['seq']}"]
    lines.extend("  " + format_event(e, cur) for e in events)
    return "\n".join(lines)


def _card_text(c: dict[str, Any]) -> str:
    """One card of a recalled round: ``9S->player``, ``5D->burn``, ``4C held`` (during a tilt)."""
    if c["event"] == "card_dealt":
        return f"{c['card']}->{c['hand']}"
    if c["event"] == "card_burned":
        return f"{c['card']}->burn"
    if c["event"] == "card_held":
        return f"{c['card']} held"
    return "(burn declared)"


def tilt_advice(reason: str) -> str:
    """What the dealer does about a tilt (docs/rules/common.md, faults)."""
    if reason == "card_not_due":
        return "the table is tilted; burn the card (ctl burn) or void the round (ctl void)"
    if reason == "impossible_card":
        return "the table is tilted; check the shoe, then clear-tilt or void"
    if reason == "repeat_card":
        return ("the camera's card may be the one already dealt: if it is, ctl clear-tilt (nothing is "
                "taken); if it is a new card, ctl take (or ctl burn)")
    if reason == "held_card":
        return "cards were held during the tilt; take the first (ctl take), burn it (ctl burn) or void"
    return "the table is tilted; void the round (ctl void) or clear-tilt once fixed"


def exit_status(reply: dict[str, Any]) -> int:
    """0 carried out, 1 refused or invalid, 3 carried out but the table tilted (see the module doc)."""
    if not reply.get("ok"):
        return 1
    return TILTED if any(e.get("event") == "tilt" for e in reply.get("events", [])) else 0


def table_currency(client: CommandClient) -> Currency:
    """The table's currency as the daemon states it (``ping``): typed amounts are read in it."""
    return Currency.from_dict(client.call("ping").get("currency"))


def _fail(message: str) -> int:
    print(f"croupier ctl: {message}", file=sys.stderr)
    return 2


def answered_by(reply: dict[str, Any]) -> str:
    """``[table baccarat_sim, journal 3f2a9c1e]``: who answered (the journal id's first 8 digits)."""
    journal = str(reply.get("journal_id") or "?")[:8]
    return f"[table {reply.get('table', '?')}, journal {journal}]"


def _raw_request(words: list[str]) -> dict[str, Any]:
    try:
        request = json.loads(" ".join(words))
    except json.JSONDecodeError as exc:  # worded as the daemon words it (docs/commands.md, "Errors")
        raise ValueError(f"--raw: malformed JSON: {exc.msg} at character {exc.pos}") from None
    if not isinstance(request, dict):
        raise ValueError("--raw takes one JSON object, like '{\"cmd\": \"status\"}'")
    return request


def run(args: argparse.Namespace) -> int:
    endpoint = args.endpoint
    expect = args.expect_table
    config: TableConfig | None = None
    try:
        if args.table:
            config = load_table(args.table)
        elif endpoint is None:
            endpoint = demo_zeromq().command  # no table file: `make demo`'s table (docs/commands.md)
        key = credentials(args.key, args.server_key, config)
    except (TableFileError, KeyFileError) as exc:
        return _fail(str(exc))
    if config is not None:
        endpoint = endpoint or config.spec.zeromq.command
        expect = expect or config.table_id
    try:  # the words' shape first, so a usage error needs no daemon (nor a key)
        if args.raw:
            _raw_request(args.words)
        else:
            build_request(args.words, None, args.round, args.ref)
    except ValueError as exc:
        return _fail(str(exc))
    try:
        client = CommandClient(endpoint, args.timeout, key=key)
    except EndpointError as exc:
        return _fail(str(exc))
    try:
        try:
            cur = table_currency(client)
            if args.raw:
                request = _raw_request(args.words)
            else:
                request = build_request(args.words, cur, args.round, args.ref)
        except ValueError as exc:
            return _fail(str(exc))
        if expect is not None:
            request.setdefault("table", expect)  # the daemon refuses it if it is another table
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
        print(format_reply(request, reply, cur))
    return exit_status(reply)
