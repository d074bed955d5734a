"""Find the one card in the scan window and warp it flat, upright, to a fixed size.

Why this shape: the scan window is dark felt and a card face is the brightest large thing in it, so
Otsu's threshold on the blurred grey frame separates them under any overall exposure; the card's outline
is then one external contour that :func:`cv2.approxPolyDP` reduces to four corners, and
:func:`cv2.getPerspectiveTransform` undoes the camera's angle. Anything that is not exactly one clean
card-shaped quadrilateral (two cards, a hand reaching over the card, a card half out of the window) is
refused here with a reason, so the recogniser never guesses from a partial view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

from vision.covered import COVERED, covered
from vision.levels import grey_percentile, shrink, shrink_grey
from vision.local_paper import LOCAL, lit_part, local_card
from vision.mend import mend
from vision.refusal import Refusal
from vision.rim import GLARE, edge_map, sharp_outline
from vision.sides import Region, fit_quads, fitted_corners, traced_sides
from vision.tilt import Quad, card_turns
from vision.warp import warp_face
from vision.window import Bounds, ScanWindow, bounds, short_side_first, side_lengths, widest_side

Image = MatLike

#: Width / height of a poker-size card (63 x 88 mm); bridge size is 57 x 88 (0.65).
CARD_ASPECT: Final = 63 / 88


@dataclass(frozen=True)
class DetectParams:
    """Geometry limits of a card in the window, as fractions of the frame."""

    min_area: float = 0.04
    max_area: float = 0.85
    #: Accepted width/height of the outline against the card's own.
    aspect_tolerance: float = 0.18
    #: Contour area over its 4-corner polygon's area: a notch (a finger, a second card) lowers it.
    min_fill: float = 0.96
    #: Working width of the frame: larger frames are shrunk first (the outline needs no more).
    work_width: int = 320
    #: A card's rounded corner, as a share of its width: a fitted corner this far past the window's
    #: edge is still a whole card (only its rounding grazes the edge).
    corner_round: float = 0.06
    #: The camera's focal length over the frame's width (1.0: a 53-degree lens), assumed first where a
    #: tilted card's outline cannot tell it (:mod:`vision.tilt` then tries a range of cameras).
    focal: float = 1.0
    #: Canny's thresholds for the second look, on the blurred grey working frame.
    edge_low: int = 30
    edge_high: int = 90

    @property
    def area(self) -> tuple[float, float]:
        """The least and greatest card area, shares of the frame."""
        return self.min_area, self.max_area


@dataclass(frozen=True)
class Detection:
    """The outcome of looking for a card: its warped face, or why there is none."""

    #: ``card`` (one clean card), ``empty`` (nothing card-sized), or ``refused`` (something, not one card).
    status: str
    reason: str = ""
    #: What a refusal (or ``empty``) was about: decisions that follow it read this, never ``reason``'s words.
    refusal: Refusal | None = None
    face: Image | None = None
    corners: NDArray[np.float32] | None = None
    #: The corners a quarter turn on, when foreshortening leaves the turn open (read if the first fails).
    other: NDArray[np.float32] | None = None
    #: Recovered from its sides by the joined-card search: a corner was not seen (see :func:`_joined`).
    joined: bool = False
    #: For a card the first look found: a call giving the whole card's corners (frame pixels) if that card
    #: may be only its part lit beyond a shadow's edge, else None; asked only by a reader that failed on it.
    whole: Callable[[], NDArray[np.float32] | None] | None = field(default=None, repr=False, compare=False)

    def whole_card(self) -> NDArray[np.float32] | None:
        """The whole card's corners if the card found may be only its lit part (``whole``), else None."""
        return None if self.whole is None else self.whole()


#: A frame's least side at the working width: a thinner strip holds no card and shrinks to nothing.
MIN_SIDE: Final = 2


@dataclass(frozen=True)
class _Outline:
    """One bright region: ``card`` (a clean card outline wholly in the window), ``edge`` (it reaches the
    window's edge: a card cut by it, a vignette, glare, a neighbour) or ``odd`` (not one clean card)."""

    kind: str
    reason: str = ""
    refusal: Refusal | None = None  # what the reason is about, for a region that is no card
    quad: NDArray[np.float32] | None = None
    contour: NDArray[np.int32] | None = None
    joinable: bool = False  # at the window's edge, not a whole card: worth searching for a joined card
    other: NDArray[np.float32] | None = None  # the card's other possible quarter turn
    joined: bool = False  # recovered from its sides' runs: a corner not seen
    deferred: bool = False  # wholly inside (a card or odd), its sides not yet fitted: see _Looks._second_look


