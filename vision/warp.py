"""The card's face cut from the frame by its fitted corners: whole (enrolment) or only the boxes read.

Why only boxes: a frame is read from its two index boxes (and the paper between two corners), a
tenth of the face; warping the whole 300 x 420 face was the largest single cost of a read, and on a
12-megapixel frame its sampling of the large image cost more than the rest of the read together.
A box is warped with the face's own transform shifted to the box's origin, and blanked as the whole
face is (:func:`blank_corners`), so its pixels are the whole face's at that place; only a box in a
shadow is blanked in its own paper's colour (:func:`warp_index`).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.levels import grey_percentile

Image = MatLike
Box = tuple[int, int, int, int]


def warp_box(frame: Image, corners: NDArray[np.float32], size: tuple[int, int], box: Box) -> Image:
    """The face ``size`` (w, h) that ``corners`` (frame pixels, clockwise from the face's top left) hold,
    its part ``box`` (x0, y0, x1, y1 in face pixels) only, corners and edges not yet blanked."""
    fw, fh = size
    x0, y0, x1, y1 = box
    right, bottom = fw - 1 - x0, fh - 1 - y0
    dst = np.array([(-x0, -y0), (right, -y0), (right, bottom), (-x0, bottom)], np.float32)
    m = cv2.getPerspectiveTransform(corners, dst)
    out: Image = cv2.warpPerspective(frame, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    return out


def paper_box(size: tuple[int, int]) -> Box:
    """Where the face's paper colour is taken: below the top edge's middle, clear of any index."""
    fw, _ = size
    r = corner_size(size)
    return fw // 2 - r, r, fw // 2 + r, 2 * r


def corner_size(size: tuple[int, int]) -> int:
    """The legs of the triangle blanked at each corner (the felt seen past the card's rounded corner)."""
    return max(3, size[0] // 16)


def blank_corners(
    img: Image, size: tuple[int, int], origin: tuple[int, int], paper: tuple[float, ...]
) -> None:
    """Paint the rounded corners (felt seen past the card's curve) and a thin band along the edges (the
    table a fitted side a pixel outside the paper lets in) of the face ``size`` in the card's own
    ``paper`` colour, so that a glyph printed near a corner or an edge is not joined to dark felt;
    ``img`` is the face's part whose top left is at ``origin`` (face pixels)."""
    fw, fh = size
    ox, oy = origin
    r = corner_size(size)
    for cx, cy, sx, sy in ((0, 0, 1, 1), (fw - 1, 0, -1, 1), (fw - 1, fh - 1, -1, -1), (0, fh - 1, 1, -1)):
        x, y = cx - ox, cy - oy
        tri = np.array([(x, y), (x + sx * r, y), (x, y + sy * r)], np.int32)
        cv2.fillConvexPoly(img, tri, paper)
    band = max(1, fw // 150)
    cv2.rectangle(img, (-ox, -oy), (fw - 1 - ox, fh - 1 - oy), paper, 2 * band - 1)


def warp_face(frame: Image, corners: NDArray[np.float32], size: tuple[int, int]) -> Image:
    """The whole face, blanked."""
    face = warp_box(frame, corners, size, (0, 0, *size))
    x0, y0, x1, y1 = paper_box(size)
    blank_corners(face, size, (0, 0), cv2.mean(face[y0:y1, x0:x1])[:3])
    return face


def warp_indices(frame: Image, corners: NDArray[np.float32], size: tuple[int, int], box: Box) -> list[Image]:
    """The index ``box`` of the face as the card lies, then of the face turned half a turn: the same
    pixels as cutting them from :func:`warp_face`'s face, but for a box in a shadow (:func:`warp_index`)."""
    paper = face_paper(frame, corners, size)
    return [warp_index(frame, corners, size, box, turned, paper) for turned in (False, True)]


def face_paper(frame: Image, corners: NDArray[np.float32], size: tuple[int, int]) -> tuple[float, ...]:
    """The face's paper colour (:func:`paper_box`), which blanks its corners and edges."""
    return tuple(cv2.mean(warp_box(frame, corners, size, paper_box(size)))[:3])


#: An index box whose own paper (the 90th percentile of its grey levels) is darker than this share of
#: the face's paper lies in a shadow, and is blanked in its own paper's colour (:func:`warp_index`).
SHADED: Final = 0.8


def warp_index(
    frame: Image, corners: NDArray[np.float32], size: tuple[int, int], box: Box, turned: bool,
    paper: tuple[float, ...],
) -> Image:
    """The face's ``box`` (face pixels), of the face turned half a turn when ``turned``, blanked.

    Blanked in the face's ``paper`` colour, unless the box lies in a shadow (:data:`SHADED`: a hand's,
    or a lamp's at one side): there the face's paper is brighter than anything in the box, the paint
    alone stands out as paper, Otsu's level falls between it and the rest, and the glyphs are lost
    with the shaded paper; so such a box is painted in its own paper's colour, the face's scaled to it.
    """
    fw, fh = size
    x0, y0, x1, y1 = box
    part = (fw - x1, fh - y1, fw - x0, fh - y0) if turned else box
    crop = warp_box(frame, corners, size, part)
    b, g, r = paper[:3]
    face = 0.114 * b + 0.587 * g + 0.299 * r
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    brighter = cv2.countNonZero(cv2.threshold(grey, SHADED * face, 255, cv2.THRESH_BINARY)[1])
    if grey.size - brighter > int(0.9 * (grey.size - 1)):  # else its 90th percentile is over the level
        here = grey_percentile(grey, None, 90)
        paper = tuple(v * here / face for v in paper) if here < SHADED * face else paper
    blank_corners(crop, size, (part[0], part[1]), paper)
    return cv2.rotate(crop, cv2.ROTATE_180) if turned else crop


def index_crops(face: Image, box: Box) -> list[Image]:
    """A whole warped face's index ``box`` as the card lies, then with the card turned half a turn."""
    x0, y0, x1, y1 = box
    turned = cv2.rotate(face, cv2.ROTATE_180)
    return [face[y0:y1, x0:x1], turned[y0:y1, x0:x1]]
