"""The exact blackjack dealer: final-total probabilities for any shoe composition and up card.

A shoe is a tuple of ten counts, ``shoe[v - 1]`` cards of value ``v`` (1 is
the ace, 10 every ten-value card), so every quantity here is a function of
the composition alone and can be cached on it. The dealer's hand is drawn
card by card from that composition without replacement: no infinite-deck
shortcut, so the figures are exact for the composition given.

Probabilities are *joint* with the hole card not making a dealer blackjack:
``outcomes(...)[i]`` is P(final total 17 + i and no blackjack) for i < 5,
then P(bust and no blackjack), then P(blackjack). The player's expectation
in a peek game is conditioned on "no blackjack"; carrying the joint
probability instead of the conditional one lets the player's recursion
draw its cards from the plain composition and stay exact (Bayes: the
common factor P(no blackjack | shoe) never changes which action is best).

Arithmetic is whatever number type the caller's shoe leads to: floats by
default (about 1e-15 relative error a step, far below the 1e-6 the par
sheets print), :class:`fractions.Fraction` through :func:`outcomes_exact`
for the tests that check the float figures against exact ones.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from functools import lru_cache
from typing import Final

import numpy as np

#: A shoe composition: counts of A, 2, ..., 9, ten-value cards.
Shoe = tuple[int, ...]

ACE: Final = 1
TEN: Final = 10
#: Indexes of the outcome vector.
BUST: Final = 5
BLACKJACK: Final = 6
OUTCOMES: Final = ("17", "18", "19", "20", "21", "bust", "blackjack")


def full_shoe(decks: int) -> Shoe:
    """``decks`` 52-card decks: four of each value, sixteen ten-value cards a deck."""
    return tuple([4 * decks] * 9 + [16 * decks])


def remove(shoe: Shoe, *values: int) -> Shoe:
    """The shoe with one card of each of ``values`` taken out (ValueError if one is not there)."""
    counts = list(shoe)
    for v in values:
        if counts[v - 1] <= 0:
            raise ValueError(f"no card of value {v} left in {shoe}")
        counts[v - 1] -= 1
    return tuple(counts)


def take(shoe: Shoe, value: int) -> Shoe:
    """The shoe after one card of ``value`` is drawn (the hot path: no checks)."""
    i = value - 1
    return shoe[:i] + (shoe[i] - 1,) + shoe[i + 1:]


def best_total(hard: int, has_ace: bool) -> int:
    """A hand's total with one ace counted 11 when that does not bust it."""
    return hard + 10 if has_ace and hard <= 11 else hard


def hole_blackjack(up: int, shoe: Shoe) -> float:
    """P(the hole card, drawn from ``shoe``, gives the dealer blackjack under ``up``)."""
    n = sum(shoe)
    if up == ACE:
        return shoe[TEN - 1] / n
    if up == TEN:
        return shoe[ACE - 1] / n
    return 0.0


def no_blackjack(up: int, shoe: Shoe) -> float:
    """P(no dealer blackjack), the hole card still to come from ``shoe``."""
    return 1.0 - hole_blackjack(up, shoe)


#: Outcome vectors computed so far, by (shoe, up card, hits soft 17). Callers free it with
#: :func:`forget` between independent pieces of work (a six-deck sheet visits millions of shoes).
_CACHE: dict[tuple[Shoe, int, bool], tuple[float, ...]] = {}
#: While :func:`recording` is active: the shoes asked for, answered with zeros for now.
_WANTED: set[tuple[Shoe, int, bool]] | None = None
_NOTHING: Final = (0.0,) * 7
#: Shoes computed together in one matrix product.
BATCH: Final = 2048


def outcomes(shoe: Shoe, up: int, hits_soft_17: bool) -> tuple[float, ...]:
    """P(17, 18, 19, 20, 21, bust, each without blackjack; blackjack) for ``up`` and the rest ``shoe``.

    ``shoe`` holds every unseen card (the up card already out): the hole card
    and the draws come from it. Cached on the composition.
    """
    key = (shoe, up, hits_soft_17)
    found = _CACHE.get(key)
    if found is None:
        if _WANTED is not None:
            _WANTED.add(key)
            return _NOTHING
        found = _CACHE[key] = tuple(float(x) for x in _batch([shoe], up, hits_soft_17)[0])
    return found


@contextmanager
def recording() -> Iterator[set[tuple[Shoe, int, bool]]]:
    """Collect the shoes a computation will ask for (answering zeros), to :func:`prefetch` them at once."""
    global _WANTED
    _WANTED = set()
    try:
        yield _WANTED
    finally:
        _WANTED = None