#: Why a region reaching the window's edge holds no whole card (:attr:`Refusal.CUT`).
NOT_INSIDE: Final = "the card is not wholly inside the window"


#: What the joined-card search may report in place of the looks' own refusal: a card under another and
#: two objects (two cards found in one region, or a card and another object apart from it) are final.
JOIN_FINAL: Final = frozenset({Refusal.COVERED, Refusal.SEPARATE})


def _cut(contour: NDArray[np.int32]) -> _Outline:
    """A region at the window's edge that is not a whole card: searched for a card joined to it."""
    return _Outline("edge", NOT_INSIDE, Refusal.CUT, contour=contour, joinable=True)


def _apart(n: int, kind: str = "refused") -> _Outline:
    """``n`` separate objects in the window, refused: one card at a time."""
    return _Outline(kind, f"{n} separate objects in the window (one card at a time)", Refusal.SEPARATE)


def _outline(contour: NDArray[np.int32], win: Bounds, params: DetectParams, defer: bool = False) -> _Outline:
    w, h = win.size
    pts = contour.reshape(-1, 2)
    on_edge = int(np.count_nonzero(win.rim[pts[:, 1], pts[:, 0]]))
    kind = "edge" if on_edge else "odd"
    area = cv2.contourArea(contour)
    if area > params.max_area * w * h:
        return _Outline(kind, "the bright area fills the window (glare or a card too close)", Refusal.FILLS)
    quad = cv2.approxPolyDP(contour, 0.03 * cv2.arcLength(contour, True), True)
    if len(quad) != 4 or not cv2.isContourConvex(quad):
        odd = f"the outline has {len(quad)} corners, not a single card's 4"
        return _cut(contour) if on_edge else _Outline(kind, odd, Refusal.SHAPE, contour=contour)
    fill = area / max(cv2.contourArea(quad), 1.0)
    if fill < params.min_fill:
        odd = f"the outline is notched ({fill:.2f} of its corners' area)"
        return _cut(contour) if on_edge else _Outline(kind, odd, Refusal.SHAPE, contour=contour)
    if on_edge > 2 * params.corner_round * widest_side(win.size, params.corner_round) + 1:
        # More of it on the rim than any whole card's rounded corners can put there, whatever its fitted
        # corners: cut by the window, as below, without fitting its sides (the worst frames' largest cost).
        return _cut(contour)
    if defer and not on_edge:  # a card or odd, whatever its fitted sides: their fit put off (_second_look)
        return _Outline("odd", contour=contour, deferred=True)
    q = short_side_first(fitted_corners(np.asarray(pts, np.int32), np.asarray(quad, np.int32).reshape(4, 2)))
    if not traced_sides(q, pts, (h, w)):  # a corner on a joined patch of table: search it as joined
        return _Outline(kind, "the outline's sides leave the bright region", Refusal.SHAPE, contour=contour,
                        joinable=True)
    lengths = side_lengths(q)
    if on_edge:
        # Cut by the window is decided from the fitted corners: a card whose rounded corner only grazes
        # its rim is whole (its fitted corner lies just past the rim, by less than the rounding).
        margin = params.corner_round * lengths[0]
        if not win.within(q, margin) or on_edge > 2 * margin:
            return _cut(contour)
    if turns := _card_turns(q, win, params, lengths):  # seen at a slant, the short side may look the longer
        return _Outline("card", quad=turns[0], contour=contour, other=next(iter(turns[1:]), None))
    across, along = win.sides(q)
    where = " on the calibrated table" if win.calibrated else ""
    return _Outline(kind, f"the outline's sides are {across / max(along, 1e-6):.2f} wide to tall{where}, "
                          "not a card's", Refusal.PROPORTIONS, contour=contour)


