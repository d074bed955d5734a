"""Benchmark (not a test): where the CPU of a photograph set's slowest frames goes, stage by stage.

Why: the issue's aim is a p99 of the CPU per frame, and a p99 is set by a handful of frames (the
seventh worst of 670); the mean cost says nothing about them. This script enrols a deck as
``bench/vision_photos.py measure`` does, reads every test frame ``--repeat`` times and keeps each
frame's least CPU time (process time: the machine is shared, and the least of a few runs is the
frame's own cost with less of the neighbours' noise), prints p50 / p99 / max, then reads the slowest
``--worst`` share again under :mod:`cProfile` and prints the functions where their time goes (the wall
time's p50 / p99 too: ``--threads 2`` shows what OpenCV's own threads cost and give):

    .venv/bin/python bench/vision_profile.py --enrol D/enrol --test D/test --size 640x480

Each stage is a function of ``vision``; a line gives its own time (``self``) and with what it calls
(``total``), summed over the slow frames, in ms per slow frame. The command is printed first, so a
figure pasted into a document carries what made it.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision_photos import frames, labelled  # noqa: E402  (bench/, beside this script)

from vision.enroll import enrol  # noqa: E402
from vision.profile import DeckProfile  # noqa: E402
from vision.recognise import READ_THREADS, Image, recognise  # noqa: E402


def frame_costs(images: Sequence[Image], profile: DeckProfile, repeat: int,
                walls: list[float] | None = None) -> list[float]:
    """Each frame's least CPU time (ms) over ``repeat`` reads; its least wall time added to ``walls``."""
    costs = []
    for img in images:
        best = wall = float("inf")
        for _ in range(repeat):
            start, began = time.process_time(), time.perf_counter()
            recognise(img, profile)
            best = min(best, time.process_time() - start)
            wall = min(wall, time.perf_counter() - began)
        costs.append(best * 1000)
        if walls is not None:
            walls.append(wall * 1000)
    return costs


def stages(images: Sequence[Image], profile: DeckProfile, top: int) -> list[tuple[str, float, float, int]]:
    """(function, self ms, total ms, calls) per frame over ``images``, read under cProfile, the
    ``top`` functions of :mod:`vision` and the compiled calls (OpenCV's, numpy's: ``cv2.fitLine``)
    by total time. cProfile's own cost per call inflates many small Python calls: the table ranks
    the stages; the frames' figures above are without it."""
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    for img in images:
        recognise(img, profile)
    prof.disable()
    st = pstats.Stats(prof)
    n = max(len(images), 1)
    rows = []
    for (path, line, name), (_, calls, own, total, _) in st.stats.items():  # type: ignore[attr-defined]
        if "/vision/" in path:
            label = f"{Path(path).stem}.{name}:{line}"
        elif path == "~" and "_lsprof" not in name:
            label = name.removeprefix("<built-in method ").strip("<>")
            label = label if "." in label or " " in label else f"cv2.{label}"
        else:
            continue
        rows.append((label, own * 1000 / n, total * 1000 / n, round(calls / n)))
    rows.sort(key=lambda r: -r[2])
    return rows[:top]


def report(names: Sequence[str], costs: Sequence[float], repeat: int, worst: Sequence[int],
           rows: Sequence[tuple[str, float, float, int]], walls: Sequence[float] = ()) -> list[str]:
    """The printed lines: the CPU per frame's p50 / p99 / max (and the wall time's p50 / p99, given
    ``walls``), the ``worst`` frames (indices into ``names``) with their costs, and the stage table
    (:func:`stages`' ``rows``)."""
    p50, p99 = (float(np.percentile(costs, q)) for q in (50, 99))
    wall = "" if not walls else "; wall p50 {:.2f} ms, p99 {:.2f} ms".format(
        *(float(np.percentile(walls, q)) for q in (50, 99)))
    return [
        f"{len(costs)} frames, CPU per frame (least of {repeat}): p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
        f"max {max(costs):.2f} ms{wall}",
        f"slowest {len(worst)}: " + ", ".join(f"{names[i]} {costs[i]:.1f}" for i in worst),
        f"{'stage (ms per slow frame)':60} {'self':>8} {'total':>9} {'calls':>6}",
        *(f"{label[:60]:60} {own:8.2f} {total:9.2f} {calls:6d}" for label, own, total, calls in rows),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--enrol", type=Path, required=True)
    parser.add_argument("--test", type=Path, required=True)
    parser.add_argument("--size", default="640x480", help="larger photographs are shrunk to this width")
    parser.add_argument("--worst", type=float, default=0.03, help="the share of slowest frames profiled")
    parser.add_argument("--repeat", type=int, default=3, help="reads per frame; its least CPU is kept")
    parser.add_argument("--top", type=int, default=25, help="functions listed")
    parser.add_argument("--threads", type=int, default=READ_THREADS,
                        help="OpenCV's threads (the daemon's camera reads on 1: compare with 2 or more)")
    args = parser.parse_args(argv)
    cv2.setNumThreads(args.threads)
    print("command:", " ".join([Path(sys.executable).name, *sys.argv]))
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    width = int(args.size.lower().split("x")[0])
    shots = ((img, card, name) for img, card, name in frames(
        [(p, c) for p, c in labelled(args.enrol) if c is not None], width) if card is not None)
    result = enrol(shots, "photos")
    if result.profile is None:
        print("enrolment failed: no profile")
        return 1
    test = list(frames(labelled(args.test), width))
    walls: list[float] = []
    costs = frame_costs([img for img, _, _ in test], result.profile, args.repeat, walls)
    worst = sorted(range(len(costs)), key=lambda i: -costs[i])[: max(1, round(args.worst * len(costs)))]
    rows = stages([test[i][0] for i in worst], result.profile, args.top)
    print("\n".join(report([name for _, _, name in test], costs, args.repeat, worst, rows, walls)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
