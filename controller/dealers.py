"""Dealers: who deals at the table, set by ``dealer_in`` and ``dealer_out`` so rounds are reported by dealer.

The dealer is table state like the round number: journaled inputs change it, one ``dealer`` event
says so, and a restart, a replay, a checkpoint or the floor's own replay of the journal give the
same dealer at every seq. A change is allowed in any phase, a round in play and a tilt included
(a relief mid-shoe or mid-round is real), so the dealer of a round is the one in at its first seq
(``betting_opened``): the recall record keeps it as ``dealer``. Kept apart from
:mod:`controller.table`; :class:`DealerRules` is part of :class:`~controller.table.Table`.
"""

from __future__ import annotations

from typing import Final

from controller import inputs as I
from controller.events import DealerChanged, Event
from controller.game_base import Refusal

#: Longest dealer name, in characters (a name on a badge, an employee number).
MAX_NAME: Final = 64


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a dealer's name (empty, blank at either end, too long, control
    characters), or None: the command parser and the table judge it by this one rule."""
    if not name:
        return "a dealer's name cannot be empty"
    if name != name.strip():
        return f"a dealer's name cannot begin or end with spaces: {name!r}"
    if len(name) > MAX_NAME:
        return f"a dealer's name has at most {MAX_NAME} characters, not {len(name)}"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a dealer's name cannot have control characters"
    return None


class DealerRules:
    """The table's dealer and the two inputs that change it."""

    #: The dealer in now (None: nobody has tapped in, or the last one went out).
    dealer: str | None

    def _dealer_in(self, inp: I.DealerIn) -> list[Event]:
        problem = name_problem(inp.name)
        if problem is not None:
            raise Refusal(problem)
        if inp.name == self.dealer:
            raise Refusal(f"{inp.name} is the dealer already")
        self.dealer = inp.name  # a dealer in replaces the one before: the relief taps in
        return [DealerChanged(inp.name)]

    def _dealer_out(self, inp: I.DealerOut) -> list[Event]:
        if self.dealer is None:
            raise Refusal("no dealer is in")
        self.dealer = None
        return [DealerChanged(None)]
