"""How a normalised glyph is compared with a deck's templates: correlation with each, and distance where
two of them clearly differ.

Why a module of its own: the reader (:mod:`vision.recognise`), the comparison at the index's own
sharpness (:mod:`vision.sharpness`) and enrolment's check of templates too alike (:mod:`vision.enroll`)
must measure alike, and the first two need it without importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import cv2
import numpy as np

from vision.profile import Glyph
from vision.stack import Stack

#: Two templates clearly differ where their ink is this far apart (templates hold ink in [0, 1]).
DIFFER: Final = 0.3


def correlations(glyph: Glyph, templates: Sequence[Glyph] | Stack) -> list[float]:
    """The glyph's normalised correlation coefficient with each template of its size (what
    :func:`cv2.matchTemplate`'s ``TM_CCOEFF_NORMED`` gives for one position), all in one product:
    one OpenCV call per template cost more in calling than in arithmetic. ``templates``: the
    templates, or their :class:`vision.stack.Stack` (a profile's, built once)."""
    if not isinstance(templates, Stack):
        templates = Stack.of(templates)
    if not templates.templates:
        return []
    g = np.asarray(glyph, np.float64).reshape(-1)
    g = g - g.sum() / g.size  # numpy's mean, to the bit, without its Python wrapper (3 us of 11)
    scale = np.sqrt(templates.energy * float(g @ g))
    rows = templates.rows
    scores: list[float] = np.divide(rows @ g, scale, out=np.zeros(len(rows)), where=scale > 0).tolist()
    return scores


def differ_mask(a: Glyph, b: Glyph) -> Glyph:
    """1 where templates ``a`` and ``b`` clearly differ (by more than :data:`DIFFER`), else 0."""
    mask: Glyph = (cv2.absdiff(a, b) > DIFFER).astype(np.uint8)
    return mask


def distances(glyph: Glyph, a: Glyph, b: Glyph) -> tuple[float, float] | None:
    """``glyph``'s L2 distances to ``a`` and to ``b`` over the pixels where the two clearly differ (the
    top right of a 6 and an 8, a club's lobes against a spade's point); None where they nowhere do."""
    differ = differ_mask(a, b)
    if not cv2.countNonZero(differ):
        return None
    return cv2.norm(glyph, a, cv2.NORM_L2, differ), cv2.norm(glyph, b, cv2.NORM_L2, differ)
