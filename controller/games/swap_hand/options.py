"""Swap-Hand Blackjack's table options, and the calibration variant used only by the tools.

The options are the "standard blackjack rules" the Swap-Hand sheet leaves to
the house; docs/rules/swap_hand.md lists them with defaults. The
:class:`Variant` is deliberately *not* an option: it exists so the simulator
can switch the Swap-Hand changes off and check the plain blackjack core
against published house edges. A table file can never select it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from controller.game_base import GameOptions
from controller.games.blackjack import SplitRules
from controller.money import Odds
from controller.options import OddsText, odds_in


class SwapHandOptions(GameOptions):
    """Every table option of Swap-Hand Blackjack with its default (unknown keys are errors)."""

    decks: int = Field(default=6, ge=1, le=8)
    dealer_hits_soft_17: bool = False
    blackjack_pays: Annotated[OddsText, odds_in("3:2", "6:5")] = Odds(3, 2)
    double_on: Literal["any2", "9-11", "10-11"] = "any2"
    double_after_split: bool = True
    max_split_hands: int = Field(default=4, ge=1, le=4)
    resplit_aces: bool = False
    hit_split_aces: bool = False
    #: Hole-card game: the only choice the rules allow, kept as an option so a file may say so.
    dealer_peek: Literal[True] = True

    def split_rules(self) -> SplitRules:
        return SplitRules(
            double_on=self.double_on,
            double_after_split=self.double_after_split,
            max_split_hands=self.max_split_hands,
            resplit_aces=self.resplit_aces,
            hit_split_aces=self.hit_split_aces,
        )


@dataclass(frozen=True, slots=True)
class Variant:
    """Which of the Swap-Hand changes are on. Only tools build anything but :data:`SWAP_HAND`.

    ``classic`` (all off) is plain hole-card blackjack: no swap offered, no
    Odds-Win staked, a 21 stands and is compared with the dealer (so a
    dealer 21 pushes it and a dealer blackjack pushes a natural). It is a
    calibration mode for checking the blackjack core, not a table game.
    """

    swap: bool = True
    odds_win: bool = True
    auto_win_21: bool = True


SWAP_HAND = Variant()
CLASSIC = Variant(swap=False, odds_win=False, auto_win_21=False)