def _joined(contour: NDArray[np.int32], win: Bounds, params: DetectParams, grey: Image) -> _Outline:
    """A region reaching the window's edge that is not itself a whole card: a card joined to a glare,
    a vignette or a neighbour is recovered from its sides' straight runs (:mod:`vision.sides`); two
    cards found there are refused, inked or not (a plain pale back is a card: :func:`_choose`), and so
    is one under another card's edge (:mod:`vision.covered`); none, and the region is set aside."""

    def accept(q: NDArray[np.float32]) -> NDArray[np.float32] | None:
        q = short_side_first(q)
        seen, (w, h) = side_lengths(q), win.size
        if cv2.contourArea(q) < params.min_area * w * h or not win.within(q, params.corner_round * seen[0]):
            return None
        return next(iter(_card_turns(q, win, params, seen)), None)

    region = Region.of(contour, win.rim)
    quads = fit_quads(region, accept)
    if len(quads) > 1:
        return _apart(len(quads), "odd")
    if quads and covered(quads[0], region, grey):
        return _Outline("odd", COVERED, Refusal.COVERED)
    if quads:
        return _Outline("card", quad=quads[0], contour=contour, joined=True)
    return _Outline("edge", NOT_INSIDE, Refusal.CUT)


def _card_turns(q: Quad, win: Bounds, params: DetectParams, seen: tuple[float, float]) -> list[Quad]:
    return card_turns(q, win, CARD_ASPECT, params.aspect_tolerance, params.focal, seen)


def _outlines(binary: Image, params: DetectParams, win: Bounds, defer: bool = False) -> list[_Outline]:
    """The card-sized bright regions of ``binary`` in the window, each classified (``defer``: _outline)."""
    h, w = binary.shape[:2]
    if win.inside is not None:
        binary = cv2.bitwise_and(binary, win.inside)
    contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return [_outline(np.asarray(c, np.int32), win, params, defer) for c in contours
            if cv2.contourArea(c) >= params.min_area * w * h]


def _choose(found: list[_Outline]) -> _Outline | None:
    """The one card among the regions; a refusal when the window holds more or other things; None when
    only things at the window's edge were found (worth a second look with the edges).

    Every region wholly inside counts, inked or not: a plain pale back, a card washed out by glare or a
    back partly under the dealer's hand shows no ink, and is still a second card."""
    cards = [o for o in found if o.kind == "card"]
    inside = cards + [o for o in found if o.kind == "odd"]
    if len(inside) > 1:
        return _apart(len(inside))
    if len(cards) == 1:
        return cards[0]
    if inside:  # one odd region: its contour kept for the look by local paper (vision.local_paper)
        return _Outline("refused", inside[0].reason, inside[0].refusal, contour=inside[0].contour)
    return None


