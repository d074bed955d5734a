"""One seat's part of a Swap-Hand round: its hands, its swap, its Odds-Win, and how they settle.

Kept apart from the round's state machine so that the money rules (what a
blackjack pays, how the Odds-Win follows the first hand, why a double leaves
the Odds-Win stake alone) can be read in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from controller.cards import Card
from controller.game_base import Settlement
from controller.games.blackjack import Hand
from controller.money import EVEN, Odds

MAIN: Final = "main"
ODDS_WIN: Final = "odds_win"
#: The Odds-Win pays 2:1 when the first hand wins.
ODDS_WIN_PAYS: Final = Odds(2, 1)

# Hand outcomes, as written in the result record.
BLACKJACK: Final = "blackjack"  # a natural (dealt or swapped in), paid blackjack_pays
WIN: Final = "win"  # any other win, 1:1 on the hand's stake
PUSH: Final = "push"
LOSE: Final = "lose"
BUST: Final = "bust"  # over 21: always loses
WINNING: Final = frozenset({BLACKJACK, WIN})


@dataclass(slots=True)
class SeatPlay:
    """A seat's hands (``main`` first, split hands in the order made) and its Swap-Hand state."""

    seat: int
    #: The main wager as staked before the deal: what a split or a double costs.
    base: int
    hands: list[Hand] = field(default_factory=lambda: [Hand(MAIN)])
    #: ``odd``/``even``, fixed on the first two cards; ``None`` until they are dealt.
    parity: str | None = None
    swap_decided: bool = False
    swapped: bool = False
    #: The two cards given up by a swap (they stay out of play).
    discarded: list[Card] = field(default_factory=list)

    @property
    def first(self) -> Hand:
        return self.hands[0]

    def label(self, hand: Hand) -> str:
        """The hand name used in card events: ``seat 2``, or ``seat 2 main:3`` for a split hand."""
        return f"seat {self.seat}" if hand.spot == MAIN else f"seat {self.seat} {hand.spot}"

    def settle(self, stakes: dict[tuple[int, str], int], blackjack_pays: Odds) -> list[Settlement]:
        """One line per staked spot of this seat; every hand must have an outcome by now."""
        lines = []
        for hand in self.hands:
            stake = stakes[(self.seat, hand.spot)]
            lines.append(Settlement(self.seat, hand.spot, stake, hand_net(hand, stake, blackjack_pays)))
        odds_stake = stakes.get((self.seat, ODDS_WIN))
        if odds_stake is not None:
            lines.append(Settlement(self.seat, ODDS_WIN, odds_stake, self.odds_win_net(odds_stake)))
        return lines

    def odds_win_net(self, stake: int) -> int:
        """Lost on an even first two cards; else the first hand's fate at 2:1 (a double changes nothing)."""
        if self.parity == "even":
            return -stake
        outcome = self.first.outcome
        if outcome in WINNING:
            return ODDS_WIN_PAYS.win(stake)
        return 0 if outcome == PUSH else -stake

    def record(self) -> dict[str, Any]:
        """This seat's part of the result record."""
        return {
            "hands": [
                {
                    "spot": h.spot,
                    "cards": h.codes(),
                    "total": h.total,
                    "soft": h.soft,
                    "outcome": h.outcome,
                    "doubled": h.doubled,
                }
                for h in self.hands
            ],
            "swapped": self.swapped,
            "discarded": [c.code for c in self.discarded],
            "odds_win_parity": self.parity,
        }


def hand_net(hand: Hand, stake: int, blackjack_pays: Odds) -> int:
    """What a hand's stake gains: blackjack at the table's odds, other wins even money."""
    if hand.outcome == BLACKJACK:
        return blackjack_pays.win(stake)
    if hand.outcome == WIN:
        return EVEN.win(stake)
    if hand.outcome == PUSH:
        return 0
    if hand.outcome in (LOSE, BUST):
        return -stake
    raise AssertionError(f"hand {hand.spot} settled without an outcome")


def compare(player_total: int, dealer_total: int) -> str:
    """Outcome of a standing hand against the dealer's final total."""
    if player_total > 21:
        return BUST
    if dealer_total > 21 or player_total > dealer_total:
        return WIN
    return PUSH if player_total == dealer_total else LOSE
