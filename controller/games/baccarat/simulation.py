"""Simulate Baccarat through the real engine and report each bet's return with a 95 % interval.

Every round goes through :class:`controller.table.Table` exactly as the
daemon drives it (open betting, wagers, close, cards one by one), so the
simulation checks the engine itself against the exact par sheet
(``croupier math baccarat``). Three seats bet one unit each on Player,
Banker and Tie every round. Shoes are shuffled by a seeded generator; the
cut card leaves 16 cards unplayed, and no burn is drawn (burns do not
change the odds of the next coup in expectation).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from controller import inputs as I
from controller.cards import DECK, decks_text
from controller.events import RoundSettled
from controller.games.baccarat.par_sheet import par_sheet
from controller.games.baccarat.rules import Baccarat, BaccaratOptions
from controller.limits import TableLimits
from controller.money import Odds
from controller.simulation.montecarlo import chunk_seed, chunks, mean_interval, run_chunks
from controller.simulation.shoe_shuffle import CardSource, ShuffledShoe
from controller.table import Table

BETS = (("player", 1), ("banker", 2), ("tie", 3))
STAKE = 100
CUT_CARD = 16
CHUNK = 50_000


@dataclass
class Tally:
    """Sums of nets and squared nets per bet, and the rounds counted."""

    rounds: int
    sums: dict[str, int]
    squares: dict[str, int]

    def merge(self, other: Tally) -> None:
        self.rounds += other.rounds
        for k in self.sums:
            self.sums[k] += other.sums[k]
            self.squares[k] += other.squares[k]


def play(rounds: int, seed: int, decks: int, tie_pays: str) -> Tally:
    """Play ``rounds`` coups through a fresh table from a shoe shuffled by ``seed``."""
    return play_shoe(rounds, ShuffledShoe(decks, seed, CUT_CARD), decks, tie_pays)


def play_shoe(rounds: int, shoe: CardSource, decks: int, tie_pays: str) -> Tally:
    """Play ``rounds`` coups through a fresh table from ``shoe``; the tally of each bet's nets.

    Apart from :func:`play`, only the engine benchmark calls this, with shoes shuffled
    beforehand, so that it times the coups and not the shuffling.
    """
    game = Baccarat(BaccaratOptions(decks=decks, tie_pays=Odds.parse(tie_pays)))
    table = Table(game, TableLimits(seats=3))
    for _, seat in BETS:
        table.apply(I.CreditIn(seat, 10**15))
    card_inputs = {card: I.CardSeen(card) for card in DECK}
    betting = [I.OpenBetting(), *(I.PlaceWager(seat, spot, STAKE) for spot, seat in BETS), I.CloseBetting()]
    spot_of = {seat: spot for spot, seat in BETS}
    tally = Tally(0, {s: 0 for s, _ in BETS}, {s: 0 for s, _ in BETS})
    sums, squares = tally.sums, tally.squares
    apply, draw = table.apply, shoe.draw
    for _ in range(rounds):
        if shoe.needs_shuffle():
            shoe.shuffle()
            apply(I.NewShoe())
        for inp in betting:
            apply(inp)
        while True:  # a Baccarat round's last event is its settlement
            settled = apply(card_inputs[draw()])[-1]
            if isinstance(settled, RoundSettled):
                break
        for line in settled.settlements:
            spot = spot_of[line["seat"]]
            net = line["net"]
            sums[spot] += net
            squares[spot] += net * net
    tally.rounds = rounds
    return tally


def _play_chunk(job: tuple[int, int, int, str]) -> Tally:
    rounds, seed, decks, tie_pays = job
    return play(rounds, seed, decks, tie_pays)


def simulate(rounds: int, seed: int, decks: int, tie_pays: str, workers: int) -> Tally:
    """Chunks with seeds fixed by (seed, chunk), so the answer does not depend on ``workers``."""
    jobs = [(count, chunk_seed(seed, c), decks, tie_pays) for c, count in chunks(rounds, CHUNK)]
    total = Tally(0, {s: 0 for s, _ in BETS}, {s: 0 for s, _ in BETS})
    run_chunks(jobs, _play_chunk, total.merge, lambda job: job[0], workers)
    return total


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=100_000, help="coups to play (default 100000)")
    parser.add_argument("--seed", type=int, default=1, help="shuffle seed (default 1)")
    parser.add_argument("--decks", type=int, default=8, help="decks (default 8)")
    parser.add_argument("--tie-pays", default="9:1", help="'9:1' (default) or '8:1'")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")


def run(args: argparse.Namespace) -> int:
    if args.rounds < 2:
        print("croupier simulate baccarat: --rounds must be at least 2")
        return 2
    tally = simulate(args.rounds, args.seed, args.decks, args.tie_pays, args.workers)
    exact = par_sheet(args.decks, Odds.parse(args.tie_pays), Odds(19, 20))
    n = tally.rounds
    print(f"Baccarat, {decks_text(args.decks)}, {n} rounds, seed {args.seed}, through the engine")
    print(f"{'bet':<8} {'return':>9} {'95% interval':>22} {'exact':>9}  inside")
    all_inside = True
    for spot, _ in BETS:
        mean, half = mean_interval(tally.sums[spot] / STAKE, tally.squares[spot] / STAKE**2, n)
        want = float(exact[f"ev_{spot}"])
        inside = mean - half <= want <= mean + half
        all_inside &= inside
        print(
            f"{spot:<8} {100 * mean:8.4f}% [{100 * (mean - half):8.4f}%, "
            f"{100 * (mean + half):8.4f}%] {100 * want:8.4f}%  {'yes' if inside else 'NO'}"
        )
    print(f"command: {args.croupier} simulate baccarat --rounds {args.rounds} --seed {args.seed} "
          f"--decks {args.decks} --tie-pays {args.tie_pays} --workers {args.workers}")
    return 0 if all_inside else 1
