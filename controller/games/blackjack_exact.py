"""Exact blackjack expectations by recursion over card removal: stand, hit, double and split.

Pure and deterministic: no I/O, clock or randomness. Every value is a
function of the shoe composition (a tuple of ten counts, see
:mod:`controller.games.blackjack_dealer`), the player's hand (its hard count
and whether it holds an ace), the dealer's up card and what a win and a loss
are worth, and is cached on exactly those keys.

Composition-dependent: each decision is taken on the exact cards left (the
player's own cards and the up card removed), and every draw comes from that
composition. Values are *joint* with "the dealer has no blackjack" (see the
dealer module): U(shoe) = P(no blackjack | shoe) x E[net | no blackjack], so
hitting is the plain sum over the next card and the best action is the same
as on conditional values.

Floats, not fractions: a hand's value is a sum of at most a few thousand
products of probabilities, so its rounding error stays below 1e-12, far
under the sixth decimal the published tables give; the dealer module has an
exact-fraction twin the tests compare against.

The one simplification, the one the published combinatorial analysers make
(Wizard of Odds appendix 9: "for splitting values the program only
considered how many hands the player had already split, but not the other
cards drawn in those hands"): each split hand is valued on the shoe with the
pair cards removed (one more for every resplit) but not the other split
hands' cards, every hand of a split is played with the same composition-
dependent strategy, and a pair card caught by a split hand is always resplit
while the table allows it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final, NamedTuple, TypeVar

from controller.games.blackjack_dealer import (
    ACE,
    BUST,
    TEN,
    Shoe,
    best_total,
    forget,
    hole_blackjack,
    no_blackjack,
    outcomes,
    prefetch,
    recording,
    take,
)

T = TypeVar("T")

#: ``double_on`` ranges on the hand's hard total (a soft hand never qualifies for a range).
_DOUBLE_RANGES: Final[dict[str, tuple[int, int] | None]] = {"any2": None, "9-11": (9, 11), "10-11": (10, 11)}

#: A chosen strategy instead of the best one: (total, soft, pair value or 0, up, legal actions) -> action.
Policy = Callable[[int, bool, int, int, tuple[str, ...]], str]


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules that change the player's expectation (plain values, no pydantic)."""

    hits_soft_17: bool = False
    blackjack_pays: float = 1.5
    double_on: str = "any2"
    double_after_split: bool = True
    max_split_hands: int = 4
    resplit_aces: bool = False
    hit_split_aces: bool = False
    #: Swap-Hand: any hand reaching 21 has won on the spot (else a 21 stands and meets the dealer).
    auto_win_21: bool = False


class Stakes(NamedTuple):
    """What a hand wins and loses, in units of the initial main wager, plain and after a double.

    Plain blackjack is (1, 1, 2, 2); Swap-Hand adds the live Odds-Win to the
    first hand (2:1 on half a unit: +1 on a win, -0.5 on a loss, doubled or not).
    """

    win: float = 1.0
    lose: float = 1.0
    double_win: float = 2.0
    double_lose: float = 2.0


PLAIN: Final = Stakes()


def double_allowed(hard: int, has_ace: bool, double_on: str) -> bool:
    """``double_on`` read on the two-card hand's best total; a soft hand never meets a range."""
    bounds = _DOUBLE_RANGES[double_on]
    if bounds is None:
        return True
    soft = has_ace and hard <= 11
    return not soft and bounds[0] <= hard <= bounds[1]


