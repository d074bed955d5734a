"""Synthetic scan-window scenes: card faces drawn with OpenCV, then photographed badly, from a seed.

Why: the recogniser must be tested on thousands of frames of cards it never
saw, and the project may not download photographs at test time. So faces are
drawn here with OpenCV only (rank text in Hershey fonts, suit shapes as
filled polygons and circles), in several *designs* (font, index size and
place, suit proportions, centre art, left-handed indices), and each scene
puts one face on felt through a random perspective warp with rotation,
blur, sensor noise, a lighting gradient, glare and JPEG compression. The
same seed gives the same pixels, so a failing scene can be regenerated.

Negative scenes (the window must read as "no card"): an empty window, a
card back, a joker, two cards, and a hand over the index.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from cv2.typing import MatLike

from controller.cards import DECK, RANKS, Card

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


@dataclass(frozen=True)
class Conditions:
    """How hard the photographs are: the ranges each scene draws its distortions from."""

    max_tilt: float = 0.06
    blur: float = 1.0
    noise: float = 5.0
    gradient: float = 0.30
    glare: float = 0.5
    jpeg: tuple[int, int] = (55, 95)
    scale: tuple[float, float] = (0.62, 0.82)


#: Near-studio conditions: what enrolment photographs look like.
STUDIO: Final = Conditions(
    max_tilt=0.03, blur=0.4, noise=2.0, gradient=0.08, glare=0.0, jpeg=(90, 95), scale=(0.7, 0.75)
)
#: The hard conditions of the held-out test sets.
FLOOR: Final = Conditions()


def _felt(rng: random.Random, w: int, h: int) -> Image:
    base = rng.choice([(40, 90, 30), (35, 70, 25), (80, 40, 20), (30, 30, 90), (45, 45, 45)])
    img = np.empty((h, w, 3), np.uint8)
    img[:] = base
    noise = np.random.default_rng(rng.randrange(1 << 32)).normal(0, 6, (h, w, 3)).astype(np.int16)
    return cv2.add(img, noise, dtype=cv2.CV_8U)


def _corners(rng: random.Random, w: int, h: int, cond: Conditions, spread: float = 1.0) -> Image:
    """Where the face's corners land in the frame: size, rotation, position and a perspective tilt."""
    ch = h * rng.uniform(*cond.scale) / spread
    cw = ch * FACE_W / FACE_H
    angle = rng.uniform(0, 2 * math.pi)
    # Keep the rotated card inside the frame.
    ca, sa = abs(math.cos(angle)), abs(math.sin(angle))
    bw, bh = cw * ca + ch * sa, cw * sa + ch * ca
    if bh > h * 0.95 or bw > w * 0.95:
        f = min(h * 0.95 / bh, w * 0.95 / bw)
        cw, ch, bw, bh = cw * f, ch * f, bw * f, bh * f
    cx = rng.uniform(bw / 2 + 2, w - bw / 2 - 2)
    cy = rng.uniform(bh / 2 + 2, h - bh / 2 - 2)
    out = []
    for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        x, y = dx * cw / 2, dy * ch / 2
        x += rng.uniform(-cond.max_tilt, cond.max_tilt) * cw
        y += rng.uniform(-cond.max_tilt, cond.max_tilt) * ch
        out.append(
            (cx + x * math.cos(angle) - y * math.sin(angle), cy + x * math.sin(angle) + y * math.cos(angle))
        )
    quad = np.array(out, np.float32)
    # The tilt can push a corner past the edge: shrink about the centre, then slide the card back in
    # (the dealer shows the whole card in the window).
    lo, hi = quad.min(axis=0), quad.max(axis=0)
    f = min(1.0, (w - 12) / float(hi[0] - lo[0]), (h - 12) / float(hi[1] - lo[1]))
    centre = quad.mean(axis=0)
    quad = (quad - centre) * f + centre
    lo, hi = quad.min(axis=0), quad.max(axis=0)
    quad += np.maximum(0, np.array([6, 6], np.float32) - lo) - np.maximum(
        0, hi - np.array([w - 7, h - 7], np.float32)
    )
    out_quad: Image = quad.astype(np.float32)
    return out_quad


def _place(frame: Image, face: Image, corners: Image) -> None:
    """Paste ``face`` onto ``frame`` through the homography to ``corners`` (rounded corners masked)."""
    h, w = frame.shape[:2]
    src = np.array([(0, 0), (FACE_W - 1, 0), (FACE_W - 1, FACE_H - 1), (0, FACE_H - 1)], np.float32)
    m = cv2.getPerspectiveTransform(src, corners)
    mask = np.zeros((FACE_H, FACE_W), np.uint8)
    cv2.rectangle(mask, (8, 0), (FACE_W - 9, FACE_H - 1), 255, -1)
    cv2.rectangle(mask, (0, 8), (FACE_W - 1, FACE_H - 9), 255, -1)
    for x, y in ((8, 8), (FACE_W - 9, 8), (8, FACE_H - 9), (FACE_W - 9, FACE_H - 9)):
        cv2.circle(mask, (x, y), 8, 255, -1)
    warped = cv2.warpPerspective(face, m, (w, h), flags=cv2.INTER_LINEAR)
    wmask = cv2.warpPerspective(mask, m, (w, h), flags=cv2.INTER_LINEAR)
    frame[wmask > 127] = warped[wmask > 127]


