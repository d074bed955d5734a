"""The best Swap-Hand player's decision tables, cached outside the repository so they are built once.

A table (:func:`controller.games.swap_hand.best_player.build`) takes the exact
engine 20-60 CPU seconds an up card; it is written (0600, atomically) to
``$XDG_CACHE_HOME/croupier/swap_hand_best`` (else ``~/.cache/...``) under a
name carrying the options, the packing's version and a digest of the engine's
source, so a changed engine or rule set never reads a stale table.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import Final

import numpy as np

from controller.daemon.private import make_dir, write_atomic
from controller.games import blackjack_dealer, blackjack_exact
from controller.games.swap_hand import exact
from controller.games.swap_hand.best_player import FORMAT, Table, build
from controller.games.swap_hand.options import SwapHandOptions

#: Changes to these make a new table: the engine whose decisions are tabulated.
_SOURCES: Final = (blackjack_exact, blackjack_dealer, exact)


def cache_folder() -> Path:
    """Where the tables live: the user's cache, never the repository (30 MB for the ten up cards)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "croupier" / "swap_hand_best"


def cache_name(options: SwapHandOptions, up: int) -> str:
    """The table's file name: the options and the engine's source digested, so it cannot go stale."""
    digest = hashlib.sha256(f"{FORMAT}:{options.model_dump_json()}".encode())
    for module in _SOURCES:
        digest.update(Path(module.__file__ or "").read_bytes())
    return f"up{up}-{digest.hexdigest()[:20]}.npz"


def load(options: SwapHandOptions, up: int, folder: Path | None = None) -> Table:
    """The table for ``up``: read from the cache folder, or built and written there (0600, atomically)."""
    folder = folder or cache_folder()
    path = folder / cache_name(options, up)
    if path.exists():
        with np.load(path) as stored:
            return stored["keys"], stored["actions"]
    table = build(options, up)
    make_dir(folder)
    buffer = io.BytesIO()
    np.savez(buffer, keys=table[0], actions=table[1])
    write_atomic(path, buffer.getvalue())
    return table
