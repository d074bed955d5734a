"""The game-integrity rules (controller/floor/integrity) wired to a table's events as they arrive.

Pure: events in, raise/clear out. A shoe starts at ``new_shoe`` and ends at the table's next
``new_shoe`` or when its journal is replaced; its cards (``card_dealt`` and ``card_burned``, in order)
are counted live (a card seen more often than the shoe holds it is raised at once) and, when it ends,
counted whole, checked against every earlier shoe of the floor for a false shuffle, added to that
index, and its winners tested by chi-squared. Each table's bet types (every game with a par:
controller/floor/report_par.py) are judged for drift over a sliding window of its last rounds after
every settled round's record, in constant time (running sums).
"""

from __future__ import annotations

import time
from array import array
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from controller.cards import Card, CardError, parse_card
from controller.devices import SHOE_EMPTY, SHOE_FEED
from controller.floor.integrity.drift import BetLaw, chi_squared, drift_of_sums, laws
from controller.floor.integrity.shoe_count import count_shoe
from controller.floor.integrity.shuffle_check import ShoeHistory
from controller.floor.report_par import GamePar, NoPar, baccarat_probabilities, par_for, record_terms

#: The rounds a table's drift is judged over (docs/floor.md: a Baccarat table paying Banker 1:1 is
#: outside the band after this many rounds with probability 0.99; each game's rig there needs fewer).
DRIFT_WINDOW: Final = 52_708
#: A shoe's winners are tested by chi-squared only from this many rounds (every expected count >= 5).
CHI_SQUARED_ROUNDS: Final = 60


@dataclass(frozen=True)
class Raise:
    """Open an alert (controller.floor.alerts.raise_alert's arguments)."""

    table_id: str
    kind: str
    key: str
    severity: str
    detail: str
    data: dict[str, Any]
    cause_at: float | None


@dataclass(frozen=True)
class Clear:
    """Close the open alert of this table, kind and key."""

    table_id: str
    kind: str
    key: str = ""


Action = Raise | Clear


@dataclass
class Shoe:
    """The shoe a table is dealing: its cards so far and the winners of its rounds."""

    journal: str
    number: int
    decks: int
    cards: list[Card] = field(default_factory=list)
    winners: Counter[str] = field(default_factory=Counter)
    #: The shoe said it is empty: nothing was left undealt, so a missing card can be counted and named.
    emptied: bool = False

    @property
    def key(self) -> str:
        return f"{self.journal}:{self.number}"


class ShoeWatch:
    """Every table's current shoe, and the floor-wide index of every finished one."""

    def __init__(self, history: ShoeHistory | None = None) -> None:
        self.history = history or ShoeHistory()
        self.current: dict[str, Shoe] = {}

    def journal(self, table_id: str, journal: str) -> list[Action]:
        """A row of ``journal``: if the table's shoe was of another journal, that shoe has ended."""
        shoe = self.current.get(table_id)
        if shoe is None or shoe.journal == journal:
            return []
        del self.current[table_id]
        return self.finish(table_id, shoe)

    def event(self, table_id: str, journal: str, e: Mapping[str, Any]) -> list[Action]:
        name, shoe = e.get("event"), self.current.get(table_id)
        if name == "new_shoe":
            actions = [] if shoe is None else self.finish(table_id, shoe)
            self.current[table_id] = Shoe(journal, int(e["shoe_number"]), int(e["decks"]))
            return actions
        if shoe is None:
            return []
        if name == "device" and e.get("device") == SHOE_FEED and not e.get("online") \
                and str(e.get("detail", "")).startswith(SHOE_EMPTY):
            shoe.emptied = True
        elif name in ("card_dealt", "card_burned"):
            try:
                card = parse_card(str(e.get("card")))
            except CardError:
                return []
            shoe.cards.append(card)
            seen = sum(1 for c in shoe.cards if c == card)
            if seen > shoe.decks:
                return [Raise(table_id, "shoe_integrity", shoe.key, "critical",
                              f"shoe {shoe.number}: {card} seen {seen} times; the shoe holds it {shoe.decks} "
                              f"times", {"card": str(card), "seen": seen, "decks": shoe.decks}, None)]
        elif name == "round_result" and e.get("game") == "baccarat" and isinstance(e.get("result"), Mapping):
            winner = e["result"].get("winner")
            if isinstance(winner, str):
                shoe.winners[winner] += 1
        return []

    def finish(self, table_id: str, shoe: Shoe) -> list[Action]:
        """A shoe has ended: its count, its order against every earlier shoe, its winners."""
        actions: list[Action] = []
        if not shoe.cards:
            return actions
        # The undealt count is in the history only when a dispensing shoe said it is empty (none left);
        # otherwise it is taken as what the seen cards leave (docs/floor.md: a cut card's remainder is
        # never read), so such a shoe is short only if more cards were seen than it holds.
        undealt = 0 if shoe.emptied else max(0, 52 * shoe.decks - len(shoe.cards))
        count = count_shoe(shoe.decks, shoe.cards, undealt)
        if not count.ok:
            actions.append(Raise(table_id, "shoe_integrity", shoe.key, "critical",
                                 f"shoe {shoe.number}: " + "; ".join(count.findings()),
                                 {"seen": count.seen, "short": count.short, "decks": shoe.decks}, None))
        verdict = self.history.check(shoe.cards)
        if verdict.false_shuffle:
            actions.append(Raise(table_id, "false_shuffle", shoe.key, "critical",
                                 f"shoe {shoe.number}: " + "; ".join(verdict.findings()),
                                 {"runs": len(verdict.runs), "kept_pairs": len(verdict.kept)}, None))
        self.history.add(f"{table_id}:{shoe.key}", shoe.cards)
        return actions + _winners_test(table_id, shoe.key, f"shoe {shoe.number}", shoe.winners, shoe.decks)


