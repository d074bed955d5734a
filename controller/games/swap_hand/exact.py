"""Swap-Hand Blackjack computed exactly: the Main and Odds-Win returns and the best strategy.

Built on the exact blackjack engine (:mod:`controller.games.blackjack_exact`)
with the game's three changes (docs/rules/swap_hand.md):

- the Odds-Win (half the main, 2:1) lives on an odd first two cards and
  follows the first hand, so that hand is valued at a win of 2 main units
  and a loss of 1.5 (3 and 2.5 doubled); an even start loses it at once;
- a hand reaching 21 wins on the spot (``auto_win_21``), a natural wins
  even against a dealer blackjack, and the dealer's blackjack takes every
  other hand (the peek comes before any swap);
- a two-card hard 14-18 may be swapped for two fresh cards off the same
  shoe (the discards stay out), played as a new start that can double,
  split or be a natural, with the Odds-Win as decided by the first cards.

One deal (up card, two player cards) is valued on the exact composition
left; both strategies are computed in the same pass: the documented chart
the simulator plays (docs/strategy/swap_hand.md, :func:`basic_policy`) and
the best composition-dependent play, swap included. The Odds-Win share of a
strategy is measured by replaying its decisions with only the Odds-Win
counted (and once more counting only its wins: the Odds-Win's hit
frequency, which with its mean fixes its standard deviation, its net being
+2, 0 or -1 a unit); the Main's share is the rest. More replays count the
Main's hit frequency and second moment: exact on the rounds without a
split, and for the split rounds their probability and their hands' squared
nets, from which the sheet bounds the rest (:data:`COUNTS`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final

from controller.games.blackjack_dealer import (
    ACE,
    TEN,
    Shoe,
    full_shoe,
    hole_blackjack,
    no_blackjack,
    remove,
    take,
)
from controller.games.blackjack_exact import Evaluator, Policy, Rules, Stakes, is_natural, starts, two_pass
from controller.games.blackjack_strategy import Chart, chart_policy, chart_up, should_swap
from controller.games.swap_hand.options import SwapHandOptions

#: The first hand with the Odds-Win dead (plain stakes) and live (2:1 on half a unit rides along).
DEAD: Final = Stakes(1.0, 1.0, 2.0, 2.0)
LIVE: Final = Stakes(2.0, 1.5, 3.0, 2.5)
NOTHING: Final = Stakes(0.0, 0.0, 0.0, 0.0)
#: A Main hand counted as P(it wins), P(it loses) (a hand's value is win x P(win) - lose x P(loss)) and
#: E[its net squared] (1 a unit, 4 doubled).
WIN: Final = Stakes(1.0, 0.0, 1.0, 0.0)
LOSS: Final = Stakes(0.0, -1.0, 0.0, -1.0)
SQUARE: Final = Stakes(1.0, -1.0, 4.0, -4.0)


@dataclass(frozen=True)
class Count:
    """What one pass over the deals counts, under a strategy already chosen for both wagers.

    ``payoff`` maps each hand's stakes (:data:`LIVE`, :data:`DEAD`) to what is counted; the rest are the
    rounds settled without play: a natural counts ``natural`` x (blackjack pays) ** ``power`` plus
    ``natural_live`` with a live Odds-Win, a dealer blackjack against any other hand ``on_blackjack``, an
    even start's Odds-Win lost at once ``lost_odds``. ``splits`` says what a split round counts: "play"
    its hands (each counted on its own: the split simplification has no joint law of the hands), "skip"
    nothing (the count is then of the rounds without a split), "mark" one (the split rounds' probability).
    """

    payoff: dict[Stakes, Stakes]
    natural: float
    power: int
    natural_live: float
    on_blackjack: float
    lost_odds: float
    splits: str = "play"
    #: Only the Odds-Win counts: an even start is worth ``lost_odds`` whatever happens.
    odds_only: bool = False


COUNTS: Final = {
    "both": Count({}, 1.0, 1, 1.0, -1.5, -0.5),
    # The Odds-Win alone, per main unit: +1 on a win, -0.5 on a loss, a double changes nothing.
    "odds": Count({LIVE: Stakes(1.0, 0.5, 1.0, 0.5), DEAD: NOTHING}, 0.0, 0, 1.0, -0.5, -0.5, odds_only=True),
    # P(the Odds-Win wins): with its mean it fixes its variance (its net is +2, 0 or -1 a unit).
    "odds_wins": Count({LIVE: WIN, DEAD: NOTHING}, 0.0, 0, 1.0, 0.0, 0.0, odds_only=True),
    # The Main's moments: P(won), P(lost) and E[net^2] of the rounds without a split, exact; the split
    # rounds' probability and their hands' squared nets, which bound the rest (exact_sheet.main_spread).
    "main_wins": Count({LIVE: WIN, DEAD: WIN}, 1.0, 0, 0.0, 0.0, 0.0, "skip"),
    "main_losses": Count({LIVE: LOSS, DEAD: LOSS}, 0.0, 0, 0.0, 1.0, 0.0, "skip"),
    "main_square_unsplit": Count({LIVE: SQUARE, DEAD: SQUARE}, 1.0, 2, 0.0, 1.0, 0.0, "skip"),
    "main_square": Count({LIVE: SQUARE, DEAD: SQUARE}, 1.0, 2, 0.0, 1.0, 0.0),
    "split_rounds": Count({LIVE: NOTHING, DEAD: NOTHING}, 0.0, 0, 0.0, 0.0, 0.0, "mark"),
}
#: The replays after the pass that chooses the strategy (which counts "both").
SHARES: Final = tuple(c for c in COUNTS if c != "both")
MOMENTS: Final = tuple(c for c in SHARES if c.startswith(("main", "split")))
SWAP_TOTALS: Final = range(14, 19)
STRATEGIES: Final = ("basic", "optimal")


def rules_of(options: SwapHandOptions) -> Rules:
    return Rules(
        hits_soft_17=options.dealer_hits_soft_17,
        blackjack_pays=options.blackjack_pays.num / options.blackjack_pays.den,
        double_on=options.double_on,
        double_after_split=options.double_after_split,
        max_split_hands=options.max_split_hands,
        resplit_aces=options.resplit_aces,
        hit_split_aces=options.hit_split_aces,
        auto_win_21=True,
    )


def basic_policy(options: SwapHandOptions) -> Callable[[int, bool, int, int, tuple[str, ...]], str]:
    """The simulator's player (docs/strategy/swap_hand.md) as a policy of the exact engine."""
    return chart_policy(Chart(options.dealer_hits_soft_17, options.double_after_split))


@dataclass
class UpResult:
    """One up card's share of the returns (probability-weighted, per main unit) and the chart cells."""

    up: int = 0

    total: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STRATEGIES, 0.0))
    #: Per count of :data:`SHARES` (the Odds-Win's net, its wins, the Main's moments), per strategy.
    shares: dict[str, dict[str, float]] = field(
        default_factory=lambda: {c: dict.fromkeys(STRATEGIES, 0.0) for c in SHARES})
    #: (row, up) -> action -> probability, the optimal first decision of each two-card start.
    cells: dict[tuple[str, int], dict[str, float]] = field(default_factory=dict)

    def merge(self, other: UpResult) -> None:
        for k in STRATEGIES:
            self.total[k] += other.total[k]
            for c in SHARES:
                self.shares[c][k] += other.shares[c][k]
        for key, acts in other.cells.items():
            mine = self.cells.setdefault(key, {})
            for a, p in acts.items():
                mine[a] = mine.get(a, 0.0) + p


