"""Synthetic card faces and backs, drawn with OpenCV only, in several designs (what vision.synth photographs).

Rank text in Hershey fonts, suit shapes as filled polygons and circles, in
*designs* that differ in font, index size and place (``jumbo``: a casino's
large index), suit proportions, centre art and left-handed indices, so the
recogniser is tested on artwork it never saw. :mod:`vision.synth` photographs these faces badly.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import cache
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike

from controller.cards import RANKS, Card

Image = MatLike

#: The face as drawn, in pixels (63 x 88 mm poker size).
FACE_W: Final = 252
FACE_H: Final = 352

_RANK_TEXT: Final = {r: ("10" if r == "T" else r) for r in RANKS}
RED: Final = frozenset("HD")


@dataclass(frozen=True)
class Design:
    """One deck's look: what the house enrols, and what changes from one manufacturer to another."""

    name: str
    font: int
    font_scale: float
    thickness: int
    #: Top-left of the rank text's box, in face pixels.
    index_x: int
    index_y: int
    suit_size: int
    #: Suit shape proportions (1.0 = the plain shape).
    suit_stretch: float
    red: tuple[int, int, int]
    black: tuple[int, int, int]
    #: "pips" (a grid of suit shapes), "big" (one large suit), "frame" (a rectangle and a large suit).
    centre: str
    #: Indices at top-left and bottom-right (False), or top-right and bottom-left (True).
    left_handed: bool = False


DESIGNS: Final[dict[str, Design]] = {
    d.name: d
    for d in (
        Design(
            "classic", cv2.FONT_HERSHEY_SIMPLEX, 1.05, 3, 10, 12, 26, 1.0, (30, 30, 200), (25, 25, 25), "pips"
        ),
        Design("bold", cv2.FONT_HERSHEY_DUPLEX, 1.15, 4, 9, 10, 28, 0.9, (40, 20, 180), (10, 10, 10), "big"),
        Design(
            "serif", cv2.FONT_HERSHEY_TRIPLEX, 1.0, 3, 11, 14, 24, 1.1, (20, 40, 210), (40, 30, 30), "frame"
        ),
        Design(
            "lefty",
            cv2.FONT_HERSHEY_COMPLEX,
            1.0,
            3,
            10,
            12,
            26,
            1.0,
            (30, 30, 190),
            (20, 20, 20),
            "big",
            left_handed=True,
        ),
        # A large ("jumbo", casino) index: the suit reaches 40 % down the face, past the top 36 % where
        # enrolment looked for every deck's index before (:mod:`vision.enrol_window`).
        Design(
            "jumbo", cv2.FONT_HERSHEY_SIMPLEX, 1.5, 4, 8, 52, 44, 1.0, (30, 30, 200), (25, 25, 25), "pips"
        ),
    )
}


def _suit_polygons(
    suit: str, cx: float, cy: float, size: float, stretch: float
) -> tuple[list[Image], list[tuple[int, int, int]]]:
    """A suit as polygons and circles ((x, y, r) triples) centred at (cx, cy), ``size`` pixels tall."""
    s = size / 2.0
    w = s * stretch
    polys: list[Image] = []
    circles: list[tuple[int, int, int]] = []

    def pts(points: list[tuple[float, float]]) -> Image:
        return np.array([[round(cx + x * w), round(cy + y * s)] for x, y in points], dtype=np.int32)

    if suit == "D":
        polys.append(pts([(0, -1), (0.75, 0), (0, 1), (-0.75, 0)]))
    elif suit == "H":
        r = 0.5 * w
        circles += [
            (round(cx - r * 0.95), round(cy - 0.35 * s), round(r)),
            (round(cx + r * 0.95), round(cy - 0.35 * s), round(r)),
        ]
        polys.append(pts([(-0.97, -0.2), (0.97, -0.2), (0, 1)]))
    elif suit == "S":
        r = 0.45 * w
        circles += [
            (round(cx - r * 0.95), round(cy + 0.2 * s), round(r)),
            (round(cx + r * 0.95), round(cy + 0.2 * s), round(r)),
        ]
        polys.append(pts([(-0.9, 0.1), (0.9, 0.1), (0, -1)]))
        polys.append(pts([(0, 0.3), (0.35, 1), (-0.35, 1)]))
    else:  # clubs
        r = 0.36 * s
        circles += [
            (round(cx), round(cy - 0.55 * s), round(r)),
            (round(cx - 0.52 * w), round(cy + 0.1 * s), round(r)),
            (round(cx + 0.52 * w), round(cy + 0.1 * s), round(r)),
        ]
        polys.append(pts([(0, -0.2), (0.35, 1), (-0.35, 1)]))
    return polys, circles


def draw_suit(
    img: Image, suit: str, cx: float, cy: float, size: float, stretch: float, colour: tuple[int, int, int]
) -> None:
    polys, circles = _suit_polygons(suit, cx, cy, size, stretch)
    cv2.fillPoly(img, polys, colour, lineType=cv2.LINE_AA)
    for x, y, r in circles:
        cv2.circle(img, (x, y), r, colour, -1, lineType=cv2.LINE_AA)


