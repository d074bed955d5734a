"""Shared set-up for the vision tests (no tests here): decks enrolled once per run from synthetic photographs.

Everything is generated at test time from seeds (vision.synth): no downloaded or committed photographs.
"""

from __future__ import annotations

from functools import cache

from controller.cards import DECK
from vision.enroll import EnrolResult, enrol
from vision.profile import DeckProfile
from vision.synth import DESIGNS, STUDIO, scene

#: The seed of the enrolment photographs; test frames use other seeds.
ENROL_SEED = 7


@cache
def enrolment(design: str = "classic") -> EnrolResult:
    shots = [(scene(card, DESIGNS[design], ENROL_SEED * 1000 + i, cond=STUDIO), card, f"{card}.jpg")
             for i, card in enumerate(DECK)]
    return enrol(shots, f"test_{design}")


def profile(design: str = "classic") -> DeckProfile:
    result = enrolment(design)
    assert result.ok and result.profile is not None, result.problems
    return result.profile
