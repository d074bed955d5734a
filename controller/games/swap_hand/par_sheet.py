"""Swap-Hand Blackjack par sheet: the exact Main and Odds-Win returns, basic and best strategy, and its chart.

With no options the sheet is exact (controller/games/swap_hand/exact.py):
every deal valued on the exact shoe composition, under the documented
basic strategy and under the best composition-dependent strategy the
engine finds (the swap included), with the best strategy's chart. The
default table's figures are stored in the repository and print at once;
other options (--decks, --h17, ...) are computed, one job per up card over
--workers processes. --format markdown|json prints it as a document;
--output writes it to a file (docs/strategy/swap_hand_exact.md); --format
stored prints the stored figures' file itself (exact_defaults.json), which
is how `make swap-hand-sheet` recomputes it.

--rounds N measures the house edge by simulation instead: a Monte Carlo
through the real engine (every round through the table as the daemon
drives it, a seeded shoe, the default strategy of
docs/strategy/swap_hand.md), with its 95 % interval and round count.

--swap-table measures the swap chart itself instead: the EV of swapping
versus keeping each hard 14-18 against each dealer up card. Each trial
stacks the start of the shoe: the seat's two cards (a ten and 4..8, the
commonest way to hold each total), the dealer's up card, and a hole card
drawn from the rest of a fresh shoe among the cards that do not give the
dealer blackjack (the swap is only offered after the peek). The same cards
are then played twice, swapping and keeping, with basic strategy after
that decision; comparing the two on the same cards removes most of the
noise from the difference. EV is the main's net plus the Odds-Win's net
per unit of the main.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from dataclasses import dataclass

from pydantic import ValidationError

from controller.cards import DECK, Card, decks_text, parse_card
from controller.games.blackjack import is_natural
from controller.games.blackjack_strategy import UPS, Chart
from controller.games.sheet_output import deliver
from controller.games.swap_hand.exact_sheet import DEFAULTS_FILE, cached, compute, render
from controller.games.swap_hand.options import SwapHandOptions
from controller.games.swap_hand.play import STAKE, Player, SimTable
from controller.games.swap_hand.simulation import print_edges, simulate
from controller.money import Odds
from controller.simulation.montecarlo import mean_interval, run_chunks

TOTALS = range(14, 19)
#: The stacked two-card hand for each total.
HANDS = {t: (parse_card("TS"), parse_card(f"{t - 10}H")) for t in TOTALS}
#: A card for each up-card column (2..9, ten, ace).
UP_CARDS = {u: parse_card({10: "KD", 11: "AD"}.get(u, f"{u}D")) for u in UPS}
#: Cards drawn past the stacked four; far more than any round can use.
TAIL = 60


@dataclass(frozen=True)
class Cell:
    total: int
    up: int
    trials: int
    seed: int
    decks: int


@dataclass
class CellResult:
    total: int
    up: int
    trials: int
    swap: float
    keep: float
    diff: float
    half: float  # 95 % half-width of diff


def _shoe_rest(decks: int, taken: list[Card]) -> list[Card]:
    rest = list(DECK) * decks
    for card in taken:
        rest.remove(card)
    return rest


def measure(cell: Cell) -> CellResult:
    """Play ``cell.trials`` stacked starts twice each (swap, keep); EVs per unit of the main."""
    rng = random.Random(cell.seed)
    opts = SwapHandOptions(decks=cell.decks)
    sim = SimTable(opts)
    chart = Chart()
    swapper, keeper = Player(chart, first_swap="swap"), Player(chart, first_swap="keep")
    first, second = HANDS[cell.total]
    up = UP_CARDS[cell.up]
    rest = _shoe_rest(cell.decks, [first, second, up])
    sums = [0, 0, 0]
    square = 0
    for _ in range(cell.trials):
        tail = rng.sample(rest, TAIL)
        hole_at = next(i for i, c in enumerate(tail) if not is_natural([up, c]))
        hole = tail.pop(hole_at)
        order = [first, up, second, hole, *tail]
        nets = []
        for player in (swapper, keeper):
            sim.new_shoe()
            cards = iter(order)
            settled = sim.play(cards.__next__, player)
            nets.append(sum(line["net"] for line in settled.settlements))
        diff = nets[0] - nets[1]
        sums[0] += nets[0]
        sums[1] += nets[1]
        sums[2] += diff
        square += diff * diff
    n = cell.trials
    mean, half = mean_interval(sums[2], square, n)
    return CellResult(cell.total, cell.up, n, sums[0] / n / STAKE, sums[1] / n / STAKE, mean / STAKE,
                      half / STAKE)


def swap_table(trials: int, seed: int, decks: int, workers: int) -> list[CellResult]:
    cells = [Cell(t, u, trials, seed * 1_000_003 + t * 100 + u, decks) for t in TOTALS for u in UPS]
    results: list[CellResult] = []
    run_chunks(cells, measure, results.append, lambda cell: cell.trials, workers, unit="trial")
    results.sort(key=lambda r: (r.total, r.up))
    return results


#: Rounds of the default sheet: a 95 % interval of about +/-0.5 % on the total, in well under a minute.
SHEET_ROUNDS = 200_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rounds", type=int, default=None,
        help=f"measure the house edge by simulating this many rounds instead of the exact sheet (e.g. "
        f"{SHEET_ROUNDS}; 4x the rounds halve the interval)",
    )
    parser.add_argument("--format", choices=("text", "markdown", "json", "stored"), default="text",
                        help="exact sheet: plain text (default), a markdown document, JSON, or the stored "
                        "figures' file (controller/games/swap_hand/exact_defaults.json)")
    parser.add_argument("--output", metavar="FILE", help="exact sheet: write it to FILE, not to the terminal")
    parser.add_argument("--recompute", action="store_true",
                        help="exact sheet: compute the table defaults too, not read the stored figures")
    parser.add_argument("--h17", action="store_true", help="exact sheet: the dealer hits soft 17")
    parser.add_argument("--blackjack-pays", default="3:2", choices=("3:2", "6:5"), help="default 3:2")
    parser.add_argument("--double-on", default="any2", choices=("any2", "9-11", "10-11"), help="default any2")
    parser.add_argument("--no-das", action="store_true", help="exact sheet: no double after a split")
    parser.add_argument("--max-split-hands", type=int, default=4, choices=range(1, 5), help="default 4")
    parser.add_argument("--resplit-aces", action="store_true", help="exact sheet: split aces may resplit")
    parser.add_argument("--hit-split-aces", action="store_true", help="exact sheet: split aces may be hit")
    parser.add_argument("--swap-table", action="store_true",
                        help="measure the swap chart (swap versus keep per total and up card) instead")
    parser.add_argument("--trials", type=int, default=6000,
                        help="--swap-table: stacked starts per cell (default 6000)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the shuffles (default 7)")
    parser.add_argument("--decks", type=int, default=6, help="decks in the shoe (default 6)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                        help="processes to share the rounds (default: 2, or 1 on one core); same figures")


def _up_name(up: int) -> str:
    return {10: "T", 11: "A"}.get(up, str(up))


def run(args: argparse.Namespace) -> int:
    if not args.swap_table:
        return house_edge_sheet(args) if args.rounds is not None else exact(args)
    if args.trials < 2:
        print("croupier math swap_hand: --trials must be at least 2")
        return 2
    results = swap_table(args.trials, args.seed, args.decks, args.workers)
    print(f"Swap-Hand swap table, {decks_text(args.decks)}, S17, {args.trials} trials per cell, "
          f"seed {args.seed}")
    print("EV per unit of main (main + Odds-Win), swap minus keep, on the same cards; * = not clear at 95 %")
    print("hard  up    swap     keep     diff  +/-      choice")
    for r in results:
        clear = abs(r.diff) > r.half
        print(f"{r.total:>4} {_up_name(r.up):>3} {r.swap:+8.3f} {r.keep:+8.3f} {r.diff:+8.3f} {r.half:6.3f}  "
              f"{'swap' if r.diff > 0 else 'keep'}{'' if clear else ' *'}")
    print("\nSWAP_TABLE = {")
    for t in TOTALS:
        ups = sorted(r.up for r in results if r.total == t and r.diff > 0)
        print(f"    {t}: frozenset({{{', '.join(str(u) for u in ups)}}}),")
    print("}")
    return 0


def exact(args: argparse.Namespace) -> int:
    """The exact sheet: stored for the table defaults, else computed (progress bar on stderr)."""
    try:
        options = SwapHandOptions(
            decks=args.decks, dealer_hits_soft_17=args.h17, blackjack_pays=Odds.parse(args.blackjack_pays),
            double_on=args.double_on, double_after_split=not args.no_das,
            max_split_hands=args.max_split_hands,
            resplit_aces=args.resplit_aces, hit_split_aces=args.hit_split_aces,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        print(f"croupier math swap_hand: {err['loc'][0]}: {err['msg']}", file=sys.stderr)
        return 2
    return deliver(None if args.recompute else cached(options), lambda: compute(options, args.workers),
                   lambda sheet, source: render(sheet, args.format, source),
                   DEFAULTS_FILE.name, args.workers)


def house_edge_sheet(args: argparse.Namespace) -> int:
    """The default sheet: each wager's house edge by simulation, the method and its size stated."""
    if args.rounds < 2:
        print("croupier math swap_hand: --rounds must be at least 2", file=sys.stderr)
        return 2
    options = SwapHandOptions(decks=args.decks)
    print(f"Swap-Hand Blackjack par sheet: {decks_text(args.decks)}, "
          f"{'H17' if options.dealer_hits_soft_17 else 'S17'}, blackjack pays {options.blackjack_pays}, "
          f"double on {options.double_on}, up to {options.max_split_hands} split hands (table defaults)")
    print(f"method: simulation (Monte Carlo) through the real engine, {args.rounds:,} rounds, seed "
          f"{args.seed}, basic strategy with the swap chart (docs/strategy/swap_hand.md); 95 % intervals")
    tally = simulate(args.rounds, args.seed, options, False, args.workers)
    print_edges(tally)
    print(f"command: {args.croupier} math swap_hand --rounds {args.rounds} --seed {args.seed} "
          f"--decks {args.decks}")
    return 0
