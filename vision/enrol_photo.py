"""The card face in one enrolment photograph: what the live detector accepts, a photograph that *is* the
face, and a card framed tight against the photograph's edge; else why not, with what to do about it.

Why enrolment is more lenient than the live camera: a house enrols from photographs it chose (a phone
photo per card, a scan, a photo cropped to the card), not from a camera that must refuse anything
doubtful. A window filled by paper is glare or a card held too close at the table (unknown, as
before), but a photograph filled by paper is the face itself. A card touching the photograph's edge
is still usable when both its indices are in the picture: the index is all enrolment takes from it.
A card seen nearer square than the live camera's rules allow is taken when the same enrolment's
whole cards are seen so (a deck laid out and photographed at once, then cropped). What could teach
the profile a wrong glyph is still refused: a card cut so much that its shape is guessed, or an index
outside the photograph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detect import CARD_ASPECT, DetectParams, find_card
from vision.profile import FACE_SIZE
from vision.recognise import Image
from vision.refusal import Refusal
from vision.warp import warp_box, warp_face
from vision.window import side_lengths

#: A card's fitted corner may lie this share of the card's width past the photograph's edge (the live
#: camera allows its rounding, ``DetectParams.corner_round``, 0.06): about 5 % of its length more.
EDGE_SHARE: Final = 0.11
#: The live detector's rules, but a card may nearly fill the photograph (cropped with a thin margin) and
#: cross its edge by :data:`EDGE_SHARE` (the cut corner's sides are fitted from their seen parts), and
#: the outline is found at the photograph's own size (up to the 1,600 px it is read at): at the live
#: camera's 320 px a card a third of a 640 px photograph's height is 80 px tall, its fitted corners a
#: few face pixels off, which let the table into the index box and moved a court card's thin rank out
#: of the deck's glyph area ("no suit under the rank").
ENROL_PARAMS: Final = DetectParams(max_area=0.99, corner_round=EDGE_SHARE, work_width=1600)
#: Width over height of the cards a photograph that is the face may be: poker (63:88) and bridge (57:88).
CARD_SHAPES: Final = (CARD_ASPECT, 57 / 88)
#: A photograph is the face when its proportions are within this share of a card's, either way up ...
FACE_TOLERANCE: Final = 0.06
#: ... and paper fills this share of its rim (the band along its edges, corners left out).
FACE_RIM_PAPER: Final = 0.8
#: The table added around a photograph, as a share of its longer side, so that a card lying against
#: its edge has an outline to find.
PAD_SHARE: Final = 0.04
#: A card whose whole side lies on the photograph's edge may hide a strip past it: its proportions must
#: match the deck's (the whole cards of the same enrolment) within this share.
FLUSH_TOLERANCE: Final = 0.03
#: ... and meet its neighbours within this many degrees of a right angle (a photograph taken from above).
FLUSH_SQUARE: Final = 5.0

#: A card refused only for its proportions is looked for again with this tolerance (up to square as
#: seen; a quarter turn that fits as well leaves its turn open and is still refused), and taken when a
#: whole card of the same enrolment is seen at its proportions (:func:`slant_fits`): cropped out of one
#: photograph of the deck laid out, the cards far from the camera's axis are seen near square, and
#: whether their sides' slight convergence makes them a card under a camera centred on the crop is
#: a pixel's chance (martinabeleda's 4C, 0.98 wide to tall, refused beside its row's 0.96 to 0.98).
SLANT_PARAMS: Final = replace(ENROL_PARAMS, aspect_tolerance=1 - CARD_ASPECT)

#: ... seen the same way up as such a card: their tops' directions within this many degrees (a deck laid
#: out square to the camera; a card a quarter turn off is 90 degrees off).
SLANT_TURN: Final = 20.0

RESHOOT_MARGIN: Final = "re-shoot it with a margin of table around the card"
#: An outline no plausible camera makes a card's: seen at a slant too steep, or cropped out of a wider
#: photograph (the crop loses where the camera's axis was, which undoes a slant: vision.tilt).
RESHOOT_SLANT: Final = (
    "re-shoot it from above, the camera square to the card, and do not crop it out of a wider photograph"
)

#: The card found has paper in shadow beyond a side, and a larger card about it by the paper near it
#: (:func:`vision.local_paper.lit_part`): it may be only the part of the card lit beyond a shadow's edge,
#: or the whole card on grey paper; the live reader settles that by reading the indices, which enrolment
#: is about to learn, so a face that may be the wrong one is refused rather than taught to the deck.
SHADE_EDGE: Final = (
    "the card found may be only its part lit beyond a shadow's edge (paper in shade lies beyond a side): "
    "re-shoot it in even light, no shadow across the card, on a plain darker background"
)


@dataclass(frozen=True)
class PhotoFace:
    """One photograph's face (None: unusable, see ``reason``) and how it was found."""

    face: Image | None
    reason: str = ""
    #: ``card`` (found as the live camera finds it), ``face`` (the photograph is the face), ``tight``
    #: (the card touches or crosses the photograph's edge) or ``slant`` (seen too near square for the
    #: live camera's rules, ``reason`` says how: :data:`SLANT_PARAMS`).
    how: str = "card"
    #: For ``tight``: 255 where the face lies inside the photograph (the index must).
    seen: Image | None = None
    #: For ``tight`` with a side flush on the photograph's edge: the outline's width over height, to be
    #: compared with the deck's once the whole cards are known.
    flush_aspect: float | None = None
    #: Width over height of the card as found (the photograph's own for ``face``): the deck's shape, that
    #: a card flush against the edge must have.
    aspect: float | None = None
    #: For ``card`` and ``slant``: the direction of the face's top side in the photograph, in degrees
    #: (0 to 180): which way up the card was taken, that a ``slant`` card must share (:func:`slant_fits`).
    top: float | None = None


