"""Benchmark: does paired simulation confirm the best Swap-Hand strategy's exact margin over the chart?

The margin check of the exact Swap-Hand sheet (issue 30; the returns
alone, over ten million rounds, are bench/swap_hand_exact_vs_simulation.py): the stored
exact figures (`croupier math swap_hand`) of the documented chart (basic
strategy and the swap table) and of the best composition-dependent strategy,
against rounds played through the real engine by a player following each.

Every round is the first off a full shoe (cards drawn at random without
replacement, seeded per round), the case the exact sheet values, and both
players play the same round on the same cards (paired play): where their
decisions agree the two nets are equal, so the margin's interval comes
from the paired differences, far narrower than the two returns' own
intervals combined (both are printed). The best player takes every
decision from the exact engine, on the composition the engine valued it
on (a split hand: the shoe without the up card and the pair cards of the
hands so far, and its own cards; it resplits whenever allowed, as the
engine assumes). Its decisions are tabulated once per up card
(controller/games/swap_hand/best_player.py; the first run builds the
tables, 20-60 CPU seconds an up card, into a cache folder outside the
repository, controller/tools/best_tables.py, ``--tables``), so a round costs what the engine costs.

``--state FILE`` keeps the running sums and the chunks done in FILE (written
atomically every few seconds, and when the run is stopped by Ctrl-C or a
kill): the same command continues the run, across sessions, to the figures
one uninterrupted run prints (round i's cards depend only on the seed and
i); a larger ``--rounds`` continues a smaller run's state. A stopped run
prints the figures it has reached.

Not a test: it prints each strategy's Main, Odds-Win and combined return
with their 99 % intervals against the exact figures, the Main's hit
frequency and standard deviation against the sheet's bounds, the margin's
interval against the stated margin, the rounds a confirmation of the
margin needs at the measured spread, and the command.

    python bench/swap_hand_margin_vs_simulation.py [--rounds 100000] [--seed 30] [--workers 2] [--state FILE]
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import shlex
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from controller.cards import DECK, Card
from controller.games.blackjack_strategy import Chart
from controller.games.swap_hand.best_player import BestPlayer, Table
from controller.games.swap_hand.exact_sheet import UP_ORDER, Sheet, cached
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.play import STAKE, Player, SimTable
from controller.games.swap_hand.simulation import Tally, wager_nets
from controller.tools.best_tables import cache_folder, load
from controller.tools.resumable import Chunk, Resumable

#: z of a two-sided 99 % normal interval.
Z99 = 2.5758
STRATEGIES = ("basic", "optimal")
#: Rounds a chunk (the unit of the state file; the figures do not depend on it).
CHUNK = 1000


class FreshShoe:
    """One round's cards off a full shoe, drawn at random without replacement, seeded by the round; each
    player reads them from the first (:meth:`reader`), so the shoe is shuffled once for both."""

    def __init__(self, decks: int, seed: str) -> None:
        self.cards = list(DECK) * decks
        self.rng = random.Random(seed)
        self.dealt = 0

    def card(self, k: int) -> Card:
        """The round's ``k``-th card (from 0)."""
        cards = self.cards
        while self.dealt <= k:
            i = self.dealt
            j = self.rng.randrange(i, len(cards))
            cards[i], cards[j] = cards[j], cards[i]
            self.dealt += 1
        return cards[k]

    def reader(self) -> Callable[[], Card]:
        """A draw function dealing the round's cards from the first."""
        counter = itertools.count()
        return lambda: self.card(next(counter))


@dataclass(frozen=True)
class Job:
    first: int
    rounds: int
    seed: int
    options: SwapHandOptions
    tables: Path


