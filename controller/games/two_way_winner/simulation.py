"""Simulate 2WayWinner through the real engine: house edge per unit of ante, with a 95 % interval.

Every round goes through :class:`controller.table.Table` exactly as the
daemon drives it (a new one-deck shoe, open betting, both antes per seat,
close, then each card and decision when the table asks for it), so the
figures measure the engine as built. Decisions come from the default player
policy (:mod:`controller.games.two_way_winner.policy`,
docs/strategy/two_way_winner.md); cards from a ``random.Random`` seeded with
``--seed``, so a run can be repeated card for card.

The house edge is the house's net on the game wagers (antes, plays, bets,
doubles, splits) over the total ante (both antes) staked. Seats of one round
share the dealer's cards, so the interval is computed from per-round totals,
not per-seat results. With ``--with-bonus`` each seat also stakes one
Dealer Bonus per round; its return is reported apart, against the exact
figure of ``croupier math two_way_winner --bonus``.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tqdm import tqdm

from controller import inputs as I
from controller.cards import DECK
from controller.events import RoundSettled
from controller.game_base import CardDue, DecisionDue
from controller.games.two_way_winner.bonus_math import par_sheet
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.policy import decide
from controller.games.two_way_winner.round import TwoWayWinnerRound
from controller.games.two_way_winner.rules import TwoWayWinner
from controller.games.two_way_winner.seat import DEALER_BONUS
from controller.limits import TableLimits
from controller.money import Odds
from controller.simulation.montecarlo import mean_interval
from controller.table import Table

ANTE = 1000
CARD_INPUTS = {card: I.CardSeen(card) for card in DECK}


@dataclass
class Tally:
    """Per-round sums of the game's house net and of the Dealer Bonus nets, with their squares."""

    rounds: int = 0
    seat_rounds: int = 0
    house: int = 0
    house_sq: int = 0
    bonus: int = 0
    bonus_sq: int = 0
    choices: Counter[str] = field(default_factory=Counter)


#: A player: the decision for a seat in the round as it stands, among the legal actions.
Player = Callable[[TwoWayWinnerRound, int, Sequence[str]], tuple[str, int | None]]


def play(rounds: int, seed: int, seats: int, natural_pays: str, with_bonus: bool,
         progress: bool = True, player: Player = decide) -> Tally:
    """Play ``rounds`` rounds of ``seats`` seats through a fresh table; the tally. The cards depend on
    ``seed`` only, so two players given the same seed meet the same cards."""
    game = TwoWayWinner(TwoWayWinnerOptions(natural_pays=Odds.parse(natural_pays)))
    table = Table(game, TableLimits(seats=6))
    for seat in range(1, seats + 1):
        table.apply(I.CreditIn(seat, 10**15))
    rng = random.Random(seed)
    betting: list[I.Input] = [I.OpenBetting()]
    for seat in range(1, seats + 1):
        betting += [I.PlaceWager(seat, "bj_ante", ANTE), I.PlaceWager(seat, "poker_ante", ANTE)]
        if with_bonus:
            betting.append(I.PlaceWager(seat, DEALER_BONUS, ANTE))
    betting.append(I.CloseBetting())
    tally = Tally()
    apply = table.apply
    with tqdm(total=rounds, unit="round", file=sys.stderr, disable=not progress, mininterval=0.5) as bar:
        for n in range(rounds):
            deck = list(DECK)
            rng.shuffle(deck)
            apply(I.NewShoe())
            settled: RoundSettled | None = None
            for inp in betting:
                for event in apply(inp):
                    if isinstance(event, RoundSettled):
                        settled = event
            rnd = table.round
            assert isinstance(rnd, TwoWayWinnerRound)
            while settled is None:
                due = table.due()
                if isinstance(due, CardDue):
                    events = apply(CARD_INPUTS[deck.pop()])
                elif isinstance(due, DecisionDue):
                    seat, legal = min(due.choices.items())
                    action, amount = player(rnd, seat, legal)
                    events = apply(I.Decision(seat, action, amount))
                else:  # pragma: no cover - the engine always waits for something until settled
                    raise AssertionError("round waits for nothing")
                for event in events:
                    if event.event == "refused":
                        raise AssertionError(f"policy made an illegal move: {event.to_dict()}")
                    if isinstance(event, RoundSettled):
                        settled = event
            for p in rnd.seats:
                tally.choices[p.choice or "none"] += 1
            game_net = bonus_net = 0
            for line in settled.settlements:
                if line["spot"] == DEALER_BONUS:
                    bonus_net += line["net"]
                else:
                    game_net += line["net"]
            tally.house -= game_net
            tally.house_sq += game_net * game_net
            tally.bonus += bonus_net
            tally.bonus_sq += bonus_net * bonus_net
            tally.rounds += 1
            tally.seat_rounds += seats
            if n % 500 == 499:
                bar.update(500)
        bar.update(rounds - bar.n)
    return tally


def interval(total: int, squares: int, rounds: int, unit: int) -> tuple[float, float]:
    """Mean per ``unit`` staked per round and the half-width of its 95 % interval."""
    mean, half = mean_interval(total, squares, rounds)
    return mean / unit, half / unit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=100_000, help="rounds to play (default 100000)")
    parser.add_argument("--seed", type=int, default=1, help="shuffle seed (default 1)")
    parser.add_argument("--seats", type=int, default=1, choices=range(1, 7), help="seats in play (default 1)")
    parser.add_argument("--natural-pays", default="6:5", choices=("6:5", "3:2"),
                        help="odds paid on a blackjack natural (default 6:5)")
    parser.add_argument("--with-bonus", action="store_true", help="each seat also stakes the Dealer Bonus")


def run(args: argparse.Namespace) -> int:
    if args.rounds < 2:
        print("croupier simulate two_way_winner: --rounds must be at least 2", file=sys.stderr)
        return 2
    t = play(args.rounds, args.seed, args.seats, args.natural_pays, args.with_bonus)
    ante = 2 * ANTE * args.seats  # total ante of a round
    edge, half = interval(t.house, t.house_sq, t.rounds, ante)
    print(f"2WayWinner, {t.rounds} rounds x {args.seats} seat(s), seed {args.seed}, natural pays "
          f"{args.natural_pays}, default player policy, through the engine")
    print(f"house edge per unit of total ante: {100 * edge:.3f} % "
          f"(95 % interval {100 * (edge - half):.3f} % .. {100 * (edge + half):.3f} %)")
    print("rounds played each way (per seat):")
    for choice in ("blackjack", "poker", "surrender", "take_natural"):
        print(f"  {choice:<13} {100 * t.choices[choice] / t.seat_rounds:6.2f} %")
    if args.with_bonus:
        ret, bhalf = interval(t.bonus, t.bonus_sq, t.rounds, ANTE * args.seats)
        exact = float(par_sheet(TwoWayWinnerOptions().dealer_bonus_paytable)["return"])
        print(f"Dealer Bonus return: {100 * (1 + ret):.3f} % (95 % interval {100 * (1 + ret - bhalf):.3f} % "
              f".. {100 * (1 + ret + bhalf):.3f} %), exact {100 * exact:.4f} %")
    print(f"command: {args.croupier} simulate two_way_winner --rounds {args.rounds} --seed {args.seed} "
          f"--seats {args.seats} --natural-pays {args.natural_pays}"
          f"{' --with-bonus' if args.with_bonus else ''}")
    return 0
