"""Tables drawn for the vision tests and benches: the working frame's size, table colours, pale wood and a
card's corners placed by centre, width and turn.

Why a module of its own: the tests of second objects and bench/vision_two_objects.py draw the same tables,
and a bench must not import a test module (collecting it would run its fixtures' imports for nothing).
"""

from __future__ import annotations

import math

import numpy as np

#: The working frame (640 x 480) every drawn scene is made at.
W, H = 640, 480

#: Table colours (BGR): a beige cloth, oak and green felt.
BEIGE = (150, 185, 205)
OAK = (80, 140, 190)
FELT = (40, 90, 30)


def pale_wood(tint: tuple[int, int, int], gain: float, ramp: float) -> np.ndarray:
    """A wooden table of ``tint`` (BGR) lit ``gain`` times, its grain in streaks, the light rising by
    ``ramp`` across the frame: its brightest streaks are as bright as a card's paper, but coloured."""
    y = np.arange(H, dtype=np.float32)[:, None]
    x = np.arange(W, dtype=np.float32)[None, :]
    grain = 0.5 + 0.2 * np.sin(y / 4.0 + 4 * np.sin(x / 60.0)) + 0.1 * np.sin(y / 1.3 + x / 200.0)
    light = 1 + ramp * ((x - W / 2) * math.cos(0.3) + (y - H / 2) * math.sin(0.3)) / W
    table = np.array(tint, np.float32) * gain * (0.75 + 0.5 * grain[..., None]) * light[..., None]
    return np.clip(table, 0, 255).astype(np.uint8)


def at(cx: float, cy: float, width: float, turn: float) -> list[tuple[float, float]]:
    """A card's corners (tl, tr, br, bl), centred at (cx, cy), ``width`` wide, turned ``turn`` degrees."""
    h = width * 88 / 63
    c, s = math.cos(math.radians(turn)), math.sin(math.radians(turn))
    return [
        (cx + x * c - y * s, cy + x * s + y * c)
        for x, y in ((-width / 2, -h / 2), (width / 2, -h / 2), (width / 2, h / 2), (-width / 2, h / 2))
    ]
