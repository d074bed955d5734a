"""One table's tile on the pit board, folded from the events the floor records (one fold, at start and live).

Why a fold of events and not a query per change: a row arrives from JetStream with the events it
caused, so the tile follows the table event by event as the display does, and at start the same
:meth:`Tile.apply` replays the newest events from PostgreSQL: one way to compute a tile, whichever
way its events came. Aggregates over time (rounds in the last hour, the house's result today) are
kept per round, keyed by (journal, round), so a round seen both in PostgreSQL and live counts once.
Each round keeps the currency it was played under, code and decimals: a ``limits`` row may change the
decimals between rounds and a new journal the code, and amounts of two are never added (as the report
keeps them apart; a review found EUR and USD rounds of one day summed under the newer's code).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from controller.floor.gaming_day import MIDNIGHT, GamingDay
from controller.floor.wire import RowMessage
from controller.money import Currency
from signage.roads import Result, RoadError, big_road

log = logging.getLogger("croupier.pitboard")

#: No row and no heartbeat for this long: the table's feed is stale (issue 27: "feed lost").
STALE_AFTER: Final = 10.0
#: Results drawn on a tile: Baccarat's big road of the current shoe (its newest columns), other
#: games' house results of their newest rounds.
ROAD_COLUMNS: Final = 14
LAST_NETS: Final = 12
#: What an event the tile cannot fold raises (a field missing, of another type, out of range, nested
#: past Python's stack): the event is left out, the rest of its row folded, the same live and at a load.
UNFOLDABLE: Final = (ValueError, KeyError, TypeError, OverflowError, RecursionError)
#: The range of PostgreSQL's ``bigint``: a count or an amount past it is no table's (and two of 4,299
#: digits summed were an ``in_play`` Python refuses to print, the whole board's payload with it).
_BIGINT: Final = 2**63


def currency_of(value: object) -> Currency:
    """A row's or a journal's ``currency`` (``{"code", "minor_units"}``, either left out for its default);
    ValueError if it is not one: ``minor_units`` 9 or ``2.0`` or ``true`` made a tile no page could draw."""
    if not isinstance(value, Mapping) or not set(value) <= {"code", "minor_units"}:
        raise ValueError(f"currency {value!r:.60}: not an object of code and minor_units")
    code, decimals = value.get("code", ""), value.get("minor_units", 2)
    if not isinstance(code, str) or type(decimals) is not int:
        raise ValueError(f"currency {value!r:.60}: code a string, minor_units 0 to 4")
    return Currency(code, decimals)


def _whole(value: Any, what: str) -> int:
    n = int(value)
    if not -_BIGINT <= n < _BIGINT:
        raise ValueError(f"{what} is out of range (more than 64 bits)")
    return n


def kept_since(now: float, day: GamingDay = MIDNIGHT) -> float:
    """The oldest round a tile's figures still count at ``now``: the last hour's, or those of ``day``'s
    today (the board's ``--gaming-day-starts``, as ``/report``'s: controller/floor/gaming_day.py) if
    today began earlier. What a tile keeps, and what a load from PostgreSQL asks for."""
    return min(day.start(now), now - 3600)


@dataclass
class Tile:
    """What the board knows of one table: its newest journal, the round in play, results, trouble."""

    table: str
    game: str = ""
    journal: str | None = None
    currency: Currency = field(default_factory=Currency)
    #: Every row up to this one of ``journal`` has been folded in.
    last_row: int = 0
    #: The journal's length its uplink last announced (a heartbeat or a row).
    journal_rows: int = 0
    #: When the board last heard of the table (a row or a heartbeat), floor clock, epoch seconds.
    heard: float = 0.0
    phase: str = "idle"
    round: int | None = None
    wagers: dict[tuple[int, str], int] = field(default_factory=dict)
    seats: set[int] = field(default_factory=set)
    results: list[Result] = field(default_factory=list)
    #: The house net of the newest rounds, each with the currency (code, decimals) it was played under.
    nets: list[tuple[int, Currency]] = field(default_factory=list)
    #: (journal, round) -> (ended_at on the table's clock, house net, its currency): rounds of the last
    #: day or hour.
    settled: dict[tuple[str, int], tuple[float, int, Currency]] = field(default_factory=dict)
    tilt: dict[str, Any] | None = None
    offline: dict[str, str] = field(default_factory=dict)
    #: Open alerts by id, as published (``Alert.message()``).
    alerts: dict[int, dict[str, Any]] = field(default_factory=dict)

    def new_journal(self, journal: str, game: str, currency: Mapping[str, Any]) -> None:
        """Start following ``journal`` (the table's first, or a replacement): its rounds start again.
        ValueError, the tile unchanged, if ``currency`` is not one (:func:`currency_of`)."""
        self.journal, self.game, self.currency = journal, game, currency_of(currency)
        self.last_row = 0
        self.phase, self.round, self.tilt = "idle", None, None
        self.wagers.clear()
        self.seats.clear()
        self.results.clear()
        self.offline.clear()

    def apply(self, event: dict[str, Any], at: float, minor_units: int | None = None) -> None:
        """Fold one event (as the daemon published it) journaled at ``at`` (the table's clock), its
        amounts in ``minor_units`` decimals (None: the tile's currency's, those of the row being folded).
        One it cannot fold raises one of :data:`UNFOLDABLE` before changing anything (:meth:`fold`)."""
        kind = event.get("event")
        if kind == "new_shoe":
            self.results.clear()
        elif kind == "betting_opened":
            self.phase, self.round = "betting", _whole(event["round"], "round")
            self.wagers.clear()
            self.seats.clear()
        elif kind == "wager_placed":
            seat, spot = _whole(event["seat"], "seat"), str(event["spot"])
            amount = _whole(event["amount"], "amount")
            self.wagers[(seat, spot)] = amount
            self.seats.add(seat)
        elif kind == "wager_returned":
            key = (_whole(event["seat"], "seat"), str(event["spot"]))
            left = self.wagers.get(key, 0) - _whole(event["amount"], "amount")
            if left > 0:
                self.wagers[key] = left
            else:
                self.wagers.pop(key, None)
                if not any(seat == key[0] for seat, _ in self.wagers):
                    self.seats.discard(key[0])
        elif kind == "betting_closed":
            if not isinstance(seats := event["seats"], list):
                raise TypeError(f"seats {seats!r:.40} is not a list")
            self.phase, self.seats = "dealing", {_whole(s, "seat") for s in seats}
        elif kind == "decision_due":
            self.phase = "deciding"
        elif kind == "round_result":
            self._result(event)
        elif kind in ("round_settled", "round_voided"):
            if kind == "round_settled" and self.journal is not None:
                net, round_no = _whole(event["house_net"], "house_net"), _whole(event["round"], "round")
                money = self.currency if minor_units is None else self.at_scale(minor_units)
                self.settled[(self.journal, round_no)] = (at, net, money)
                self.nets = [*self.nets, (net, money)][-LAST_NETS:]
            self.phase = "settled" if kind == "round_settled" else "voided"
            self.wagers.clear()
        elif kind == "tilt":
            tilt = {"reason": event.get("reason"), "detail": event.get("detail")}
            json.dumps(tilt, allow_nan=False)  # drawn as sent: 1e999 (inf) is no JSON a browser reads
            self.tilt = tilt
        elif kind == "tilt_cleared":
            self.tilt = None
        elif kind == "device":
            if event.get("online"):
                self.offline.pop(str(event["device"]), None)
            else:
                self.offline[str(event["device"])] = str(event.get("detail", ""))

    def _result(self, event: dict[str, Any]) -> None:
        if self.game != "baccarat":
            return
        # A result the road cannot place is the recall's to show, not the tile's to guess.
        if isinstance(record := event.get("result"), Mapping):
            with contextlib.suppress(RoadError, TypeError):  # TypeError: a winner that is a list
                self.results.append(Result.from_record(record, f"round {event.get('round')!r:.40}"))

    def fold(self, event: dict[str, Any], at: float, minor_units: int | None = None) -> str | None:
        """:meth:`apply`, or why the event cannot be folded (and nothing of it was): left out, as the
        recall shows a result the road cannot place, rather than the whole row or the whole board."""
        try:
            self.apply(event, at, minor_units)
        except UNFOLDABLE as exc:
            return f"event {event.get('seq')!r:.24} {event.get('event')!r:.40}: {exc!r:.200}"
        return None

    def take_row(self, msg: RowMessage) -> bool:
        """Fold one floor row message; False if rows are missing before it (the board then reloads the
        table from PostgreSQL). ValueError, the tile unchanged, if its ``currency`` is not one; an event
        that cannot be folded is left out, the rest folded, and logged once for the row (:meth:`fold`)."""
        money = currency_of(msg.currency)
        if msg.journal_id != self.journal:
            self.new_journal(msg.journal_id, msg.game, msg.currency)
        elif msg.row <= self.last_row:
            return True  # had it (from PostgreSQL, or a redelivery)
        elif money != self.currency:  # a limits row changed the decimals
            self.currency = money
        contiguous = msg.row == self.last_row + 1
        left_out = [why for event in msg.events if (why := self.fold(event, msg.at)) is not None]
        if left_out:
            log.warning("%s: row %d of journal %s: %d event(s) the board cannot fold, left out: %s",
                        self.table, msg.row, msg.journal_id, len(left_out), "; ".join(left_out[:3]))
        self.last_row = msg.row
        self.journal_rows = max(self.journal_rows, msg.journal_rows)
        self.heard = time.time()
        return contiguous

    def prune(self, now: float, day: GamingDay = MIDNIGHT) -> None:
        """Forget rounds older than both the last hour and today (they count in neither)."""
        since = kept_since(now, day)
        self.settled = {k: v for k, v in self.settled.items() if v[0] >= since}

    def house_today(self, today: float) -> dict[Currency, int]:
        """The house's result of the rounds settled since ``today``, one sum per currency they were
        played under, code and decimals (never one sum of two: 50.00 and 9,000 are not 9,050 of
        anything, nor EUR and USD one amount), the newest round's first (rounds ended at the same
        instant: the fewer decimals first, then by code), whatever order the rounds came in."""
        sums: dict[Currency, int] = {}
        newest: dict[Currency, float] = {}
        for at, net, money in self.settled.values():
            if at >= today:
                sums[money] = sums.get(money, 0) + net
                newest[money] = max(newest.get(money, at), at)
        order = sorted(sums, key=lambda m: (-newest[m], m.minor_units, m.code))
        return {money: sums[money] for money in order}

    def at_scale(self, minor_units: int) -> Currency:
        """The table's currency with ``minor_units`` decimals: how an amount of that scale is shown
        (ValueError unless 0 to 4)."""
        return currency_of({"code": self.currency.code, "minor_units": minor_units})

    def stale(self, now: float) -> bool:
        return now - self.heard > STALE_AFTER

    def view(self, now: float, day: GamingDay = MIDNIGHT) -> dict[str, Any]:
        """The tile as the page draws it (docs/floor.md, "The pit board"); its "today" is ``day``'s."""
        money = self.currency
        today = day.start(now)
        in_play = sum(self.wagers.values())
        house = self.house_today(today)
        newest = house.pop(money, 0)
        states = []
        if self.stale(now):
            states.append("stale")
        if any(a.get("severity") == "critical" for a in self.alerts.values()):
            states.append("fault")
        if self.tilt is not None:
            states.append("tilt")
        if self.offline:
            states.append("offline")
        road = [c.to_dict() for c in big_road(self.results)] if self.game == "baccarat" else []
        first_col = max((c["col"] for c in road), default=-1) - ROAD_COLUMNS + 1
        return {
            "table": self.table, "game": self.game, "journal": self.journal, "phase": self.phase,
            "round": self.round, "seats": sorted(self.seats),
            "rounds_per_hour": sum(1 for at, _, _ in self.settled.values() if at >= now - 3600),
            "in_play": in_play, "in_play_text": money.format(in_play),
            "house_today": newest, "house_today_text": money.signed(newest).strip(),
            "house_today_earlier": [
                {"currency": m.code, "minor_units": m.minor_units, "house_today": net,
                 "text": m.signed(net).strip()} for m, net in house.items()],
            "currency": money.code,
            # Which day house_today covers (rounds ended from gaming_day_from, epoch s): /report's default.
            "gaming_day": day.day_of(now).isoformat(), "gaming_day_from": today,
            "road": [{**c, "col": c["col"] - max(first_col, 0)} for c in road if c["col"] >= first_col],
            "nets": [m.signed(n).strip() for n, m in self.nets]
            if self.game != "baccarat" else [],
            "tilt": self.tilt, "offline": self.offline, "states": states,
            "behind": max(self.journal_rows - self.last_row, 0), "last_row": self.last_row,
            "silent": round(max(now - self.heard, 0.0), 1) if self.heard else None,
            "alerts": sorted(self.alerts.values(), key=lambda a: int(a["alert"])),
        }
