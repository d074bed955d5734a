"""Operator commands: JSON requests parsed into table inputs or queries, every error a clear reply.

A command is a JSON object ``{"cmd": NAME, ...fields}``. Commands that
change the table become the same :class:`~controller.inputs.Input` values a
device produces and go through the journal like them (so a dealer's bet and
a bet sensor's bet are indistinguishable after a restart). Parsing checks
everything it can without the table (names, field types, seat numbers)
so that a malformed command is answered without touching the journal;
what only the table can judge (wrong phase, over credits) is refused by the
table itself, which changes nothing and says why. docs/commands.md lists
every command with its request and reply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from controller import inputs as I
from controller.cards import CardError, parse_card
from controller.daemon.requests import RequestError, loads_request
from controller.dealers import MAX_NAME, name_problem
from controller.limits import TableLimits
from controller.money import DEFAULT_CURRENCY, Currency
from controller.quote import quote


class CommandError(ValueError):
    """A request that is not a valid command; the message says which field and why."""


class WrongTable(CommandError):
    """The request names another table (``"table": ID``): refused before anything is done."""


@dataclass(frozen=True, slots=True)
class Query:
    """A read-only command (status, meters, recall, snapshot, ping)."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class InputCommand:
    """A command that is a table input; ``ref`` is the client's idempotency key, ``by`` its label."""

    name: str
    input: I.Input
    ref: str | None
    by: str | None

    def source(self, key: str | None) -> str:
        """The journal's source: ``command:KEY`` (the authenticated key's name), `` by BY`` if labelled."""
        who = key or "local"
        return f"command:{who}" + (f" by {self.by}" if self.by else "")


Parsed = Query | InputCommand

# field name -> (type, required)
_Fields = dict[str, tuple[type, bool]]

_SEAT: Final[_Fields] = {"seat": (int, True)}
_SEAT_AMOUNT: Final[_Fields] = {"seat": (int, True), "amount": (int, True)}


def _build_card(a: dict[str, Any]) -> I.Input:
    try:
        card = parse_card(a["card"])
    except CardError as exc:
        raise CommandError(f"field 'card': {exc}") from None
    return I.CardSeen(card, bool(a.get("burn", False)))


def _build_dealer_in(a: dict[str, Any]) -> I.Input:
    problem = name_problem(a["name"])
    if problem is not None:
        raise CommandError(f"field 'name': {problem}")
    return I.DealerIn(a["name"])


def _build_input(a: dict[str, Any]) -> I.Input:
    data = a["input"]
    try:
        inp = I.input_from_dict(data)
    except I.InputError as exc:
        raise CommandError(f"field 'input': {exc}") from None
    if isinstance(inp, I.SetLimits):  # only the table file sets them, journaled at a start (journal_limits)
        raise CommandError("field 'input': the limits come from the table file: change it, restart the table")
    return inp


#: Commands that are inputs: name -> (fields, builder, help).
INPUT_COMMANDS: Final[dict[str, tuple[_Fields, Callable[[dict[str, Any]], I.Input], str]]] = {
    "open": ({}, lambda a: I.OpenBetting(), "open betting: a new round starts"),
    "close": ({}, lambda a: I.CloseBetting(), "close betting: no more bets, the deal starts"),
    "bet": (
        {"seat": (int, True), "spot": (str, True), "amount": (int, True)},
        lambda a: I.PlaceWager(a["seat"], a["spot"], a["amount"]),
        "place a wager (dealer-keyed)",
    ),
    "cancel": (
        {"seat": (int, True), "spot": (str, True)},
        lambda a: I.CancelWager(a["seat"], a["spot"]),
        "take a wager back while betting is open",
    ),
    "decide": (
        {"seat": (int, True), "action": (str, True), "amount": (int, False)},
        lambda a: I.Decision(a["seat"], a["action"], a.get("amount")),
        "a player's decision (the path the seat buttons use)",
    ),
    "credit_in": (_SEAT_AMOUNT, lambda a: I.CreditIn(a["seat"], a["amount"]), "credits into a seat"),
    "credit_out": (_SEAT_AMOUNT, lambda a: I.CreditOut(a["seat"], a["amount"]), "credits out of a seat"),
    "burn": ({}, lambda a: I.DeclareBurn(), "declare a burn (the next card, or the held card of a tilt)"),
    "clear_tilt": ({}, lambda a: I.ClearTilt(), "clear an impossible-card tilt"),
    "take": ({}, lambda a: I.TakeHeld(), "take the first card held by a tilt, as if delivered now"),
    "void": ({}, lambda a: I.VoidRound(), "void the round: every wager returned"),
    "set_dp": (_SEAT, lambda a: I.SetDesignatedPlayer(a["seat"]), "One Card Poker: the Designated Player"),
    "new_shoe": ({}, lambda a: I.NewShoe(), "a new shoe was shuffled"),
    "dealer_in": ({"name": (str, True)}, _build_dealer_in, "a dealer taps in: the next rounds are theirs"),
    "dealer_out": ({}, lambda a: I.DealerOut(), "the dealer in taps out"),
    "card": (
        {"card": (str, True), "burn": (bool, False)},
        _build_card,
        "a card keyed in by the dealer (when the shoe cannot read it)",
    ),
    "input": ({"input": (dict, True)}, _build_input, "any table input as JSON (test rigs, tools)"),
}

