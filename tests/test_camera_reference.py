"""The window a card is judged by (vision.felt.Settled): nothing over the window gets into it.

A card is taken for gone only when an empty read is alike the window as it was empty before the card
(tests/test_camera_covered_lens.py). Third readings (2026-12-06) found ways for a hand to become that
window: a palm held over the card lying there at start, with nothing to judge it by, settled and became
the next card's; one frame of a palm over a tenth of the window, right before a small card, did at once
(a run continued at 90 % alike); and the card's area rule refused an arm's shadow at the window's edge,
holding identical next cards for the dealer needlessly. Played to a daemon through OpenCV's capture.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import numpy as np
import pytest
from camera_video import FPS, SIZE
from test_camera_covered_lens import CLASSIC, PROFILE, _palm, _play

from controller.cards import parse_card
from vision.felt import SHARE, Settled, before, look, share_alike, unlike
from vision.recognise import recognise
from vision.synth import STUDIO, photograph, render_face, scene

SMALL = dataclasses.replace(STUDIO, scale=(0.3, 0.35))
#: Cards of the least size the camera needs (about 202 px tall at 640 x 480).
LEAST = dataclasses.replace(STUDIO, scale=(0.44, 0.44))
EMPTY = scene(None, CLASSIC, 5, SIZE, STUDIO, felt=0)  # _play's empty window


def _card(code: str, seed: int, cond: object = SMALL) -> np.ndarray:
    return photograph(render_face(parse_card(code), CLASSIC), seed, SIZE, cond, felt=0)  # type: ignore[arg-type]


def _palmed(frame: np.ndarray, reach: float = 1.2, blur: float = 25) -> np.ndarray:
    corners = recognise(frame, PROFILE).corners
    assert corners is not None
    palm = _palm(frame, corners, reach, blur)
    assert recognise(palm, PROFILE).status == "empty"
    return palm


def _shadow(frame: np.ndarray, depth: int = 50, k: float = 0.55) -> np.ndarray:
    """An arm's soft shadow over the window's left ``depth`` pixels, ``k`` times the light."""
    mask = np.zeros(frame.shape[:2], np.float32)
    mask[:, :depth] = 1
    mask = cv2.GaussianBlur(mask, (0, 0), 15)
    return np.clip(frame * (1 - (1 - k) * mask[..., None]), 0, 255).astype(np.uint8)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("read_again", [True, False])
def test_a_palm_held_over_the_card_at_start_never_becomes_the_next_cards_reference(
        tmp_path: Path, read_again: bool) -> None:
    """2C lies there at start (no reference); a palm held over it 2.7 s was refused, but settled; 5S laid
    where 2C lay took it, and a like palm over 5S passed for its empty window. With 2C read again after the
    palm, and with the palm taking it away."""
    first, card = _card("2C", 0), _card("5S", 0)
    palms = [_palmed(first), _palmed(card)]
    empty = scene(None, CLASSIC, 6, SIZE, STUDIO, felt=0)
    again = [(first, FPS, True)] if read_again else []
    pictures = [(first, 2 * FPS, True), (palms[0], 40, True), *again, (empty, 9, True), (card, FPS, True),
                (palms[1], FPS // 2, True), (card, FPS, True)]
    want = ["2C", "2C?", "5S", "5S?"] if read_again else ["2C", "5S", "5S?"]
    assert _play(tmp_path, pictures, empty_first=False) == want


@pytest.mark.timeout(180)
def test_one_frame_of_a_palm_over_a_tenth_of_the_window_never_becomes_the_next_cards_reference(
        tmp_path: Path) -> None:
    """The palm over the spot where a small card is then laid is 90 % alike the empty window: at that share
    it continued the settled run and became the card's reference; a like palm over the card then passed."""
    card = _card("5S", 6)
    at = recognise(card, PROFILE).corners
    assert at is not None
    hover, palmed = _palm(EMPTY, at, 1.0, 6), _palm(card, at, 1.0, 6)
    assert recognise(hover, PROFILE).status == "empty" and recognise(palmed, PROFILE).status == "empty"
    assert share_alike(look(EMPTY, None), look(hover, None)) >= SHARE
    assert unlike(before(look(EMPTY, None), at, card.shape), look(palmed, None)) is not None
    assert _play(tmp_path, [(hover, 2, True), (card, FPS, True), (palmed, FPS // 2, True), (card, FPS, True)]
                 ) == ["5S", "5S?"]


def test_an_arms_shadow_at_the_edge_is_an_empty_window_and_never_the_settled_one() -> None:
    shadow = _shadow(EMPTY)
    assert recognise(shadow, PROFILE).status == "empty"
    assert share_alike(look(EMPTY, None), look(shadow, None)) >= SHARE
    card = _card("5S", 12, LEAST)
    at = recognise(card, PROFILE).corners
    assert at is not None and int(np.linalg.norm(at[0] - at[3])) >= 200
    why = unlike(before(look(EMPTY, None), at, card.shape), look(shadow, None))
    assert why is None, why
    settled = Settled(8, 30)
    for _ in range(30):
        settled.seen(look(EMPTY, None))
    settled.seen(look(shadow, None))
    assert settled.kept is not None and share_alike(settled.kept, look(EMPTY, None)) == 1.0


@pytest.mark.timeout(180)
@pytest.mark.parametrize("where", ["gap", "reference"])
def test_an_arms_shadow_at_the_edge_does_not_hold_identical_cards_for_the_dealer(
        tmp_path: Path, where: str) -> None:
    two, five, seven = _card("2C", 12, LEAST), _card("5S", 12, LEAST), _card("7H", 13, LEAST)
    shadow = _shadow(EMPTY)
    gap = [(shadow if where == "gap" else EMPTY, 9, True)]
    clean = [(EMPTY, 9, True)]
    lead = [(shadow, 2, True)] if where == "reference" else []
    pictures = [*lead, (two, FPS, True), *clean, (five, FPS, True), *gap, (five, FPS, True), *clean,
                (seven, FPS, True), *clean, (seven, FPS, True)]
    assert _play(tmp_path, pictures) == ["2C", "5S", "5S", "7H", "7H"]
