"""The far index found off its box by the read index's print and read again (vision.reread).

The scene: a drawn card whose far corner's print is moved a few pixels, as the fitted outline of a
card standing on a hidden edge, or a miscut card, puts its far index off the learned box.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from vision_support import profile

from controller.cards import parse_card
from vision.detect import find_card
from vision.recognise import Image, read_indices, recognise
from vision.synth import DESIGNS, STUDIO, photograph
from vision.synth_faces import FACE_H, FACE_W, render_face
from vision.warp import warp_indices

#: The far corner moved (synthetic face pixels), its width and height.
CORNER_W, CORNER_H = 70, 110


def far_corner_moved(card: str, dx: int, dy: int, far: str | None = None) -> Image:
    """``card``'s face with its far corner's print (or ``far``'s, another card's) moved by (dx, dy)."""
    face = render_face(parse_card(card), DESIGNS["classic"]).copy()
    source = face if far is None else render_face(parse_card(far), DESIGNS["classic"])
    x0, y0 = FACE_W - CORNER_W, FACE_H - CORNER_H
    corner = source[y0 : FACE_H - 6, x0 : FACE_W - 6].copy()
    face[y0 : FACE_H - 4, x0 : FACE_W - 4] = face[FACE_H // 2, 6]  # the paper beside the pips
    shift = np.float32([[1, 0, x0 - dx], [0, 1, y0 - dy]])
    cv2.warpAffine(corner, shift, (FACE_W, FACE_H), dst=face, borderMode=cv2.BORDER_TRANSPARENT)
    return face


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("card", "dx", "dy"), [("7H", 12, 12), ("TD", 10, 8), ("AC", -8, 10), ("KS", 8, -8)])
def test_a_far_index_off_its_box_is_found_and_read_again(card: str, dx: int, dy: int) -> None:
    deck = profile()
    frame = photograph(far_corner_moved(card, dx, dy), seed=1, cond=STUDIO)
    detection = find_card(frame, deck.spec.face, warp=False)
    assert detection.corners is not None, detection.reason
    crops = warp_indices(frame, detection.corners, deck.spec.face, deck.spec.index.box)
    where_learned = read_indices(crops, deck, one_index=False)
    assert where_learned.status == "unknown" and "only one index" in where_learned.reason  # the premise
    reading = recognise(frame, deck)
    assert reading.status == "card" and reading.card == parse_card(card), reading


@pytest.mark.timeout(120)
def test_a_far_index_found_off_its_box_that_reads_another_card_is_refused() -> None:
    """The second look is a read of its own: another card there is two indices that disagree."""
    deck = profile()
    frame = photograph(far_corner_moved("7H", 12, 12, far="7D"), seed=1, cond=STUDIO)
    reading = recognise(frame, deck)
    assert reading.status == "unknown" and "disagree" in reading.reason, reading