class Evaluator:
    """Hand values for one rule set and one strategy.

    ``policy`` None plays the best action everywhere and records each choice
    in :attr:`decisions`; a ``policy`` plays the chart instead. ``replay``
    (the ``decisions`` of an earlier evaluator) plays exactly those choices
    again while ``payoff`` maps each stake profile to what is being counted
    this time: that is how one wager's share of a strategy chosen for the
    sum of two wagers is measured.
    """

    def __init__(self, rules: Rules, policy: Policy | None = None, *, replay: dict[object, str] | None = None,
                 payoff: dict[Stakes, Stakes] | None = None) -> None:
        self.rules = rules
        self.policy = policy
        self.replay = replay
        self.payoff = payoff or {}
        self.decisions: dict[object, str] = {}
        self._hits: dict[tuple[Shoe, int, bool, int, Stakes], float] = {}
        self._splits: dict[tuple[Shoe, int, int, Stakes], tuple[float, float, float]] = {}

    def pay(self, st: Stakes) -> Stakes:
        """What stake profile ``st`` is counted as in this evaluation (inlined in the hot loop)."""
        return self.payoff.get(st, st)

    # ------------------------------------------------------------ terminal values
    def stand(self, shoe: Shoe, total: int, up: int, win: float, lose: float) -> float:
        """Standing on ``total`` (not a natural): joint with no dealer blackjack."""
        if total > 21:
            return -lose * no_blackjack(up, shoe)
        if total == 21 and self.rules.auto_win_21:
            return win * no_blackjack(up, shoe)
        vec = outcomes(shoe, up, self.rules.hits_soft_17)
        if total < 17:  # wins only on a dealer bust, loses on any dealer total
            return win * vec[BUST] - lose * (vec[0] + vec[1] + vec[2] + vec[3] + vec[4])
        k = total - 17
        return win * (vec[BUST] + sum(vec[:k])) - lose * sum(vec[k + 1:BUST])

    def double(self, shoe: Shoe, hard: int, has_ace: bool, up: int, st: Stakes) -> float:
        """Doubling: one card, then stand, at the doubled stakes."""
        n = sum(shoe)
        value = 0.0
        pay = self.pay(st)
        for i, count in enumerate(shoe):
            if count:
                v = i + 1
                total = best_total(hard + v, has_ace or v == ACE)
                value += count / n * self.stand(take(shoe, v), total, up, pay.double_win, pay.double_lose)
        return value

    # ------------------------------------------------------------ hit / stand
    def hit_stand(self, shoe: Shoe, hard: int, has_ace: bool, up: int, st: Stakes) -> float:
        """Value of a hand that may only hit or stand, played best (or by the policy)."""
        total = best_total(hard, has_ace)
        pay = self.payoff.get(st, st)
        if total >= 21:
            return self.stand(shoe, total, up, pay.win, pay.lose)
        key = (shoe, hard, has_ace, up, st)
        cached = self._hits.get(key)
        if cached is not None:
            return cached
        stand = self.stand(shoe, total, up, pay.win, pay.lose)
        if self.replay is not None:
            action = self.replay[key]
        elif self.policy is not None:
            action = self.policy(total, has_ace and hard <= 11, 0, up, ("hit", "stand"))
        else:
            action = ""
        if action == "stand":
            value = stand
        else:
            value = self.hit(shoe, hard, has_ace, up, st)
            if not action:
                self.decisions[key] = "hit" if value > stand else "stand"
                value = max(value, stand)
        self._hits[key] = value
        return value

    def hit(self, shoe: Shoe, hard: int, has_ace: bool, up: int, st: Stakes) -> float:
        """Taking one card, then playing on.

        The hot loop of every sheet: busts, 21s and cached hands are settled
        inline rather than through :meth:`hit_stand`.
        """
        n = sum(shoe)
        value = 0.0
        peek = TEN if up == ACE else ACE if up == TEN else 0
        pay = self.payoff.get(st, st)
        hits = self._hits
        auto = self.rules.auto_win_21
        for i, count in enumerate(shoe):
            if not count:
                continue
            v = i + 1
            after = hard + v
            if after > 21 or (auto and (after == 21 or (after == 11 and (has_ace or v == ACE)))):
                hole = shoe[peek - 1] - (v == peek) if peek else 0
                value += count / n * (-pay.lose if after > 21 else pay.win) * (1.0 - hole / (n - 1))
                continue
            rest = shoe[:i] + (count - 1,) + shoe[i + 1:]
            ace = has_ace or v == ACE
            cached = hits.get((rest, after, ace, up, st))
            if cached is None:
                cached = self.hit_stand(rest, after, ace, up, st)
            value += count / n * cached
        return value

    # ------------------------------------------------------------ two-card hands
    def legal(self, c1: int, c2: int, *, split_hand: bool = False, may_split: bool = True) -> tuple[str, ...]:
        """The actions open to the two cards ``c1``, ``c2``.

        ``split_hand``: the hand was made by a split (double only with
        double-after-split, a split ace only stands unless split aces may be
        hit). ``may_split``: the pair may be split now.
        """
        hard, has_ace = c1 + c2, ACE in (c1, c2)
        rules = self.rules
        if best_total(hard, has_ace) == 21 or (split_hand and c1 == ACE and not rules.hit_split_aces):
            return ("stand",)
        actions = ["stand", "hit"]
        if (not split_hand or rules.double_after_split) and double_allowed(hard, has_ace, rules.double_on):
            actions.append("double")
        if may_split and c1 == c2 and rules.max_split_hands >= 2:
            actions.append("split")
        return tuple(actions)

    def value(self, action: str, shoe: Shoe, c1: int, c2: int, up: int, st: Stakes,
              others: Stakes | None = None) -> float:
        """One action's value for the two cards ``c1``, ``c2`` (``shoe``: without them and the up card);
        ``others``: the stakes of the hands a split makes (default ``st``)."""
        hard, has_ace = c1 + c2, ACE in (c1, c2)
        if action == "stand":
            pay = self.pay(st)
            return self.stand(shoe, best_total(hard, has_ace), up, pay.win, pay.lose)
        if action == "hit":
            return self.hit(shoe, hard, has_ace, up, st)
        if action == "double":
            return self.double(shoe, hard, has_ace, up, st)
        return self.split(shoe, c1, up, st, others or st)

    def options(self, shoe: Shoe, c1: int, c2: int, up: int, st: Stakes, *, split_hand: bool = False,
                may_split: bool = True, others: Stakes | None = None) -> dict[str, float]:
        """Every legal action's value (see :meth:`legal` and :meth:`value`)."""
        return {a: self.value(a, shoe, c1, c2, up, st, others)
                for a in self.legal(c1, c2, split_hand=split_hand, may_split=may_split)}

    def play(self, shoe: Shoe, c1: int, c2: int, up: int, st: Stakes, *, split_hand: bool = False,
             may_split: bool = True, others: Stakes | None = None) -> float:
        """The value of the two-card hand as played: the best action (recorded in :attr:`decisions`), or
        the policy's or replayed one (then only that action is valued)."""
        legal = self.legal(c1, c2, split_hand=split_hand, may_split=may_split)
        key = (shoe, c1, c2, up, st, split_hand, may_split)
        if len(legal) == 1:
            action = legal[0]
        elif self.replay is not None:
            action = self.replay[key]
        elif self.policy is not None:
            hard, has_ace = c1 + c2, ACE in (c1, c2)
            action = self.policy(best_total(hard, has_ace), has_ace and hard <= 11, c1 if c1 == c2 else 0, up,
                                 legal)
        else:
            values = {a: self.value(a, shoe, c1, c2, up, st, others) for a in legal}
            action = max(values, key=values.__getitem__)
            self.decisions[key] = action
            return values[action]
        return self.value(action, shoe, c1, c2, up, st, others)

    # ------------------------------------------------------------ splits
    def split(self, shoe: Shoe, pair: int, up: int, first: Stakes, others: Stakes) -> float:
        """Splitting a pair of ``pair`` (``shoe`` without both pair cards and the up card).

        The first hand is valued at ``first`` stakes and the others at
        ``others`` (Swap-Hand's Odds-Win rides on the first hand only).
        """
        rules = self.rules
        limit = rules.max_split_hands if pair != ACE or rules.resplit_aces else 2
        memo: dict[tuple[int, int], float] = {}
        # draws[k]: a second card with k resplits made (k more pair cards out of the shoe).
        draws = [self._split_draw(shoe, pair, up, extra, others) for extra in range(limit - 1)]

        def hands_value(pending: int, hands: int) -> float:
            """Expected value of ``pending`` hands still to get a second card, ``hands`` made so far."""
            if pending == 0:
                return 0.0
            key = (pending, hands)
            if key not in memo:
                q, e, f = draws[hands - 2]
                value = e + (1 - q) * hands_value(pending - 1, hands)
                if hands < limit:
                    value += q * hands_value(pending + 1, hands + 1)
                else:
                    value += q * (f + hands_value(pending - 1, hands))
                memo[key] = value
            return memo[key]

        total = hands_value(2, 2)
        if first != others:
            firsts = [self._split_draw(shoe, pair, up, extra, first) for extra in range(limit - 1)]
            total += self._first_hand(firsts, limit) - self._first_hand(draws, limit)
        return total

    @staticmethod
    def _first_hand(draws: list[tuple[float, float, float]], limit: int) -> float:
        """The first split hand's value: it draws first, resplitting every pair card it catches."""
        value, reach = 0.0, 1.0
        for extra, (q, e, f) in enumerate(draws):
            value += reach * e
            if extra + 2 >= limit:
                return value + reach * q * f
            reach *= q
        return value

    def _split_hand(self, shoe: Shoe, pair: int, second: int, up: int, st: Stakes) -> float:
        return self.play(shoe, pair, second, up, st, split_hand=True, may_split=False)

    def _split_draw(self, shoe: Shoe, pair: int, up: int, extra: int,
                    st: Stakes) -> tuple[float, float, float]:
        """A split hand's second card with ``extra`` more pair cards gone (resplits): P(a pair card),
        the value summed over the other cards, and the value of a pair card that may not be resplit."""
        key = (shoe, pair * 16 + extra, up, st)
        cached = self._splits.get(key)
        if cached is None:
            rest = shoe
            for _ in range(extra):
                rest = take(rest, pair)
            n = sum(rest)
            q = rest[pair - 1] / n
            e = 0.0
            for i, count in enumerate(rest):
                v = i + 1
                if count and v != pair:
                    e += count / n * self._split_hand(take(rest, v), pair, v, up, st)
            f = self._split_hand(take(rest, pair), pair, pair, up, st) if q else 0.0
            cached = (q, e, f)
            self._splits[key] = cached
        return cached


