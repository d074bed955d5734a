"""The index that did not read, found again off its box by the other index's print and read once more.

Why: the fitted outline can sit a few pixels off at one end of the card (a card standing on its lower
edge with that edge hidden, a corner rounded short, a side bowed by the lens), and the far index then
lies off the learned box: its glyph is cut by the box's edge or trimmed with the glyph area, and the
index does not read although it is in full view (GuilleX7's upright 7H, bidly's AH; docs/vision.md,
step 6). The read index's own print is the best template of the other one (the same card, printed
half a turn round): found by normalised correlation in a margin round the box, the box is moved by
the offset found and that index is warped from the frame again and read on its own against the deck's
templates (:func:`vision.recognise.read_indices`).

Why it never stands in for a read: only a second read that names the same card counts, with every
threshold of a first read. Two overlapping cards (vision.synth's two-card negatives) move the box
onto the upper card's index, which reads as another card or not at all; a place where the print
correlates less than :data:`LEAST_MATCH` is not looked at.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.glyphs import Glyphs, glyph_area, split_index
from vision.profile import DeckProfile
from vision.warp import face_paper, warp_index

#: The margin searched round the box, as a share of the face's width (15 pixels on a 300-pixel face).
MARGIN: Final = 0.05
#: The scales tried: the two indices of one card print at one size, give or take the fit's slant.
SCALES: Final = (0.9, 0.95, 1.0, 1.05, 1.1)
#: Below this correlation the read index's print is not in the margin at all.
LEAST_MATCH: Final = 0.6
#: Paper kept round the read index's glyphs in the template (crop pixels).
PAD: Final = 3


def index_again(
    frame: MatLike, corners: NDArray[np.float32], profile: DeckProfile, read: MatLike, turned: bool,
    split: Glyphs | str | None = None,
) -> MatLike | None:
    """The unread index (of the face turned half a turn when ``turned``) warped again where the ``read``
    index crop's glyphs match best; None when they are not found, or found just where it was cut.
    ``split``: the ``read`` crop's :func:`vision.glyphs.split_index` (with the deck's glyph area and rank
    height) as its read made it; None: it is made here."""
    size, index = profile.spec.face, profile.spec.index
    glyphs = split
    if glyphs is None:
        glyphs = split_index(read, glyph_area(index.box, index.glyphs), index.rank_height)
    if isinstance(glyphs, str):
        return None
    margin = max(4, round(MARGIN * size[0]))
    x0, y0, x1, y1 = index.box
    gx0, gy0, gx1, gy1 = glyphs.box
    tx0, ty0 = max(0, gx0 - PAD), max(0, gy0 - PAD)
    template = cv2.cvtColor(read, cv2.COLOR_BGR2GRAY)[ty0 : gy1 + PAD, tx0 : gx1 + PAD]
    middle = (tx0 + template.shape[1] / 2, ty0 + template.shape[0] / 2)
    paper = face_paper(frame, corners, size)
    wide = (x0 - margin, y0 - margin, x1 + margin, y1 + margin)
    around = cv2.cvtColor(warp_index(frame, corners, size, wide, turned, paper), cv2.COLOR_BGR2GRAY)
    best, shift = LEAST_MATCH, (0, 0)
    for scale in SCALES:
        sized = cv2.resize(template, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        if sized.shape[0] > around.shape[0] or sized.shape[1] > around.shape[1]:
            continue
        _, score, _, (mx, my) = cv2.minMaxLoc(cv2.matchTemplate(around, sized, cv2.TM_CCOEFF_NORMED))
        if score > best:  # where the glyphs' middle was found, less where it lies in the read crop
            best = score
            shift = (round(mx + sized.shape[1] / 2 - margin - middle[0]),
                     round(my + sized.shape[0] / 2 - margin - middle[1]))
    if shift == (0, 0):
        return None
    dx, dy = shift
    return warp_index(frame, corners, size, (x0 + dx, y0 + dy, x1 + dx, y1 + dy), turned, paper)
