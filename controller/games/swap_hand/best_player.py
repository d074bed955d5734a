"""The best Swap-Hand player for simulations: the exact engine's decisions, tabulated once per up card.

Every round the margin bench plays is the first off a full shoe, so a decision
depends only on the up card and the cards of the hands so far: the exact
engine (:func:`controller.games.swap_hand.exact.best_play`, 20-60 CPU seconds
and a few hundred MB an up card) is run once per up card and its decisions are
packed into a sorted array of 64-bit keys (3 MB), which
:mod:`controller.tools.best_tables` caches on disk. A round then costs what
the engine costs, plus a binary search per decision.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from controller.cards import Card
from controller.games.blackjack import Hand, card_points
from controller.games.blackjack_dealer import ACE, Shoe, full_shoe, remove
from controller.games.blackjack_exact import Stakes, starts, two_pass
from controller.games.blackjack_strategy import Chart
from controller.games.swap_hand.exact import DEAD, LIVE, SWAP_TOTALS, Deal, best_play
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.play import Player
from controller.games.swap_hand.seat import SeatPlay

#: The actions a decision can be, by their code in a table.
ACTIONS: Final = ("stand", "hit", "double", "split", "swap", "keep")
#: A key's kinds: a hand that may only hit or stand, a two-card hand, the swap of a hard 14-18.
HIT, PLAY, SWAP = 0, 1, 2
#: Bits a removed-card count takes in a key (ten of them above the 14 bits of the rest: 64 in all).
_COUNT_BITS: Final = 5
#: The packing's version: a change to :func:`pack` must change it (it names the cached tables).
FORMAT: Final = 1

Table = tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint8]]


def pack(kind: int, shoe: Shoe, up: int, st: Stakes, x: int, y: int, flags: int, full: Shoe) -> int:
    """One decision's key in the table of ``up``: its kind, stakes, two small numbers (hard total and ace,
    or the two cards) and flags, then the cards out of ``full`` (the up card aside) five bits each (the
    engine values hands of up to 18 aces)."""
    key = kind | (st == LIVE) << 2 | x << 3 | y << 8 | flags << 12
    for i, (whole, left) in enumerate(zip(full, shoe, strict=True)):
        out = whole - left - (i + 1 == up)
        if not 0 <= out < 1 << _COUNT_BITS:
            raise ValueError(f"{out} cards of value {i + 1} out of the shoe: more than a table key holds")
        key |= out << (14 + _COUNT_BITS * i)
    return key


def engine_key(key: tuple[Any, ...], full: Shoe) -> int:
    """The table key of one of the engine's decision keys (see :class:`blackjack_exact.Evaluator`)."""
    if key[0] == "swap":
        _, rest, c1, c2, up = key
        return pack(SWAP, rest, up, DEAD, c1, c2, 0, full)
    if len(key) == 5:
        shoe, hard, ace, up, st = key
        return pack(HIT, shoe, up, st, hard, int(ace), 0, full)
    shoe, c1, c2, up, st, split_hand, may_split = key
    return pack(PLAY, shoe, up, st, c1, c2, int(split_hand) | int(may_split) << 1, full)


def decisions(options: SwapHandOptions, up: int, deals: Collection[tuple[int, int]] | None = None
              ) -> dict[object, str]:
    """The exact engine's best decisions under ``up`` off a full shoe, by its own keys: of every deal, or
    only of ``deals`` (two player cards, low first: what a test can afford)."""
    if deals is None:
        return two_pass(lambda: best_play(options, up)).decisions

    def some() -> Deal:
        deal = Deal(options, "optimal")
        for u, c1, c2, _, rest in starts(full_shoe(options.decks)):
            if u == up and (c1, c2) in deals:
                deal.deal(u, c1, c2, rest)
        return deal

    return two_pass(some).decisions


def build(options: SwapHandOptions, up: int, deals: Collection[tuple[int, int]] | None = None) -> Table:
    """The best decisions (see :func:`decisions`) as a sorted table."""
    full = full_shoe(options.decks)
    codes = {engine_key(k, full): ACTIONS.index(a)  # type: ignore[arg-type]
             for k, a in decisions(options, up, deals).items()}
    keys = np.fromiter(codes, dtype=np.uint64, count=len(codes))
    order = np.argsort(keys)
    return keys[order], np.fromiter(codes.values(), dtype=np.uint8, count=len(codes))[order]


class BestPlayer(Player):
    """A seat playing the exact engine's best decisions (those the sheet's optimal figures assume), looked
    up in the tables of :func:`build`, one per up card (``tables[up]``)."""

    def __init__(self, options: SwapHandOptions, tables: dict[int, Table]) -> None:
        super().__init__(Chart(options.dealer_hits_soft_17, options.double_after_split))
        self.tables = tables
        self.shoe = full_shoe(options.decks)

    def decide(self, play: SeatPlay, hand: Hand, up: Card, legal: tuple[str, ...]) -> str:
        action = self._action(play, hand, card_points(up), legal)
        if action not in legal:
            raise AssertionError(f"the engine's {action!r} is not legal here: {legal}, {hand.codes()}")
        return action

    def _look(self, u: int, key: int, what: object) -> str:
        keys, actions = self.tables[u]
        i = int(np.searchsorted(keys, np.uint64(key)))
        if i == len(keys) or int(keys[i]) != key:
            raise KeyError(f"no best decision tabulated for {what} under {u}")
        return ACTIONS[actions[i]]

    def _action(self, play: SeatPlay, hand: Hand, u: int, legal: tuple[str, ...]) -> str:
        full = self.shoe
        st = LIVE if play.parity == "odd" else DEAD
        base = remove(full, u, *(card_points(c) for c in play.discarded))
        values = [card_points(c) for c in hand.cards]
        if "swap" in legal:
            v1, v2 = sorted(values)
            assert ACE not in values and v1 + v2 in SWAP_TOTALS
            return self._look(u, pack(SWAP, remove(base, v1, v2), u, DEAD, v1, v2, 0, full), values)
        if len(play.hands) == 1:
            rest = remove(base, *values)
            if len(values) == 2:
                v1, v2 = sorted(values)
                return self._look(u, pack(PLAY, rest, u, st, v1, v2, 2, full), values)
            return self._hit_or_stand(rest, values, u, st)
        pair, hands = values[0], len(play.hands)
        st = st if hand is play.first else DEAD
        rest = remove(base, *[pair] * hands, *values[1:])
        if len(values) == 2:
            if values[1] == pair and "split" in legal:
                return "split"  # the engine resplits every pair card while the table allows it
            return self._look(u, pack(PLAY, rest, u, st, pair, values[1], 1, full), values)
        return self._hit_or_stand(rest, values, u, st)

    def _hit_or_stand(self, rest: Shoe, values: list[int], u: int, st: Stakes) -> str:
        return self._look(u, pack(HIT, rest, u, st, sum(values), int(ACE in values), 0, self.shoe), values)
