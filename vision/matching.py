"""How one index glyph is put in its template's box and matched against the deck's templates of its kind.

Why a module of its own: the reader (:mod:`vision.recognise`), enrolment (:mod:`vision.enroll`) and the
comparison at the index's own sharpness and tone (:mod:`vision.sharpness`) must normalise and judge a glyph
alike: one scale per deck, correlation with every template, and the best clearly the one only when it beats
the runner-up by the deck's ratio or where the two differ (:class:`Match`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike

from vision.align import realign
from vision.compare import correlations, distances
from vision.profile import DeckProfile, Glyph

Image = MatLike

#: A glyph whose width/height is off the template's by more than this factor is not that glyph.
ASPECT_FACTOR: Final = 1.35

#: The deck's enrolled glyph height fills this share of a template box's height (room for blur and
#: a slightly larger card; a wider glyph, such as ``10``, is cut at the box's sides, the same way in
#: the templates as in the frames).
RANK_FILL: Final = 0.85
SUIT_FILL: Final = 0.8


def normalise(glyph: Image, size: tuple[int, int], height: float, fill: float) -> Glyph:
    """A glyph's ink placed in a template's box, as floats in [0, 1]: centred on its ink's centroid and
    scaled by one factor for the whole deck (``fill`` of the box's height over the enrolled ``height``).

    Why not fit its bounding box: the box of a blurred 23-pixel glyph is a whole pixel wider or
    narrower from one frame to the next, which rescaled the glyph by 4 % and shifted its bottom by
    1.5 pixels -- enough to make the top of a serif 8 correlate with a 6 better than with an 8. The
    warped face already has a fixed size, so every glyph of a deck needs the same scale, and the
    centroid (:func:`cv2.moments`) is sub-pixel and steady under blur. Keeping the proportions
    matters too: stretched to fill a square, a diamond and a club are two blobs.
    """
    w, h = size
    ink = np.asarray(glyph, np.float32) / 255.0
    m = cv2.moments(ink)
    if m["m00"] <= 0:
        return np.zeros((h, w), np.float32)
    f = fill * h / height
    cx, cy = m["m10"] / m["m00"], m["m01"] / m["m00"]
    warp = np.array([[f, 0, w / 2 - f * cx], [0, f, h / 2 - f * cy]], np.float32)
    out: Glyph = cv2.warpAffine(ink, warp, (w, h), flags=cv2.INTER_LINEAR)
    return out


def aspect_of(glyph: Image) -> float:
    """A cropped glyph's width over its height."""
    return float(glyph.shape[1] / max(glyph.shape[0], 1))


#: Why a glyph whose best correlation is under the deck's least score is not read (a reason's words).
UNLIKE: Final = "unlike any enrolled"


@dataclass(frozen=True)
class Match:
    """A glyph against a set of templates: the best two and whether the best is clearly the one."""

    name: str
    score: float
    runner: str
    runner_score: float
    #: Where the best two templates differ, the glyph's distance to the best over that to the runner-up.
    split: float
    #: Why the match is no read whatever its margins: the comparison at the index's own sharpness and
    #: tone says otherwise (:func:`vision.sharpness.at_sharpness`).
    doubt: str | None = None

    def why_not(self, what: str, min_score: float, max_ratio: float) -> str | None:
        """None when the match is a read; else the reason, for the log and the ``unknown`` reading."""
        if self.score < min_score:
            return f"{what} {UNLIKE} (best {self.name} {self.score:.2f})"
        if self.doubt is not None:
            return f"{what} {self.name} {self.doubt}"
        if (1 - self.score) > max_ratio * (1 - self.runner_score) and self.split > SPLIT_RATIO:
            return f"{what} ambiguous ({self.name} {self.score:.2f}, {self.runner} {self.runner_score:.2f})"
        return None


#: Where two templates differ (6 and 8: the top right; a club's lobes against a spade's point), the
#: glyph must be this much nearer the best. Suits too: a wider limit (0.75) read the composed sets'
#: soft clubs, but a club blurred harder (an out-of-focus camera) moves across it towards the spade,
#: where the spade is also its best whole-glyph match and both indices agree: a wrong card. Soft
#: clubs are compared at the index's own sharpness instead (:func:`vision.sharpness.at_sharpness`).
SPLIT_RATIO: Final = 0.5


def match(glyph: Glyph, profile: DeckProfile, kind: str, aspect: float, every: list[float] | None = None,
          ) -> Match:
    """Correlate the normalised ``glyph`` (its ink was ``aspect`` wide to tall) with every ``kind``
    (``rank`` or ``suit``) template of ``profile``; templates of other proportions score -1.
    ``every``: the glyph's correlations with all of them, in the profile's order, when known."""
    templates = profile.ranks if kind == "rank" else profile.suits
    found = scores_of(glyph, profile, kind, aspect, every)
    scores = sorted(((found[name], name) for name in templates), reverse=True)
    (best, name), (second, runner) = scores[0], scores[1]
    return _match(glyph, templates, name, best, runner, second)


def scores_of(glyph: Glyph, profile: DeckProfile, kind: str, aspect: float, every: list[float] | None = None,
              ) -> dict[str, float]:
    """:func:`match`'s correlation of ``glyph`` with each template by name (-1: another shape)."""
    templates = profile.ranks if kind == "rank" else profile.suits
    aspects = profile.aspects_of(kind)
    fits = [
        name for name in templates
        if (want := aspects.get(name)) is None or want / ASPECT_FACTOR <= aspect <= want * ASPECT_FACTOR
    ]
    known = every if every is not None and len(fits) == len(templates) else None
    found = dict(zip(fits, known or correlations(glyph, profile.stack(kind, fits)), strict=True))
    return {name: found.get(name, -1.0) for name in templates}


def _match(glyph: Glyph, templates: Mapping[str, Glyph], name: str, best: float, runner: str, second: float,
           ) -> Match:
    apart = distances(glyph, templates[name], templates[runner])
    split = apart[0] / apart[1] if apart is not None and apart[1] > 0 else 1.0
    return Match(name, best, runner, second, split)


def realigned(glyph: Glyph, profile: DeckProfile, aspect: float) -> Match | None:
    """The rank ``glyph`` compared again once aligned to each template (:func:`vision.align.realign`),
    the split measured on the glyph as aligned to the best; None where alignment cannot settle it."""
    found = realign(glyph, profile.ranks, scores_of(glyph, profile, "rank", aspect))
    if found is None:
        return None
    return _match(found.glyph, profile.ranks, found.name, found.score, found.runner, found.runner_score)
