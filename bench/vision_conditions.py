"""Benchmark (not a test): a photograph set read again under the conditions a camera table meets, each a
change of every frame: blur, motion, a darker or brighter exposure, noise, heavy JPEG.

Why: the sets are each one camera's frames under one light, and a house's camera is not: it drifts out of
focus, its exposure follows the room, a dark felt makes it open up. A rule tuned on the sets as they are
can hold there and fail under such a change. Read so, the composed set darkened (each level to the power
2.2, a camera exposed darker) read 12 clubs as spades on 2026-12-06 (the suit's judging at the index's own
sharpness took the spread ink for blur; :mod:`vision.sharpness` now measures the tone too). So every
condition prints the frames read right, the wrong cards (which must be 0) and the commonest reasons:

    .venv/bin/python bench/vision_conditions.py --enrol D/enrol --test D/test [--conditions none,dark2.2]

Each condition is a pure function of the frame (the noise seeded by the frame's number), so two checkouts
read the same frames. The deck is enrolled from ``--enrol`` as it is, at ``--size``'s width, as
``bench/vision_photos.py measure`` does; ``--stand-ins`` as there.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision_photos import enrol_folder, frames, labelled  # noqa: E402  (bench/, beside this script)
from vision_recognition import start  # noqa: E402  (bench/, beside this script)

from vision.recognise import Image, recognise  # noqa: E402


def _power(frame: Image, power: float) -> Image:
    """Each level (0..1) raised to ``power``: over 1 a darker exposure (the half-inked edge of every stroke
    darkens: ink spreads), under 1 a brighter one."""
    return np.asarray(255 * (frame / 255.0) ** power, np.uint8)


def _motion(frame: Image, length: int) -> Image:
    """A sideways smear of ``length`` pixels (a hand or the camera moving during the exposure)."""
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0 / length
    return np.asarray(cv2.filter2D(frame, -1, kernel), np.uint8)


def _noise(frame: Image, sigma: float, seed: int) -> Image:
    noisy = frame + np.random.default_rng(seed).normal(0.0, sigma, frame.shape)
    return np.asarray(np.clip(noisy, 0, 255), np.uint8)


def _jpeg(frame: Image, quality: int) -> Image:
    encoded = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])[1]
    return np.asarray(cv2.imdecode(encoded, cv2.IMREAD_COLOR), np.uint8)


def _blur(frame: Image, sigma: float) -> Image:
    return np.asarray(cv2.GaussianBlur(frame, (0, 0), sigma), np.uint8)


#: Each condition: the frame (and its number, for a seed) to the frame as the camera would give it.
CONDITIONS: dict[str, Callable[[Image, int], Image]] = {
    "none": lambda f, i: f,
    "blur1": lambda f, i: _blur(f, 1.0),
    "blur2": lambda f, i: _blur(f, 2.0),
    "motion5": lambda f, i: _motion(f, 5),
    "dark1.4": lambda f, i: _power(f, 1.4),
    "dark2.2": lambda f, i: _power(f, 2.2),
    "dark2.8": lambda f, i: _power(f, 2.8),
    "dark_soft": lambda f, i: _power(_blur(f, 1.5), 1.8),
    "bright0.6": lambda f, i: _power(f, 0.6),
    "noise8": lambda f, i: _noise(f, 8.0, i),
    "jpeg30": lambda f, i: _jpeg(f, 30),
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--enrol", type=Path, required=True, help="the deck's photographs, one per card")
    parser.add_argument("--test", type=Path, required=True, help="the frames to read (labelled)")
    parser.add_argument("--size", default="640x480", help="frames wider than this are shrunk to its width")
    parser.add_argument("--conditions", default=",".join(CONDITIONS),
                        help="comma-separated: " + ", ".join(CONDITIONS))
    parser.add_argument("--limit", type=int, default=0, help="read only the first N card frames (0: all)")
    parser.add_argument("--stand-ins", action="store_true", help="as bench/vision_photos.py measure")
    args = parser.parse_args()
    names = args.conditions.split(",")
    unknown = [n for n in names if n not in CONDITIONS]
    if unknown:
        parser.error(f"--conditions: no condition {', '.join(unknown)}; known: {', '.join(CONDITIONS)}")
    start()
    width = int(args.size.lower().split("x")[0])
    enrolled = enrol_folder(args.enrol, width, args.stand_ins)
    if enrolled.profile is None:
        print(f"{args.enrol}: enrolment refused:", *enrolled.problems, sep="\n  ")
        return 2
    deck = enrolled.profile
    items = [(p, c) for p, c in labelled(args.test) if c is not None]
    items = items[: args.limit] if args.limit else items
    read = {n: 0 for n in names}
    wrong: dict[str, list[str]] = {n: [] for n in names}
    reasons: dict[str, Counter[str]] = {n: Counter() for n in names}
    began = time.monotonic()
    for i, (frame, card, name) in enumerate(frames(items, width)):
        for condition in names:
            reading = recognise(CONDITIONS[condition](frame, i), deck)
            if reading.card is card:
                read[condition] += 1
            elif reading.card is not None:
                wrong[condition].append(f"{name} {card.code if card else '-'} read {reading.card.code}")
            else:
                reasons[condition][reading.reason.split(" (")[0][:70]] += 1
        if (i + 1) % 50 == 0:
            print(f"  {i + 1}/{len(items)} frames, {time.monotonic() - began:.0f} s", flush=True)
    print(f"{len(items)} card frames of {args.test}, deck from {args.enrol}")
    print(f"{'condition':10s} {'read':>14s} {'wrong':>6s}  commonest reasons")
    for condition in names:
        share = 100.0 * read[condition] / max(len(items), 1)
        top = "; ".join(f"{n} x {why}" for why, n in reasons[condition].most_common(2))
        print(f"{condition:10s} {read[condition]:6d} ({share:5.1f}%) {len(wrong[condition]):6d}  {top}")
        for line in wrong[condition]:
            print(f"    WRONG {line}")
    return 1 if any(wrong.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
