"""Benchmark (not a test): camera card recognition on held-out synthetic scenes, per deck design.

For each design: enrol the deck from near-studio photographs (seed 1, one per
face), then read a held-out set drawn with another seed under floor conditions
(rotation, perspective, blur, noise, lighting gradient, glare, JPEG) -- at
least 2,000 card frames (every card equally often) and 500 frames without a
card (empty window, card back, joker, two cards, a hand over the index) --
at 640x480 and at 1280x720. Prints the figures of ``croupier vision test``
and compares them with the aims (zero wrong reads, zero false cards, at least
99.5 % read correctly, under 10 ms per frame at 640x480 on one thread).

Latency is the time of :func:`vision.recognise.recognise` on one thread, wall
and process CPU; on a machine shared with other work the wall time is the
CPU time plus waiting for a core, so both are printed with the load average.

    .venv/bin/python bench/vision_recognition.py
    .venv/bin/python bench/vision_recognition.py --designs classic --count 2000 --negatives 500
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.cards import DECK  # noqa: E402
from vision.dataset import held_out_set  # noqa: E402
from vision.enroll import enrol  # noqa: E402
from vision.evaluate import evaluate, summary  # noqa: E402
from vision.synth import DESIGNS, STUDIO, scene  # noqa: E402

AIM_ACCURACY = 0.995
AIM_MS = 10.0


def start() -> str:
    """One OpenCV thread (the figures are per thread); print and return the command, then the machine."""
    cv2.setNumThreads(1)
    command = "python " + " ".join([sys.argv[0], *sys.argv[1:]])
    print(f"# {command}")
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"OpenCV {cv2.__version__}, one thread; load average at start {os.getloadavg()[0]:.1f}")
    return command


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--designs", default="classic,bold,serif,lefty")
    parser.add_argument("--sizes", default="640x480,1280x720")
    parser.add_argument("--count", type=int, default=2080, help="card frames per design and size")
    parser.add_argument("--negatives", type=int, default=500, help="frames without a card")
    parser.add_argument("--enrol-seed", type=int, default=1)
    parser.add_argument("--shots", type=int, default=1, help="enrolment photographs per face (averaged)")
    parser.add_argument("--seed", type=int, default=2026, help="the held-out set's seed")
    parser.add_argument("--json", type=Path, help="write every report here")
    args = parser.parse_args()
    command = start()
    reports = {}
    failed = False
    for name in args.designs.split(","):
        design = DESIGNS[name]
        shots = [(scene(card, design, args.enrol_seed * 1_000_003 + i * 31 + k, cond=STUDIO), card, card.code)
                 for i, card in enumerate(DECK) for k in range(args.shots)]
        result = enrol(shots, name)
        if result.profile is None:
            print(f"{name}: enrolment failed: {result.problems}")
            failed = True
            continue
        if result.problems:
            print(f"{name}: enrolment self-check: {'; '.join(result.problems)}")
        for size_text in args.sizes.split(","):
            w, h = (int(v) for v in size_text.split("x"))
            started = time.monotonic()
            frames = held_out_set(design, args.seed, args.count, args.negatives, (w, h))
            report = evaluate(frames, result.profile)
            reports[f"{name} {size_text}"] = report
            lat = report["latency_ms"]
            print(f"\n== design {name}, {size_text}: {time.monotonic() - started:.0f} s "
                  f"(load average {os.getloadavg()[0]:.1f})")
            print(summary(report))
            ok = report["wrong"] == 0 and report["false_cards"] == 0 and report["accuracy"] >= AIM_ACCURACY
            print(f"aims: wrong 0 / false 0 / accuracy >= {AIM_ACCURACY:.1%}: {'met' if ok else 'NOT MET'}; "
                  f"accuracy ratio to aim {report['accuracy'] / AIM_ACCURACY:.4f}")
            if (w, h) == (640, 480):
                print(f"aim < {AIM_MS:g} ms/frame at 640x480: CPU p50 {lat['cpu_p50']} ms "
                      f"(ratio {lat['cpu_p50'] / AIM_MS:.2f}), CPU p99 {lat['cpu_p99']} ms "
                      f"(ratio {lat['cpu_p99'] / AIM_MS:.2f}); wall p50 {lat['wall_p50']} ms "
                      f"(ratio {lat['wall_p50'] / AIM_MS:.2f}), wall p99 {lat['wall_p99']} ms")
            failed |= not ok
    if args.json:
        args.json.write_text(json.dumps({"command": command, "reports": reports}, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
