"""Benchmark (not a test): the wider seeded sweep of two objects in one frame, each read as the window.

Why: one card at a time is the recogniser's money rule, and a public photograph of two prop cards
side by side was read as one of them (docs/vision-history.md, "more public photographs").
bench/vision_side_by_side.py draws that photograph's family; this sweep, first a second hand's research
script, draws a wider one (bench/two_objects_scenes.py says what): a card of the enrolled (classic)
deck beside a second object (a card of the same or another design, a plain card, one with a big pip, a
back), side by side, end to end or at an angle, with the seam, the surround (a pale wall, a sheet, a
glare, a vignette, or nothing), the light and the table varied. Every scene holds two objects, so every
reading with status "card" is a false card; each is written to ``--out`` as a PNG and a JSON of the
scene's parameters and the reading, to look at. The figures split them by where the objects lie: an
object the frame's edge cuts beside the card read is left alone by design (a neighbour the window cuts);
a card read with both objects wholly inside is the breach, split by what surrounds which object and by
the second object's kind. (The card read may be the second object: a card of either design.)

    taskset -c 1 .venv/bin/python bench/vision_two_objects.py --scenes 4000 --out /tmp/two-objects

``--condition`` (one of bench/vision_conditions.py's: ``dark2.2``, ``bright0.6``, ``jpeg30``...) reads each
scene as a camera exposed otherwise, or compressing harder, would give it.

Seeded (``numpy.random.default_rng([seed, i])``): the same scenes on every checkout whose
``vision.synth`` draws the same faces, to compare two; ``--start`` draws scenes from a later number (to
look again at one of them, or to share a run out).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from two_objects_scenes import Params, scene  # noqa: E402  (bench/, beside this script)
from vision_conditions import CONDITIONS  # noqa: E402  (bench/, beside this script)
from vision_recognition import start  # noqa: E402  (bench/, beside this script)
from vision_support import profile  # noqa: E402  (the tests' classic deck, enrolled the same way)

from vision.recognise import recognise  # noqa: E402

#: The second object's kinds, as the scenes name them, and as the figures do.
KINDS = {"plain": "plain", "pip": "pip", "back": "back", "classic": "same design", "design": "other design"}


def breakdown(false: list[tuple[Params, str]]) -> list[str]:
    """The false cards (each scene's parameters and the card read) by where the two objects lie, then
    those wholly inside by what surrounds which and by the second object's kind: the lines to print.
    The card read is the second object when its code is not the classic card's (the scenes never draw
    the same code twice)."""
    inside = [p for p, _ in false if p["classic_inside"] and p["other_inside"]]
    read_cut = sum(not p["classic_inside" if read == p["a"] else "other_inside"] for p, read in false)
    other_cut = sum(not p["other_inside"] for p, _ in false)
    card_cut = sum(not p["classic_inside"] for p, _ in false)
    both_cut = sum(not p["other_inside"] and not p["classic_inside"] for p, _ in false)
    on = Counter(str(p["surround_on"]) for p in inside)
    kinds = Counter(KINDS[str(p["b_kind"])] for p in inside)
    bare = [p for p in inside if p["surround"] == "none"]
    return [
        f"  both objects wholly inside the frame: {len(inside)}",
        f"  the card read wholly inside, the other object crossing the frame's edge (a neighbour the "
        f"window cuts, set aside by design): {len(false) - len(inside) - read_cut}",
        f"  the card read crossing the frame's edge: {read_cut}",
        f"by object: the second object crosses the frame's edge in {other_cut}, the classic card in "
        f"{card_cut} ({both_cut} both); the card read is the second object in "
        f"{sum(read != p['a'] for p, read in false)}",
        f"of the {len(inside)} wholly inside:",
        f"  by the object the surround is on: the second object {on['other']}, "
        f"the classic card {on['classic']}",
        "  by the second object's kind: " + ", ".join(f"{k} {kinds[k]}" for k in KINDS.values()),
        f"  with no surround (surround \"none\"): {len(bare)} "
        f"(by kind: {dict(Counter(KINDS[str(p['b_kind'])] for p in bare))}; "
        f"by table: {dict(Counter(str(p['table']) for p in bare))})",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=60, help="the sweep's seed (60: the scenes first drawn)")
    parser.add_argument("--scenes", type=int, default=4000)
    parser.add_argument("--start", type=int, default=0, help="the first scene's number")
    parser.add_argument("--out", type=Path, required=True, help="folder for the false cards' PNGs and JSON")
    parser.add_argument("--condition", default="none", choices=sorted(CONDITIONS),
                        help="each scene as a camera would give it (bench/vision_conditions.py's)")
    args = parser.parse_args()
    start()
    deck = profile("classic")
    args.out.mkdir(parents=True, exist_ok=True)
    false: list[tuple[Params, str]] = []
    drawn = 0
    began = time.monotonic()
    for i in range(args.start, args.start + args.scenes):
        frame, params = scene(args.seed, i)
        if frame is not None:
            drawn += 1
            frame = CONDITIONS[args.condition](frame, i)
            reading = recognise(frame, deck)
            if reading.status == "card" and reading.card is not None:
                false.append((params, reading.card.code))
                name = f"s{args.seed}_i{i:05d}"
                cv2.imwrite(str(args.out / f"{name}.png"), frame)
                record = {"params": params, "reading": reading.to_dict()}
                (args.out / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        if (i + 1 - args.start) % 500 == 0:
            print(f"  {i + 1 - args.start}/{args.scenes} scenes, {len(false)} false cards", flush=True)
    last = args.start + args.scenes - 1
    print(f"seed {args.seed}, scenes {args.start} to {last} ({args.condition}): {drawn} drawn "
          f"({args.scenes - drawn} found no place in the frame), {len(false)} false cards, "
          f"in {time.monotonic() - began:.0f} s")
    print("\n".join(breakdown(false)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
