"""Benchmark (not a test): camera card recognition on a real deck's printed artwork, not our drawings.

Why: the synthetic designs of ``vision.synth`` are drawn by us with Hershey
fonts and polygon suits; a printed deck has its own index lettering, court
pictures and suit shapes. No photographs of real cards may be downloaded
here, but Debian's ``aisleriot`` package ships the "Bonded" deck (GPL-3+):
vector artwork of all 52 faces, two jokers and a back, in the layout of a
real deck (indices in all four corners). This script renders it, puts every
face through the same photography as the synthetic scenes (perspective,
rotation, lighting gradient, tint, glare, blur, noise, JPEG:
:func:`vision.synth.photograph`), enrols the deck from near-studio shots
(seed 1) and reads a held-out set drawn with another seed under floor
conditions, plus negative frames: the empty window, the deck's own back and
its jokers. It measures the recogniser on real artwork; it is still not a
photograph of a card through a lens.

Needs the artwork and a renderer, which CI does not install, so no test
depends on it:

    apt-get install librsvg2-bin
    apt-get download aisleriot && dpkg-deb -x aisleriot_*.deb /tmp/aisleriot
    .venv/bin/python bench/vision_real_artwork.py --svgz /tmp/aisleriot/usr/share/aisleriot/cards/bonded.svgz

The sheet is 13 columns (A, 2..10, J, Q, K) by 5 rows (clubs, diamonds,
hearts, spades; jokers and the back). Each face is rendered at the height of
the synthetic faces and stretched to their width (the Bonded cards are
narrower than poker size), the same way for enrolment and test.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision_recognition import start  # noqa: E402  (bench/, beside this script)

from controller.cards import DECK, RANKS, SUITS, Card  # noqa: E402
from vision.enroll import enrol  # noqa: E402
from vision.evaluate import evaluate, summary  # noqa: E402
from vision.recognise import Image  # noqa: E402
from vision.synth import FACE_H, FACE_W, FLOOR, STUDIO, photograph  # noqa: E402

#: The sheet's rows, top to bottom, and columns, left to right.
SHEET_SUITS = "CDHS"
SHEET_RANKS = "A23456789TJQK"
SHEET_COLUMNS, SHEET_ROWS = 13, 5


def render_sheet(svgz: Path, zoom: float) -> Image:
    """The whole sheet as a BGR image on white (rsvg-convert renders the SVG; OpenCV reads the PNG)."""
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "sheet.png"
        subprocess.run(
            ["rsvg-convert", "--zoom", str(zoom), "--background-color", "white", "-o", str(png), str(svgz)],
            check=True,
        )
        sheet = cv2.imread(str(png), cv2.IMREAD_COLOR)
    if sheet is None:
        raise SystemExit(f"{svgz}: rsvg-convert gave no image")
    return sheet


def cut_faces(sheet: Image) -> tuple[dict[Card, Image], list[Image]]:
    """The 52 faces by card, and the other cards of the last row (jokers, back), each FACE_W x FACE_H."""
    h, w = sheet.shape[:2]
    cw, ch = w / SHEET_COLUMNS, h / SHEET_ROWS

    def cell(row: int, col: int) -> Image:
        x0, y0 = round(col * cw), round(row * ch)
        face = sheet[y0 : round(y0 + ch), x0 : round(x0 + cw)]
        return cv2.resize(face, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA)

    faces = {}
    for row, suit in enumerate(SHEET_SUITS):
        for col, rank in enumerate(SHEET_RANKS):
            faces[next(c for c in DECK if c.rank == rank and c.suit == suit)] = cell(row, col)
    assert len(faces) == 52 and set(RANKS) == set(SHEET_RANKS) and set(SUITS) == set(SHEET_SUITS)
    others = [cell(4, col) for col in range(3)]
    return faces, others


def held_out(
    faces: dict[Card, Image],
    others: list[Image],
    seed: int,
    count: int,
    negatives: int,
    size: tuple[int, int],
) -> Iterator[tuple[Image, Card | None, str]]:
    rng = random.Random(seed)
    cards = [DECK[i % 52] for i in range(count)]
    rng.shuffle(cards)
    for i, card in enumerate(cards):
        yield photograph(faces[card], seed * 1_000_003 + i, size, FLOOR), card, f"{i:05d}-{card.code}"
    kinds: list[Image | None] = [None, *others]  # the empty window, two jokers, the back
    for i in range(negatives):
        yield photograph(kinds[i % len(kinds)], seed * 1_000_003 + count + i, size, FLOOR), None, f"neg{i}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--svgz", type=Path, required=True, help="aisleriot's cards/bonded.svgz")
    parser.add_argument("--sizes", default="640x480,1280x720")
    parser.add_argument("--count", type=int, default=2080)
    parser.add_argument("--negatives", type=int, default=500)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    command = start()
    sheet = render_sheet(args.svgz, zoom=FACE_H / (615 / SHEET_ROWS))
    faces, others = cut_faces(sheet)
    shots = [
        (photograph(faces[c], 1 * 1_000_003 + i * 31, cond=STUDIO), c, c.code) for i, c in enumerate(DECK)
    ]
    result = enrol(shots, "bonded")
    if result.profile is None:
        print(f"enrolment failed: {result.problems}")
        return 1
    idx = result.profile.spec.index
    print(f"enrolled: index in the {idx.corner} corner, box {idx.box}, rank {idx.rank_height:.0f} px, "
          f"suit {idx.suit_height:.0f} px; self-check: {'; '.join(result.problems) or 'clean'}")
    reports = {}
    failed = False
    for size_text in args.sizes.split(","):
        w, h = (int(v) for v in size_text.split("x"))
        frames = held_out(faces, others, args.seed, args.count, args.negatives, (w, h))
        report = evaluate(frames, result.profile)
        reports[size_text] = report
        print(f"\n== bonded, {size_text}")
        print(summary(report))
        print(f"unknown reasons: {report['unknown_reasons']}")
        failed |= report["wrong"] > 0 or report["false_cards"] > 0
    if args.json:
        args.json.write_text(json.dumps({"command": command, "reports": reports}, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
