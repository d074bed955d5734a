"""Benchmark: Baccarat rounds per second through the engine, beside a bare plain-Python coup loop.

A round is what the daemon does for one coup: open betting, three wagers
(Player, Banker, Tie on three seats), close betting, four to six cards, the
settlement; the engine loop is ``croupier simulate baccarat``'s own (a seeded
shoe, drawing a card is a list pop, reshuffles included). The anchor is the
same coups played by a bare loop in plain Python, in the same process: the
same shoe, the tableau, the three bets settled in integer minor units (the
Banker's 19:20 floored), and nothing else (no events, no checks, no journal
record). The two run interleaved, chunk by chunk, so a busy machine slows
both alike; the figure is the ratio of their rates (aim: engine >= 0.10x),
from each loop's fastest chunk and from the totals, with the seeded shoe's
own cost (timed alone on the same cards) in both loops and taken out of both.
Both must agree on every bet's total net, which the script checks. Not a
test: it prints figures.

    python bench/engine_rounds.py [--rounds 5000] [--chunks 60] [--seed S]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

from controller.games.baccarat.simulation import BETS, CUT_CARD, STAKE, Tally, play
from controller.simulation.shoe_shuffle import ShuffledShoe

#: Baccarat value by ``Card.rank_value`` (2..14): T J Q K 0, A 1.
VALUE = (0, 0, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 1)


def bare(rounds: int, seed: int, counts: list[int] | None = None) -> Tally:
    """The same coups and nets as :func:`play`, in the fewest lines of plain Python.

    ``counts`` (untimed runs only) collects the cards each round took, for :func:`shoe_only`.
    """
    shoe = ShuffledShoe(8, seed, CUT_CARD)
    sums = {"player": 0, "banker": 0, "tie": 0}
    squares = {"player": 0, "banker": 0, "tie": 0}
    credits = {1: 10**15, 2: 10**15, 3: 10**15}
    draw = shoe.draw
    for _ in range(rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
        for seat in (1, 2, 3):
            credits[seat] -= STAKE
        p = (VALUE[draw().rank_value] + VALUE[draw().rank_value]) % 10  # P P B B
        b = (VALUE[draw().rank_value] + VALUE[draw().rank_value]) % 10
        if p < 8 and b < 8:
            third = None
            if p <= 5:
                third = VALUE[draw().rank_value]
                p = (p + third) % 10
            if third is None:
                if b <= 5:
                    b = (b + VALUE[draw().rank_value]) % 10
            elif b <= 2 or (b == 3 and third != 8) or (b == 4 and 2 <= third <= 7) or (
                    b == 5 and 4 <= third <= 7) or (b == 6 and 6 <= third <= 7):
                b = (b + VALUE[draw().rank_value]) % 10
        if p > b:
            nets = (STAKE, -STAKE, -STAKE)
        elif b > p:
            nets = (-STAKE, STAKE * 19 // 20, -STAKE)
        else:
            nets = (0, 0, 9 * STAKE)
        for (spot, seat), net in zip(BETS, nets, strict=True):
            credits[seat] += STAKE + net
            sums[spot] += net
            squares[spot] += net * net
        if counts is not None:
            counts.append(len(shoe.cards))
    return Tally(rounds, sums, squares)


def shoe_only(seed: int, left: list[int]) -> None:
    """The shoe's share of both loops: the same shuffles and draws, no coup (``left``: cards left)."""
    shoe = ShuffledShoe(8, seed, CUT_CARD)
    draw = shoe.draw
    for remaining in left:
        if shoe.needs_shuffle():
            shoe.shuffle()
        while len(shoe.cards) > remaining:
            draw()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5_000, help="rounds per loop per chunk")
    parser.add_argument("--chunks", type=int, default=60, help="interleaved chunks of each loop")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    engine_t: list[float] = []
    bare_t: list[float] = []
    shoe_t: list[float] = []
    for chunk in range(args.chunks):
        seed = args.seed + chunk % 10  # ten shoes, each played many times: the fastest run is the figure
        left: list[int] = []
        bare(args.rounds, seed, left)  # untimed: the cards each round takes
        start = time.perf_counter()
        shoe_only(seed, left)
        shoe_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        got = play(args.rounds, seed, decks=8, tie_pays="9:1")
        engine_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        want = bare(args.rounds, seed)
        bare_t.append(time.perf_counter() - start)
        if (got.sums, got.squares) != (want.sums, want.squares):
            print(f"chunk {chunk}: the engine and the bare loop disagree: {got.sums} vs {want.sums}")
            return 1
    n = args.rounds
    print(f"Baccarat, {args.chunks} interleaved chunks of {n:,} rounds per loop, 3 wagers per round, "
          "one core;")
    print("rates from each loop's fastest chunk (a shared machine only ever slows a run down), "
          "then from the totals:")
    for label, pick in (("fastest chunk", min), ("all chunks", sum)):
        scale = n * (args.chunks if pick is sum else 1)
        e, b, sh = pick(engine_t), pick(bare_t), pick(shoe_t)
        print(f"  {label}: anchor bare plain-Python loop {scale / b:11,.0f} rounds/s; "
              f"engine {scale / e:9,.0f} rounds/s; ratio {b / e:.3f}x (aim: at least 0.10x)")
        print(f"  {label}, the seeded shoe's shuffles and draws taken out of both: bare "
              f"{scale / (b - sh):11,.0f} rounds/s; engine {scale / (e - sh):9,.0f} rounds/s; "
              f"ratio {(b - sh) / (e - sh):.3f}x")
    print("  every chunk: both loops' total net per bet identical")
    print(f"Python {platform.python_version()} on {platform.machine()}")
    print(f"command: python bench/engine_rounds.py --rounds {args.rounds} --chunks {args.chunks} "
          f"--seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