def photo_face(photo: Image) -> PhotoFace:
    """The face in an enrolment ``photo``, warped to the profile's face size; else why, and what to do."""
    h, w = photo.shape[:2]
    ratio = min(w, h) / max(w, h, 1)
    # The card's own outline first: a phone's 3:4 photograph (0.75, within FACE_TOLERANCE of a poker
    # card's 0.72) of a card on a light table also has paper all round its rim, and taken whole as the
    # face it would teach the deck a face with table in it, its index shrunk and moved.
    det = find_card(photo, FACE_SIZE, ENROL_PARAMS)
    if det.face is not None and det.corners is not None:
        if det.whole_card() is not None:  # a larger card about it: maybe only its lit part
            return PhotoFace(None, SHADE_EDGE)
        seen = _seen(photo, det.corners, 0)
        how = "card" if seen is None else "tight"
        return PhotoFace(det.face, how=how, seen=seen, aspect=_aspect(det.corners), top=_top(det.corners))
    paper = paper_rim(photo)
    if paper and any(math.isclose(ratio, s, rel_tol=FACE_TOLERANCE) for s in CARD_SHAPES):
        rect = [(0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1)]
        corners = np.array(rect if h >= w else rect[1:] + rect[:1], np.float32)
        return PhotoFace(warp_face(photo, corners, FACE_SIZE), how="face", aspect=ratio)
    flush = _flush(photo)
    if flush is not None:
        return flush
    if paper:
        shapes = f"{min(CARD_SHAPES):.2f} to {max(CARD_SHAPES):.2f}"
        return PhotoFace(None, f"paper fills the photograph, but it is {ratio:.2f} wide to tall, not a "
                               f"card's ({shapes}): crop it to the card's edges, or {RESHOOT_MARGIN}")
    if det.status == "empty":
        return PhotoFace(None, f"no card found ({det.reason}): photograph the card on a darker background")
    if det.refusal is Refusal.CUT:
        return PhotoFace(None, f"the card runs off the photograph's edge: {RESHOOT_MARGIN}")
    if det.refusal is Refusal.PROPORTIONS:  # the live reader refuses the same outline (vision.tilt)
        why = (f"{det.reason} (a card is {CARD_ASPECT:.2f}), seen at a slant that no camera centred on this "
               f"photograph undoes: {RESHOOT_SLANT}")
        slant = find_card(photo, FACE_SIZE, SLANT_PARAMS)
        q = slant.corners
        if slant.face is not None and q is not None and slant.other is None and _seen(photo, q, 0) is None:
            return PhotoFace(slant.face, why, how="slant", aspect=_aspect(q), top=_top(q))
        return PhotoFace(None, why)
    return PhotoFace(None, f"no card found: {det.reason}: re-shoot it, one whole card on a plain darker "
                           "background")