def _draw_index(
    img: Image, design: Design, text: str, suit: str | None, colour: tuple[int, int, int]
) -> None:
    """The corner index: rank text, the suit shape under it, then the same turned 180 degrees."""
    (tw, th), _ = cv2.getTextSize(text, design.font, design.font_scale, design.thickness)
    x = design.index_x if not design.left_handed else FACE_W - design.index_x - max(tw, design.suit_size)
    col_w = max(tw, design.suit_size)
    cv2.putText(
        img,
        text,
        (x + (col_w - tw) // 2, design.index_y + th),
        design.font,
        design.font_scale,
        colour,
        design.thickness,
        cv2.LINE_AA,
    )
    if suit is not None:
        draw_suit(
            img,
            suit,
            x + col_w / 2,
            design.index_y + th + 10 + design.suit_size / 2,
            design.suit_size,
            design.suit_stretch,
            colour,
        )


@cache
def index_box(design: Design) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1), end exclusive: the face pixels the top index of some card of ``design`` inks.

    Why: a hand negative must hide the whole index to hold no readable card; a jumbo index reaches far
    past the corner, so a fixed patch at the corner left it readable (the bench counted those reads of
    the card truly in view as false cards). Measured by drawing every card's index, so any design fits.
    """
    ink = np.zeros((FACE_H, FACE_W), np.uint8)
    for rank in RANKS:
        for suit in "SHDC":
            img = np.full((FACE_H, FACE_W, 3), 250, np.uint8)
            _draw_index(img, design, _RANK_TEXT[rank], suit, (0, 0, 0))
            ink |= (img.min(axis=2) < 250).astype(np.uint8)
    x, y, w, h = cv2.boundingRect(ink)
    return x, y, x + w, y + h


def render_face(card: Card | None, design: Design, *, joker: bool = False) -> Image:
    """The flat face of ``card`` (or a joker) in ``design``, BGR, white with a thin border."""
    img = np.full((FACE_H, FACE_W, 3), 250, np.uint8)
    cv2.rectangle(img, (3, 3), (FACE_W - 4, FACE_H - 4), (200, 200, 200), 1)
    if joker:
        colour = design.black
        _draw_index(img, design, "JK", None, colour)
        star = [
            (
                FACE_W / 2 + 70 * math.cos(a) * (1 if i % 2 == 0 else 0.4),
                FACE_H / 2 + 70 * math.sin(a) * (1 if i % 2 == 0 else 0.4),
            )
            for i, a in enumerate(np.linspace(-math.pi / 2, 1.5 * math.pi, 10, endpoint=False))
        ]
        cv2.fillPoly(img, [np.array(star, np.int32)], (40, 140, 200))
    else:
        assert card is not None
        colour = design.red if card.suit in RED else design.black
        _draw_index(img, design, _RANK_TEXT[card.rank], card.suit, colour)
        _draw_centre(img, design, card, colour)
    # The second index: the whole top half turned half a turn onto the bottom half, as printed.
    top = img[: FACE_H // 2].copy()
    bottom = cv2.rotate(top, cv2.ROTATE_180)
    mask = bottom.min(axis=2) < 240
    img[FACE_H - FACE_H // 2 :][mask] = bottom[mask]
    return img


def _draw_centre(img: Image, design: Design, card: Card, colour: tuple[int, int, int]) -> None:
    cx, cy = FACE_W / 2, FACE_H / 2
    if design.centre == "frame":
        cv2.rectangle(img, (62, 70), (FACE_W - 63, FACE_H - 71), colour, 2)
    if design.centre in ("big", "frame") or card.rank in "JQKA":
        draw_suit(img, card.suit, cx, cy - 40, 64, design.suit_stretch, colour)
        if card.rank in "JQK":
            cv2.putText(img, card.rank, (int(cx) - 18, int(cy) + 26), cv2.FONT_HERSHEY_PLAIN, 3, colour, 3)
        return
    n = RANKS.index(card.rank) + 2
    cols = 1 if n <= 3 else 2
    rows = math.ceil(n / cols)
    for i in range(n):
        r, c = divmod(i, cols)
        x = cx if cols == 1 else cx + (-36 if c == 0 else 36)
        y = 86 + (FACE_H - 172) * (r + 0.5) / rows
        if y < cy:  # the top half only: the lower half is the top half turned
            draw_suit(img, card.suit, x, y, 30, design.suit_stretch, colour)


def render_back(rng: random.Random) -> Image:
    """A card back: white border, a coloured field with a lattice, no index."""
    img = np.full((FACE_H, FACE_W, 3), 245, np.uint8)
    colour = rng.choice([(150, 60, 20), (30, 30, 160), (40, 110, 40)])
    cv2.rectangle(img, (14, 14), (FACE_W - 15, FACE_H - 15), colour, -1)
    for k in range(-FACE_H, FACE_W + FACE_H, 18):
        cv2.line(img, (k, 14), (k + FACE_H, 14 + FACE_H), (230, 230, 230), 2)
        cv2.line(img, (k, 14), (k - FACE_H, 14 + FACE_H), (230, 230, 230), 2)
    cv2.rectangle(img, (0, 0), (14, FACE_H), (245, 245, 245), -1)
    cv2.rectangle(img, (FACE_W - 15, 0), (FACE_W, FACE_H), (245, 245, 245), -1)
    cv2.rectangle(img, (0, 0), (FACE_W, 14), (245, 245, 245), -1)
    cv2.rectangle(img, (0, FACE_H - 15), (FACE_W, FACE_H), (245, 245, 245), -1)
    return img
