"""Benchmark (not a test): a card and a second object turned against it, seen by a tilted camera.

Why: one card at a time is the recogniser's money rule, and a second object whose region joins a pale wall
is found only by its outline (vision/second_outline.py), which judged corners and sizes as seen: under a
tilted camera a second card turned against the card read was read past (a review, 2026-12-05). Since then
the outline is judged on the table's plane when the card is seen out of square (vision/table_view.py).
This grid draws the scenes of tests/tilted_table.py: the camera pitched 15 to 55 degrees (``--pitches``),
turned 0, 20 or 45 degrees about the table's normal (``--yaws``), the object turned 0 to 90 degrees
(``--turns``), each read with no table file and with the camera's calibrated plane. Every such frame holds
two objects: a reading of a card is a false card. The card alone is read at every pitch and yaw too, on
the felt and beside a pale wall cut by the frame (a read lost there is a cost of the check).
With ``--back GAIN`` the object is a face-down back lit GAIN times the card's light, on the felt alone (a
back in shadow at 0.5 is as grey as the felt: it was read past at every pitch until the outline's steps were
judged in colour, 2026-12-05); ``--pitches 0,...`` adds a camera straight above.

    .venv/bin/python bench/vision_tilted_pairs.py

Prints, per pitch, the false cards (of frames whose second object lies wholly inside the frame; those it
crosses are counted apart: a neighbour the window cuts is left alone by design) and the lone cards lost.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tilted_table import camera, object_corners, plane_of, shot  # noqa: E402  (the tests' scenes)
from vision_recognition import start  # noqa: E402  (bench/, beside this script)
from vision_support import profile  # noqa: E402  (the tests' classic deck, enrolled the same way)

from controller.cards import parse_card  # noqa: E402
from vision.recognise import recognise  # noqa: E402


def numbers(text: str) -> list[float]:
    """A comma-separated list of numbers."""
    return [float(v) for v in text.split(",") if v.strip()]


def object_inside(pitch: float, yaw: float, turn: float) -> bool:
    """Whether the object's corners lie wholly inside the 640 x 480 frame (2 px in)."""
    seen = cv2.perspectiveTransform(object_corners(turn).reshape(-1, 1, 2), camera(pitch, yaw)).reshape(4, 2)
    return bool((seen.min(axis=0) > 2).all() and seen[:, 0].max() < 637 and seen[:, 1].max() < 477)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pitches", type=numbers, default=numbers("15,20,25,30,35,40,45,50,55"))
    parser.add_argument("--yaws", type=numbers, default=numbers("0,20,45"))
    parser.add_argument("--turns", type=numbers, default=numbers("0,15,30,45,60,75,90"))
    parser.add_argument("--back", type=float, default=None, help="a back lit this share of the card's light")
    args = parser.parse_args()
    start()
    deck, nine = profile(), parse_card("9C")
    began = time.monotonic()
    totals = np.zeros(4, np.int64)  # pairs inside, false cards among them, pairs crossing, lone cards lost
    for pitch in args.pitches:
        row = np.zeros(4, np.int64)
        missed: list[str] = []
        for yaw in args.yaws:
            m = camera(pitch, yaw)
            windows = {"": None, " calibrated": plane_of(m)}  # read with no table file, and with its plane
            for turn in args.turns:
                if not object_inside(pitch, yaw, turn):
                    row[2] += len(windows)
                    continue
                frame, _ = shot(pitch, turn, yaw=yaw, back=args.back)
                for name, window in windows.items():
                    row[0] += 1
                    if recognise(frame, deck, window=window).status == "card":
                        row[1] += 1
                        missed.append(f"yaw {yaw:g} turn {turn:g}{name}")
            for wall in (False, True):
                alone, _ = shot(pitch, None, wall, yaw)
                row[3] += sum(recognise(alone, deck, window=w).card is not nine for w in windows.values())
        totals += row
        print(f"pitch {pitch:g}: {row[1]} false cards of {row[0]} pairs wholly inside ({row[2]} with the "
              f"object crossing the frame's edge, skipped); {row[3]} lone cards lost of {4 * len(args.yaws)}"
              + (f"; false: {', '.join(missed)}" if missed else ""), flush=True)
    print(f"all: {totals[1]} false cards of {totals[0]} pairs wholly inside; {totals[3]} lone cards lost of "
          f"{4 * len(args.yaws) * len(args.pitches)}; in {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
