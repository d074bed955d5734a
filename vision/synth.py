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
card back, a joker, two cards, and a hand over both indices (hidden whole,
whatever the design's index size).

The faces and backs are drawn in :mod:`vision.synth_faces`; this module
photographs them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from controller.cards import DECK, Card
from vision.synth_faces import (
    DESIGNS,
    FACE_H,
    FACE_W,
    RED,
    Design,
    Image,
    draw_suit,
    index_box,
    render_back,
    render_face,
)

__all__ = [
    "DESIGNS", "FACE_H", "FACE_W", "FLOOR", "NEGATIVES", "RED", "STUDIO", "Conditions", "Design", "Image",
    "draw_suit", "negative_scene", "photograph", "render_back", "render_face", "scene",
]


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
    #: The light's colour, gains on blue, green and red over the random tint: (1.0, 0.85, 0.6) is a
    #: phone's bluish light, (0.55, 0.8, 1.0) a warm lamp; the paper takes the cast as much as the ink.
    light: tuple[float, float, float] = (1.0, 1.0, 1.0)


#: Near-studio conditions: what enrolment photographs look like.
STUDIO: Final = Conditions(
    max_tilt=0.03, blur=0.4, noise=2.0, gradient=0.08, glare=0.0, jpeg=(90, 95), scale=(0.7, 0.75)
)
#: The hard conditions of the held-out test sets.
FLOOR: Final = Conditions()


#: The felts a scene is drawn on (BGR): greens, a blue, a red and a grey.
FELTS: Final = ((40, 90, 30), (35, 70, 25), (80, 40, 20), (30, 30, 90), (45, 45, 45))


def _felt(rng: random.Random, w: int, h: int, felt: int | None = None) -> Image:
    """The table: one of :data:`FELTS` (``felt``: that one; drawn from ``rng`` all the same, so that a
    scene's other choices do not move with it), with a weave's noise."""
    base = rng.choice(FELTS)
    base = base if felt is None else FELTS[felt]
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


#: The flat face's corners, clockwise from its top left (the order of :func:`_corners`).
FACE_CORNERS: Final = np.array(
    [(0, 0), (FACE_W - 1, 0), (FACE_W - 1, FACE_H - 1), (0, FACE_H - 1)], np.float32
)


def _place(frame: Image, face: Image, corners: Image) -> None:
    """Paste ``face`` onto ``frame`` through the homography to ``corners`` (rounded corners masked)."""
    h, w = frame.shape[:2]
    m = cv2.getPerspectiveTransform(FACE_CORNERS, corners)
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
    img *= tint * np.array(cond.light, np.float32)
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
    card: Card | None, design: Design, seed: int, size: tuple[int, int] = (640, 480),
    cond: Conditions = FLOOR, felt: int | None = None,
) -> Image:
    """One frame of the scan window showing ``card`` (None: the empty window); ``felt``: on that one of
    :data:`FELTS` (None: drawn by ``seed``; a table's frames keep one felt)."""
    return photograph(None if card is None else render_face(card, design), seed, size, cond, felt)


def photograph(
    face: Image | None, seed: int, size: tuple[int, int] = (640, 480), cond: Conditions = FLOOR,
    felt: int | None = None,
) -> Image:
    """One frame of the scan window showing ``face`` (any artwork, ``FACE_W`` x ``FACE_H`` BGR; None:
    the empty window), photographed as :func:`scene` photographs the drawn designs."""
    rng = random.Random(seed)
    w, h = size
    frame = _felt(rng, w, h, felt)
    corners = None
    if face is not None:
        corners = _corners(rng, w, h, cond)
        _place(frame, face, corners)
    return _photograph(frame, rng, cond, corners)


#: What may pass right over the lens (BGR): skin from pale to dark, a black, a navy and a white sleeve.
OVER_LENS: Final = (
    (170, 190, 230), (120, 150, 200), (60, 90, 140), (20, 20, 20), (70, 35, 25), (225, 225, 220))