def row_name(c1: int, c2: int) -> str:
    """The chart row of a two-card start: a pair, a soft total or a hard total."""
    if c1 == c2:
        rank = "A" if c1 == ACE else "T" if c1 == TEN else str(c1)
        return f"{rank}-{rank}"
    if ACE in (c1, c2):
        return f"A-{c1 + c2 - 1}"
    return f"hard {c1 + c2}"


class Deal:
    """Values of one strategy on the deals of one up card (an evaluator plus the swap decision)."""

    def __init__(self, options: SwapHandOptions, strategy: str, replay: dict[object, str] | None = None,
                 count: str = "both") -> None:
        rules = rules_of(options)
        self.rules = rules
        self.basic = strategy == "basic"
        self.count = COUNTS[count]
        self.ev = _Counting(rules, basic_policy(options) if self.basic else None, replay=replay,
                            payoff=self.count.payoff, splits=self.count.splits)
        self.replay = replay
        self.decisions = self.ev.decisions

    def natural(self, live: bool) -> float:
        """A natural (dealt or swapped in) wins whatever the dealer holds; the live Odds-Win wins with it."""
        c = self.count
        return c.natural * self.rules.blackjack_pays ** c.power + (c.natural_live if live else 0.0)

    def fresh(self, shoe: Shoe, up: int, st: Stakes) -> float:
        """Two new cards off ``shoe`` after a swap, played as a new start (joint with no dealer blackjack)."""
        value = 0.0
        for d1, d2, p, rest in pairs(shoe):
            if is_natural(d1, d2):
                value += p * self.natural(st is LIVE) * no_blackjack(up, rest)
            else:
                value += p * self.ev.play(rest, d1, d2, up, st, others=DEAD)
        return value

    def deal(self, up: int, c1: int, c2: int, rest: Shoe) -> tuple[float, str]:
        """The value of one deal (per main unit, of what :attr:`count` counts) and the first decision."""
        live = (c1 + c2) % 2 == 1
        if is_natural(c1, c2):
            return self.natural(live), "blackjack"
        p_bj = hole_blackjack(up, rest)
        on_bj, lost = self.count.on_blackjack, self.count.lost_odds
        even = 0.0 if live else lost * (1 - p_bj)
        if self.count.odds_only and not live:
            return lost, "even"
        st = LIVE if live else DEAD
        keep = self.ev.play(rest, c1, c2, up, st, others=DEAD)
        action = self.decisions.get((rest, c1, c2, up, st, False, True), "stand")
        if ACE not in (c1, c2) and c1 + c2 in SWAP_TOTALS:
            swap_key = ("swap", rest, c1, c2, up)
            if self.replay is not None:
                swapping = self.replay[swap_key] == "swap"
                swap = self.fresh(rest, up, st) if swapping else 0.0
            elif self.basic:
                swapping = should_swap(c1 + c2, chart_up(up))
                swap = self.fresh(rest, up, st) if swapping else 0.0
            else:
                swap = self.fresh(rest, up, st)
                swapping = swap > keep
                self.decisions[swap_key] = "swap" if swapping else "keep"
            if swapping:
                keep, action = swap, "swap"
        return p_bj * on_bj + keep + even, action