@dataclass
class Result:
    tallies: dict[str, Tally]
    #: The paired difference (optimal minus basic) of both wagers' net, minor units.
    diff: Tally

    @classmethod
    def empty(cls) -> Result:
        return cls({k: Tally.empty() for k in STRATEGIES}, Tally.empty())

    def merge(self, part: Result) -> None:
        for k in STRATEGIES:
            self.tallies[k].merge(part.tallies[k])
        self.diff.merge(part.diff)

    def dump(self) -> dict[str, object]:
        return {**{k: asdict(t) for k, t in self.tallies.items()}, "diff": asdict(self.diff)}

    def restore(self, saved: dict[str, dict[str, Any]]) -> None:
        self.merge(Result({k: Tally(**saved[k]) for k in STRATEGIES}, Tally(**saved["diff"])))


#: The best decisions, by up card, in this process (read once from the cache folder).
_TABLES: dict[int, Table] = {}


def play_rounds(job: Job) -> Result:
    """Both strategies on the same rounds ``job.first`` onwards, each the first off a full shoe."""
    options = job.options
    if not _TABLES:
        _TABLES.update({up: load(options, up, job.tables) for up in UP_ORDER})
    players = {"basic": Player(Chart(options.dealer_hits_soft_17, options.double_after_split)),
               "optimal": BestPlayer(options, _TABLES)}
    tables = {k: SimTable(options) for k in STRATEGIES}
    result = Result.empty()
    for i in range(job.first, job.first + job.rounds):
        totals = {}
        shoe = FreshShoe(options.decks, f"{job.seed}:{i}")
        for k in STRATEGIES:
            tables[k].new_shoe()  # every round is the first off a full shoe (the table counts the cards)
            main, odds = wager_nets(tables[k].play(shoe.reader(), players[k]))
            tally = result.tallies[k]
            tally.add("main", main)
            tally.add("odds_win", odds)
            tally.add("total", main + odds)
            tally.rounds += 1
            totals[k] = main + odds
        result.diff.add("total", totals["optimal"] - totals["basic"])
        result.diff.rounds += 1
    return result


def interval(tally: Tally, spot: str, unit: float) -> tuple[float, float, float]:
    """Mean, 99 % half-width and standard deviation of ``spot``'s net per round, in ``unit``s."""
    n = tally.rounds
    mean = tally.sums[spot] / n / unit
    sd = math.sqrt(max(tally.squares[spot] / n / unit ** 2 - mean * mean, 0.0) * n / (n - 1))
    return mean, Z99 * sd / math.sqrt(n), sd


def check(label: str, tally: Tally, spot: str, unit: float, exact: float) -> bool:
    mean, half, _ = interval(tally, spot, unit)
    held = mean - half <= exact <= mean + half
    print(f"  {label:<26} simulated {mean:+.5f} (99 % {mean - half:+.5f} .. {mean + half:+.5f}), "
          f"exact {exact:+.5f}: {'inside' if held else 'OUTSIDE'}")
    return held


