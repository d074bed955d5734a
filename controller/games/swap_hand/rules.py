"""Swap-Hand Blackjack with the compulsory Odds-Win wager.

Rules: docs/rules/swap_hand.md. The player bets ``main``; the engine adds an
Odds-Win of half of it (:meth:`SwapHand.with_derived`), which is why the main
must be an even number of units. The round itself is
:class:`controller.games.swap_hand.round.SwapHandRound`, which also settles
and writes the result record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from controller.game_base import Game, GameOptions, Refusal, RoundLedger
from controller.games.swap_hand.options import SWAP_HAND, SwapHandOptions, Variant
from controller.games.swap_hand.round import SwapHandRound
from controller.limits import TableLimits

MAIN = "main"
ODDS_WIN = "odds_win"


class SwapHand(Game):
    """The game across rounds: it keeps only the options (blackjack has no state between rounds)."""

    name: ClassVar[str] = "swap_hand"
    bet_spots: ClassVar[tuple[str, ...]] = (MAIN,)
    actions: ClassVar[tuple[str, ...]] = ("swap", "keep", "hit", "stand", "double", "split")
    options_model: ClassVar[type[GameOptions]] = SwapHandOptions
    options: SwapHandOptions

    def __init__(self, options: GameOptions, variant: Variant = SWAP_HAND) -> None:
        assert isinstance(options, SwapHandOptions)
        super().__init__(options)
        #: The Swap-Hand changes in force; tools alone pass anything but the default.
        self.variant = variant
        self.split_rules = options.split_rules()

    def check_bets(self, seat: int, bets: Mapping[str, int], limits: TableLimits) -> None:
        main = bets.get(MAIN, 0)
        if self.variant.odds_win and main % (2 * limits.unit):
            raise Refusal(
                f"main wager {limits.money.format(main)} must be an even number of units "
                f"(steps of {limits.money.format(2 * limits.unit)}) "
                "so that the Odds-Win of half of it is a whole number of units"
            )

    def with_derived(self, bets: Mapping[str, int]) -> dict[str, int]:
        staked = dict(bets)
        if self.variant.odds_win and MAIN in bets:
            staked[ODDS_WIN] = bets[MAIN] // 2
        return staked

    def new_round(self, ledger: RoundLedger) -> SwapHandRound:
        return SwapHandRound(self.options, self.split_rules, self.variant, ledger)

    def view(self) -> dict[str, Any]:
        return {}
