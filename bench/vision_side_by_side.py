"""Benchmark (not a test): two objects side by side, one joined to a pale strip at the frame's edge.

Why: one card at a time is the recogniser's money rule, and a public photograph of two prop cards
standing side by side against a pale wall was read as one of them (docs/vision-history.md, "more public
photographs"). This sweep draws that family at 640 x 480: a second object (a plain card, a plain card
with a dark pip, a card of another drawn design or of the enrolled one) whose left and top sides touch a
pale strip reaching the frame's edges, and beside it, seam open, closed by a faint line at its foot or
touching, a card of the enrolled (classic) deck. Every scene holds two objects, so every card read is a
false card; each is written as a PNG with its parameters, to look at:

    .venv/bin/python bench/vision_side_by_side.py --scenes 600 --out /tmp/side-by-side

Seeded (``numpy.random.default_rng([60, i])``): the same scenes on every checkout, to compare two.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
from cv2.typing import MatLike
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from vision_support import profile  # noqa: E402  (the tests' classic deck, enrolled the same way)

from controller.cards import DECK  # noqa: E402
from vision.recognise import recognise  # noqa: E402
from vision.synth import DESIGNS, render_face  # noqa: E402

W, H = 640, 480
TABLES = [(40, 90, 30), (30, 30, 30), (120, 70, 20), (70, 110, 150), (90, 90, 90)]
KINDS = ["plain", "blob", "bold", "classic", "serif"]


def put(frame: NDArray[np.uint8], face: MatLike, quad: list[tuple[float, float]]) -> None:
    """``face`` warped onto ``quad`` (tl, tr, br, bl) of ``frame``."""
    fh, fw = face.shape[:2]
    src = np.array([(0, 0), (fw - 1, 0), (fw - 1, fh - 1), (0, fh - 1)], np.float32)
    m = cv2.getPerspectiveTransform(src, np.array(quad, np.float32))
    warped = cv2.warpPerspective(face, m, (W, H))
    mask = cv2.warpPerspective(np.full((fh, fw), 255, np.uint8), m, (W, H))
    frame[mask > 127] = warped[mask > 127]


def draw(i: int) -> tuple[NDArray[np.uint8], dict[str, object]]:
    """Scene ``i``: the frame and its parameters."""
    r = np.random.default_rng([60, i])
    frame = np.full((H, W, 3), TABLES[int(r.integers(len(TABLES)))], np.uint8)
    cw = int(r.integers(150, 280))
    ch = min(int(cw * 88 / 63), 440)
    cw = min(cw, int(ch * 63 / 88)) if ch == 440 else cw
    top, xl = int(r.integers(10, H - ch - 10 + 1)), int(r.integers(20, 80))
    gap, foot, drop = int(r.integers(0, 9)), float(r.uniform(0, 0.6)), int(r.integers(-10, 11))
    wall, bar = int(r.integers(170, 250)), bool(r.integers(2))
    frame[:, : xl + 2] = wall
    if bar:
        frame[max(0, top - 14) : top + 2, : xl + cw - 20] = wall
    kind = KINDS[int(r.integers(len(KINDS)))]
    left, right = DECK[int(r.integers(52))], DECK[int(r.integers(52))]
    gain = float(r.uniform(0.8, 1.05))
    if kind in ("plain", "blob"):
        face = np.full((ch, cw, 3), 240, np.uint8)
        if kind == "blob":
            cv2.circle(face, (cw // 2, ch // 2), cw // 4, (20, 20, 20), -1)
    else:
        face = np.asarray(render_face(left, DESIGNS[kind]), np.uint8)
    put(frame, np.clip(face * gain, 0, 255).astype(np.uint8), [(xl, top), (xl + cw, top), (xl + cw, top + ch),
                                                                (xl, top + ch)])
    x2, j = xl + cw + gap, r.uniform(-6, 6, (4, 2))
    put(frame, render_face(right, DESIGNS["classic"]),
        [(x2 + j[0, 0], top + drop + j[0, 1]), (x2 + cw + j[1, 0], top + drop + j[1, 1]),
         (x2 + cw + j[2, 0], top + drop + ch + j[2, 1]), (x2 + j[3, 0], top + drop + ch + j[3, 1])])
    if gap and foot > 0.05:
        frame[top + int(ch * (1 - foot)) : top + ch, xl + cw : x2 + 1] = int(r.integers(140, 230))
    return frame, {"i": i, "kind": kind, "left": left.code, "right": right.code, "gap": gap,
                   "foot": round(foot, 2), "wall": wall, "bar": bar, "width": cw}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=int, default=600)
    parser.add_argument("--out", type=Path, required=True, help="folder for the false cards' PNGs and JSON")
    args = parser.parse_args()
    print(f"# python bench/vision_side_by_side.py --scenes {args.scenes} --out {args.out}")
    cv2.setNumThreads(1)
    deck = profile("classic")
    args.out.mkdir(parents=True, exist_ok=True)
    false: list[dict[str, object]] = []
    for i in range(args.scenes):
        frame, params = draw(i)
        reading = recognise(frame, deck)
        if reading.card is not None:
            params["read"] = reading.card.code
            false.append(params)
            cv2.imwrite(str(args.out / f"false_{i}.png"), frame)
        if (i + 1) % 100 == 0:
            print(f"  {i + 1}/{args.scenes} scenes, {len(false)} false cards", flush=True)
    (args.out / "false.json").write_text(json.dumps(false, indent=1) + "\n", encoding="utf-8")
    print(f"{args.scenes} scenes of two objects: {len(false)} false cards "
          f"(by the second object's kind: {dict(Counter(str(f['kind']) for f in false))})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
