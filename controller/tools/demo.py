"""``croupier demo``: a simulated Baccarat table in the terminal, dealt live through the engine.

The engine is the real one; only the shoe and the players are simulated
(seeded, so a demo can be replayed). Each round shows the wagers, every card
as it comes out of the shoe, the coup's result and every seat's settlement.
Stop it with Ctrl-C.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import TextIO

from controller import inputs as I
from controller.events import Event
from controller.games.baccarat import Baccarat, BaccaratOptions
from controller.limits import TableLimits
from controller.table import Table
from controller.tools.shoe_shuffle import ShuffledShoe

SEATS = 5
START_CREDITS = 100_000


def _money(minor: int) -> str:
    sign = "-" if minor < 0 else "+" if minor > 0 else " "
    return f"{sign}{abs(minor) / 100:,.2f}"


class Demo:
    """Drives a table with simulated players and prints what a pit screen would show."""

    def __init__(self, seed: int, delay: float, out: TextIO) -> None:
        out.write(f"Croupier demo: a simulated Baccarat table (seed {seed}); Ctrl-C stops it.\n")
        self.rng = random.Random(seed)
        self.delay = delay
        self.out = out
        self.table = Table(Baccarat(BaccaratOptions()), TableLimits(seats=SEATS))
        self.shoe = ShuffledShoe(8, seed, cut_card=16)
        self.beads: list[str] = []
        for seat in range(1, SEATS + 1):
            self.table.apply(I.CreditIn(seat, START_CREDITS))
        self.apply(I.NewShoe())

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def apply(self, inp: I.Input) -> list[Event]:
        events = self.table.apply(inp)
        for event in events:
            d = event.to_dict()
            if d["event"] == "refused":
                self.say(f"  refused: {d['reason']}")
            elif d["event"] == "new_shoe":
                self.say(f"-- new shoe: {d['decks']} decks shuffled --")
                self.beads = []
        return events

    def bets(self) -> None:
        for seat in range(1, SEATS + 1):
            if self.rng.random() < 0.25:
                continue
            main = self.rng.choice(("player", "banker"))
            self.apply(I.PlaceWager(seat, main, self.rng.choice((100, 200, 500, 1000))))
            if self.rng.random() < 0.2:
                self.apply(I.PlaceWager(seat, "tie", 100))
        placed = ", ".join(
            f"seat {s} {p} {a / 100:.2f}" for (s, p), a in sorted(self.table.staked.items())
        )
        self.say(f"  bets: {placed or 'none'}")

    def play_round(self) -> None:
        if self.shoe.needs_shuffle():
            self.shoe.shuffle()
            self.apply(I.NewShoe())
        self.apply(I.OpenBetting())
        self.say(f"Round {self.table.round_no}: place your bets")
        self.bets()
        self.apply(I.CloseBetting())
        self.say("  no more bets")
        while self.table.phase == "dealing":
            time.sleep(self.delay)
            for event in self.apply(I.CardSeen(self.shoe.draw())):
                d = event.to_dict()
                if d["event"] == "card_dealt":
                    self.say(f"  {d['hand']:<6} <- {d['card']}")
                elif d["event"] == "round_result":
                    r = d["result"]
                    self.beads.append({"player": "P", "banker": "B", "tie": "T"}[r["winner"]])
                    natural = " (natural)" if r["natural"] else ""
                    self.say(
                        f"  Player {' '.join(r['player_cards'])} = {r['player_score']}   "
                        f"Banker {' '.join(r['banker_cards'])} = {r['banker_score']}   "
                        f"=> {r['winner'].upper()}{natural}"
                    )
                elif d["event"] == "round_settled":
                    for line in d["settlements"]:
                        self.say(
                            f"    seat {line['seat']} {line['spot']:<6} {line['stake'] / 100:>7.2f} "
                            f"{_money(line['net']):>9}"
                        )
                    self.say(f"  house {_money(d['house_net'])}   shoe: {''.join(self.beads[-40:])}")
        self.say("")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=0, help="stop after N rounds (default: until Ctrl-C)")
    parser.add_argument("--delay", type=float, default=0.4, help="seconds between cards (default 0.4)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the shoe and the players")


def run(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    demo = Demo(seed, args.delay, sys.stdout)
    played = 0
    try:
        while not args.rounds or played < args.rounds:
            demo.play_round()
            played += 1
    except KeyboardInterrupt:
        demo.say("stopped.")
    credits = ", ".join(f"seat {s}: {c / 100:,.2f}" for s, c in sorted(demo.table.credits.items()))
    demo.say(f"{played} rounds played; credits {credits}")
    return 0
