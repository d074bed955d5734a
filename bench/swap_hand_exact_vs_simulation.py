"""Benchmark: does a long Swap-Hand simulation's 99 % interval contain the exact sheet's figures?

The acceptance check of the exact par sheet (issue 30): the stored exact
Main and Odds-Win returns of the documented basic strategy
(`croupier math swap_hand`) against a simulation of the same strategy
through the real engine (`--rounds`, default ten million; about an hour on
two idle cores). The simulation deals shoes to a cut card, the exact sheet
is one round off a full shoe: the difference (the cut-card effect) is far
inside the interval at this size. Not a test: it prints both figures, the
interval, whether it holds, and the command.

    python bench/swap_hand_exact_vs_simulation.py [--rounds 10000000] [--seed 30] [--workers 2]
"""

from __future__ import annotations

import argparse
import math

from controller.games.swap_hand.exact_sheet import cached
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.play import STAKE
from controller.games.swap_hand.simulation import simulate

#: z of a two-sided 99 % normal interval.
Z99 = 2.5758


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    options = SwapHandOptions()
    sheet = cached(options)
    assert sheet is not None, "the stored sheet is missing"
    exact = sheet.returns()["basic"]
    tally = simulate(args.rounds, args.seed, options, False, args.workers)
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
    print(f"command: python bench/swap_hand_exact_vs_simulation.py --rounds {args.rounds} --seed {args.seed} "
          f"--workers {args.workers}")
    return 0 if held else 1


if __name__ == "__main__":
    raise SystemExit(main())