class _Looks:
    """The looks at one working frame, each mask's regions classified once: the pass that searches the
    regions at the window's edge for a joined card (``join``) reuses the plain pass's masks and regions."""

    def __init__(self, grey: Image, binary: Image, level: float, found: list[_Outline], params: DetectParams,
                 win: Bounds) -> None:
        self.grey, self.binary, self.level, self.params, self.win = grey, binary, level, params, win
        self._seen: dict[object, list[_Outline]] = {"first": found}
        self._top: float | None = None
        self._edges: NDArray[np.uint8] | None = None
        self._joins: dict[bytes, _Outline] = {}

    def _found(self, key: object, mask: Callable[[], Image], join: bool, defer: bool) -> list[_Outline]:
        seen = self._seen.get(key)
        if seen is None:
            seen = self._seen[key] = _outlines(mask(), self.params, self.win, defer)
        if not defer and any(o.deferred for o in seen):  # their sides fitted now (see _second_look)
            seen = self._seen[key] = [_outline(o.contour, self.win, self.params) if o.deferred and
                                      o.contour is not None else o for o in seen]
        return self._join(seen) if join else seen

    def _join(self, found: list[_Outline]) -> list[_Outline]:
        return [self._joined(o.contour) if o.joinable and o.contour is not None else o for o in found]

    def _joined(self, contour: NDArray[np.int32]) -> _Outline:
        """:func:`_joined`, once per region: two looks often part the same region from the rest."""
        key = contour.tobytes()
        if key not in self._joins:
            self._joins[key] = _joined(contour, self.win, self.params, self.grey)
        return self._joins[key]

    def another_inside(self, card: _Outline) -> bool:
        """Whether a look before the joined-card search saw a region wholly inside the window apart from
        ``card`` (the region's centre outside its corners): a second object. Two prop cards side by side
        made one region at the edge in the first look, whose sides gave the right-hand card alone, while
        the look cut along the edges saw both cards (a public photograph, 2026-12-05)."""
        if card.quad is None:
            return False
        outline = card.quad.reshape(-1, 1, 2)
        for regions in self._seen.values():
            for o in regions:
                m = cv2.moments(o.contour) if o.kind in ("card", "odd") and o.contour is not None else None
                if m and m["m00"] > 0 and cv2.pointPolygonTest(
                        outline, (m["m10"] / m["m00"], m["m01"] / m["m00"]), False) < 0:
                    return True
        return False

    def second_card_at_edge(self, chosen: _Outline) -> bool:
        """Whether a region of the first look reaching the window's edge holds a whole card other than
        ``chosen`` (a second card joined to the edge by a streak of light or a sleeve): two cards refuse
        the window however they are joined, so such regions are searched even once a card is found."""
        if chosen.quad is None:
            return False
        mine = None if chosen.contour is None else chosen.contour.tobytes()
        for o in self._seen["first"]:
            if not o.joinable or o.contour is None or o.contour.tobytes() == mine:
                continue
            there = self._joined(o.contour)
            if there.kind == "odd" or (there.quad is not None and cv2.pointPolygonTest(
                    chosen.quad.reshape(-1, 1, 2), tuple(map(float, there.quad.mean(axis=0))), False) < 0):
                return True
        return False

    def choose(self, join: bool) -> _Outline | None:
        """The one card among the first look's regions, else the second look's, else the brighter
        looks'; with ``join``, regions reaching the window's edge are searched for a joined card."""
        chosen = _choose(self._found("first", lambda: self.binary, join, False))
        return chosen or self._second_look(join) or self._brighter_looks(join)  # (an _Outline is never false)

    def edges(self) -> NDArray[np.uint8]:
        """The frame's strong edges (:func:`vision.rim.edge_map`), once."""
        if self._edges is None:
            self._edges = edge_map(self.grey, self.params.edge_low, self.params.edge_high)
        return self._edges

    def _second_look(self, join: bool) -> _Outline | None:
        """The bright mask cut along the strong edges; a card found there is grown back to the bright
        pixels within the cut's width, so its outline is where the first look would have put it. Before
        that, a region the cut notched at an index is mended (:mod:`vision.mend`), whether the notch
        refused its outline or, too shallow to refuse it, only pulled its fitted sides into the face."""
        kernel = np.ones((3, 3), np.uint8)
        params, binary = self.params, self.binary

        cut: Callable[[], Image] = lambda: cv2.bitwise_and(binary, cv2.bitwise_not(self.edges()))  # noqa: E731
        classify: Callable[..., _Outline] = lambda c: _outline(c, self.win, params)  # noqa: E731
        # A region alone inside the window (the rest at its edge): mend reads only its contour and that it is
        # inside, so its sides are fitted (the slowest frames' largest cost) only if no card is mended there.
        found = self._found("cut", cut, join, not join)
        alone = sum(o.kind != "edge" for o in found) == 1 and any(o.deferred for o in found)
        chosen = mend(found, binary, self.edges(), classify) if alone else None
        if chosen is None:
            found = self._found("cut", cut, join, False)
            chosen = _choose(found)
            if chosen is not None and not alone:  # a card or a refusal: notched by the cut at an index?
                chosen = mend(found, binary, self.edges(), classify) or chosen
        if chosen is None or chosen.kind != "card" or chosen.contour is None:
            return chosen
        region = np.zeros_like(binary)
        cv2.drawContours(region, [chosen.contour], -1, 255, -1)
        grown = _outlines(cv2.bitwise_and(cv2.dilate(region, kernel, iterations=2), binary), params, self.win)
        again = _choose(self._join(grown) if join else grown)
        return again if again is not None and again.kind == "card" else chosen

    def _brighter_looks(self, join: bool) -> _Outline | None:
        """The mask at higher thresholds, between Otsu's and the brightest paper: a vignette or the halo
        of a glare is dimmer than the card's paper, so at a higher level it parts from the card."""
        grey, win, level = self.grey, self.win, self.level
        glare: _Outline | None = None
        for share in (0.35, 0.6):
            def mask(share: float = share) -> Image:
                if self._top is None:  # the brightest paper, once for both levels and both passes
                    self._top = grey_percentile(grey, win.inside, 99)
                return cv2.threshold(grey, level + share * (self._top - level), 255, cv2.THRESH_BINARY)[1]

            chosen = _choose(self._found(share, mask, join, False))
            quad = None if chosen is None else chosen.quad
            if quad is not None and not sharp_outline(quad, self.edges()):
                glare = _Outline("odd", GLARE, Refusal.GLARE)
                continue
            if chosen is not None:
                return chosen
        return glare