def _photograph(frame: Image, rng: random.Random, cond: Conditions, card_at: Image | None) -> Image:
    """Light, glare, blur, noise and JPEG, as a cheap camera over a table would give."""
    h, w = frame.shape[:2]
    # Lighting gradient: a linear ramp in a random direction.
    a = rng.uniform(0, 2 * math.pi)
    xs, ys = np.meshgrid(np.linspace(-1, 1, w, dtype=np.float32), np.linspace(-1, 1, h, dtype=np.float32))
    g = 1.0 - cond.gradient * (0.5 + 0.5 * (xs * math.cos(a) + ys * math.sin(a)) / math.sqrt(2))
    img = frame.astype(np.float32) * g[..., None]
    tint = np.array([rng.uniform(0.92, 1.05) for _ in range(3)], np.float32)
    img *= tint
    if card_at is not None and rng.random() < cond.glare:
        # A soft highlight somewhere on the card (a lamp's reflection on the laminate).
        t = rng.uniform(0.25, 0.75)
        p = card_at[0] + (card_at[2] - card_at[0]) * t
        glare = np.zeros((h, w), np.float32)
        axes = (rng.randint(15, 45), rng.randint(8, 25))
        cv2.ellipse(glare, (int(p[0]), int(p[1])), axes, rng.uniform(0, 180), 0, 360, 1.0, -1)
        glare = cv2.GaussianBlur(glare, (0, 0), 9)
        img += glare[..., None] * rng.uniform(30, 80)
    sigma = rng.uniform(0, cond.blur)
    if sigma > 0.2:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), sigma), np.float32)
    # Seeded from the scene's own generator (cv2.randn would draw from OpenCV's global one).
    noise = np.random.default_rng(rng.randrange(1 << 32)).normal(0, rng.uniform(0, cond.noise), img.shape)
    out = np.clip(img + noise, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, rng.randint(*cond.jpeg)])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    assert ok and decoded is not None
    return decoded


def scene(
    card: Card | None, design: Design, seed: int, size: tuple[int, int] = (640, 480), cond: Conditions = FLOOR
) -> Image:
    """One frame of the scan window showing ``card`` (None: the empty window)."""
    return photograph(None if card is None else render_face(card, design), seed, size, cond)


def photograph(
    face: Image | None, seed: int, size: tuple[int, int] = (640, 480), cond: Conditions = FLOOR
) -> Image:
    """One frame of the scan window showing ``face`` (any artwork, ``FACE_W`` x ``FACE_H`` BGR; None:
    the empty window), photographed as :func:`scene` photographs the drawn designs."""
    rng = random.Random(seed)
    w, h = size
    frame = _felt(rng, w, h)
    corners = None
    if face is not None:
        corners = _corners(rng, w, h, cond)
        _place(frame, face, corners)
    return _photograph(frame, rng, cond, corners)


#: The kinds of negative frame, each of which must read as "no card" (or "unknown"), never a card.
NEGATIVES: Final = ("empty", "back", "joker", "two_cards", "hand")


def negative_scene(
    kind: str, design: Design, seed: int, size: tuple[int, int] = (640, 480), cond: Conditions = FLOOR
) -> Image:
    """A frame that holds no readable single card: see :data:`NEGATIVES`."""
    rng = random.Random(seed)
    w, h = size
    frame = _felt(rng, w, h)
    corners = None
    if kind == "back":
        corners = _corners(rng, w, h, cond)
        _place(frame, render_back(rng), corners)
    elif kind == "joker":
        corners = _corners(rng, w, h, cond)
        _place(frame, render_face(None, design, joker=True), corners)
    elif kind == "two_cards":
        first = _corners(rng, w, h, cond, spread=1.3)
        shift = rng.uniform(0.3, 0.6) * h * 0.5
        angle = rng.uniform(0, 2 * math.pi)
        second = first + np.array([shift * math.cos(angle), shift * math.sin(angle)], np.float32)
        second = np.clip(second, 2, [w - 3, h - 3]).astype(np.float32)
        _place(frame, render_face(rng.choice(DECK), design), first)
        _place(frame, render_face(rng.choice(DECK), design), second)
        corners = first
    elif kind == "hand":
        corners = _corners(rng, w, h, cond)
        _place(frame, render_face(rng.choice(DECK), design), corners)
        _draw_hand(frame, rng, corners, (1, 3) if design.left_handed else (0, 2))
    elif kind != "empty":
        raise ValueError(f"unknown negative kind {kind!r}; kinds: {', '.join(NEGATIVES)}")
    return _photograph(frame, rng, cond, corners)


def _draw_hand(frame: Image, rng: random.Random, corners: Image, at: tuple[int, int]) -> None:
    """A dealer's hand reaching in from the nearest frame edge over both index corners."""
    h, w = frame.shape[:2]
    skin = rng.choice([(140, 170, 220), (100, 130, 180), (60, 90, 140), (170, 190, 230)])
    for idx in at:
        px, py = corners[idx]
        edge = min((px, (0, py)), (w - px, (w - 1, py)), (py, (px, 0)), (h - py, (px, h - 1)))[1]
        width = rng.randint(40, 70)
        cv2.line(frame, (int(edge[0]), int(edge[1])), (int(px), int(py)), skin, width)
        cv2.circle(frame, (int(px), int(py)), width, skin, -1)
