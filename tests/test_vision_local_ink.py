"""An index lit unevenly (a glare's edge across the far index) is read by its ink's local contrast, and
only to confirm the card the other index read: never a card on its own, never another card.

Before: one level cut the rank's dark part alone (kentdoan's 8S: "rank glyph 32 px tall, enrolled 54",
"rank unlike any enrolled (best 6 0.49)"), and the card was unknown, "only one index readable".
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from vision_support import profile

from controller.cards import parse_card
from vision.index_split import local_ink
from vision.recognise import read_index, read_indices, recognise_face
from vision.synth import DESIGNS, render_face
from vision.warp import index_crops

#: The top-left index of a classic face as drawn (rank and suit, no pip), face pixels.
INDEX = (slice(0, 130), slice(0, 70))


def _face(code: str, light: float = 0.85) -> np.ndarray:
    """``code``'s face as drawn (its paper at 250), under ``light`` times the light."""
    return (render_face(parse_card(code), DESIGNS["classic"]) * light).astype(np.uint8)


def _lit_unevenly(face: np.ndarray, top: float) -> np.ndarray:
    """``face`` with its top-left rank's ink faded towards the paper: ``top`` of its darkness left at the
    rank's top, all of it at its bottom (the edge of a glare across the index)."""
    out = face.astype(np.float32)
    rows = np.flatnonzero((face[INDEX].min(axis=2) < 128).any(axis=1))
    first, end = int(rows[0]), int(rows[np.flatnonzero(np.diff(rows) > 1)[0]]) + 2  # to the gap over the suit
    paper = out[end + 40, 40].copy()
    left = np.clip(top + (1 - top) * (np.arange(end) - first) / (end - first), top, 1.0)[:, None, None]
    out[:end, :70] = paper - (paper - out[:end, :70]) * left
    return out.astype(np.uint8)


def _read(face: np.ndarray, **how: bool) -> tuple[object, object, str]:
    """The face at the deck's size: its top-left index read alone, then the card read on both indices as
    a card found by its outline is (``how``: :func:`read_indices`'s options)."""
    deck = profile()
    crops = index_crops(cv2.resize(face, deck.spec.face, interpolation=cv2.INTER_AREA), deck.spec.index.box)
    reading = read_indices(crops, deck, **how)
    return read_index(crops[0], deck), reading.card, reading.reason


@pytest.mark.parametrize("code", ["8S", "6S", "9H", "3S", "QC", "TD", "AC"])
def test_a_rank_lit_unevenly_confirms_the_card_the_other_index_read(code: str) -> None:
    alone, card, why = _read(_lit_unevenly(_face(code), 0.25))
    assert isinstance(alone, str), alone  # one level does not cut it: read alone, the index is refused
    assert card is parse_card(code), why


def test_only_a_read_that_may_stand_on_one_index_looks_at_the_local_contrast() -> None:
    """A card found by its indices, joined to a second card's paper or turned a quarter is read on two
    plain reads (``one_index=False``); enrolment's self-check reads a photograph as a first read would,
    since its templates are cut at one level (a photograph only the look reads is re-shot)."""
    face = _lit_unevenly(_face("8S"), 0.25)
    _, card, why = _read(face, one_index=False)
    assert card is None and why.startswith("only one index readable"), why
    deck = profile()
    reading = recognise_face(cv2.resize(face, deck.spec.face, interpolation=cv2.INTER_AREA), deck)
    assert reading.card is None and reading.reason.startswith("only one index readable"), reading.reason


def test_a_faint_index_is_blank_however_it_is_cut() -> None:
    """An index of 29 grey levels in all (the first read's "blank index"): its local contrast reads as the
    8S, but no ink was cut wrong there, and split_local refuses such a crop as blank as well."""
    face = _face("8S").astype(np.float32)
    paper = face[200, 150].copy()
    face[INDEX] = paper - (paper - face[INDEX]) * 0.15
    alone, card, why = _read(face.astype(np.uint8))
    assert alone == "blank index" and card is None
    assert why == "only one index readable (blank index)", why


def test_an_index_of_another_card_lit_unevenly_leaves_the_card_unknown() -> None:
    """A 6S's index lit unevenly where the 8S's lies (a second card over the corner): read by its local
    contrast it is the 6S, and the two indices disagree; the look never makes it agree."""
    face = _face("8S")
    face[INDEX] = _lit_unevenly(_face("6S"), 0.25)[INDEX]
    alone, card, why = _read(face)
    assert isinstance(alone, str), alone
    assert card is None and why == "the indices disagree (6S / 8S)", why


def test_an_index_lit_unevenly_under_a_glare_is_not_looked_at_so() -> None:
    """Its paper at the sensor's top: a glare that washes an index out washes out a second object beside
    the card too (drawn scenes of two objects read as one card, 2026-12-06), so it stays unread."""
    alone, card, why = _read(_lit_unevenly(_face("8S", light=1.0), 0.25))
    assert isinstance(alone, str) and card is None
    assert why.startswith("only one index readable"), why


def test_two_indices_lit_unevenly_are_no_card() -> None:
    """The look only confirms: with neither index read at one level, there is nothing to confirm."""
    face = _lit_unevenly(cv2.rotate(_lit_unevenly(_face("8S"), 0.25), cv2.ROTATE_180), 0.25)
    alone, card, why = _read(face)
    assert isinstance(alone, str) and card is None
    assert why.count("; ") == 1 and "only one index" not in why, why  # both indices' own reasons


def test_a_grey_blot_over_one_rank_is_not_read_by_its_local_contrast() -> None:
    """A blot has the contrast of faded ink but no rank's shape: the card stays unknown."""
    face = _face("8S")
    rows = np.flatnonzero((face[INDEX].min(axis=2) < 128).any(axis=1))
    end = int(rows[np.flatnonzero(np.diff(rows) > 1)[0]]) + 2
    face[:end, :70] = face[end + 40, 40]
    face[int(rows[0]) : end - 2, 12:40] = 170
    _, card, why = _read(face)
    assert card is None and why.startswith("only one index readable"), why


def test_local_ink_cuts_a_stroke_at_the_same_share_of_its_own_contrast() -> None:
    """Two strokes of one width, one four times as dark as the other under the paper: both are cut whole
    and as wide, where one level between them keeps only the dark one."""
    grey = np.full((60, 80), 220, np.uint8)
    grey[10:50, 20:26] = 200  # a faint stroke: 20 grey levels under the paper
    grey[10:50, 50:56] = 140  # a dark one: 80 levels under
    grey = cv2.GaussianBlur(grey, (5, 5), 1.0)
    _, binary = local_ink(grey, 40)
    widths = [(binary[30, x0:x1] > 0).sum() for x0, x1 in ((10, 36), (40, 66))]
    assert widths[0] == widths[1] and 4 <= widths[0] <= 8, widths
    assert (binary[:, :8] == 0).all() and (binary[:5] == 0).all()  # the paper alone is no ink