def spread_check(tally: Tally, bounds: dict[str, list[float]]) -> bool:
    """The Main's hit frequency and standard deviation against the sheet's bounds (widened by 99 %)."""
    n, ok = tally.rounds, True
    for share, counted in (("won", tally.won["main"]), ("lost", tally.lost["main"])):
        p = counted / n
        half = Z99 * math.sqrt(p * (1 - p) / n)
        low, high = bounds[share]
        held = low - half <= p <= high + half
        ok &= held
        print(f"  Main rounds {share:<14} simulated {100 * p:.3f} % (99 % +-{100 * half:.3f}), exact "
              f"{100 * low:.3f} .. {100 * high:.3f} %: {'inside' if held else 'OUTSIDE'}")
    _, _, sd = interval(tally, "main", STAKE)
    low, high = bounds["standard_deviation"]
    print(f"  Main standard deviation    simulated {sd:.4f} a unit, exact bounds {low:.4f} .. {high:.4f}: "
          f"{'inside' if low <= sd <= high else 'OUTSIDE (sampling error is not allowed for here)'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000, help="rounds each strategy plays")
    parser.add_argument("--seed", type=int, default=30, help="round i's cards come from seed 'SEED:i'")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--state", type=Path, help="keep the running sums here, to stop and continue the run")
    parser.add_argument("--tables", type=Path, default=cache_folder(),
                        help=f"the best decisions' cache folder (default {cache_folder()})")
    args = parser.parse_args()
    options = SwapHandOptions()
    sheet = cached(options)
    if sheet is None:
        raise SystemExit("the stored sheet (controller/games/swap_hand/exact_defaults.json) is missing")
    for up in UP_ORDER:  # built here once if missing (minutes), so the workers only read them
        load(options, up, args.tables)
    whole = Result.empty()
    params = {"bench": "swap_hand_margin_vs_simulation", "seed": args.seed, "chunk": CHUNK,
              "options": options.model_dump(mode="json")}
    run = Resumable(args.state, params, whole.dump, whole.restore)
    plan = [Chunk(c, min(CHUNK, args.rounds - first), Job(first, min(CHUNK, args.rounds - first), args.seed,
                                                          options, args.tables))
            for c, first in enumerate(range(0, args.rounds, CHUNK))]
    before, started = run.rounds, time.monotonic()
    complete = run.run(plan, play_rounds, whole.merge, args.workers)
    speed = (run.rounds - before) / max(time.monotonic() - started, 1e-9)
    words = ["--rounds", str(args.rounds), "--seed", str(args.seed), "--workers", str(args.workers),
             *(["--state", str(args.state)] if args.state else [])]
    command = shlex.join(["python", "bench/swap_hand_margin_vs_simulation.py", *words])
    if not complete:
        print(f"stopped after {run.rounds} of {args.rounds} rounds ({speed:.0f} paired rounds a second)"
              f"{'; continue with: ' + command if args.state else ''}")
        if whole.diff.rounds < 2:
            return 2
    return report(sheet, whole, speed, command)


def report(sheet: Sheet, whole: Result, speed: float, command: str) -> int:
    """Every figure against its exact value; 0 if each lies inside its 99 % interval."""
    returns, spread, exact_total = sheet.returns(), sheet.main_spread(), sheet.merged().total
    print(f"Swap-Hand, table defaults, {whole.diff.rounds} rounds each off a full shoe, the same cards for "
          f"both strategies; nets per unit staked on the wager, 'both' per main unit")
    ok = True
    for k in STRATEGIES:
        t = whole.tallies[k]
        print(f"{k}:")
        ok &= check("Main return - 1", t, "main", STAKE, returns[k]["main"])
        ok &= check("Odds-Win return - 1", t, "odds_win", STAKE / 2, returns[k]["odds_win"])
        ok &= check("both wagers, per main unit", t, "total", STAKE, exact_total[k])
        ok &= spread_check(t, spread[k])
    stated = exact_total["optimal"] - exact_total["basic"]
    mean, half, sd = interval(whole.diff, "total", STAKE)
    unpaired = math.hypot(*(interval(whole.tallies[k], "total", STAKE)[1] for k in STRATEGIES))
    held = mean - half <= stated <= mean + half
    ok &= held
    print(f"margin of the best strategy, per main unit: simulated {mean:+.5f} (paired 99 % interval "
          f"{mean - half:+.5f} .. {mean + half:+.5f}; unpaired it would be +-{unpaired:.5f}), exact "
          f"{stated:+.5f}: {'inside' if held else 'OUTSIDE'}")
    needed = math.ceil((Z99 * sd / stated) ** 2)
    confirmed = mean - half > 0
    more = max(needed - whole.diff.rounds, 0)
    hours = f" (about {more / speed / 3600:.1f} h at this run's {speed:.0f} rounds a second)" if speed else ""
    print(f"  paired spread {sd:.4f} a round: the 99 % interval excludes a zero margin "
          f"{'here' if confirmed else 'not yet'}; at the exact margin that takes about {needed:,} rounds "
          f"(half-width = margin), {more:,} more than done{hours}")
    print("command:", command)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
