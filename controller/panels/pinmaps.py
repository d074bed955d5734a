"""Pin maps checked against the games: the GPIO driver knows pins, the controller each game's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.games import GAMES
from drivers.gpio import pinmap
from drivers.gpio.pinmap import GameWords, PinMap

#: Every game's decision words and betting spots, as the driver's map check takes them.
GAME_WORDS: dict[str, GameWords] = {
    name: GameWords(tuple(cls.actions), tuple(cls.bet_spots)) for name, cls in GAMES.items()
}


def parse_pin_map(data: Any, path: Path | str = "<pin map>", game: str | None = None) -> PinMap:
    """Validate already-loaded YAML data; ``game`` (the table's game) must match the map's if given."""
    return pinmap.parse_pin_map(data, path, game, games=GAME_WORDS)


def load_pin_map(path: Path | str, game: str | None = None) -> PinMap:
    """Read and validate a pin map file; :class:`PinMapError` names the file, the key and the reason."""
    return pinmap.load_pin_map(path, game, games=GAME_WORDS)