#: Read-only commands: name -> (fields, help).
QUERIES: Final[dict[str, tuple[_Fields, str]]] = {
    "status": ({}, "round, phase, seq, what is due, tilt, devices, credits, journal"),
    "meters": ({"seat": (int, False)}, "per-seat and table meters"),
    "recall": ({"n": (int, False), "round": (int, False)}, "the last N rounds (default 10), or one round"),
    "snapshot": ({}, "the whole table state and its seq (as the snapshot socket)"),
    "ping": ({}, "liveness"),
    "shoe": ({"action": (str, True)}, "shoe reset: send RESET to the shoe (the dealer cleared a jam); "
             "not journaled: the shoe's HELLO that follows is; on a plain line, which has no RESET, clears "
             "its shoe fault (journaled)"),
}

_COMMON: Final = {"cmd", "ref", "by", "table"}

#: Longest text per field; any other string (an input's device, detail, reason...) gets ``MAX_TEXT``.
TEXT_LIMITS: Final[dict[str, int]] = {"by": 64, "ref": 200, "spot": 32, "action": 32, "card": 8, "cmd": 32,
                                      "name": MAX_NAME}
MAX_TEXT: Final = 200
#: Amount fields and what bounds them (see :func:`check_amounts`).
_BET_AMOUNTS: Final = {"bet"}
#: A decision's amount is the stake it adds (a double, a raise): bounded as a credit movement.
_CREDIT_AMOUNTS: Final = {"credit_in", "credit_out", "decide"}
#: The generic ``input`` command's inputs that carry an amount, and the command whose bound holds for it.
_AMOUNT_INPUTS: Final[dict[type[I.Input], str]] = {
    I.PlaceWager: "bet", I.CreditIn: "credit_in", I.CreditOut: "credit_out", I.Decision: "decide"}


def command_names() -> list[str]:
    return sorted([*INPUT_COMMANDS, *QUERIES])


