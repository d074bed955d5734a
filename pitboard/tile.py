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
import time
from dataclasses import dataclass, field
from typing import Any, Final

from controller.floor.gaming_day import MIDNIGHT, GamingDay
from controller.floor.wire import RowMessage
from controller.money import Currency
from signage.roads import Result, RoadError, big_road

#: No row and no heartbeat for this long: the table's feed is stale (issue 27: "feed lost").
STALE_AFTER: Final = 10.0
#: Results drawn on a tile: Baccarat's big road of the current shoe (its newest columns), other
#: games' house results of their newest rounds.
ROAD_COLUMNS: Final = 14
LAST_NETS: Final = 12


def day_start(now: float, day: GamingDay = MIDNIGHT) -> float:
    """Where "today" starts for ``now``: the start of its gaming day (the board's ``--gaming-day-starts``),
    the same as ``/report``'s default range (controller/floor/gaming_day.py, the one definition)."""
    return day.start(now)


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

    def new_journal(self, journal: str, game: str, currency: dict[str, Any]) -> None:
        """Start following ``journal`` (the table's first, or a replacement): its rounds start again."""
        self.journal, self.game, self.currency = journal, game, Currency(**currency)
        self.last_row = 0
        self.phase, self.round, self.tilt = "idle", None, None
        self.wagers.clear()
        self.seats.clear()
        self.results.clear()
        self.offline.clear()

    def apply(self, event: dict[str, Any], at: float, minor_units: int | None = None) -> None:
        """Fold one event (as the daemon published it) journaled at ``at`` (the table's clock), its
        amounts in ``minor_units`` decimals (None: the tile's currency's, those of the row being folded)."""
        kind = event.get("event")
        if kind == "new_shoe":
            self.results.clear()
        elif kind == "betting_opened":
            self.phase, self.round = "betting", int(event["round"])
            self.wagers.clear()
            self.seats.clear()
        elif kind == "wager_placed":
            self.wagers[(int(event["seat"]), str(event["spot"]))] = int(event["amount"])
            self.seats.add(int(event["seat"]))
        elif kind == "wager_returned":
            key = (int(event["seat"]), str(event["spot"]))
            left = self.wagers.get(key, 0) - int(event["amount"])
            if left > 0:
                self.wagers[key] = left
            else:
                self.wagers.pop(key, None)
                if not any(seat == key[0] for seat, _ in self.wagers):
                    self.seats.discard(key[0])
        elif kind == "betting_closed":
            self.phase = "dealing"
            self.seats = {int(s) for s in event["seats"]}
        elif kind == "decision_due":
            self.phase = "deciding"
        elif kind == "round_result":
            self._result(event)
        elif kind in ("round_settled", "round_voided"):
            self.phase = "settled" if kind == "round_settled" else "voided"
            self.wagers.clear()
            if kind == "round_settled" and self.journal is not None:
                net = int(event["house_net"])
                money = self.currency if minor_units is None else self.at_scale(minor_units)
                self.settled[(self.journal, int(event["round"]))] = (at, net, money)
                self.nets = [*self.nets, (net, money)][-LAST_NETS:]
        elif kind == "tilt":
            self.tilt = {"reason": event.get("reason"), "detail": event.get("detail")}
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
        with contextlib.suppress(RoadError, KeyError):
            self.results.append(Result.from_record(event["result"], f"round {event.get('round')}"))

    def take_row(self, msg: RowMessage) -> bool:
        """Fold one floor row message; False if rows are
        missing before it (the board then reloads the table from PostgreSQL)."""
        if msg.journal_id != self.journal:
            self.new_journal(msg.journal_id, msg.game, msg.currency)
        elif msg.row <= self.last_row:
            return True  # had it (from PostgreSQL, or a redelivery)
        elif (money := Currency(**msg.currency)) != self.currency:  # a limits row changed the decimals
            self.currency = money
        contiguous = msg.row == self.last_row + 1
        for event in msg.events:
            self.apply(event, msg.at)
        self.last_row = msg.row
        self.journal_rows = max(self.journal_rows, msg.journal_rows)
        self.heard = time.time()
        return contiguous

    def prune(self, now: float, day: GamingDay = MIDNIGHT) -> None:
        """Forget rounds older than both the last hour and today (they count in neither)."""
        since = min(day_start(now, day), now - 3600)
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
        """The table's currency with ``minor_units`` decimals: how an amount of that scale is shown."""
        return Currency(self.currency.code, minor_units)

    def stale(self, now: float) -> bool:
        return now - self.heard > STALE_AFTER

    def view(self, now: float, day: GamingDay = MIDNIGHT) -> dict[str, Any]:
        """The tile as the page draws it (docs/floor.md, "The pit board"); its "today" is ``day``'s."""
        money = self.currency
        today = day_start(now, day)
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
