"""Benchmark (not a test): each deck's profile reads the other decks' photographs: never a wrong card.

Why: a house enrols the deck it deals, but a table may one day deal a deck it did not enrol (a new
order of cards from the same maker, a spare deck from another). The recogniser's first promise is
then the one that matters: no wrong card and no card where there is none, whatever it reads. Each
set's deck is enrolled from its own photographs (as ``vision_photos.py measure`` does) and reads every
other set's test frames; a frame read as its true card counts as read (decks of one maker's artwork
share glyphs), any other card as wrong:

    .venv/bin/python bench/vision_cross_deck.py SET_DIR SET_DIR [SET_DIR ...] [--size 640x480] [--stand-ins]

A ``SET_DIR`` holds ``enrol/`` (or ``faces/``) and ``test/``, named or labelled as
``vision_photos.py`` reads them (docs/vision.md, "Real photographs", says how the public sets are
rebuilt). ``--stand-ins`` lets a set lacking a card's photograph enrol all the same (the missing cards
read by the rest of its deck's rank and suit templates), which can only widen what it reads. It prints
one line per pair, the totals, and exits 1 on any wrong read or false card.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision_photos import enrol_folder, frames, labelled  # noqa: E402  (bench/, beside this script)
from vision_recognition import start  # noqa: E402

from vision.evaluate import evaluate  # noqa: E402
from vision.profile import DeckProfile  # noqa: E402


def profile_of(folder: Path, width: int, stand_ins: bool) -> DeckProfile:
    """The deck of ``folder`` enrolled from its ``enrol/`` (else ``faces/``) photographs."""
    enrol_dir = folder / "enrol" if (folder / "enrol").is_dir() else folder / "faces"
    result = enrol_folder(enrol_dir, width, stand_ins)
    if result.profile is None:
        raise SystemExit(f"{enrol_dir}: enrolment failed ({'; '.join(result.problems)})")
    return result.profile


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", type=Path, nargs="+", help="set folders: enrol/ (or faces/) and test/")
    parser.add_argument("--size", default="640x480", help="working width: larger photos are shrunk to it")
    parser.add_argument("--stand-ins", action="store_true", help="enrol a set lacking a card all the same")
    args = parser.parse_args()
    if len(args.sets) < 2:
        parser.error("give at least two set folders")
    start()
    width = int(args.size.lower().split("x")[0])
    totals = dict.fromkeys(("card_frames", "negative_frames", "correct", "wrong", "false_cards"), 0)
    for deck in args.sets:
        profile = profile_of(deck, width, args.stand_ins)
        for other in args.sets:
            if other == deck:
                continue
            report = evaluate(frames(labelled(other / "test"), width), profile)
            for key in totals:
                totals[key] += report[key]
            print(f"{deck.name} reads {other.name}: {report['card_frames']} card frames, "
                  f"wrong {report['wrong']}, read as their own card {report['correct']}; "
                  f"{report['negative_frames']} without a card, false cards {report['false_cards']}",
                  flush=True)
    pairs = len(args.sets) * (len(args.sets) - 1)
    print(f"{pairs} pairs: {totals['card_frames']} card frames, wrong {totals['wrong']}, read as their own "
          f"card {totals['correct']}; {totals['negative_frames']} without a card, false cards "
          f"{totals['false_cards']}")
    return 1 if totals["wrong"] or totals["false_cards"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