def _winners_test(table_id: str, key: str, what: str, winners: Counter[str], decks: int) -> list[Action]:
    """The chi-squared test of ``winners`` (a shoe's, a day's) against the par sheet, from 60 rounds."""
    rounds = sum(winners.values())
    if rounds < CHI_SQUARED_ROUNDS:
        return []
    test = chi_squared(winners, baccarat_probabilities(decks)["winner"])
    if not test.outside:
        return []
    return [Raise(table_id, "outcome_frequencies", key, "warning",
                  f"{what}: winners {dict(sorted(winners.items()))} over {rounds} rounds, chi-squared "
                  f"p = {test.p_value:.2g}", {"p_value": test.p_value, "rounds": rounds}, None)]


class DayWatch:
    """Each Baccarat table's winners per day (UTC, the table's clock), tested when its next day begins."""

    def __init__(self) -> None:
        self.days: dict[str, tuple[str, int, Counter[str]]] = {}

    def event(self, table_id: str, options: Mapping[str, Any], e: Mapping[str, Any],
              at: float) -> list[Action]:
        result = e.get("result")
        if e.get("event") != "round_result" or e.get("game") != "baccarat" or not isinstance(result, Mapping):
            return []
        day = time.strftime("%Y-%m-%d", time.gmtime(at))
        actions: list[Action] = []
        kept = self.days.get(table_id)
        if kept is not None and kept[0] != day:
            actions = _winners_test(table_id, f"day:{kept[0]}", f"day {kept[0]}", kept[2], kept[1])
            kept = None
        if kept is None:
            kept = self.days[table_id] = (day, int(options.get("decks", 8)), Counter())
        winner = result.get("winner")
        if isinstance(winner, str):
            kept[2][winner] += 1
        return actions


class Window:
    """The last ``size`` rounds of one bet type at one table: (staked, players' net), with running sums."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.stakes: array[int] = array("q")
        self.nets: array[int] = array("q")
        self.next = 0
        self.staked = self.net = self.squares = 0

    def __len__(self) -> int:
        return len(self.stakes)

    def add(self, stake: int, net: int) -> None:
        if len(self.stakes) < self.size:
            self.stakes.append(stake)
            self.nets.append(net)
        else:
            old_stake, old_net = self.stakes[self.next], self.nets[self.next]
            self.staked, self.net, self.squares = (self.staked - old_stake, self.net - old_net,
                                                   self.squares - old_stake * old_stake)
            self.stakes[self.next], self.nets[self.next] = stake, net
            self.next = (self.next + 1) % self.size
        self.staked, self.net = self.staked + stake, self.net + net
        self.squares += stake * stake

    def rescale(self, factor: int) -> None:
        """Every amount times ``factor`` (10 to the decimals added): the same money in finer minor units."""
        self.stakes = array("q", (stake * factor for stake in self.stakes))
        self.nets = array("q", (net * factor for net in self.nets))
        self.staked, self.net = self.staked * factor, self.net * factor
        self.squares *= factor * factor


class DriftWatch:
    """Each table's bet types over their last ``window`` rounds against the par's 99.9 % band."""

    def __init__(self, window: int = DRIFT_WINDOW) -> None:
        self.window = window
        self.tables: dict[str, tuple[str, GamePar, dict[str, BetLaw], dict[str, Window]]] = {}
        #: Each table's windows' decimals: the most of its rounds' since they started.
        self.scales: dict[str, int] = {}

    def round(self, table_id: str, game: str, options: Mapping[str, Any], record: Mapping[str, Any],
              decimals: int) -> list[Action]:
        """A round's record (the row message's ``round``), its amounts in ``decimals`` (the round's
        ``money.round_decimals``): judged if settled, for every bet it had."""
        if record.get("status") != "settled":
            return []
        # A new game or pay table starts its windows again. New decimals (a ``limits`` row) do not: the
        # rounds are worth what they were, so the window goes on at the finer scale, every amount exact
        # in it (10.00 and 2,000 are 1,000 and 200,000 at 2 decimals, never 2,010 of anything), and a
        # drift found before the change stays found.
        rules = f"{game} {sorted(options.items())}"
        kept = self.tables.get(table_id)
        if kept is None or kept[0] != rules:
            try:
                par = par_for(game, dict(options))
            except (NoPar, ValueError, TypeError):  # no par for these options: nothing to judge by
                return []
            judged = laws(par)
            kept = self.tables[table_id] = (rules, par, judged, {bet: Window(self.window) for bet in judged})
            self.scales[table_id] = decimals
        _, par, judged, windows = kept
        scale = self.scales[table_id]
        if decimals > scale:
            for w in windows.values():
                w.rescale(10 ** (decimals - scale))
            self.scales[table_id] = scale = decimals
        factor = 10 ** (scale - decimals)
        try:
            terms = record_terms(par, record)
        except NoPar:  # a spot the par does not know (the round is not of these rules)
            return []
        actions: list[Action] = []
        for bet, law in judged.items():
            had = law.of(terms)
            if had is None:
                continue
            w = windows[bet]
            w.add(had[0] * factor, had[1] * factor)
            drift = drift_of_sums(law, len(w), w.staked, w.net, w.squares)
            if drift.outside:
                actions.append(Raise(table_id, "results_drift", bet, "warning", drift.finding(scale),
                                     {"rounds": drift.rounds, "staked": drift.staked,
                                      "actual": drift.actual, "expected": float(drift.expected),
                                      "low": drift.low, "high": drift.high, "minor_units": scale},
                                     None))
            else:
                actions.append(Clear(table_id, "results_drift", bet))
        return actions
