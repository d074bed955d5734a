"""Benchmark: Baccarat rounds per second through the engine on one core.

A round is what the daemon does for one coup: open betting, three wagers
(Player, Banker, Tie on three seats), close betting, four to six cards, the
settlement. The shoe is shuffled by a seeded generator outside the timed
loop's cost (drawing a card is a list pop). Not a test: it prints figures.

    python bench/engine_rounds.py [--rounds N] [--bets 0|3]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

from controller import inputs as I
from controller.cards import DECK
from controller.games.baccarat import Baccarat, BaccaratOptions
from controller.limits import TableLimits
from controller.table import Table
from controller.tools.shoe_shuffle import ShuffledShoe


def bench(rounds: int, bets: int, seed: int) -> float:
    table = Table(Baccarat(BaccaratOptions()), TableLimits(seats=3))
    for seat in (1, 2, 3):
        table.apply(I.CreditIn(seat, 10**15))
    shoe = ShuffledShoe(8, seed, cut_card=16)
    card_inputs = {card: I.CardSeen(card) for card in DECK}
    wagers = [I.PlaceWager(1, "player", 100), I.PlaceWager(2, "banker", 100), I.PlaceWager(3, "tie", 100)]
    betting = [I.OpenBetting(), *wagers[:bets], I.CloseBetting()]
    apply = table.apply
    start = time.perf_counter()
    for _ in range(rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
            apply(I.NewShoe())
        for inp in betting:
            apply(inp)
        while table.phase == "dealing":
            apply(card_inputs[shoe.draw()])
    return rounds / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--bets", type=int, default=3, choices=(0, 1, 2, 3))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    args = parser.parse_args()
    rates = [bench(args.rounds, args.bets, args.seed) for _ in range(args.repeat)]
    print(f"Baccarat engine: {max(rates):,.0f} rounds/s (best of {args.repeat}; all: "
          f"{', '.join(f'{r:,.0f}' for r in rates)}), {args.bets} wagers per round, one core")
    print(f"Python {platform.python_version()} on {platform.machine()}")
    print(f"command: python bench/engine_rounds.py --rounds {args.rounds} --bets {args.bets} "
          f"--seed {args.seed} --repeat {args.repeat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