class _Counting(Evaluator):
    """An evaluator whose split rounds count what :attr:`Count.splits` says instead of their hands."""

    def __init__(self, rules: Rules, policy: Policy | None, *, replay: dict[object, str] | None,
                 payoff: dict[Stakes, Stakes], splits: str) -> None:
        super().__init__(rules, policy, replay=replay, payoff=payoff)
        self.splits = splits

    def split(self, shoe: Shoe, pair: int, up: int, first: Stakes, others: Stakes) -> float:
        if self.splits == "skip":
            return 0.0
        if self.splits == "mark":  # joint with no dealer blackjack, as every value is
            return no_blackjack(up, shoe)
        return super().split(shoe, pair, up, first, others)


def pairs(shoe: Shoe) -> Iterator[tuple[int, int, float, Shoe]]:
    """Two cards off ``shoe``, unordered (low first), with their probability and the shoe left."""
    n = sum(shoe)
    for d1 in range(1, 11):
        if shoe[d1 - 1]:
            after = take(shoe, d1)
            p1 = shoe[d1 - 1] / n
            for d2 in range(d1, 11):
                if after[d2 - 1]:
                    yield d1, d2, p1 * after[d2 - 1] / (n - 1) * (1 if d1 == d2 else 2), take(after, d2)


@dataclass(frozen=True)
class Job:
    up: int
    options: SwapHandOptions


def up_result(job: Job) -> UpResult:
    """Both strategies' returns (both wagers, and the Odds-Win alone) from the deals under one up card."""
    options, up = job.options, job.up
    shoe = full_shoe(options.decks)

    def explore() -> None:
        best_play(options, up)

    def work() -> UpResult:
        result = UpResult(up)
        for strategy in STRATEGIES:
            deal = Deal(options, strategy)
            for u, c1, c2, p, rest in starts(shoe):
                if u != up:
                    continue
                value, action = deal.deal(u, c1, c2, rest)
                result.total[strategy] += p * value
                if strategy == "optimal":
                    cell = result.cells.setdefault((row_name(c1, c2), up), {})
                    cell[action] = cell.get(action, 0.0) + p
            replay = None if deal.basic else deal.decisions
            for count in SHARES:
                share = Deal(options, strategy, replay=replay, count=count)
                result.shares[count][strategy] = sum(p * share.deal(u, c1, c2, rest)[0]
                                                     for u, c1, c2, p, rest in starts(shoe) if u == up)
        return result

    return two_pass(work, explore)


def best_play(options: SwapHandOptions, up: int) -> Deal:
    """The best play of every deal under ``up`` off a full shoe, its decisions recorded in the result
    (inside :func:`two_pass`; also how a simulated player follows the best strategy)."""
    deal = Deal(options, "optimal")
    for u, c1, c2, _, rest in starts(full_shoe(options.decks)):
        if u == up:
            deal.deal(u, c1, c2, rest)
    return deal


def deal_values(options: SwapHandOptions, up: int, deals: list[tuple[int, int]]) -> dict[str, list[float]]:
    """Per strategy: for each of ``deals`` (two player cards under ``up``, off a full shoe) its value for
    both wagers and for the Odds-Win alone, per main unit. A few seconds: the stored sheet carries these
    for a handful of deals so a test can prove, cheaply, that the engine still gives what was stored."""
    shoe = full_shoe(options.decks)
    rests = [remove(shoe, up, c1, c2) for c1, c2 in deals]

    def explore() -> None:
        deal = Deal(options, "optimal")
        for (c1, c2), rest in zip(deals, rests, strict=True):
            deal.deal(up, c1, c2, rest)

    def work() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for strategy in STRATEGIES:
            deal = Deal(options, strategy)
            totals = [deal.deal(up, c1, c2, rest)[0] for (c1, c2), rest in zip(deals, rests, strict=True)]
            out[strategy] = totals
            for count in SHARES:
                share = Deal(options, strategy, replay=None if deal.basic else deal.decisions, count=count)
                out[strategy] += [share.deal(up, c1, c2, rest)[0]
                                  for (c1, c2), rest in zip(deals, rests, strict=True)]
        return out

    return two_pass(work, explore)
