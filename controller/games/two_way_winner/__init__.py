"""2WayWinner: rules (``rules``, ``round``, ``seat``), options and the Dealer Bonus pay table
(``options``), par sheet (``par_sheet``), the simulated players' policy (``policy``) and
simulation (``simulation``). ``GAME`` is what the registry in :mod:`controller.games` reads."""

from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.rules import TwoWayWinner

GAME = TwoWayWinner

__all__ = ["GAME", "TwoWayWinner", "TwoWayWinnerOptions"]
