"""Swap-Hand Blackjack: rules (``rules``, ``round``, ``seat``), options (``options``), par sheet
(``par_sheet``), the simulated players' play (``play``) and simulation (``simulation``).
``GAME`` is what the registry in :mod:`controller.games` reads."""

from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.rules import SwapHand

GAME = SwapHand

__all__ = ["GAME", "SwapHand", "SwapHandOptions"]