def prefetch(keys: set[tuple[Shoe, int, bool]]) -> None:
    """Compute the outcome vectors of many shoes in batches (one matrix product per batch and up card)."""
    groups: dict[tuple[int, bool], list[Shoe]] = {}
    for shoe, up, h17 in keys:
        if (shoe, up, h17) not in _CACHE:
            groups.setdefault((up, h17), []).append(shoe)
    for (up, h17), shoes in groups.items():
        for start in range(0, len(shoes), BATCH):
            part = shoes[start:start + BATCH]
            for shoe, row in zip(part, _batch(part, up, h17).tolist(), strict=True):
                _CACHE[(shoe, up, h17)] = tuple(row)


def forget() -> None:
    """Drop every cached outcome vector."""
    _CACHE.clear()


#: log of an impossible draw: exp() of any sum holding it underflows to exactly 0.
_IMPOSSIBLE: Final = -1e4


def _batch(shoes: list[Shoe], up: int, hits_soft_17: bool) -> np.ndarray:
    """Outcome vectors of ``shoes`` (rows) against ``up``: through the draw graph for a batch (its cost
    is per node, shared by the whole batch), through the multiset sums for a few shoes."""
    if len(shoes) >= _GRAPH_FROM:
        return _graph_batch(shoes, dealer_table(up, hits_soft_17))
    return _sum_batch(shoes, up, hits_soft_17)


#: Batches at least this large go through the draw graph.
_GRAPH_FROM: Final = 16


def _graph_batch(shoes: list[Shoe], table: DealerTable) -> np.ndarray:
    """Push the probability of every shoe through the draw graph, node by node in order of size."""
    counts = np.asarray(shoes, dtype=np.float64).T
    n = counts.sum(axis=0)
    reach = np.zeros((len(table.nodes), len(shoes)))
    reach[0] = 1.0
    ends = np.zeros((7, len(shoes)))
    for node, (drawn, k, values, targets, ending) in enumerate(table.nodes):
        step = np.maximum(counts - drawn, 0.0) * (reach[node] / np.maximum(n - k, 1.0))
        reach[targets] += step[values]
        ends += ending @ step
    result: np.ndarray = ends.T
    return result


def _sum_batch(shoes: list[Shoe], up: int, hits_soft_17: bool) -> np.ndarray:
    """Outcome vectors of ``shoes`` (rows) against ``up``.

    One ordered draw of the cards of a multiset has probability
    prod_v falling(shoe[v], m_v) / falling(n, k), whatever the order; in logs
    that is a sum, so all multisets of all shoes are ten gathers and a matrix product.
    """
    table = dealer_table(up, hits_soft_17)
    # Shoes run along the last axis throughout, so each gather below copies whole contiguous rows.
    counts = np.asarray(shoes, dtype=np.float64).T
    steps = counts[:, None, :] - np.arange(table.most)[None, :, None]
    logs = np.log(np.where(steps > 0, steps, 1.0))
    logs[steps <= 0] = _IMPOSSIBLE
    falling = np.zeros((10, table.most + 1, len(shoes)))
    falling[:, 1:, :] = np.cumsum(logs, axis=1)
    n = counts.sum(axis=0)
    ways = np.zeros((table.longest + 1, len(shoes)))
    # A draw longer than the shoe is impossible and already -inf-like through ``falling``: clamp, no NaN.
    ways[1:, :] = np.cumsum(np.log(np.maximum(n[None, :] - np.arange(table.longest)[:, None], 1.0)), axis=0)
    log_p = -ways[table.length]
    for v in range(10):
        if table.most_of[v]:
            log_p += falling[v][table.drawn[:, v]]
    result: np.ndarray = (table.onehot.T @ (np.exp(log_p) * table.orders[:, None])).T
    return result


