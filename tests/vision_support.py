"""Shared set-up for the vision tests (no tests here): decks enrolled once per run from synthetic photographs.

Everything is generated at test time from seeds (vision.synth): no downloaded or committed photographs.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

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


def card_at(turn: float, dx: float = 0.0, dy: float = 0.0) -> list[tuple[float, float]]:
    """A card's corners, clockwise from its top-left: 180 x 251 px about (300, 220) turned by ``turn``
    (radians), then moved by (``dx``, ``dy``)."""
    c, s = math.cos(turn), math.sin(turn)
    return [(300 + x * c - y * s + dx, 220 + x * s + y * c + dy)
            for x, y in ((-90, -125.5), (90, -125.5), (90, 125.5), (-90, 125.5))]


def corners_off(corners: np.ndarray, turn: float) -> float:
    """How far (pixels, the worst corner) found ``corners`` lie from those drawn by ``card_at(turn)``."""
    want = np.array(card_at(turn), np.float32)
    return float(min(np.abs(np.roll(corners, k, axis=0) - want).max() for k in range(4)))
