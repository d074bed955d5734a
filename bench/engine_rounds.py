"""Benchmark: Baccarat rounds per second through the engine on one core.

A round is what the daemon does for one coup: open betting, three wagers
(Player, Banker, Tie on three seats), close betting, four to six cards, the
settlement; the loop is ``croupier simulate baccarat``'s own (a seeded shoe,
drawing a card is a list pop, reshuffles included). Not a test: it prints
figures.

    python bench/engine_rounds.py [--rounds N] [--seed S] [--repeat R]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

from controller.games.baccarat.simulation import play


def bench(rounds: int, seed: int) -> float:
    """Rounds per second of the simulation's own loop: the same engine calls the daemon makes."""
    start = time.perf_counter()
    play(rounds, seed, decks=8, tie_pays="9:1")
    return rounds / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    args = parser.parse_args()
    rates = [bench(args.rounds, args.seed) for _ in range(args.repeat)]
    print(f"Baccarat engine: {max(rates):,.0f} rounds/s (best of {args.repeat}; all: "
          f"{', '.join(f'{r:,.0f}' for r in rates)}), 3 wagers per round, one core")
    print(f"Python {platform.python_version()} on {platform.machine()}")
    print(
        f"command: python bench/engine_rounds.py --rounds {args.rounds} --seed {args.seed} "
        f"--repeat {args.repeat}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
