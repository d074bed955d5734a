"""Playing Swap-Hand rounds through the real table for the simulators: shoe, seats and a player.

Every round goes through :class:`controller.table.Table` with the same
inputs the daemon would send (open betting, a ``main`` per seat, close,
cards one at a time, decisions when asked), so the simulated edges measure
the engine that runs the tables, not a second implementation of the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from controller import inputs as I
from controller.cards import DECK, Card
from controller.events import RoundSettled
from controller.game_base import CardDue, DecisionDue
from controller.games.blackjack import Hand, hand_total
from controller.games.blackjack_strategy import Chart, basic_action, should_swap, up_value
from controller.games.swap_hand.options import SWAP_HAND, SwapHandOptions, Variant
from controller.games.swap_hand.round import SwapHandRound
from controller.games.swap_hand.rules import SwapHand
from controller.games.swap_hand.seat import SeatPlay
from controller.limits import TableLimits
from controller.table import Table

#: Minor units per main wager in the simulators (two units of 100: the Odds-Win is one unit).
STAKE = 200
_CARDS = {card: I.CardSeen(card) for card in DECK}


@dataclass
class Player:
    """The default player: basic strategy for the table's rules, and the swap table.

    ``swap_table`` replaces :data:`~controller.games.blackjack_strategy.SWAP_TABLE`;
    ``first_swap`` (``"swap"``/``"keep"``) forces the swap decision, which is
    how the swap-table tool compares the two choices on the same cards.
    """

    chart: Chart
    swap_table: dict[int, frozenset[int]] | None = None
    first_swap: str | None = None

    def decide(self, play: SeatPlay, hand: Hand, up: Card, legal: tuple[str, ...]) -> str:
        if "swap" in legal:
            if self.first_swap is not None:
                return self.first_swap
            total, _ = hand_total(hand.cards)
            return "swap" if should_swap(total, up_value(up), self.swap_table) else "keep"
        return basic_action(hand.cards, up_value(up), legal, self.chart)


@dataclass
class SimTable:
    """A table with ``seats`` players betting :data:`STAKE` each round, credits that never run out."""

    options: SwapHandOptions
    variant: Variant = SWAP_HAND
    seats: int = 1
    table: Table = field(init=False)

    def __post_init__(self) -> None:
        self.table = Table(SwapHand(self.options, self.variant), TableLimits(seats=self.seats))
        for seat in range(1, self.seats + 1):
            self.table.apply(I.CreditIn(seat, 10**15))
        self._betting = [I.OpenBetting(), *(I.PlaceWager(s, "main", STAKE) for s in range(1, self.seats + 1)),
                         I.CloseBetting()]

    def new_shoe(self) -> None:
        self.table.apply(I.NewShoe())

    def play(self, draw: Callable[[], Card], player: Player) -> RoundSettled:
        """Play one round, drawing cards with ``draw``; the settlement event."""
        apply = self.table.apply
        for inp in self._betting:
            apply(inp)
        table = self.table
        while True:
            due = table.due()
            if isinstance(due, CardDue):
                events = apply(_CARDS[draw()])
            elif isinstance(due, DecisionDue):
                rnd = table.round
                assert isinstance(rnd, SwapHandRound)
                turn = rnd.turn()
                assert turn is not None
                play, hand = turn
                action = player.decide(play, hand, rnd.dealer[0], due.choices[play.seat])
                events = apply(I.Decision(play.seat, action))
            else:
                raise AssertionError(f"round stuck: {table.snapshot()['due']}")
            for event in events:
                if isinstance(event, RoundSettled):
                    return event
                if event.event in ("refused", "tilt"):
                    raise AssertionError(f"simulation input refused: {event.to_dict()}")


def stacked(first: list[Card], rest: list[Card]) -> Iterator[Card]:
    """Cards in shoe order: ``first`` then ``rest``."""
    yield from first
    yield from rest