class DealerTable:
    """Every way the dealer's hand can end from one up card, grouped by the multiset of cards drawn.

    The chance of one ordered sequence of draws from a shoe depends only on
    which cards were drawn, not their order (a product of falling factorials
    over the shoe's size), so P(outcome) is a sum over multisets of
    (valid orders) x (that product). The orders are counted once per up card
    and rule; each shoe then costs one vectorised product.
    """

    def __init__(self, up: int, hits_soft_17: bool) -> None:
        groups: dict[tuple[tuple[int, ...], int], int] = {}

        def walk(drawn: list[int], hard: int, has_ace: bool) -> None:
            first = not drawn[10]
            total = best_total(hard, has_ace)
            if not first:
                soft = has_ace and hard <= 11
                stands = total > 21 or total >= 18 or (total == 17 and not (soft and hits_soft_17))
                if stands:
                    key = (tuple(drawn[:10]), min(total, 22) - 17 if total <= 21 else BUST)
                    groups[key] = groups.get(key, 0) + 1
                    return
            drawn[10] += 1
            for v in range(1, 11):
                drawn[v - 1] += 1
                if first and hard + v == 11 and (has_ace or v == ACE):
                    key = (tuple(drawn[:10]), BLACKJACK)
                    groups[key] = groups.get(key, 0) + 1
                else:
                    walk(drawn, hard + v, has_ace or v == ACE)
                drawn[v - 1] -= 1
            drawn[10] -= 1

        walk([0] * 11, up, up == ACE)
        rows = list(groups.items())
        self.drawn = np.array([k[0] for k, _ in rows], dtype=np.intp)
        self.outcome = np.array([k[1] for k, _ in rows], dtype=np.intp)
        self.orders = np.array([n for _, n in rows], dtype=np.float64)
        self.length = self.drawn.sum(axis=1)
        self.most = int(self.drawn.max())
        self.longest = int(self.length.max())
        self.most_of = self.drawn.max(axis=0)
        self.onehot = np.zeros((len(rows), 7))
        self.onehot[np.arange(len(rows)), self.outcome] = 1.0
        self._graph(up, hits_soft_17)

    def _graph(self, up: int, hits_soft_17: bool) -> None:
        """The same draws as a graph for many shoes at once: nodes are what the dealer holds (a multiset,
        order forgotten, in order of size), each edge one more card, into a node or an ending."""
        start: tuple[int, ...] = (0,) * 10
        ids = {start: 0}
        #: Per node: the cards drawn, how many, the values leading to nodes and those nodes, and a
        #: (7, 10) matrix sending each value's probability to the ending it makes.
        self.nodes: list[tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]] = []
        queue = deque([(start, up, up == ACE)])
        while queue:
            drawn, hard, has_ace = queue.popleft()
            k = sum(drawn)
            to_node: list[tuple[int, int]] = []
            ending = np.zeros((7, 10))
            for v in range(1, 11):
                child = drawn[:v - 1] + (drawn[v - 1] + 1,) + drawn[v:]
                h2, a2 = hard + v, has_ace or v == ACE
                total, soft = best_total(h2, a2), a2 and h2 <= 11
                if k == 0 and h2 == 11 and a2:
                    ending[BLACKJACK, v - 1] = 1.0
                elif total > 21:
                    ending[BUST, v - 1] = 1.0
                elif total >= 18 or (total == 17 and not (soft and hits_soft_17)):
                    ending[total - 17, v - 1] = 1.0
                else:
                    if child not in ids:
                        ids[child] = len(ids)
                        queue.append((child, h2, a2))
                    to_node.append((v - 1, ids[child]))
            self.nodes.append((np.array(drawn, dtype=np.float64)[:, None], k,
                               np.array([v for v, _ in to_node], dtype=np.intp),
                               np.array([t for _, t in to_node], dtype=np.intp), ending))


@lru_cache(maxsize=40)
def dealer_table(up: int, hits_soft_17: bool) -> DealerTable:
    return DealerTable(up, hits_soft_17)


def outcomes_exact(shoe: Shoe, up: int, hits_soft_17: bool) -> tuple[Fraction, ...]:
    """:func:`outcomes` in exact rational arithmetic (slow: for checking the float figures)."""
    memo: dict[tuple[Shoe, int, bool, bool], tuple[Fraction, ...]] = {}

    def draw(rest: Shoe, hard: int, has_ace: bool, hole: bool) -> tuple[Fraction, ...]:
        key = (rest, hard, has_ace, hole)
        if key in memo:
            return memo[key]
        total = best_total(hard, has_ace)
        vec = [Fraction(0)] * 7
        soft = has_ace and hard <= 11
        if not hole and total > 21:
            vec[BUST] = Fraction(1)
        elif not hole and (total >= 18 or (total == 17 and not (soft and hits_soft_17))):
            vec[total - 17] = Fraction(1)
        else:
            n = sum(rest)
            for i, count in enumerate(rest):
                if not count:
                    continue
                v, p = i + 1, Fraction(count, n)
                if hole and hard + v == 11 and (has_ace or v == ACE):
                    vec[BLACKJACK] += p
                    continue
                sub = draw(take(rest, v), hard + v, has_ace or v == ACE, False)
                for k in range(6):
                    vec[k] += p * sub[k]
        memo[key] = tuple(vec)
        return memo[key]

    return draw(shoe, up, up == ACE, True)
