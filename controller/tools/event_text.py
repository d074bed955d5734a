"""How the table's events and results read as text for people, one line per event.

One way for every tool that shows them (``croupier watch``, the live view, ``croupier ctl``
and the demo's summary), in a module of its own so that none of those tools imports another
for it (``watch`` starts the live view, which prints the same lines).
"""

from __future__ import annotations

from typing import Any

from controller.cards import decks_text
from controller.money import DEFAULT_CURRENCY, Currency


def format_event(p: dict[str, Any], cur: Currency = DEFAULT_CURRENCY) -> str:
    """One readable line per event (the JSON has every field; this is for eyes), amounts as ``995.00``."""
    m, signed = cur.format, cur.signed
    name, seq = p["event"], p.get("seq", "")
    head = f"#{seq:<6} " if seq != "" else ""
    rnd = f"R{p['round']} " if "round" in p else ""
    body: str
    if name == "card_dealt":
        body = f"{p['hand']:<8} <- {p['card']}"
    elif name == "card_burned":
        body = f"burn {p['card']} ({p['why']})"
    elif name in ("wager_placed", "wager_returned"):
        body = f"{wager_text(p, cur)}; credits {m(p['credits'])}"
    elif name == "betting_opened":
        body = "place your bets"
    elif name == "betting_closed":
        body = f"no more bets; playing: {_seats(p['seats']) if p['seats'] else 'no seat'}"
    elif name == "decision_due":
        body = "waiting for " + "; ".join(f"seat {s}: {'/'.join(a)}" for s, a in p["choices"].items())
    elif name == "decision":
        amount = p.get("amount")
        body = f"seat {p['seat']} {p['action']}" + (f" {m(amount)}" if amount is not None else "")
    elif name == "round_result":
        body = "result " + compact_result(p["result"])
    elif name == "round_settled":
        lines = "; ".join(
            f"seat {s['seat']} {s['spot']} {m(s['stake'])} {signed(s['net'])}" for s in p["settlements"]
        )
        body = (
            f"SETTLED {lines or 'no wagers'}; house {signed(p['house_net'])}; "
            f"credits {credits_text(p['credits'], cur)}"
        )
    elif name == "round_voided":
        body = f"VOIDED: wagers returned; credits {credits_text(p['credits'], cur)}"
    elif name == "tilt":
        held = f"; held {' '.join(p['held'])}" if p.get("held") else ""
        body = f"TILT {p['reason']}: {p['detail']}{held}"
    elif name == "card_held":
        body = f"card {p['card']} HELD by the tilt (held: {' '.join(p['held'])})"
    elif name == "tilt_cleared":
        body = f"tilt cleared ({p['how']})"
    elif name == "refused":
        body = f"refused {p['input'].get('input')}: {p['reason']}"
    elif name == "credit":
        body = f"seat {p['seat']} credit {p['direction']} {m(p['amount'])}; credits {m(p['credits'])}"
    elif name == "device":
        body = f"{p['device']} {'online' if p['online'] else 'OFFLINE'}: {p['detail']}".rstrip(": ")
    elif name == "notice":
        body = notice_text(p["what"], p["detail"])
    elif name == "burn_declared":
        body = "the next card is a burn (declared by the dealer)"
    elif name == "dp_set":
        body = f"seat {p['seat']} is the Designated Player"
    elif name == "dealer":
        body = f"dealer in: {p['dealer']}" if p["dealer"] is not None else "dealer out"
    elif name == "new_shoe":
        number = f" {p['shoe_number']}" if p.get("shoe_number") else ""
        body = f"new shoe{number}: {decks_text(p['decks'])}"
    else:
        rest = {k: v for k, v in p.items() if k not in ("event", "table", "seq", "round")}
        body = result_text(rest)
    return f"{head}{rnd}{name:<14} {body}"


def wager_text(w: dict[str, Any], cur: Currency = DEFAULT_CURRENCY) -> str:
    """``seat 1 banker stake now 10.00`` (a wager event's amount is the spot's new total, not the bet
    typed) or ``seat 1 banker 10.00 returned (cancelled)``."""
    if w["event"] == "wager_placed":
        return f"seat {w['seat']} {w['spot']} stake now {cur.format(w['amount'])}"
    return f"seat {w['seat']} {w['spot']} {cur.format(w['amount'])} returned ({w['reason']})"


def _seats(seats: Any) -> str:
    listed = [str(s) for s in seats]
    return f"seat{'s' if len(listed) > 1 else ''} {', '.join(listed)}"


#: Each game's notice in words (docs/rules/*.md names them); ``{seats}`` reads ``seats 2, 3``, a list of cards
#: ``9H 7C``, ``{blackjack}`` ``BLACKJACK`` or ``no blackjack``.
NOTICES = {
    "dealer_peek": "dealer peeks under {up}: {blackjack}",
    "swap": "seat {seat} swaps, discarding {discarded}",
    "odds_win_lost": "seat {seat} loses the Odds-Win: its first two cards total {total} ({parity})",
    "hand_decided": "seat {seat} {spot} decided at {total}: {outcome}",
    "community": "community cards {cards}",
    "no_action": "no action for {seats}: {reason} (DP seat {dp_seat})",
    "not_dealt": "round not dealt: {reason}",
    "tie": "{seats} tie the DP's {rank}: each extends or surrenders",
    "war": "war for {seats}",
    "war_tie": "seat {seat} ties the DP's {rank} again in the war",
}


