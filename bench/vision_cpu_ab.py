"""Benchmark (not a test): the CPU per frame of two versions of the recogniser, read by turns on one set.

Why: on this shared machine the CPU time of the same code moves by a third between two runs minutes
apart (the neighbours' load takes the caches), so a before/after pair run one after the other says
little about a change of a few percent. Here one worker per version (each its own process, with its
own checkout on PYTHONPATH) enrols the deck as ``bench/vision_photos.py measure`` does, and the two
read every frame by turns (A then B, B then A on the next frame), each keeping the least process
time of ``--repeat`` reads, both pinned to one CPU; both versions thus see the same load at the same
minutes on the same CPU:

    .venv/bin/python bench/vision_cpu_ab.py --enrol D/enrol --test D/test BEFORE_CHECKOUT AFTER_CHECKOUT

``--stand-ins`` enrols a deck with cards it lacks or refuses as ``bench/vision_photos.py measure
--stand-ins`` does (rd-pong's). ``--big 4032x3024`` reads the first 200 card frames upscaled to that
size (a 12 MP frame, the deck enrolled at 640 px). Prints each version's p50 / p99 / max, the frames it
read right, the median per-frame change and the load average at the start and end; ``--slowest N``
also the N frames slowest in either version, with both versions' times (where a small set's p99 comes
from).

It also says whether the two versions read every frame alike: each frame's whole outcome (status, card,
confidence, reason and corners to a thousandth of a pixel) is compared, and the frames that differ are
named with both outcomes. A cut meant to save CPU and change nothing is proven by "every outcome the
same" on each set (each version enrols its own profile, as a user would).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def worker(enrol_dir: Path, test_dir: Path, repeat: int, big: tuple[int, int] | None,
           stand_ins: bool) -> None:
    """Enrol, print the frame count, then for each frame index read from stdin print its least CPU time
    (ms), 1 when it read the labelled card, and its whole outcome (:func:`outcome`)."""
    import cv2

    # The checkout's own packages, imported before this script's helpers: vision_photos puts the
    # script's own checkout first on sys.path, which made both workers read with it (every A/B before
    # this fix compared one version with itself). Once imported, ``vision`` and ``controller`` resolve
    # their submodules in the checkout whatever sys.path says; the first line of output says where.
    checkout = Path(os.environ["PYTHONPATH"]).resolve()
    sys.path.insert(0, str(checkout))
    import controller
    import vision

    for package in (vision, controller):
        if not Path(str(package.__file__)).resolve().is_relative_to(checkout):
            raise SystemExit(f"{package.__name__} imported from {package.__file__}, not from {checkout}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from vision_photos import frames, labelled

    from vision.enroll import enrol
    from vision.recognise import recognise

    if not Path(str(sys.modules["vision.recognise"].__file__)).resolve().is_relative_to(checkout):
        raise SystemExit(f"vision.recognise is not {checkout}'s")

    cv2.setNumThreads(1)
    shots = [(img, card, name) for img, card, name in frames(
        [(p, c) for p, c in labelled(enrol_dir) if c is not None], 640) if card is not None]
    # Asked only when wanted: a checkout from before stand-ins were enrolled does not know the word.
    profile = (enrol(shots, "ab", stand_ins=True) if stand_ins else enrol(shots, "ab")).profile
    if profile is None:
        raise SystemExit("enrolment failed: no profile")
    test = [(img, card) for img, card, _ in frames(labelled(test_dir), 640)]
    if big is not None:
        test = [t for t in test if t[1] is not None][:200]
    print(len(test), flush=True)
    for line in sys.stdin:
        img, card = test[int(line)]
        if big is not None:
            img = cv2.resize(img, big)
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            reading = recognise(img, profile)
            best = min(best, time.process_time() - start)
        right = int(reading.status == "card" and reading.card is card)
        print(f"{best * 1000:.4f} {right} {outcome(reading)}", flush=True)


def outcome(reading: Any) -> str:
    """A reading's whole outcome on one line: status, card, confidence (every digit), reason, corners.
    (``Any``: the reading is of the checkout's own ``vision``, imported in the worker.)"""
    r = reading
    points = None if r.corners is None else [round(float(v), 3) for v in r.corners.ravel()]
    return f"{r.status} {r.card} {r.confidence!r} {r.reason!r} {points}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--enrol", type=Path, required=True)
    parser.add_argument("--test", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3, help="reads per frame; its least CPU is kept")
    parser.add_argument("--big", help="W x H: the first 200 card frames upscaled to it")
    parser.add_argument("--stand-ins", action="store_true",
                        help="enrol a deck with cards it lacks or refuses (bench/vision_photos.py's)")
    parser.add_argument("--slowest", type=int, default=0, help="print the N slowest frames, both versions")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("checkouts", nargs="*", type=Path, help="two checkouts: before, after")
    args = parser.parse_args(argv)
    big = tuple(int(v) for v in args.big.lower().split("x")) if args.big else None
    if args.worker:
        worker(args.enrol, args.test, args.repeat, (big[0], big[1]) if big else None, args.stand_ins)
        return 0
    if len(args.checkouts) != 2:
        parser.error("give two checkouts: before and after")
    print("command:", " ".join([Path(sys.executable).name, *sys.argv]))
    own = ["--enrol", str(args.enrol), "--test", str(args.test), "--repeat", str(args.repeat)]
    own += ["--big", args.big] if args.big else []
    own += ["--stand-ins"] if args.stand_ins else []
    # Both workers on one CPU: they read by turns, so they never contend, and neither gets the faster of
    # two unequal CPUs (a virtual machine's two CPUs differed: one checkout against itself read 0.15 ms
    # faster per frame in the second worker).
    cpu = max(os.sched_getaffinity(0))
    workers = [subprocess.Popen(
        ["nice", sys.executable, __file__, "--worker", *own], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": str(c.resolve())},
        preexec_fn=lambda: os.sched_setaffinity(0, {cpu})) for c in args.checkouts]
    assert all(w.stdin is not None and w.stdout is not None for w in workers)
    count = [int(w.stdout.readline()) for w in workers if w.stdout is not None][0]
    load = os.getloadavg()
    costs: list[list[float]] = [[], []]
    right = [0, 0]
    outcomes: list[list[str]] = [[], []]
    for i in range(count):
        for k in (0, 1) if i % 2 == 0 else (1, 0):
            stdin, stdout = workers[k].stdin, workers[k].stdout
            assert stdin is not None and stdout is not None
            stdin.write(f"{i}\n")
            stdin.flush()
            cost, ok, seen = stdout.readline().rstrip("\n").split(" ", 2)
            costs[k].append(float(cost))
            right[k] += int(ok)
            outcomes[k].append(seen)
    for w in workers:
        if w.stdin is not None:
            w.stdin.close()
        w.wait()
    for k, checkout in enumerate(args.checkouts):
        p50, p99 = (float(np.percentile(costs[k], q)) for q in (50, 99))
        print(f"{checkout}: {count} frames, {right[k]} read right, CPU per frame (least of {args.repeat}): "
              f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {max(costs[k]):.2f} ms")
    from vision_photos import labelled  # the order the workers read the frames in

    names = [path.name for path, card in labelled(args.test) if card is not None or not big][:count]
    differ = [i for i in range(count) if outcomes[0][i] != outcomes[1][i]]
    print(f"outcomes: {'every one the same' if not differ else f'{len(differ)} of {count} frames differ'}")
    for i in differ[:20]:
        print(f"  {names[i]}:\n    {outcomes[0][i]}\n    {outcomes[1][i]}")
    if args.slowest:
        for i in sorted(range(count), key=lambda i: -max(costs[0][i], costs[1][i]))[: args.slowest]:
            print(f"  {names[i]}: {costs[0][i]:.2f} -> {costs[1][i]:.2f} ms")
    change = float(np.median(np.array(costs[1]) - np.array(costs[0])))
    end = os.getloadavg()
    print(f"median change per frame {change:+.3f} ms; load average {load[0]:.2f} {load[1]:.2f} "
          f"-> {end[0]:.2f} {end[1]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
