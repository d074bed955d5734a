"""Shared set-up for the vision tests (no tests here): decks enrolled once per run from synthetic photographs.

Everything is generated at test time from seeds (vision.synth): no downloaded or committed photographs.
"""

from __future__ import annotations

from functools import cache

from controller.cards import DECK, Card
from vision.enroll import EnrolResult, enrol
from vision.profile import DeckProfile
from vision.recognise import Image
from vision.synth import DESIGNS, STUDIO, scene

#: The seed of the enrolment photographs; test frames use other seeds.
ENROL_SEED = 7


@cache
def enrolment_shots(design: str = "classic") -> tuple[tuple[Image, Card, str], ...]:
    """The design's 52 enrolment photographs (made once: a test that alters a few reuses the rest)."""
    return tuple((scene(card, DESIGNS[design], ENROL_SEED * 1000 + i, cond=STUDIO), card, f"{card}.jpg")
                 for i, card in enumerate(DECK))


@cache
def enrolment(design: str = "classic") -> EnrolResult:
    return enrol(enrolment_shots(design), f"test_{design}")


def profile(design: str = "classic") -> DeckProfile:
    result = enrolment(design)
    assert result.ok and result.profile is not None, result.problems
    return result.profile