def find_card(
    frame: Image, size: tuple[int, int], params: DetectParams = DetectParams(),
    window: ScanWindow | None = None, warp: bool = True,
) -> Detection:
    """The card face in ``frame`` warped to ``size`` (w, h), upright or upside down; else why not.
    Without ``warp``, only the card's corners (the reader warps the boxes it reads, :mod:`vision.warp`).

    The paper is the bright part of the frame (Otsu's threshold on the blurred grey frame); every card-sized
    bright region is classified (:class:`_Outline`), and those reaching the window's edge without a whole
    card's outline (a vignette, glare, a neighbouring card half out of the window) are set aside; when only
    such are found, the bright mask is cut along the frame's strong edges (Canny: a card's outline is one, a
    glare's rim is not) and looked at again. An odd outline alone, or one too short, may be a card's lit part:
    its paper is then found against the paper near it (:mod:`vision.local_paper`), as ``whole`` does for the
    first look's card a reader fails on. With a scan ``window`` (:mod:`vision.window`), only what lies in
    its outline is looked at, it cuts like the frame's edge, and a calibrated plane checks the proportions.
    """
    h, w = frame.shape[:2]
    if min(h, w) * min(1.0, params.work_width / w) < MIN_SIDE:
        return Detection("refused", f"a {w} x {h} frame is too narrow to hold a card", Refusal.NARROW)
    small, scale = shrink_grey(frame, params.work_width)
    grey = cv2.GaussianBlur(small, (5, 5), 0)
    win = bounds(window, (grey.shape[1], grey.shape[0]))
    seen = grey if win.inside is None else grey[win.inside > 0].reshape(1, -1)
    if seen.size == 0 or float(seen.max()) - float(seen.min()) < 60:
        return Detection("empty", "no contrast in the window", Refusal.EMPTY)
    level = cv2.threshold(seen, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0]
    binary = cv2.threshold(grey, level, 255, cv2.THRESH_BINARY)[1]
    found = _outlines(binary, params, win)
    if not found:
        return Detection("empty", "nothing card-sized", Refusal.EMPTY)
    looks = _Looks(grey, binary, level, found, params, win)
    chosen = first = looks.choose(join=False)  # a card here may be only its lit part (whole, below)
    pick: Callable[[Image], _Outline | None] = lambda m: _choose(_outlines(m, params, win))  # noqa: E731
    if chosen is not None and chosen.refusal in LOCAL and chosen.contour is not None:  # in a shadow?
        chosen = local_card(chosen.contour, grey, looks.edges(), pick) or chosen
    if chosen is None or chosen.kind != "card":
        joined = looks.choose(join=True)
        if joined is not None and joined.kind == "card" and looks.another_inside(joined):
            joined = _apart(2)
        if joined is not None and (joined.kind == "card" or joined.refusal in JOIN_FINAL):
            chosen = joined
    chosen = chosen if chosen is not None else next(o for o in found if o.kind == "edge")  # why: no card
    if chosen.kind == "card" and looks.second_card_at_edge(chosen):
        chosen = _apart(2)
    if chosen.kind != "card" or chosen.quad is None:
        return Detection("refused", chosen.reason, chosen.refusal)
    q, other = chosen.quad / scale, None if chosen.other is None else chosen.other / scale
    face = warp_face(frame, q, size) if warp else None
    colour = lambda: shrink(frame, params.work_width)[0]  # noqa: E731 (only for a card that does not read)
    whole = lit_part(chosen, colour, grey, looks.edges, pick, scale) if chosen is first else None
    return Detection("card", face=face, corners=q, other=other, joined=chosen.joined, whole=whole)
