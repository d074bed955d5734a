"""A card's second index whose rank matches no template as it was cut, compared again once aligned.

Why: a card is read on both its indices, and the far one is often the weaker: the fitted outline is a
pixel or two off at that end, the camera's tilt foreshortens it a little more than the warp undoes,
or blur thins its strokes. Its rank glyph then lies a little shorter, narrower or further to one side
in the template's box than the deck's, and correlates at 0.6 to 0.8 with its own template where the
near index's rank gives 0.95 or more (the composed sets' 3C, 5C, 5D and 6D, the BlackjackCV composed
set's TH and KD: "only one index readable (rank unlike any enrolled)"). Normalising by the glyph's
centroid and the deck's one scale (:func:`vision.matching.normalise`) is right for a glyph cut where
it should be, and cannot mend one that is not.

So, for an index of a card whose other index has read, and only when its rank is unlike any template
(its best correlation as cut between :data:`FLOOR` and the deck's ``accept.min_score``), the rank glyph
is aligned to its best template as cut by OpenCV's enhanced-correlation alignment
(:func:`cv2.findTransformECC`, an affine map). The alignment must be one that error could make: each
axis scaled by at most :data:`MAX_SCALE`, a turn or shear of at most :data:`MAX_SHEAR`, the glyph's
middle moved by at most :data:`MAX_SHIFT` of the template's width; and the aligned glyph must then
correlate at least :data:`ALIGNED_SCORE` with it. Alignment thus confirms the rank that was best as
cut; it never turns one into another. Its rivals are given every chance: each template within
:data:`RIVAL` of the best as cut is aligned too and scored however far its alignment goes, the rest
keep their scores as cut, and the best must beat the best rival by the deck's margin and, where the
two differ, be the nearer by :data:`vision.matching.SPLIT_RATIO`, as any first read. The suit, its
colour and the rank's place are checked as before.

Why not for every index: alignment lifts every template's score, a wrong one's too. A glyph distorted
past the limits can look more like another rank than its own (the classic 5 squeezed by a tenth and
shifted 3 pixels correlates best with the 6 as cut, at 0.47, and aligns to the 6 at 0.87; the serif 8
squeezed by a fifth as well as the 6 as cut), so it is used only where a second, independent read
stands beside it: the two indices must still name one card. An index read alone (the looks for a
second card's index) is never aligned. What it costs: an alignment or two (0.3 to 1.5 ms each), only
on a frame whose second index failed this way. ``tests/test_vision_align.py`` holds it to never reading
one rank as another over 150 random distortions up to past the limits, of two decks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

import cv2
import numpy as np

from vision.compare import correlations
from vision.profile import Glyph

#: A rank whose best correlation as cut is below this is not looked at again: too little of a glyph
#: (a 5 squeezed to the limits below correlates 0.47 with the 6, and aligns to it at 0.87).
FLOOR: Final = 0.55
#: Once aligned, the rank must correlate at least this well with its template (a first read needs the
#: deck's ``accept.min_score``, 0.8 by default): an alignment makes any template fit better.
ALIGNED_SCORE: Final = 0.9
#: A template scoring within this of the best as cut is a rival: it must be aligned too.
RIVAL: Final = 0.1
#: The largest change of scale along either axis of an alignment kept (a share of the glyph's size) ...
MAX_SCALE: Final = 0.15
#: ... the largest turn or shear (the alignment's off-diagonal terms) ...
MAX_SHEAR: Final = 0.12
#: ... and the largest shift, a share of the template's width.
MAX_SHIFT: Final = 0.15
#: The alignment's iterations and the change of its correlation at which it stops.
ITERATIONS: Final = 30
EPSILON: Final = 1e-4


def aligned_to(glyph: Glyph, template: Glyph) -> tuple[Glyph, bool] | None:
    """``glyph`` mapped onto ``template`` by the affine alignment that best correlates them, and whether
    that alignment is within the limits above; None when it does not converge (a flat glyph)."""
    start = np.eye(2, 3, dtype=np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, ITERATIONS, EPSILON)
    everywhere = np.full(glyph.shape[:2], 255, np.uint8)  # no mask (typed: the stub's overload needs one)
    try:
        _, found = cv2.findTransformECC(template, glyph, start, cv2.MOTION_AFFINE, criteria, everywhere, 3)
    except cv2.error:
        return None
    warp = np.asarray(found, np.float32)
    linear = warp[:, :2]
    stretch = np.linalg.svd(linear, compute_uv=False)
    h, w = template.shape[:2]
    centre = np.array([(w - 1) / 2, (h - 1) / 2], np.float32)  # a shift is how far the middle moves
    within = not (stretch.max() > 1 + MAX_SCALE or stretch.min() < 1 - MAX_SCALE
                  or max(abs(float(linear[0, 1])), abs(float(linear[1, 0]))) > MAX_SHEAR
                  or float(np.abs(linear @ centre + warp[:, 2] - centre).max()) > MAX_SHIFT * w)
    out: Glyph = cv2.warpAffine(glyph, warp, (w, h), flags=cv2.INTER_LINEAR + cv2.WARP_INVERSE_MAP)
    return out, within


class Aligned(NamedTuple):
    """The best template once aligned and its runner-up: names, scores and the glyph as compared with
    the best (aligned to it)."""

    name: str
    score: float
    runner: str
    runner_score: float
    glyph: Glyph


def realign(glyph: Glyph, templates: Mapping[str, Glyph], scores: Mapping[str, float]) -> Aligned | None:
    """The best template as cut (``scores``: the glyph's correlations, -1 for a template of another
    shape), once the glyph is aligned to it within the limits, against its runner-up: each template
    within :data:`RIVAL` of the best as cut is aligned too, and scored however far its alignment
    goes (a rival is given every chance: the classic 8 squeezed by a fifth scores as well as the 6 as
    cut, and is its own template only past the limits), the rest by their scores as cut. None when
    the best cannot be aligned within the limits or then scores under :data:`ALIGNED_SCORE`."""
    first = max(templates, key=lambda name: scores[name])
    if scores[first] <= -1.0:
        return None  # no template of its shape
    # The best first: where it fails (most such frames), its rivals need no alignment (0.3 ms or more each).
    moved = aligned_to(glyph, templates[first])
    if moved is None or not moved[1]:
        return None  # the best as cut is not this glyph a little off
    aligned = moved[0]
    best = correlations(aligned, [templates[first]])[0]
    if best < ALIGNED_SCORE:
        return None
    found: dict[str, float] = {}
    for name, template in templates.items():
        if name == first or scores[name] < scores[first] - RIVAL or scores[name] <= -1.0:
            continue
        rival = aligned_to(glyph, template)
        if rival is not None:
            found[name] = correlations(rival[0], [template])[0]
    rivals = sorted(((found.get(n, scores[n]), n) for n in templates if n != first), reverse=True)
    return Aligned(first, best, rivals[0][1], rivals[0][0], aligned)
