"""Results drift: each bet type's actual result against its exact par expectation, and outcome counts.

A table whose pay table or cards are rigged pays differently from its mathematics. Per bet type, the
players' total net over some rounds is compared with the par's exact expectation (the expected
return per unit times the units staked) inside a 99.9 % band (the normal approximation: the expected
total plus or minus 3.29 standard deviations, the variance being the bet's variance per unit times the
sum of the squared stakes). Each game's laws are its par's (controller/floor/report_par.py, the figures
the reports' theoretical win uses: one source of each game's par). Separately, the outcome
frequencies (Banker, Player, Tie; each pair) are tested by a chi-squared test against their exact
probabilities. Callers choose the rounds (the last N, a shoe, a day); docs/floor.md says how many
rounds detect each game's rig.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from controller.floor.integrity.stats import Z_999, chi_squared_upper_tail, normal_quantile
from controller.floor.report_par import ROUND, GamePar, RoundTerms
from controller.money import Currency

#: A chi-squared p-value below this is an alarm (the same 1 in 1,000 as the 99.9 % band).
CHI_SQUARED_ALPHA = 0.001


@dataclass(frozen=True)
class BetLaw:
    """The players' result per unit of a bet type's base (its stake, or the wager its par is per unit
    of): the exact mean, and the variance (exact, or an upper bound where the par gives only that)."""

    bet: str
    mean: Fraction
    variance: Fraction
    #: The par's bet types whose nets it sums: the bet itself, or for :data:`ROUND` every type the par
    #: gives no variance of its own (2WayWinner's wagers: judged together, by the round's spread).
    types: tuple[str, ...] = ()
    #: The mean is of the best play (report_par.STRATEGY): players who play worse lose more without any
    #: fault, so only a result above the band is a drift.
    ceiling: bool = False

    @cached_property  # judged after every round of a live table: converted once
    def spread(self) -> float:
        """The standard deviation per unit, as a float."""
        return math.sqrt(float(self.variance))

    def of(self, terms: RoundTerms) -> tuple[int, int] | None:
        """(base, players' net) of one round's terms, or None if the round had no such bet."""
        names = self.types or (self.bet,)
        if not any(t in terms.house for t in names) or not terms.bases.get(self.bet):
            return None
        return terms.bases[self.bet], -sum(terms.house.get(t, 0) for t in names)


def laws(par: GamePar) -> dict[str, BetLaw]:
    """Each bet type's law from ``par``: every type with a variance per unit above 0 (a type with none, a
    DP's banked bets or fee, has nothing to drift: the house's result on it is fixed), and when the par
    gives the round's spread only, one :data:`ROUND` law of the types without a variance of their own,
    its variance the square of that spread (an upper bound, so the band is wider than exact)."""
    out = {t: BetLaw(t, -bet.edge, bet.variance, (t,), bet.strategy) for t, bet in par.types.items()
           if bet.variance is not None and bet.variance > 0}
    pooled = tuple(t for t, bet in par.types.items() if bet.variance is None)
    if pooled and par.round_sd is not None:
        out[ROUND] = BetLaw(ROUND, -sum((par.types[t].edge for t in pooled), Fraction(0)),
                            par.round_sd[1] ** 2, pooled, any(par.types[t].strategy for t in pooled))
    return out


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
    #: Only above ``high`` is outside (:attr:`BetLaw.ceiling`).
    ceiling: bool = False

    @property
    def outside(self) -> bool:
        return self.actual > self.high or (not self.ceiling and self.actual < self.low)

    def finding(self, minor_units: int) -> str:
        """What a person reads: every amount in major units at ``minor_units`` decimals, as the floor shows
        money everywhere else (``-1,234.50``, not ``-123450``); the band's ends to the nearest minor unit."""
        cur = Currency(minor_units=minor_units)

        def money(minor: float) -> str:
            return cur.format(round(minor))
        band = f"at most {money(self.high)} (the best play's 99.9 % band)" if self.ceiling else \
            f"99.9 % band {money(self.low)} .. {money(self.high)}"
        return (f"{self.bet}: players' net {money(self.actual)} over {self.rounds} rounds "
                f"({money(self.staked)} staked), expected {money(float(self.expected))}, {band}")


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
    spread = z * law.spread * math.sqrt(squares)
    low, high = float(expected) - spread, float(expected) + spread
    return Drift(law.bet, rounds, staked, actual, expected, low, high, law.ceiling)


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
    sd0, sd1 = honest.spread, rigged.spread
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