def paper_rim(photo: Image) -> bool:
    """Whether paper lies all along ``photo``'s edges (its rounded corners left out): a scan or a
    photograph cropped to the card is the face itself, where a card lying on a table has table there."""
    h, w = photo.shape[:2]
    if min(w, h) < 40:
        return False
    grey = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)
    level = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0]
    band, skip = max(2, min(w, h) // 50), min(w, h) // 8
    rim = np.concatenate([
        grey[:band, skip : w - skip].ravel(), grey[h - band :, skip : w - skip].ravel(),
        grey[skip : h - skip, :band].ravel(), grey[skip : h - skip, w - band :].ravel(),
    ])
    return float(np.count_nonzero(rim > level)) / max(rim.size, 1) >= FACE_RIM_PAPER


def _aspect(q: NDArray[np.float32]) -> float:
    """Width over height of the outline ``q`` (ordered from a short side), as seen."""
    short, long = side_lengths(q)
    return short / max(long, 1e-6)


def _top(q: NDArray[np.float32]) -> float:
    """The direction of the outline ``q``'s first side (the face's top) in the photograph, 0 to 180
    degrees (either way along it: a half turn reads the same)."""
    dx, dy = (float(v) for v in q[1] - q[0])
    return math.degrees(math.atan2(dy, dx)) % 180


def _seen(photo: Image, corners: NDArray[np.float32], pad: int) -> Image | None:
    """255 where the face found at ``corners`` (in ``photo`` framed by ``pad`` pixels) lies inside the
    photograph; None when the whole card does."""
    h, w = photo.shape[:2]
    q = corners - pad
    if q.min() >= 0 and (q[:, 0] <= w - 1).all() and (q[:, 1] <= h - 1).all():
        return None
    inside = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    inside[pad : pad + h, pad : pad + w] = 255
    return warp_box(inside, corners, FACE_SIZE, (0, 0, *FACE_SIZE))


def _flush(photo: Image) -> PhotoFace | None:
    """A card lying against the photograph's edge, a whole side along it (the live camera does not
    guess a side it cannot see): the photograph is framed by its own table's colour so the card's
    outline closes, and the live detector finds it there. None when nothing is found that way, or the
    outline found crosses the edge (a cut corner, which :data:`ENROL_PARAMS` already judged)."""
    h, w = photo.shape[:2]
    pad = max(2, round(PAD_SHARE * max(w, h)))
    grey = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)
    level = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0]
    edge = np.concatenate([photo[0], photo[-1], photo[:, 0], photo[:, -1]])
    table = edge[cv2.cvtColor(edge[None], cv2.COLOR_BGR2GRAY)[0] <= level]
    if len(table) < len(edge) // 4:
        return None  # no table along the edges: nothing to frame the card with
    colour = [float(c) for c in np.median(table, axis=0)]
    framed = cv2.copyMakeBorder(photo, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=colour)
    det = find_card(framed, FACE_SIZE, ENROL_PARAMS)
    if det.face is None or det.corners is None:
        return None
    if det.whole_card() is not None:
        return PhotoFace(None, SHADE_EDGE)
    q = det.corners - pad
    long = max(float(np.linalg.norm(q[k] - q[(k + 1) % 4])) for k in range(4))
    near = 0.01 * long  # a side within this of the edge all along lies against it
    if q.min() < -near or (q[:, 0] > w - 1 + near).any() or (q[:, 1] > h - 1 + near).any():
        return None
    flush = [
        k for k in range(4) for axis, size in ((0, w), (1, h))
        if (q[[k, (k + 1) % 4], axis] <= near).all() or (q[[k, (k + 1) % 4], axis] >= size - 1 - near).all()
    ]
    if not flush or not all(_square(q, k) for k in flush):
        return None  # not flush, or a corner cut off askew: the outline's side there is the edge's chord
    aspect = _aspect(q)
    seen = _seen(photo, det.corners, pad)
    return PhotoFace(det.face, how="tight", seen=seen, flush_aspect=aspect, aspect=aspect)