def _notice_word(key: str, value: Any) -> Any:
    if key == "seats":
        return _seats(value)
    if key == "blackjack":
        return "BLACKJACK" if value else "no blackjack"
    return " ".join(map(str, value)) if isinstance(value, list) else value


def notice_text(what: str, detail: dict[str, Any]) -> str:
    """A game's notice in words: ``dealer peeks under JD: no blackjack`` (one not listed: its fields)."""
    try:
        return NOTICES[what].format(**{k: _notice_word(k, v) for k, v in detail.items()})
    except KeyError:
        return f"{what.replace('_', ' ')}: {result_text(detail)}".rstrip(": ")


def due_text(state: dict[str, Any]) -> str:
    """What the table waits for, from a status or snapshot state: ``due: a card for banker``."""
    due = state.get("due") or {}
    if "card" in due:
        return f"due: a card for {due['card']}"
    if "decision" in due:
        return "due: " + "; ".join(f"seat {s} {'/'.join(a)}" for s, a in due["decision"].items())
    if state.get("phase") == "betting":
        return "due: bets (betting open)"
    if state.get("tilt"):
        return "due: nothing until the tilt is resolved"
    if state.get("phase") == "idle":
        return "due: nothing (the dealer opens the next round)"
    return f"due: nothing ({state.get('phase')})"


def offline_text(offline: dict[str, str]) -> list[str]:
    """Each device that is offline, and why: ``shoe OFFLINE: cannot open /dev/ttyUSB0: ...``."""
    return [f"{device} OFFLINE: {detail}" for device, detail in offline.items()]


def credits_text(credits: dict[str, int], cur: Currency = DEFAULT_CURRENCY) -> str:
    """``seat 1: 995.00, seat 2: 1,000.00`` (or ``none``)."""
    return ", ".join(f"seat {s}: {cur.format(c)}" for s, c in credits.items()) or "none"


#: Meter fields that are amounts (the others are counts).
_METER_MONEY = frozenset({"credits_in", "credits_out", "wagered", "won", "lost", "house_net"})


def meters_text(reply: dict[str, Any], cur: Currency = DEFAULT_CURRENCY) -> list[str]:
    """A ``meters`` reply as lines: since when its figures run, and its amounts at the decimals of that
    period (the reply's own: a table file's new decimals may wait for the round in play to end)."""
    t, since = reply["totals"], reply.get("since") or {}  # older daemons: no since
    cur = Currency(cur.code, int(since.get("minor_units", cur.minor_units)))
    after = since.get("round", 0)
    lines = [f"meters since round {after} (restarted when the currency's decimals changed; "
             "earlier rounds: recall)" if after else "meters since the first round",
             f"table: rounds settled {t['rounds_settled']}, voided {t['rounds_voided']}, "
             f"house net {cur.signed(t['house_net'])}"]
    for seat, meters in reply["seats"].items():
        figures = (f"{k} {cur.format(v) if k in _METER_MONEY else v}" for k, v in meters.items())
        lines.append(f"  seat {seat}: " + ", ".join(figures))
    return lines


def result_text(value: Any) -> str:
    """A result or notice record as ``key value`` words instead of raw JSON (nested in brackets)."""
    if isinstance(value, dict):
        return " ".join(f"{k} {result_text(v)}" for k, v in value.items() if v not in (None, [], {}))
    if isinstance(value, list):
        return "[" + " ".join(result_text(v) for v in value) + "]"
    return str(value)


def _outcomes(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = [str(value["outcome"])] if value.get("outcome") else []
        return own + [o for k, v in value.items() if k != "outcome" for o in _outcomes(v)]
    if isinstance(value, list):
        return [o for v in value for o in _outcomes(v)]
    return []


def compact_result(result: dict[str, Any]) -> str:
    """A round's result in a few words: the winner, the dealer's total or cards, each seat's outcomes."""
    parts: list[str] = []
    if "winner" in result:  # Baccarat
        parts.append(f"{result['winner']} {result.get('player_score')}-{result.get('banker_score')}"
                     + (" natural" if result.get("natural") else ""))
    if "dealer_total" in result:
        parts.append(f"dealer {result['dealer_total']}")
    elif result.get("dealer_cards"):
        parts.append("dealer " + " ".join(result["dealer_cards"]))
    if result.get("dp_seat") is not None:
        parts.append(f"DP seat {result['dp_seat']} {result.get('dp_card') or ''}".rstrip())
    for key in ("seats", "players"):
        for seat, rec in (result.get(key) or {}).items():
            choice = rec.get("choice") if isinstance(rec, dict) else None
            outcome = "/".join(_outcomes(rec))
            parts.append(f"seat {seat} {choice + ' ' if choice else ''}{outcome}".rstrip())
    return ", ".join(parts) or result_text(result)
