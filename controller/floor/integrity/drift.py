"""Results drift: each bet type's actual result against its exact par-sheet expectation, and outcome counts.

A table whose pay table or cards are rigged pays differently from its mathematics. Per bet type, the
players' total net over some rounds is compared with the par sheet's exact expectation (the expected
return per unit times the amount staked) inside a 99.9 % band (the normal approximation: the expected
total plus or minus 3.29 standard deviations, the variance being the bet's variance per unit times the
sum of the squared stakes). Separately, the outcome frequencies (Banker, Player, Tie; each pair) are
tested by a chi-squared test against their exact probabilities. Callers choose the rounds (the last N,
a shoe, a day); docs/floor.md says how many rounds detect a Banker paid 1:1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache

from controller.floor.integrity.stats import Z_999, chi_squared_upper_tail, normal_quantile
from controller.games.baccarat.par_sheet import outcome_weights
from controller.money import Odds

#: A chi-squared p-value below this is an alarm (the same 1 in 1,000 as the 99.9 % band).
CHI_SQUARED_ALPHA = 0.001


@dataclass(frozen=True)
class BetLaw:
    """A bet's result per unit staked: each outcome's exact probability and net (win > 0, loss < 0)."""

    bet: str
    outcomes: tuple[tuple[Fraction, Fraction], ...]

    @cached_property  # judged after every round of a live table: computed once
    def mean(self) -> Fraction:
        return sum((p * x for p, x in self.outcomes), Fraction(0))

    @cached_property
    def variance(self) -> Fraction:
        return sum((p * x * x for p, x in self.outcomes), Fraction(0)) - self.mean ** 2


@lru_cache(maxsize=16)
def baccarat_probabilities(decks: int) -> dict[str, dict[str, Fraction]]:
    """Exact outcome probabilities from the par sheet: the winner, and each hand's first two cards a pair."""
    banker, player, tie, total = outcome_weights(decks)
    pair = Fraction(4 * decks - 1, 52 * decks - 1)  # the second of any two cards has the first's rank
    return {
        "winner": {"banker": Fraction(banker, total), "player": Fraction(player, total),
                   "tie": Fraction(tie, total)},
        "player_pair": {"yes": pair, "no": 1 - pair},
        "banker_pair": {"yes": pair, "no": 1 - pair},
    }


def baccarat_laws(decks: int, banker_pays: Odds, tie_pays: Odds) -> dict[str, BetLaw]:
    """Each Baccarat bet's law per unit at the table's odds (a tie pushes Banker and Player)."""
    w = baccarat_probabilities(decks)["winner"]
    b, p, t = w["banker"], w["player"], w["tie"]
    bank, tie = Fraction(banker_pays.num, banker_pays.den), Fraction(tie_pays.num, tie_pays.den)
    return {
        "banker": BetLaw("banker", ((b, bank), (p, Fraction(-1)), (t, Fraction(0)))),
        "player": BetLaw("player", ((p, Fraction(1)), (b, Fraction(-1)), (t, Fraction(0)))),
        "tie": BetLaw("tie", ((t, tie), (1 - t, Fraction(-1)))),
    }


@dataclass(frozen=True)
class Drift:
    """A bet type's players' total net over ``rounds`` rounds against the exact expectation and its band."""

    bet: str
    rounds: int
    staked: int
    actual: int
    expected: Fraction
    low: float
    high: float

    @property
    def outside(self) -> bool:
        return not self.low <= self.actual <= self.high

    def finding(self) -> str:
        return (f"{self.bet}: players' net {self.actual} over {self.rounds} rounds ({self.staked} staked), "
                f"expected {float(self.expected):.0f}, 99.9 % band {self.low:.0f} .. {self.high:.0f}")


def results_drift(law: BetLaw, rounds: Sequence[tuple[int, int]], z: float = Z_999) -> Drift:
    """The drift from ``law`` of ``rounds``, each (total staked on the bet type in the round, the players'
    total net on it) in minor units; ``z`` sets the band. One entry a round, not a bet: every seat's
    Banker bet in a round wins or loses together, so their variance adds as one stake's, squared."""
    return drift_of_sums(law, len(rounds), sum(stake for stake, _ in rounds), sum(net for _, net in rounds),
                         sum(stake * stake for stake, _ in rounds), z)


def drift_of_sums(law: BetLaw, rounds: int, staked: int, actual: int, squares: int,
                  z: float = Z_999) -> Drift:
    """:func:`results_drift` from running sums (the stakes, the nets, the squared stakes), so that a live
    window of many thousand rounds costs nothing to judge after each round."""
    expected = law.mean * staked
    spread = z * math.sqrt(float(law.variance) * squares)
    low, high = float(expected) - spread, float(expected) + spread
    return Drift(law.bet, rounds, staked, actual, expected, low, high)


def last_rounds_outside(law: BetLaw, rounds: Sequence[tuple[int, int]], last: int) -> Drift:
    """The drift of the last ``last`` rounds (all if fewer) that had the bet: ``.outside`` says whether to
    alert."""
    if last < 1:
        raise ValueError(f"the last N rounds needs N >= 1, not {last}")
    return results_drift(law, rounds[-last:])


def rounds_to_detect(honest: BetLaw, rigged: BetLaw, power: float = 0.99, z: float = Z_999) -> int:
    """Rounds of one equal stake after which a table paying by ``rigged`` is outside ``honest``'s band with
    probability ``power`` (the normal approximation: (z sd0 + z_power sd1)^2 / shift^2, rounded up)."""
    shift = abs(float(rigged.mean - honest.mean))
    if shift == 0:
        raise ValueError("the rigged law has the honest law's mean: no number of rounds tells them apart")
    sd0, sd1 = math.sqrt(float(honest.variance)), math.sqrt(float(rigged.variance))
    spread = z * sd0 + normal_quantile(power) * sd1
    return math.ceil((spread / shift) ** 2)


@dataclass(frozen=True)
class ChiSquared:
    statistic: float
    dof: int
    p_value: float

    @property
    def outside(self) -> bool:
        return self.p_value < CHI_SQUARED_ALPHA


def chi_squared(observed: Mapping[str, int], probabilities: Mapping[str, Fraction]) -> ChiSquared:
    """Pearson's test of outcome counts against exact probabilities (valid when each expected count is
    about 5 or more: a Tie needs about 53 rounds, a pair about 67, so test a shoe or a day, not a few)."""
    unknown = set(observed) - set(probabilities)
    if unknown:
        raise ValueError(f"outcomes without a probability: {sorted(unknown)}")
    total = sum(observed.values())
    if total == 0:
        raise ValueError("no outcomes to test")
    statistic = 0.0
    for outcome, p in probabilities.items():
        expected = float(p) * total
        statistic += (observed.get(outcome, 0) - expected) ** 2 / expected
    dof = len(probabilities) - 1
    return ChiSquared(statistic, dof, chi_squared_upper_tail(statistic, dof))
