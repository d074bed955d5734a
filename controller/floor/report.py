"""The floor's reports (``croupier floor report``): rounds, seats, wagers, house result and theoretical win.

Every figure comes from the rounds' own records (their settlement lines, the wagers standing when
betting closed, the seats' credits), as the floor stores them and as a replay of the table's journal
rebuilds them: :func:`from_floor` and :func:`from_journal` give the same :class:`RoundFacts`, and one
aggregation (:func:`aggregate`) makes the report of either, so the two can be compared field for
field. The theoretical win is exact (fractions of minor units) from each game's par
(controller/floor/report_par.py); the interval of actual minus theoretical uses each bet type's
variance per unit from the same par (docs/floor.md, "Reports", gives the formulas).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from controller.floor.report_par import (
    ROUND,
    GamePar,
    NoPar,
    in_play,
    par_for,
    record_bets,
    record_lines,
    round_terms,
)
from controller.money import round_decimals

#: The interval of actual minus theoretical: 95 % (two-sided, the normal approximation).
Z_95 = 1.959963984540054
#: ``--by`` choices.
GROUPINGS = ("table", "game", "dealer", "hour")
NO_DEALER = "(none)"

#: The rounds ended in a time range (the table's clock), each with its journal's game, options and
#: currency, and the parts of its record a report reads (not its cards and inputs, most of its size),
#: its dealer among them: the record's own ``dealer``, the dealer in at the round's first seq (the
#: engine keeps it, controller.dealers). ``rounds_by_end`` (migration 0006) finds the range over every
#: table.
ROUNDS = """
    SELECT r.table_id, r.journal_id, t.game, t.options, t.currency,
           jsonb_build_object('round', r.record->'round', 'status', r.record->'status',
                              'ended_at', r.record->'ended_at', 'house_net', r.record->'house_net',
                              'settlements', r.record->'settlements', 'bets', r.record->'bets',
                              'credits_before', r.record->'credits_before',
                              'dealer', r.record->'dealer', 'minor_units', r.record->'minor_units') AS record
    FROM rounds r JOIN tables t ON t.table_id = r.table_id AND t.journal_id = r.journal_id
    WHERE r.ended_at >= %(start)s AND r.ended_at < %(end)s
      AND (%(table)s::text IS NULL OR r.table_id = %(table)s)
    ORDER BY r.table_id, r.journal_id, r.round
    """


@dataclass(frozen=True)
class RoundFacts:
    """What a report needs of one settled or voided round, taken from its record unchanged."""

    table_id: str
    journal_id: str
    round: int
    game: str
    options: str  # the journal's options, as sorted JSON
    currency: str
    minor_units: int
    status: str
    ended_at: float
    dealer: str
    seated: int  # seats with a credit account when the round opened
    wagering: int  # seats with a wager standing when betting closed
    house_net: int
    lines: tuple[tuple[str, int, int], ...]  # (spot, stake, net) of each settlement line
    bets: tuple[tuple[str, int], ...]  # (spot, amount) of each wager standing when betting closed


def facts(table_id: str, journal_id: str, game: str, options: dict[str, Any], currency: dict[str, Any],
          record: dict[str, Any]) -> RoundFacts:
    """A round record (as ``ctl recall`` and the floor's ``rounds`` give it) as :class:`RoundFacts`; its
    ``dealer`` (None: nobody dealt in) is the round's, as the engine recorded it."""
    return RoundFacts(
        table_id, journal_id, int(record["round"]), game, json.dumps(options, sort_keys=True),
        str(currency.get("code", "")), round_decimals(record, currency), str(record["status"]),
        float(record["ended_at"]), record.get("dealer") or NO_DEALER, len(record.get("credits_before") or {}),
        len(in_play(record)), int(record.get("house_net") or 0), record_lines(record),
        record_bets(record))


def from_floor(conn: Any, start: float, end: float, table: str | None = None) -> list[RoundFacts]:
    """The rounds the floor recorded ending at ``start`` <= ended_at < ``end`` (one table, or all)."""
    rows = conn.execute(ROUNDS, {"start": start, "end": end, "table": table}).fetchall()
    return [facts(t, j, g, o, c, rec) for t, j, g, o, c, rec in rows]


def from_journal(config: Any, start: float, end: float) -> list[RoundFacts]:
    """The same rounds rebuilt from the table's journal: replayed through the daemon's engine as the
    uplink and ``ctl recall`` do (controller/floor/derive.py)."""
    from controller.floor.derive import JournalSource, Replay

    source = JournalSource(config)
    try:
        replay, last = Replay(source), source.last_row()
        out = []
        for entry in source.entries(1, last):
            record = replay.message(entry, last).round
            if record is None or not start <= float(record["ended_at"]) < end:
                continue
            out.append(facts(replay.table_id, replay.journal_id, replay.game, replay.options,
                             replay.currency, record))
        return out
    finally:
        source.close()


@dataclass
class BetFigures:
    """One bet type in a group: amounts in minor units; the theoretical exact (None: no par)."""

    wagered: int = 0
    house: int = 0
    theoretical: Fraction | None = Fraction(0)
    #: of the house's result (a float where the par's figure is a bound from standard deviations)
    variance: Fraction | float | None = Fraction(0)

    @property
    def difference(self) -> Fraction | None:
        return None if self.theoretical is None else self.house - self.theoretical

    @property
    def interval(self) -> tuple[float, float] | None:
        """Actual minus theoretical, plus or minus 1.96 standard deviations (None: unknown)."""
        if self.difference is None or self.variance is None:
            return None
        spread = Z_95 * math.sqrt(self.variance)
        return float(self.difference) - spread, float(self.difference) + spread


@dataclass
class Group:
    """One line of a report: the rounds of one table, game, dealer or hour, in one currency."""

    key: str
    currency: str
    minor_units: int
    rounds: int = 0
    voided: int = 0
    hours: set[int] = field(default_factory=set)
    seat_rounds: int = 0  # seats with a wager, summed over settled rounds
    seated_rounds: int = 0  # seats with a credit account, summed over settled rounds
    bets: dict[str, BetFigures] = field(default_factory=dict)
    total: BetFigures = field(default_factory=BetFigures)
    #: per game and options: the sums the theoretical win and the variances are made of
    moments: dict[tuple[str, str], Moments] = field(default_factory=dict)

    @property
    def rounds_per_hour(self) -> float:
        return self.rounds / len(self.hours) if self.hours else 0.0

    @property
    def seats_per_round(self) -> float:
        return self.seat_rounds / self.rounds if self.rounds else 0.0

    @property
    def occupancy(self) -> float:
        return self.seat_rounds / self.seated_rounds if self.seated_rounds else 0.0



@dataclass
class Report:
    """A report: its range, grouping, groups in key order and the par notes (which figure was used)."""

    start: float
    end: float
    by: str
    groups: list[Group]
    notes: dict[str, str]

    def split(self, group: Group) -> bool:
        """Whether another group has the group's key and currency at other decimals (one table's
        rounds before and after a change of ``currency.minor_units``)."""
        return any(g.key == group.key and g.currency == group.currency and g.minor_units != group.minor_units
                   for g in self.groups)

    def scale(self, group: Group) -> str:
        """What a group's amounts are in, for its title: the currency (``EUR``, or ``no currency``), and
        its decimals when the report :meth:`split` its key: two blocks ``t (EUR)`` would read as one
        table counted twice (``t (EUR, 2 decimals)``, ``t (EUR, 0 decimals)``)."""
        name = group.currency or "no currency"
        return f"{name}, {group.minor_units} decimals" if self.split(group) else name


def hour_of(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:00")


def _key(f: RoundFacts, by: str) -> str:
    return (f.table_id if by == "table" else f.game if by == "game" else f.dealer if by == "dealer"
            else hour_of(f.ended_at))


def _par(cache: dict[tuple[str, str], GamePar | str], f: RoundFacts) -> GamePar | str:
    """The round's game par, or why there is none (cached per game and options)."""
    key = (f.game, f.options)
    if key not in cache:
        try:
            cache[key] = par_for(f.game, json.loads(f.options))
        except NoPar as exc:
            cache[key] = str(exc)
    return cache[key]


@dataclass
class Moments:
    """Sums over one game's rounds (one par) in a group, enough for its exact theoretical win and
    variances: each bet type's base, and each pair of bet types' product of bases per round."""

    base: dict[str, int] = field(default_factory=dict)
    cross: dict[tuple[str, str], int] = field(default_factory=dict)


def _add_round(group: Group, f: RoundFacts, par: GamePar | str) -> None:
    group.rounds += 1
    group.hours.add(int(f.ended_at // 3600))
    group.seat_rounds += f.wagering
    group.seated_rounds += f.seated
    group.total.house += f.house_net
    terms = round_terms(par if isinstance(par, GamePar) else None, f.lines, f.bets)
    for kind, house in terms.house.items():
        figures = group.bets.setdefault(kind, BetFigures())
        figures.house += house
        figures.wagered += terms.wagered[kind]
        group.total.wagered += terms.wagered[kind]
    if sum(terms.house.values()) != f.house_net:
        raise ValueError(f"{f.table_id} round {f.round}: its lines net {sum(terms.house.values())} for the "
                         f"house, its record says {f.house_net}")
    bases = terms.bases
    m = group.moments.setdefault((f.game, f.options), Moments())
    for t, b in bases.items():
        if t != ROUND:  # a share on the ante in a round without its wager's line (2WayWinner)
            group.bets.setdefault(t, BetFigures())
        m.base[t] = m.base.get(t, 0) + b
        for u, c in bases.items():
            m.cross[t, u] = m.cross.get((t, u), 0) + b * c


def _finish(group: Group, cache: dict[tuple[str, str], GamePar | str]) -> None:
    """Each bet type's theoretical win and variance, and the total's, from the group's sums: the
    theoretical edge x sum of bases; a bet type's variance its variance per unit x sum of squared bases;
    the total's the sum over pairs of bet types of their covariance per unit x sum of products."""
    total: Fraction | float | None = Fraction(0)
    for key, m in sorted(group.moments.items()):
        par = cache[key]
        kinds = [t for t in m.base if t != ROUND]
        if not isinstance(par, GamePar):
            for t in kinds:
                group.bets[t].theoretical = group.bets[t].variance = None
            group.total.theoretical, total = None, None
            continue
        for t in kinds:
            figures, bet = group.bets[t], par.types[t]
            theoretical = bet.edge * m.base[t]
            if figures.theoretical is not None:
                figures.theoretical += theoretical
            if group.total.theoretical is not None:
                group.total.theoretical += theoretical
            if figures.variance is not None:
                figures.variance = (None if bet.variance is None
                                    else figures.variance + bet.variance * m.cross[t, t])
        for (t, u), product in sorted(m.cross.items()):
            covariance = par.covariance(t, u)
            if covariance is None or total is None:
                total = None
                break
            total += covariance * product
    group.total.variance = total


def aggregate(rounds: Iterable[RoundFacts], by: str, start: float, end: float) -> Report:
    """The report of ``rounds`` grouped ``by`` table, game, dealer or hour (and currency)."""
    if by not in GROUPINGS:
        raise ValueError(f"--by must be one of {', '.join(GROUPINGS)}, not {by!r}")
    cache: dict[tuple[str, str], GamePar | str] = {}
    groups: dict[tuple[str, str, int], Group] = {}
    for f in rounds:
        key = (_key(f, by), f.currency, f.minor_units)  # amounts at one scale: a decimals change splits
        group = groups.setdefault(key, Group(key[0], f.currency, f.minor_units))
        if f.status != "settled":
            group.voided += 1
            continue
        _add_round(group, f, _par(cache, f))
    for group in groups.values():
        _finish(group, cache)
    games = [game for game, _ in cache]
    notes = {(game if games.count(game) == 1 else f"{game} {options}"):
             par if isinstance(par, str) else par.note for (game, options), par in sorted(cache.items())}
    return Report(start, end, by, [groups[k] for k in sorted(groups)], notes)