def starts(shoe: Shoe) -> Iterator[tuple[int, int, int, float, Shoe]]:
    """Every deal of (up card, first card, second card) off ``shoe``: the player's two cards unordered
    (low first), with its probability and the shoe left for the hole card and the draws."""
    n = sum(shoe)
    for up in range(1, 11):
        if not shoe[up - 1]:
            continue
        after_up = take(shoe, up)
        p_up = shoe[up - 1] / n
        for c1 in range(1, 11):
            if not after_up[c1 - 1]:
                continue
            after_1 = take(after_up, c1)
            p1 = p_up * after_up[c1 - 1] / (n - 1)
            for c2 in range(c1, 11):
                if after_1[c2 - 1]:
                    p = p1 * after_1[c2 - 1] / (n - 2) * (1 if c1 == c2 else 2)
                    yield up, c1, c2, p, take(after_1, c2)


def is_natural(c1: int, c2: int) -> bool:
    return {c1, c2} == {ACE, TEN}


def deal_value(ev: Evaluator, up: int, c1: int, c2: int, rest: Shoe) -> float:
    """Plain blackjack with the peek: a natural pays unless the dealer has one too (push); against a
    dealer blackjack any other hand loses its one unit; else the hand is played."""
    p_bj = hole_blackjack(up, rest)
    if is_natural(c1, c2):
        return (1 - p_bj) * ev.rules.blackjack_pays
    return -p_bj + ev.play(rest, c1, c2, up, PLAIN)


