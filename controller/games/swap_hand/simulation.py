"""Simulate Swap-Hand Blackjack through the real engine: house edge of the main and Odds-Win wagers.

One seat bets a main of two units (the engine adds the one-unit Odds-Win)
every round and plays the default strategy (basic strategy for the table's
rules plus the swap table; docs/strategy/swap_hand.md). Shoes are shuffled
by a seeded ``random.Random``; the cut card leaves a quarter of the shoe
unplayed (13 cards per deck, at least 26), and a new shoe starts before the
next round once it is out. No burn cards are drawn: burns do not change
the expectation of the next round.

``--classic`` switches off the swap, the Odds-Win and the auto-win 21: plain
hole-card blackjack, the calibration mode for checking the blackjack core
against published house edges (it is not a table option).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from controller.cards import decks_text
from controller.events import RoundSettled
from controller.games.blackjack_strategy import Chart
from controller.games.swap_hand.options import CLASSIC, SWAP_HAND, SwapHandOptions
from controller.games.swap_hand.play import STAKE, Player, SimTable
from controller.money import Odds
from controller.simulation.montecarlo import chunk_seed, chunks, mean_interval, run_chunks
from controller.simulation.shoe_shuffle import ShuffledShoe

CHUNK = 20_000
SPOTS = ("main", "odds_win", "total")


@dataclass
class Tally:
    """Per spot: the sum and the sum of squares of each round's net, in minor units, and the rounds it won
    and lost (the hit frequency the exact sheet states)."""

    rounds: int
    sums: dict[str, int]
    squares: dict[str, int]
    won: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPOTS, 0))
    lost: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPOTS, 0))

    @classmethod
    def empty(cls) -> Tally:
        return cls(0, dict.fromkeys(SPOTS, 0), dict.fromkeys(SPOTS, 0))

    def add(self, spot: str, net: int) -> None:
        self.sums[spot] += net
        self.squares[spot] += net * net
        self.won[spot] += net > 0
        self.lost[spot] += net < 0

    def merge(self, other: Tally) -> None:
        self.rounds += other.rounds
        for k in SPOTS:
            self.sums[k] += other.sums[k]
            self.squares[k] += other.squares[k]
            self.won[k] += other.won[k]
            self.lost[k] += other.lost[k]

    def edge(self, spot: str, stake: int) -> tuple[float, float]:
        """House edge per unit staked on ``spot`` and the half-width of its 95 % interval."""
        mean, half = mean_interval(self.sums[spot], self.squares[spot], self.rounds)
        return -mean / stake, half / stake


@dataclass(frozen=True)
class Job:
    rounds: int
    seed: int
    options: SwapHandOptions
    classic: bool


def cut_card(decks: int) -> int:
    return max(26, 13 * decks)


def play(job: Job) -> Tally:
    """Play ``job.rounds`` rounds from seeded shoes; the tally of the nets."""
    opts = job.options
    sim = SimTable(opts, CLASSIC if job.classic else SWAP_HAND)
    player = Player(Chart(opts.dealer_hits_soft_17, opts.double_after_split))
    shoe = ShuffledShoe(opts.decks, job.seed, cut_card(opts.decks))
    sim.new_shoe()
    tally = Tally.empty()
    for _ in range(job.rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
            sim.new_shoe()
        main, odds = wager_nets(sim.play(shoe.draw, player))
        tally.add("main", main)
        tally.add("odds_win", odds)
        tally.add("total", main + odds)
    tally.rounds = job.rounds
    return tally


def wager_nets(settled: RoundSettled) -> tuple[int, int]:
    """A round's net on the Main (every hand of it) and on the Odds-Win, minor units."""
    main = odds = 0
    for line in settled.settlements:
        if line["spot"] == "odds_win":
            odds += line["net"]
        else:
            main += line["net"]
    return main, odds


def simulate(rounds: int, seed: int, options: SwapHandOptions, classic: bool, workers: int) -> Tally:
    """Split the rounds into chunks with seeds fixed by (seed, chunk): same answer for any ``workers``."""
    jobs = [Job(count, chunk_seed(seed, c), options, classic) for c, count in chunks(rounds, CHUNK)]
    total = Tally.empty()
    run_chunks(jobs, play, total.merge, lambda job: job.rounds, workers)
    return total


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=200_000, help="rounds to play (default 200000)")
    parser.add_argument("--seed", type=int, default=1, help="shuffle seed (default 1)")
    parser.add_argument("--strategy", choices=("basic",), default="basic",
                        help="player strategy: basic (basic strategy plus the swap table)")
    parser.add_argument("--decks", type=int, default=6, help="decks (default 6)")
    parser.add_argument("--h17", action="store_true", help="dealer hits soft 17")
    parser.add_argument("--blackjack-pays", default="3:2", help="'3:2' (default) or '6:5'")
    parser.add_argument("--double-on", default="any2", choices=("any2", "9-11", "10-11"),
                        help="which two-card totals may double (default any2)")
    parser.add_argument("--no-das", action="store_true", help="no double after split")
    parser.add_argument("--max-split-hands", type=int, default=4, help="1..4 (default 4)")
    parser.add_argument("--classic", action="store_true",
                        help="calibration: no swap, no Odds-Win, 21 does not auto-win (not a table option)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")


def run(args: argparse.Namespace) -> int:
    if args.rounds < 2:
        print("croupier simulate swap_hand: --rounds must be at least 2")
        return 2
    options = SwapHandOptions(
        decks=args.decks,
        dealer_hits_soft_17=args.h17,
        blackjack_pays=Odds.parse(args.blackjack_pays),
        double_on=args.double_on,
        double_after_split=not args.no_das,
        max_split_hands=args.max_split_hands,
    )
    tally = simulate(args.rounds, args.seed, options, args.classic, args.workers)
    mode = "classic blackjack (calibration)" if args.classic else "Swap-Hand"
    print(f"{mode}, {decks_text(args.decks)}, {'H17' if args.h17 else 'S17'}, {tally.rounds} rounds, "
          f"seed {args.seed}, strategy {args.strategy}, through the engine")
    print_edges(tally, args.classic)
    return 0


def print_edges(tally: Tally, classic: bool = False) -> None:
    """The house edge of each wager with its 95 % interval, per unit staked on it."""
    print(f"{'wager':<10} {'house edge':>11} {'95% interval':>24}")
    rows = [("main", STAKE)] if classic else [("main", STAKE), ("odds_win", STAKE // 2),
                                              ("total", STAKE + STAKE // 2)]
    for spot, stake in rows:
        edge, half = tally.edge(spot, stake)
        print(f"{spot:<10} {100 * edge:10.3f}% [{100 * (edge - half):9.3f}%, {100 * (edge + half):9.3f}%]")
    print("(per unit of the initial wager; 'total' per unit of main + Odds-Win)")
