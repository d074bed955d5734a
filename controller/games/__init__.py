"""The games, by the name used in table and scenario files: the registry.

Each game is one package here, named as in table files, holding everything about it:
``rules`` (the engine's ``Game``), its options, ``par_sheet`` (``croupier math GAME``) and,
where it has one, ``simulation`` (``croupier simulate GAME``), plus its strategy or policy.
The package exports its ``Game`` class as ``GAME``. A new game is one new folder plus one
line in :data:`GAME_PACKAGES`. Shared building blocks sit beside the packages: ``base``
(the engine contract), ``blackjack`` and ``blackjack_strategy``, ``poker_hands``.
"""

from __future__ import annotations

import importlib
import importlib.util

from controller.game_base import Game

#: The game packages of this build (each ``controller/games/<name>/``).
GAME_PACKAGES: tuple[str, ...] = (
    "baccarat",
    "one_card_poker",
    "swap_hand",
    "two_way_winner",
)


def _load(package: str) -> type[Game]:
    """The ``GAME`` a game package exports; its name must be the package's name."""
    game = getattr(importlib.import_module(f"{__name__}.{package}"), "GAME", None)
    if not (isinstance(game, type) and issubclass(game, Game)):
        raise TypeError(f"controller/games/{package}/__init__.py must export GAME, a Game subclass")
    if game.name != package:
        raise TypeError(f"controller/games/{package}: GAME.name is {game.name!r}, not {package!r}")
    return game


GAMES: dict[str, type[Game]] = {package: _load(package) for package in GAME_PACKAGES}


def game_tool(name: str, tool: str) -> str | None:
    """The module ``controller.games.<name>.<tool>`` (``par_sheet``, ``simulation``) if the game has it."""
    module = f"{__name__}.{name}.{tool}"
    return module if importlib.util.find_spec(module) is not None else None


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
