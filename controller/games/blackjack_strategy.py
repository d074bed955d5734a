"""The default player strategy of the blackjack simulators: basic strategy plus a swap rule.

Basic strategy is the standard multi-deck chart (docs/strategy/swap_hand.md)
adjusted for the table's options: the soft-17 rule, double-after-split and
``double_on`` (when a double is not offered the chart's "double else hit /
else stand" fallbacks apply). It is a *total-dependent* chart, so it is the
same for every deck count; that costs a few hundredths of a percent against
a composition-dependent player and is what published house edges assume.

The chart ignores the Swap-Hand changes when playing a hand (the auto-win 21
and the Odds-Win move a few marginal plays only); the swap itself follows
:data:`SWAP_TABLE`, measured by ``croupier math swap_hand --swap-table``.
Tools only: the engine never decides for a player.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from controller.cards import Card, parse_card
from controller.games.blackjack import card_points, hand_total, is_pair

#: Dealer up cards in chart order: 2..9, ten-value (10), ace (11).
UPS: Final = tuple(range(2, 12))


def up_value(card: Card) -> int:
    """The dealer's up card as a chart column: 2..10, ace 11."""
    points = card_points(card)
    return 11 if points == 1 else points


#: SWAP_TABLE[total] = up cards (2..11, 11 = ace) against which a hard ``total`` is swapped.
#: Measured with: croupier math swap_hand --swap-table --trials 20000 --seed 7 --workers 2
#: (6 decks, S17; EV of the main plus the Odds-Win per main unit, swap against keep on the same
#: cards). Swapping wins everywhere except hard 18 against 2-8 (against 2, 3 and 5 the two are
#: within 0.02 of each other and the run could not separate them; keeping is the cheaper guess).
SWAP_TABLE: Final[dict[int, frozenset[int]]] = {
    14: frozenset(UPS),
    15: frozenset(UPS),
    16: frozenset(UPS),
    17: frozenset(UPS),
    18: frozenset({9, 10, 11}),
}


@dataclass(frozen=True, slots=True)
class Chart:
    """The table rules that change basic strategy."""

    hits_soft_17: bool = False
    double_after_split: bool = True


def should_swap(total: int, up: int, table: dict[int, frozenset[int]] | None = None) -> bool:
    """Swap a hard ``total`` (14..18) against dealer ``up`` (2..11)?"""
    return up in (SWAP_TABLE if table is None else table).get(total, frozenset())


def basic_action(cards: Sequence[Card], up: int, legal: Sequence[str], chart: Chart) -> str:
    """The chart's play for ``cards`` against ``up`` among the ``legal`` actions (hit/stand/double/split)."""
    if "hit" not in legal:  # a split ace that may only be resplit or stand
        return "split" if "split" in legal and _split(cards[0], up, chart) else "stand"
    if "split" in legal and is_pair(cards) and _split(cards[0], up, chart):
        return "split"
    total, soft = hand_total(cards)
    code = _soft(total, up, chart) if soft else _hard(total, up, chart)
    if code == "D":
        return "double" if "double" in legal else "hit"
    if code == "Ds":
        return "double" if "double" in legal else "stand"
    return "hit" if code == "H" else "stand"


def _hard(total: int, up: int, chart: Chart) -> str:
    if total <= 8:
        return "H"
    if total == 9:
        return "D" if 3 <= up <= 6 else "H"
    if total == 10:
        return "D" if up <= 9 else "H"
    if total == 11:
        return "D" if up <= 10 or chart.hits_soft_17 else "H"
    if total == 12:
        return "S" if 4 <= up <= 6 else "H"
    if total <= 16:
        return "S" if up <= 6 else "H"
    return "S"


def _soft(total: int, up: int, chart: Chart) -> str:
    if total <= 14:  # A-2, A-3 (and soft 12, 13 after hits)
        return "D" if 5 <= up <= 6 else "H"
    if total <= 16:
        return "D" if 4 <= up <= 6 else "H"
    if total == 17:
        return "D" if 3 <= up <= 6 else "H"
    if total == 18:
        if 3 <= up <= 6 or (up == 2 and chart.hits_soft_17):
            return "Ds"
        return "S" if up <= 8 else "H"
    if total == 19:
        return "Ds" if up == 6 and chart.hits_soft_17 else "S"
    return "S"


def _split(card: Card, up: int, chart: Chart) -> bool:
    """Split a pair of ``card`` against ``up``? (The multi-deck pair chart, with and without DAS.)"""
    p = card_points(card)
    das = chart.double_after_split
    if p in (1, 8):
        return True
    if p in (10, 5):
        return False
    if p == 9:
        return up <= 9 and up != 7
    if p == 7:
        return up <= 7
    if p == 6:
        return 2 <= up <= 6 if das else 3 <= up <= 6
    if p == 4:
        return das and up in (5, 6)
    return up <= 7 if das else 4 <= up <= 7  # 2-2, 3-3


def chart_up(up: int) -> int:
    """An exact-engine up value (1 ace .. 10) as a chart column (2..10, ace 11)."""
    return 11 if up == 1 else up


def _engine_card(value: int) -> Card:
    return parse_card(("A" if value == 1 else "T" if value == 10 else str(value)) + "S")


def _cards_for(total: int, soft: bool, pair: int) -> list[Card]:
    """Two cards that the chart reads as this hand (only total, softness and a pair's rank matter to it)."""
    if pair:
        return [_engine_card(pair), _engine_card(pair)]
    if soft:
        return [_engine_card(1), _engine_card(total - 11)]
    if total >= 12:
        return [_engine_card(10), _engine_card(total - 10)]
    return [_engine_card(2), _engine_card(total - 2)]


def chart_policy(chart: Chart) -> Callable[[int, bool, int, int, tuple[str, ...]], str]:
    """Basic strategy as a policy of the exact engine (controller/games/blackjack_exact.py): it is asked
    with a hand's total, softness, pair value (0 for none), the engine's up value and the legal actions."""

    def policy(total: int, soft: bool, pair: int, up: int, legal: tuple[str, ...]) -> str:
        return basic_action(_cards_for(total, soft, pair), chart_up(up), legal, chart)

    return policy
