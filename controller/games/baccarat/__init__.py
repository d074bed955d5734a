"""Baccarat (Punto Banco): its rules (``rules``), exact par sheet (``par_sheet``) and simulation
(``simulation``). ``GAME`` is what the registry in :mod:`controller.games` reads."""

from controller.games.baccarat.rules import Baccarat, BaccaratOptions

GAME = Baccarat

__all__ = ["GAME", "Baccarat", "BaccaratOptions"]