def over_lens(
    seed: int, size: tuple[int, int] = (640, 480), felt: int | None = None, face: Image | None = None,
) -> Image:
    """A hand or a sleeve right over the lens, far out of focus: a blur of its colour lit from one side,
    covering all of the window or all but a strip of ``felt`` at one edge; with ``face`` (a card's face,
    :func:`render_face`), a palm held over that card lying on the felt, covering it and a little round it.
    The detector reads most such frames as an empty window (no contrast, or nothing card-sized); none is
    one (:mod:`vision.felt`)."""
    rng = random.Random(seed)
    w, h = size
    frame = _felt(rng, w, h, felt)
    colour = np.array(rng.choice(OVER_LENS), np.float32)
    sharp = np.ones((h, w), np.float32)
    if face is not None:
        corners = _corners(rng, w, h, STUDIO)
        _place(frame, face, corners)
        centre = corners.mean(axis=0)
        reach = float(np.linalg.norm(corners - centre, axis=1).max())
        sharp[:] = 0.0
        axes = (int(reach * rng.uniform(1.0, 1.3)), int(reach * rng.uniform(1.0, 1.3)))
        cv2.ellipse(sharp, (int(centre[0]), int(centre[1])), axes, rng.uniform(0, 180), 0, 360, 1.0, -1)
    elif rng.random() < 0.5:  # the felt still shows along one edge
        strip = int(rng.uniform(0.05, 0.15) * (w if rng.random() < 0.5 else h))
        sharp[:, :strip] = 0.0
        sharp = sharp if rng.random() < 0.5 else sharp[:, ::-1].copy()
    cover = np.clip(np.asarray(cv2.GaussianBlur(sharp, (0, 0), 25), np.float32) * 1.2, 0.0, 1.0)
    a = rng.uniform(0, 2 * math.pi)
    xs, ys = np.meshgrid(np.linspace(-1, 1, w, dtype=np.float32), np.linspace(-1, 1, h, dtype=np.float32))
    light = rng.uniform(0.35, 0.9) + rng.uniform(0.1, 0.3) * (xs * math.cos(a) + ys * math.sin(a))
    near = colour[None, None, :] * np.clip(light, 0.05, 1.2)[..., None]
    img = frame.astype(np.float32) * (1 - cover[..., None]) + near * cover[..., None]
    return _photograph(np.clip(img, 0, 255).astype(np.uint8), rng, STUDIO, None)


#: The kinds of negative frame, each of which must read as "no card" (or "unknown"), never a card.
NEGATIVES: Final = ("empty", "back", "joker", "two_cards", "hand")


def negative_scene(
    kind: str, design: Design, seed: int, size: tuple[int, int] = (640, 480), cond: Conditions = FLOOR,
    *, partial_hand: bool = False, felt: int | None = None,
) -> Image:
    """A frame that holds no readable single card: see :data:`NEGATIVES`. The hand hides both indices
    whole; with ``partial_hand`` only a patch at each index corner, which may leave part of an index (or
    the whole of a large one) in view, so the card under it may be read but never as another card."""
    rng = random.Random(seed)
    w, h = size
    frame = _felt(rng, w, h, felt)
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
        _draw_hand(frame, rng, corners, (1, 3) if design.left_handed else (0, 2),
                   None if partial_hand else index_box(design))
    elif kind != "empty":
        raise ValueError(f"unknown negative kind {kind!r}; kinds: {', '.join(NEGATIVES)}")
    return _photograph(frame, rng, cond, corners)


def _draw_hand(
    frame: Image, rng: random.Random, corners: Image, at: tuple[int, int],
    cover: tuple[int, int, int, int] | None,
) -> None:
    """A dealer's hand reaching in from the nearest frame edge over both index corners; with ``cover``
    (the face's top index box) its fingers hide that box and its half-turned copy whole, with a margin."""
    h, w = frame.shape[:2]
    skin = rng.choice([(140, 170, 220), (100, 130, 180), (60, 90, 140), (170, 190, 230)])
    for idx in at:
        px, py = corners[idx]
        edge = min((px, (0, py)), (w - px, (w - 1, py)), (py, (px, 0)), (h - py, (px, h - 1)))[1]
        width = rng.randint(40, 70)
        cv2.line(frame, (int(edge[0]), int(edge[1])), (int(px), int(py)), skin, width)
        cv2.circle(frame, (int(px), int(py)), width, skin, -1)
    if cover is None:
        return
    m = cv2.getPerspectiveTransform(FACE_CORNERS, corners)
    x0, y0, x1, y1 = cover[0] - 6, cover[1] - 6, cover[2] + 6, cover[3] + 6
    nearest = (0 if x0 + x1 < FACE_W else FACE_W - 1, 0)  # the face corner the top index sits in
    top = np.array([nearest, (x0, y0), (x1, y0), (x1, y1), (x0, y1)], np.float32)
    for part in (top, np.array([FACE_W - 1, FACE_H - 1], np.float32) - top):  # and the half-turned index
        hull = cv2.convexHull(cv2.perspectiveTransform(part[None], m)[0])
        cv2.fillConvexPoly(frame, hull.astype(np.int32), skin)
