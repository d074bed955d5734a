"""Benchmark: does a long Swap-Hand simulation's 99 % interval contain the exact sheet's figures?

The acceptance check of the exact par sheet (issue 30): the stored exact
Main and Odds-Win returns of the documented basic strategy
(`croupier math swap_hand`) against a simulation of the same strategy
through the real engine (`--rounds`, default ten million; about an hour on
two idle cores). The simulation deals shoes to a cut card, the exact sheet
is one round off a full shoe: the difference (the cut-card effect) is far
inside the interval at this size. Not a test: it prints both figures, the
interval, whether it holds, and the command. The rounds are those of
``croupier simulate swap_hand --rounds N --seed S`` (the same chunks), so
the figures are too.

``--state FILE`` keeps the running sums and the chunks done in FILE (written
atomically as chunks finish, and when the run is stopped by Ctrl-C or a
kill): the same command continues the run where it stopped, across sessions,
to the figures one uninterrupted run prints; a larger ``--rounds`` continues
a smaller run's state. A stopped run prints the figures it has reached.

    python bench/swap_hand_exact_vs_simulation.py [--rounds 10000000] [--seed 30] [--workers 2] [--state FILE]
"""

from __future__ import annotations

import argparse
import math
import shlex
import time
from dataclasses import asdict
from pathlib import Path

from controller.games.swap_hand.exact_sheet import cached
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.play import STAKE
from controller.games.swap_hand.simulation import CHUNK, Job, Tally, play
from controller.simulation.montecarlo import chunk_seed, chunks
from controller.tools.resumable import Chunk, Resumable

#: z of a two-sided 99 % normal interval.
Z99 = 2.5758


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=CHUNK, help="rounds a seed (a state file's unit)")
    parser.add_argument("--state", type=Path, help="keep the running sums here, to stop and continue the run")
    args = parser.parse_args()
    options = SwapHandOptions()
    sheet = cached(options)
    assert sheet is not None, "the stored sheet is missing"
    exact = sheet.returns()["basic"]
    tally = Tally.empty()

    def restore(saved: dict[str, object]) -> None:
        tally.merge(Tally(**saved))  # type: ignore[arg-type]

    params = {"bench": "swap_hand_exact_vs_simulation", "seed": args.seed, "chunk": args.chunk,
              "options": options.model_dump(mode="json")}
    run = Resumable(args.state, params, lambda: asdict(tally), restore)
    plan = [Chunk(c, n, Job(n, chunk_seed(args.seed, c), options, False))
            for c, n in chunks(args.rounds, args.chunk)]
    before, started = run.rounds, time.monotonic()
    complete = run.run(plan, play, tally.merge, args.workers)
    speed = (run.rounds - before) / max(time.monotonic() - started, 1e-9)
    command = ["python", "bench/swap_hand_exact_vs_simulation.py", "--rounds", str(args.rounds), "--seed",
               str(args.seed), "--workers", str(args.workers),
               *(["--chunk", str(args.chunk)] if args.chunk != CHUNK else []),
               *(["--state", str(args.state)] if args.state else [])]
    if not complete:
        left = args.rounds - run.rounds
        hours = left / speed / 3600 if speed else float("inf")
        go_on = f"; continue with: {shlex.join(command)}" if args.state else ""
        print(f"stopped after {run.rounds} of {args.rounds} rounds: {left} to go, about {hours:.1f} h at "
              f"this session's {speed:.0f} rounds a second{go_on}; the figures reached:")
        if tally.rounds < 2:
            return 2
    held = True
    for spot, stake in (("main", STAKE), ("odds_win", STAKE // 2)):
        n = tally.rounds
        mean = tally.sums[spot] / n
        half = Z99 * math.sqrt((tally.squares[spot] / n - mean * mean) / n)
        low, high = (mean - half) / stake, (mean + half) / stake
        inside = low <= exact[spot] <= high
        held = held and inside
        verdict = "inside" if inside else "OUTSIDE"
        print(f"{spot:<9} exact {100 * exact[spot]:+.4f} %  simulated {100 * mean / stake:+.4f} % "
              f"(99 % interval {100 * low:+.4f} % .. {100 * high:+.4f} %)  {verdict}")
    print(f"{tally.rounds} rounds; command: {shlex.join(command)}")
    return 2 if not complete else 0 if held else 1


if __name__ == "__main__":
    raise SystemExit(main())
