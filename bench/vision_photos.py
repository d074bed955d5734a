"""Benchmark (not a test): a deck enrolled from photographs, then read on a folder of other photographs.

Why: the synthetic scenes (``vision.synth``) are our own drawings under our
own distortions; a house enrols its deck from photographs and deals under
its own camera. This script measures the recogniser the way a house would:

    # enrol from one folder, read another (labels from labels.csv or file names)
    .venv/bin/python bench/vision_photos.py measure --enrol ENROL_DIR --test TEST_DIR [--size 640x480]

A public set that lacks a card's photograph (rd-pong's has none of the JH, and its author retouched
three others) is refused by enrolment, as a house's would be; ``--stand-ins`` measures it all the same,
the missing cards read by the rank and suit templates the rest of the deck teaches (``vision.enroll``).

A photograph's card comes from the folder's ``labels.csv`` (``file,card``,
``none`` for a frame without a card) or else its name (``QH.jpg``,
``10d-2.png``, ``2c_07.jpg``; ``none-3.jpg`` or ``empty-3.jpg`` for no card).
Frames are read one at a time (memory stays flat whatever the folder's
size) and shrunk to ``--size``'s width first when larger, as a camera set to
that resolution would give them. It prints correct, wrong, unknown (with the
commonest reasons), false cards on frames without a card, and the CPU per
frame (p50, p99) of :func:`vision.recognise.recognise` on one thread.

Where a deck's faces exist only as flat photographs (one per card, cut out
of their background), ``compose`` puts them into harsh scenes -- any
rotation, a steeper tilt than ``vision.synth``'s floor, felt, wood, a pale
table, a bright vignette or glare reaching the frame's edge, a neighbouring
card cut by the edge -- and writes an enrolment folder (near-studio) and a
test folder with their ``labels.csv``:

    .venv/bin/python bench/vision_photos.py compose --faces FACES_DIR --out /tmp/h28-data/composed

The card pixels are then real photographs; the scenes around them are not.
No photograph is committed: the folders live outside the repository.

Where a public set of a real deck's photographs has its own layout, ``cut`` builds the two folders from a
table of ours (``bench/photo_sets/*.csv``: ``set,photo,card,box``, the box ``whole`` or ``x0 y0 x1 y1``
as fractions of the upright photograph, for a one-card frame cut out of a photograph of several):

    # the repository named in the table, its files written out (a snapshot may lack its largest files)
    git --git-dir=G ls-tree -r --name-only -z HEAD | while IFS= read -r -d '' p; do
      git --git-dir=G cat-file -e "HEAD:$p" && mkdir -p "/tmp/src/${p%/*}" &&
      git --git-dir=G show "HEAD:$p" >"/tmp/src/$p"; done
    .venv/bin/python bench/vision_photos.py cut --photos /tmp/src --table bench/photo_sets/X.csv --out DIR
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision_recognition import start  # noqa: E402  (bench/, beside this script)

from controller.cards import DECK, Card, CardError, parse_card  # noqa: E402
from vision.enroll import EnrolResult, enrol, read_labels  # noqa: E402
from vision.evaluate import evaluate, summary  # noqa: E402
from vision.recognise import Image  # noqa: E402
from vision.sources import IMAGE_SUFFIXES  # noqa: E402
from vision.synth import FACE_H, FACE_W, STUDIO, Conditions, _corners, _photograph, render_back  # noqa: E402

NEGATIVE_NAMES = ("none", "empty", "neg")


def card_of(name: str) -> Card | None | str:
    """The card a file name stands for, None for a frame without a card, or a reason it is neither."""
    stem = Path(name).stem.split("-")[0].split("_")[0]
    if stem.lower() in NEGATIVE_NAMES:
        return None
    try:
        return parse_card(stem)
    except CardError as exc:
        return str(exc)


def labelled(folder: Path) -> list[tuple[Path, Card | None]]:
    """(file, card or None) of every photograph in ``folder``: ``labels.csv`` or the file names."""
    labels = folder / "labels.csv"
    out: list[tuple[Path, Card | None]] = []
    if labels.is_file():
        for _, file, text in read_labels(labels):
            out.append((folder / file, None if text.lower() == "none" else parse_card(text)))
        return out
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in IMAGE_SUFFIXES:
            card = card_of(path.name)
            if isinstance(card, str):
                raise SystemExit(f"{path}: not a card name ({card}) and no labels.csv")
            out.append((path, card))
    return out


def frames(items: Sequence[tuple[Path, Card | None]], width: int) -> Iterator[tuple[Image, Card | None, str]]:
    """Decode one photograph at a time, shrunk to ``width`` when wider (OpenCV's reduced decode first)."""
    for path, card in items:
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if img is None:
            raise SystemExit(f"{path}: not an image OpenCV can read")
        if img.shape[1] > width:
            f = width / img.shape[1]
            img = cv2.resize(img, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        yield img, card, path.name


def enrol_folder(folder: Path, width: int, stand_ins: bool) -> EnrolResult:
    """The deck enrolled from the labelled photographs of ``folder`` (those of a card), shrunk to
    ``width``. A generator feeds it: enrolment keeps only the warped faces, so the decoded photographs
    (up to 12 MP each) are never all held at once."""
    items = [(p, c) for p, c in labelled(folder) if c is not None]
    shots = ((img, card, name) for img, card, name in frames(items, width) if card is not None)
    return enrol(shots, "photos", stand_ins=stand_ins)


def measure(args: argparse.Namespace) -> int:
    width = int(args.size.lower().split("x")[0])
    result = enrol_folder(args.enrol, width, args.stand_ins)
    for problem in result.problems:
        print(f"  enrolment problem: {problem}")
    if result.stand_ins:
        print(f"  enrolment stand-ins (read by the rest of the deck): {', '.join(sorted(result.stand_ins))}")
    if result.profile is None:
        print("enrolment failed: no profile")
        return 1
    idx = result.profile.spec.index
    print(f"enrolled from {result.images} photographs: index {idx.corner}, box {idx.box}")
    report = evaluate(frames(labelled(args.test), width), result.profile)
    print(summary(report))
    print(f"unknown reasons: {report['unknown_reasons']}")
    for frame in report["unknown_frames"]:
        print(f"  unknown: {frame}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if report["wrong"] or report["false_cards"] else 0


#: vision.synth's floor, but smaller cards and more glare; the camera's tilt is :func:`tilt`'s.
HARSH = Conditions(max_tilt=0.04, blur=1.2, noise=6.0, gradient=0.35, glare=0.6, scale=(0.55, 0.8))
#: The steepest camera tilt of the harsh scenes, in degrees from straight down.
MAX_TILT_DEGREES = 20.0


def tilt(frame: Image, table: Image, corners: Image | None, rng: random.Random) -> tuple[Image, Image | None]:
    """The scene as a camera tilted up to :data:`MAX_TILT_DEGREES` sees it: a true perspective (the
    homography of a camera turned about its centre, focal length the frame's width), not a random
    shift of each corner."""
    h, w = frame.shape[:2]
    k = np.array([[w, 0, w / 2], [0, w, h / 2], [0, 0, 1]], np.float64)
    a, b = (math.radians(rng.uniform(-MAX_TILT_DEGREES, MAX_TILT_DEGREES)) for _ in range(2))
    rx = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    ry = np.array([[math.cos(b), 0, math.sin(b)], [0, 1, 0], [-math.sin(b), 0, math.cos(b)]])
    hom = k @ rx @ ry @ np.linalg.inv(k)
    out = cv2.warpPerspective(frame, hom, (w, h))
    seen = cv2.warpPerspective(np.full((h, w), 255, np.uint8), hom, (w, h))
    out[seen < 255] = table[seen < 255]  # the table beyond the flat scene's edge
    moved = (
        None if corners is None else cv2.perspectiveTransform(corners.reshape(-1, 1, 2), hom).reshape(-1, 2)
    )
    return out, moved


def cut_out(face: Image) -> tuple[Image, Image]:
    """A flat card photograph at FACE_W x FACE_H, and its mask (the black past its rounded corners out)."""
    face = cv2.resize(face, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA)
    dark = (face.max(axis=2) < 40).astype(np.uint8)
    outside = np.zeros((FACE_H + 2, FACE_W + 2), np.uint8)
    for x, y in ((0, 0), (FACE_W - 1, 0), (0, FACE_H - 1), (FACE_W - 1, FACE_H - 1)):
        if dark[y, x]:
            cv2.floodFill(dark, outside, (x, y), 2, flags=4 | cv2.FLOODFILL_MASK_ONLY | (255 << 8))
    return face, np.where(outside[1:-1, 1:-1] > 0, 0, 255).astype(np.uint8)


def background(rng: random.Random, w: int, h: int) -> Image:
    """Felt, wood grain or a pale table, with noise."""
    kind = rng.choice(["felt", "felt", "wood", "pale", "cloth"])
    img = np.empty((h, w, 3), np.float32)
    if kind == "felt":
        img[:] = rng.choice([(40, 90, 30), (35, 70, 25), (80, 40, 20), (30, 30, 90), (45, 45, 45)])
    elif kind == "wood":
        xs = np.linspace(0, rng.uniform(20, 40), w, dtype=np.float32)
        grain = 0.5 + 0.5 * np.sin(xs[None, :] + 3 * np.sin(np.linspace(0, 4, h, dtype=np.float32))[:, None])
        for c, (lo, hi) in enumerate(((30, 60), (60, 100), (100, 150))):
            img[..., c] = lo + (hi - lo) * grain
    elif kind == "pale":
        img[:] = rng.choice([(150, 160, 165), (120, 135, 140), (170, 170, 160)])
    else:
        check = ((np.indices((h, w)).sum(axis=0) // rng.randint(6, 14)) % 2).astype(np.float32)
        img[:] = 60
        img += check[..., None] * np.array([30, 10, 50], np.float32)
    noise = np.random.default_rng(rng.randrange(1 << 32)).normal(0, 6, (h, w, 3))
    out: Image = np.clip(img + noise, 0, 255).astype(np.uint8)
    return out


def place(frame: Image, face: Image, mask: Image, corners: Image) -> None:
    h, w = frame.shape[:2]
    src = np.array([(0, 0), (FACE_W - 1, 0), (FACE_W - 1, FACE_H - 1), (0, FACE_H - 1)], np.float32)
    m = cv2.getPerspectiveTransform(src, corners)
    warped = cv2.warpPerspective(face, m, (w, h), flags=cv2.INTER_LINEAR)
    wmask = cv2.warpPerspective(mask, m, (w, h), flags=cv2.INTER_LINEAR)
    frame[wmask > 127] = warped[wmask > 127]


def clutter(frame: Image, rng: random.Random, cut_out_face: tuple[Image, Image] | None) -> None:
    """Bright things that are not the card: a white vignette or glare reaching the edge, a neighbour."""
    h, w = frame.shape[:2]
    what = rng.choice(["none", "vignette", "glare", "neighbour"])
    if what == "vignette":
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        cx, cy = rng.choice([(0, 0), (w, 0), (0, h), (w, h)])
        d = np.sqrt((xs - cx) ** 2 + (ys - cy) ** 2) / math.hypot(w, h)
        lift = np.clip((rng.uniform(0.25, 0.4) - d) * 6, 0, 1) * rng.uniform(120, 200)
        frame[:] = np.clip(frame + lift[..., None], 0, 255).astype(np.uint8)
    elif what == "glare":
        spot = np.zeros((h, w), np.float32)
        x, y = rng.choice([0, w - 1]), rng.randint(0, h - 1)
        cv2.circle(spot, (x, y), rng.randint(h // 8, h // 4), 1.0, -1)
        spot = cv2.GaussianBlur(spot, (0, 0), 15)
        frame[:] = np.clip(frame + spot[..., None] * rng.uniform(150, 230), 0, 255).astype(np.uint8)
    elif what == "neighbour" and cut_out_face is not None:
        face, mask = cut_out_face
        cw, ch = h * 0.6 * FACE_W / FACE_H, h * 0.6
        side = rng.choice([-1, 1])
        x0 = -cw * 0.8 if side < 0 else w - cw * 0.2
        y0 = rng.uniform(0, h - ch)
        corners = np.array([(x0, y0), (x0 + cw, y0), (x0 + cw, y0 + ch), (x0, y0 + ch)], np.float32)
        place(frame, face, mask, corners)


def composed(
    face: tuple[Image, Image] | None,
    seed: int,
    size: tuple[int, int],
    cond: Conditions,
    other: tuple[Image, Image],
) -> Image:
    """One harsh frame of ``face`` (None: no card), with clutter when ``cond`` is :data:`HARSH`."""
    rng = random.Random(seed)
    w, h = size
    frame = background(rng, w, h)
    table = frame.copy()
    corners = None
    if face is not None:
        corners = _corners(rng, w, h, cond)
        place(frame, face[0], face[1], corners)
    if cond is HARSH:
        frame, corners = tilt(frame, table, corners, rng)
        clutter(frame, rng, other)
        if corners is not None and not _inside(corners, w, h):
            return composed(face, seed + 7_919, size, cond, other)  # the dealer shows the whole card
    return _photograph(frame, rng, cond, corners)


def _inside(corners: Image, w: int, h: int) -> bool:
    return bool(
        (corners.min(axis=0) >= 3).all() and corners[:, 0].max() <= w - 4 and corners[:, 1].max() <= h - 4
    )


def compose(args: argparse.Namespace) -> int:
    size = (int(args.size.split("x")[0]), int(args.size.split("x")[1]))
    faces: dict[Card, tuple[Image, Image]] = {}
    for path, card in labelled(args.faces):
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if card is not None and img is not None:
            faces[card] = cut_out(img)
    if len(faces) != 52:
        raise SystemExit(f"{args.faces}: {len(faces)} card faces, not 52")
    back = render_back(random.Random(args.seed))
    back_cut = cut_out(cv2.resize(back, (FACE_W, FACE_H)))
    for sub, cond, count, negatives in (
        ("enrol", STUDIO, 52, 0),
        ("test", HARSH, args.count, args.negatives),
    ):
        folder = args.out / sub
        folder.mkdir(parents=True, exist_ok=True)
        rows = ["file,card"]
        rng = random.Random(args.seed * 7 + len(sub))
        order = list(DECK) if sub == "enrol" else [DECK[i % 52] for i in range(count)]
        rng.shuffle(order)
        for i, card in enumerate(order):
            other = faces[DECK[(card.index + 17) % 52]]
            img = composed(faces[card], args.seed * 1_000_003 + i, size, cond, other)
            name = f"{i:05d}-{card.code}.jpg"
            cv2.imwrite(str(folder / name), img, [cv2.IMWRITE_JPEG_QUALITY, 92])
            rows.append(f"{name},{card.code}")
        for i in range(negatives):
            face = back_cut if i % 3 == 0 else None
            img = composed(face, args.seed * 1_000_003 + count + i, size, cond, faces[DECK[i % 52]])
            name = f"{count + i:05d}-none.jpg"
            cv2.imwrite(str(folder / name), img, [cv2.IMWRITE_JPEG_QUALITY, 92])
            rows.append(f"{name},none")
        (folder / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        print(f"{len(rows) - 1} frames and labels.csv in {folder}")
    return 0


def cut(args: argparse.Namespace) -> int:
    """One folder per ``set`` of the table, each with its labels.csv: a ``whole`` photograph is copied
    byte for byte, a box is cut out of the upright photograph (a JPEG at quality 95, a PNG lossless)."""
    lines = [ln for ln in args.table.read_text(encoding="utf-8").splitlines() if not ln.startswith("#")]
    labels: dict[str, list[str]] = {}
    for row in csv.DictReader(lines):
        card = row["card"].strip()
        if card.lower() != "none":
            parse_card(card)
        folder = args.out / row["set"]
        if row["set"] not in labels:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            labels[row["set"]] = ["file,card"]
        source = args.photos / row["photo"]
        name = f"{Path(row['photo']).stem}-{card}{source.suffix.lower()}"
        if (folder / name).exists():
            raise SystemExit(f"{args.table}: {row['photo']} gives {name} twice")
        if row["box"].strip() == "whole":
            shutil.copyfile(source, folder / name)
        else:
            img = cv2.imread(str(source), cv2.IMREAD_COLOR)  # upright: OpenCV applies the EXIF orientation
            if img is None:
                raise SystemExit(f"{source}: not an image OpenCV can read")
            h, w = img.shape[:2]
            x0, y0, x1, y1 = (float(v) for v in row["box"].split())
            crop = img[round(y0 * h) : round(y1 * h), round(x0 * w) : round(x1 * w)]
            jpeg = source.suffix.lower() in (".jpg", ".jpeg")
            cv2.imwrite(str(folder / name), crop, [cv2.IMWRITE_JPEG_QUALITY, 95] if jpeg else [])
        labels[row["set"]].append(f"{name},{card}")
    for sub_set, rows in labels.items():
        (args.out / sub_set / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        print(f"{len(rows) - 1} frames and labels.csv in {args.out / sub_set}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="action", required=True)
    m = sub.add_parser("measure", help="enrol from one folder of photographs, read another")
    m.add_argument("--enrol", type=Path, required=True)
    m.add_argument("--test", type=Path, required=True)
    m.add_argument("--size", default="640x480", help="working width: larger photographs are shrunk to it")
    m.add_argument("--stand-ins", action="store_true",
                   help="a set lacking a card: read it by the rest's rank and suit (never a table's deck)")
    m.add_argument("--json", type=Path)
    c = sub.add_parser("compose", help="put flat card photographs into harsh scenes (enrol/ and test/)")
    c.add_argument("--faces", type=Path, required=True, help="52 flat card photographs named by card")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--count", type=int, default=520)
    c.add_argument("--negatives", type=int, default=150)
    c.add_argument("--seed", type=int, default=2026)
    c.add_argument("--size", default="640x480")
    k = sub.add_parser("cut", help="build set folders (enrol/, test/) from a photo set's table")
    k.add_argument(
        "--photos", type=Path, required=True, help="the photographs, as laid out in their repository"
    )
    k.add_argument("--table", type=Path, required=True, help="set,photo,card,box rows (bench/photo_sets/)")
    k.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.action == "cut":
        return cut(args)
    start()
    return measure(args) if args.action == "measure" else compose(args)


if __name__ == "__main__":
    raise SystemExit(main())
