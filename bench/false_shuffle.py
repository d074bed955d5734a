"""Benchmark: the false-shuffle rules' false-alarm rate on truly shuffled shoes, and what they catch.

Not a test (docs/floor.md, "Integrity alerts (rules)", quotes its figures). A history of `--history`
shuffled 8-deck shoes is indexed (controller.floor.integrity.shuffle_check.ShoeHistory); then `--shoes`
fresh shuffled shoes (default 100,000) are each checked against every shoe of the history by both rules
(a shared run of 12 cards; kept adjacent pairs), and the alarms counted: the false-alarm rate per shoe
at that history, and per comparison of two shoes. To check the kept-pairs law itself, it also counts
how often the kept count reaches the binomial's 1e-3 and 1e-5 thresholds (they should be hit about
that often). Then `--trials` shoes of each kind are checked for detection: a repeat of an earlier
shoe in full or in reverse order, a shoe holding one 12-card run of an earlier shoe (its other cards
shuffled), an earlier shoe given one riffle (Gilbert-Shannon-Reeds: cut binomially, cards dropped in
proportion to the packets), two or three, and four strips (cut at three random places, the packets piled in
reverse order). Seeded: the same arguments give the same figures.

    python bench/false_shuffle.py [--shoes 100000] [--history 100] [--trials 200] [--seed 27]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence

from controller.cards import Card
from controller.floor.integrity.shuffle_check import PAIR_FALSE_ALARM, RUN, ShoeHistory
from controller.simulation.false_shuffles import riffle, shuffled, strips, with_run


def progress(done: int, total: int, started: float) -> None:
    if done == total or done % max(1, total // 100) == 0:
        rate = done / max(time.monotonic() - started, 1e-9)
        bar = "#" * (30 * done // total)
        sys.stderr.write(f"\r  [{bar:<30}] {done:,}/{total:,} shoes, {rate:,.0f}/s")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def false_alarms(history: ShoeHistory, rng: random.Random, shoes: int) -> None:
    started = time.monotonic()
    alarmed = runs = kept = 0
    loose = {1e-3: 0, 1e-5: 0}
    for n in range(1, shoes + 1):
        cards = shuffled(rng)
        verdict = history.check(cards)
        alarmed += verdict.false_shuffle
        runs += bool(verdict.runs)
        kept += bool(verdict.kept)
        pairs, counts = history.kept_pair_counts(cards)
        for alpha in loose:
            loose[alpha] += sum(c >= history.kept_pair_threshold(pairs, s, alpha) for s, c in counts.items())
        progress(n, shoes, started)
    comparisons = shoes * len(history.shoes)
    print(f"false alarms: {alarmed} of {shoes:,} shuffled shoes against {len(history.shoes):,} earlier "
          f"({comparisons:,} comparisons): shared run {runs}, kept pairs {kept}; "
          f"rate per shoe {alarmed / shoes:.2g}, per comparison {alarmed / comparisons:.2g} "
          f"(the kept-pairs threshold's binomial tail is {PAIR_FALSE_ALARM:g} a comparison)")
    for alpha, hits in loose.items():
        print(f"  kept pairs at or over the binomial's {alpha:g} threshold: {hits:,} of {comparisons:,} "
              f"comparisons ({hits / comparisons:.2g}; the law says at most {alpha:g})")


def detections(history: ShoeHistory, earlier: Sequence[list[Card]], rng: random.Random, trials: int) -> None:
    kinds: dict[str, Callable[[list[Card]], list[Card]]] = {
        "repeated in full": list,
        "reversed": lambda c: c[::-1],
        f"one {RUN}-card run": lambda c: with_run(c, rng),
        "one riffle": lambda c: riffle(c, rng),
        "two riffles": lambda c: riffle(riffle(c, rng), rng),
        "three riffles": lambda c: riffle(riffle(riffle(c, rng), rng), rng),
        "four strips": lambda c: strips(c, rng),
    }
    for kind, make in kinds.items():
        caught = runs = kept = 0
        for _ in range(trials):
            verdict = history.check(make(rng.choice(earlier)))
            caught += verdict.false_shuffle
            runs += bool(verdict.runs)
            kept += bool(verdict.kept)
        print(f"detected, {kind:<17}: {caught} of {trials} ({100 * caught / trials:.1f} %; "
              f"shared run {runs}, kept pairs {kept})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shoes", type=int, default=100_000, help="fresh shuffled shoes checked (100000)")
    parser.add_argument("--history", type=int, default=100, help="earlier shoes checked against (100)")
    parser.add_argument("--trials", type=int, default=200, help="shoes of each false-shuffle kind (200)")
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args(argv)
    print(f"python bench/false_shuffle.py --shoes {args.shoes} --history {args.history} "
          f"--trials {args.trials} --seed {args.seed}")
    rng = random.Random(args.seed)
    history, earlier = ShoeHistory(), []
    for n in range(args.history):
        cards = shuffled(rng)
        history.add(f"earlier-{n}", cards)
        earlier.append(cards)
    started = time.process_time()
    false_alarms(history, rng, args.shoes)
    detections(history, earlier, rng, args.trials)
    print(f"CPU {time.process_time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
