"""2WayWinner: Poker or Blackjack. Each seat plays its two cards as blackjack or as Hold'em.

Rules: docs/rules/two_way_winner.md. The game object holds what does not
change during a round (options) and the checks made before the deal; a
round (:mod:`controller.games.two_way_winner.round`) does the rest.

Why the antes are checked when betting closes and not as chips go down: a
player puts chips on one circle and then the other, so at any moment during
betting a lone ante, or two unequal ones, is normal. Only at "no more bets"
can the table say that a seat's antes are not a pair; that seat's wagers
(its Dealer Bonus included, which rides on a seat in play) then go back and
the seat sits the round out, as a dealer would push unmatched chips back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from controller.game_base import Game, GameOptions, Refusal, RoundLedger
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.round import TwoWayWinnerRound
from controller.games.two_way_winner.seat import BJ_ANTE, DEALER_BONUS, POKER_ANTE
from controller.limits import TableLimits


class TwoWayWinner(Game):
    name: ClassVar[str] = "two_way_winner"
    bet_spots: ClassVar[tuple[str, ...]] = (BJ_ANTE, POKER_ANTE, DEALER_BONUS)
    actions: ClassVar[tuple[str, ...]] = (
        "blackjack", "poker", "surrender", "take_natural", "hit", "stand", "double", "split", "check", "bet",
    )
    default_seats: ClassVar[int] = 6
    fresh_shoe_every_round: ClassVar[bool] = True  # "one deck, shuffled before every round"
    options_model: ClassVar[type[GameOptions]] = TwoWayWinnerOptions
    options: TwoWayWinnerOptions

    def __init__(self, options: GameOptions) -> None:
        assert isinstance(options, TwoWayWinnerOptions)
        super().__init__(options)

    def check_bets(self, seat: int, bets: Mapping[str, int], limits: TableLimits) -> None:
        if seat > self.options.max_seats:
            top = self.options.max_seats
            raise Refusal(f"2WayWinner plays seats 1..{top} at this table (max_seats), not seat {seat}")

    def playable(self, seat: int, bets: Mapping[str, int]) -> str | None:
        bj, poker = bets.get(BJ_ANTE, 0), bets.get(POKER_ANTE, 0)
        if not bj or not poker:
            return "both antes (bj_ante and poker_ante) are required"
        if bj != poker:
            return f"the antes must be equal (bj_ante {bj}, poker_ante {poker})"
        return None

    def new_round(self, ledger: RoundLedger) -> TwoWayWinnerRound:
        return TwoWayWinnerRound(self.options, ledger)
