"""The games, by the name used in table and scenario files."""

from __future__ import annotations

from controller.games.baccarat import Baccarat
from controller.games.base import Game
from controller.games.one_card_poker import OneCardPoker
from controller.games.swap_hand import SwapHand
from controller.games.two_way_winner import TwoWayWinner

GAMES: dict[str, type[Game]] = {
    Baccarat.name: Baccarat,
    OneCardPoker.name: OneCardPoker,
    SwapHand.name: SwapHand,
    TwoWayWinner.name: TwoWayWinner,
}


def game_class(name: str) -> type[Game]:
    """The game called ``name``; ``KeyError`` with the known names otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r}; known: {', '.join(sorted(GAMES))}") from None


def check_game_name(value: str) -> str:
    """A pydantic validator body for a ``game:`` key: the name, or ``ValueError`` naming the known ones."""
    if value not in GAMES:
        raise ValueError(f"unknown game {value!r}; this build has: {', '.join(sorted(GAMES))}")
    return value
