"""One Card Poker with a Designated Player: its rules (``rules``) and exact par sheet
(``par_sheet``). ``GAME`` is what the registry in :mod:`controller.games` reads."""

from controller.games.one_card_poker.rules import OneCardPoker, OneCardPokerOptions

GAME = OneCardPoker

__all__ = ["GAME", "OneCardPoker", "OneCardPokerOptions"]