def parse_command(
    raw: bytes,
    seats: int,
    table_id: str | None = None,
    limits: TableLimits | None = None,
    money: Currency = DEFAULT_CURRENCY,
) -> Parsed:
    """Parse one request; :class:`CommandError` says what is wrong (nothing is journaled then).

    A request may name the table it is meant for (``"table": ID``); a daemon of
    another table refuses it with :class:`WrongTable`, so a client pointed at
    the wrong endpoint changes nothing there. With ``limits`` amounts are
    bounded by the table's: a wager by ``max_bet``, a credit movement or a
    decision's stake by ``max_credit``; a refusal says the amounts in ``money`` (the table's currency),
    as every amount a person reads.
    """
    try:
        data = loads_request(raw)
    except RequestError as exc:
        raise CommandError(str(exc)) from None
    if not isinstance(data, dict):
        raise CommandError(f'a command is a JSON object like {{"cmd": "status"}}, not {type(data).__name__}')
    meant = data.get("table")
    if meant is not None and not isinstance(meant, str):
        raise CommandError(f"field 'table' must be the table's id (a string), not {quote(meant)}")
    if meant is not None and table_id is not None and meant != table_id:
        raise WrongTable(f"this is table {table_id!r}, not {quote(meant)}: nothing done (check the endpoint)")
    name = data.get("cmd")
    if not isinstance(name, str):
        raise CommandError("missing 'cmd' (a string); commands: " + ", ".join(command_names()))
    if name in INPUT_COMMANDS:
        fields = INPUT_COMMANDS[name][0]
    elif name in QUERIES:
        fields = QUERIES[name][0]
    else:
        raise CommandError(f"unknown command {quote(name)}; commands: {', '.join(command_names())}")
    check_text(name, data)
    args = _check_fields(name, data, fields, seats)
    if limits is not None:
        check_amounts(name, args, limits, money)
    if name == "shoe" and args["action"] != "reset":
        raise CommandError(f"shoe: unknown action {quote(args['action'])} (actions: reset)")
    ref = data.get("ref")  # checked for a query too, as docs/commands.md says (a query keeps none)
    if ref is not None and (not isinstance(ref, str) or not 1 <= len(ref) <= 200):
        raise CommandError(f"{name}: 'ref' must be a string of 1..200 characters, not {quote(ref)}")
    if name in QUERIES:
        return Query(name, args)
    by = data.get("by")
    if by is not None and (not isinstance(by, str) or not by):
        raise CommandError(f"{name}: 'by' must be a non-empty string, not {quote(by)}")
    inp = INPUT_COMMANDS[name][1](args)
    kind = _AMOUNT_INPUTS.get(type(inp)) if name == "input" else None
    if limits is not None and kind is not None:  # the generic input is bounded as its own command is
        check_amounts(kind, {"amount": getattr(inp, "amount", None)}, limits, money, f"input ({kind})")
    return InputCommand(name, inp, ref, by)


def check_text(name: str, data: Any, path: str = "") -> None:
    """Every string in the request within its limit and free of control characters (CommandError)."""
    if isinstance(data, dict):
        for key, value in data.items():
            check_text(name, value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            check_text(name, value, f"{path}.{i}")
    elif isinstance(data, str):
        limit = TEXT_LIMITS.get(path, MAX_TEXT)
        if len(data) > limit:
            raise CommandError(f"{name}: field {quote(path)}: {len(data)} characters, the limit is {limit}")
        if any(ord(c) < 32 or ord(c) == 127 for c in data):
            raise CommandError(f"{name}: field {quote(path)} has control characters")


def check_amounts(
    name: str, args: dict[str, Any], limits: TableLimits, money: Currency = DEFAULT_CURRENCY,
    said: str | None = None,
) -> None:
    """Amounts from 1 to the table's bound: ``max_bet`` for wagers, ``max_credit`` for credits and
    decisions (the table itself judges the exact stake; this only keeps absurd numbers out). ``said``:
    the command as the refusal names it (``name``'s when None)."""
    amount = args.get("amount")
    if amount is None:
        return
    bound, what = ((limits.max_bet, "max_bet") if name in _BET_AMOUNTS
                   else (limits.max_credit, "max_credit") if name in _CREDIT_AMOUNTS else (None, ""))
    if bound is None:
        return
    if not 1 <= amount <= bound:
        raise CommandError(f"{said or name}: amount {money.format(amount)} is outside {money.format(1)}.."
                           f"{money.format(bound)} (the table's {what})")


def _check_fields(name: str, data: dict[str, Any], fields: _Fields, seats: int) -> dict[str, Any]:
    for key in data:
        if key not in fields and key not in _COMMON:
            known = ", ".join(fields) or "none"
            raise CommandError(f"{name}: unknown field {quote(key)} (fields: {known})")
    args: dict[str, Any] = {}
    for key, (kind, required) in fields.items():
        if key not in data or data[key] is None:
            if required:
                raise CommandError(f"{name}: missing field {key!r}")
            continue
        value = data[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            raise CommandError(f"{name}: field {key!r} must be {kind.__name__}, not {quote(value)}")
        if key == "seat" and not 1 <= value <= seats:
            raise CommandError(f"{name}: no seat {value}: this table has seats 1..{seats}")
        if key in ("n", "round") and value < 1:
            raise CommandError(f"{name}: field {key!r} must be at least 1, not {value}")
        args[key] = value
    return args


def error_reply(message: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "error": message, **extra}