def two_pass(work: Callable[[], T], explore: Callable[[], object] | None = None) -> T:
    """Run ``explore`` (default ``work``) to learn every shoe the dealer will be asked about (answered
    with zeros), compute those together, then run ``work`` for real. Each must build its own
    :class:`Evaluator` (the first pass's values are meaningless); ``explore`` must reach every shoe
    ``work`` does: a best-play evaluation values every action, so it reaches those of any strategy."""
    with recording() as wanted:
        (explore or work)()
    prefetch(wanted)
    try:
        return work()
    finally:
        forget()


def up_value(shoe: Shoe, up: int, rules: Rules, policy: Policy | None = None) -> float:
    """The player's expectation, per unit bet, from the deals with ``up`` as the up card (their probability
    included): one player on the first round off ``shoe``, plain blackjack with the peek."""

    def work() -> float:
        ev = Evaluator(rules, policy)
        return sum(p * deal_value(ev, u, c1, c2, rest) for u, c1, c2, p, rest in starts(shoe) if u == up)

    return two_pass(work)


def game_value(shoe: Shoe, rules: Rules, policy: Policy | None = None) -> float:
    """The player's expectation per unit bet on the first round off ``shoe`` (one player, plain blackjack)."""
    return sum(up_value(shoe, up, rules, policy) for up in range(1, 11) if shoe[up - 1])