def _square(q: NDArray[np.float32], k: int) -> bool:
    """Whether side ``k`` of ``q`` meets both its neighbours within :data:`FLUSH_SQUARE` degrees of a
    right angle, as a card's side does (a corner cut off askew leaves a slanted chord instead)."""
    def direction(i: int) -> NDArray[np.float32]:
        d: NDArray[np.float32] = q[(i + 1) % 4] - q[i]
        return d / np.float32(max(float(np.linalg.norm(d)), 1e-6))

    limit = math.sin(math.radians(FLUSH_SQUARE))
    return all(abs(float(np.dot(direction(k), direction(j)))) <= limit for j in ((k - 1) % 4, (k + 1) % 4))


def index_seen(found: PhotoFace, area: tuple[int, int, int, int]) -> str | None:
    """Why the deck's glyph ``area`` (and the same area half a turn round) of a tight card is not wholly
    inside its photograph, or None when it is (or the card was not tight)."""
    if found.seen is None:
        return None
    fw, fh = FACE_SIZE
    x0, y0, x1, y1 = area
    for a, b, c, d in ((x0, y0, x1, y1), (fw - x1, fh - y1, fw - x0, fh - y0)):
        if (found.seen[b:d, a:c] < 128).any():
            return f"one of the card's indices lies past the photograph's edge: {RESHOOT_MARGIN}"
    return None


def flush_fits(found: PhotoFace, deck_aspect: float | None) -> str | None:
    """Why a card flush against the photograph's edge cannot be trusted to be whole, or None: its
    proportions must be the deck's (from the same enrolment's other photographs), else a strip of it
    may lie past the edge and the face would be stretched."""
    if found.flush_aspect is None:
        return None
    if deck_aspect is None:
        return f"the card lies against the photograph's edge and no whole card shows the deck's shape: " \
               f"{RESHOOT_MARGIN}"
    if not math.isclose(found.flush_aspect, deck_aspect, rel_tol=FLUSH_TOLERANCE):
        return (f"the card lies against the photograph's edge and looks {found.flush_aspect:.2f} wide to "
                f"tall against the deck's {deck_aspect:.2f}: part of it is cut off; {RESHOOT_MARGIN}")
    return None


def slant_fits(found: PhotoFace, seen: list[PhotoFace]) -> str | None:
    """Why a card seen at a slant (``slant``) cannot be taken, or None: a whole card of the same
    enrolment found by the live camera's rules (``seen``) must be seen at its proportions and the same
    way up (its top within :data:`SLANT_TURN`), the deck photographed the same way; else its outline
    may be no card's, or its quarter turn wrong: seen near square, the side taken for the top (the
    shorter as seen) is the card's long side when its height is foreshortened a little more than
    square, and a deck with indices in all four corners then shows a sideways index there."""
    aspect, top = found.aspect or 0.0, found.top or 0.0

    def alike(other: PhotoFace) -> bool:
        if other.top is None:  # a scan: the photograph is the face, no card's outline to compare
            return False
        turned = abs((top - other.top + 90) % 180 - 90)
        return math.isclose(aspect, other.aspect or 0.0, rel_tol=FLUSH_TOLERANCE) and turned <= SLANT_TURN

    if found.how != "slant" or any(alike(other) for other in seen):
        return None
    return found.reason
