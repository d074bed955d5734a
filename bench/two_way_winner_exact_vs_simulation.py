"""Benchmark: do simulations of 2WayWinner confirm the exact sheet, the optimal strategy's margin included?

The acceptance check of the exact 2WayWinner sheet (issue 30): the stored
exact figures (`croupier math two_way_winner`) of the simulator's policy and
of the optimal strategy, against simulations through the real engine of a
player following each (`--rounds` each, the same cards for both). The
optimal player answers "poker or blackjack?" and bets as the exact sheet
found best (from the showdown counts, computed here: a few minutes of CPU,
or read back from `--counts FILE` saved by an earlier run) and plays its
blackjack hands with the exact engine's composition-dependent decisions.
Not a test: it prints both strategies' figures, their 99 % intervals, the
margin, whether each holds, and the command.

    python bench/two_way_winner_exact_vs_simulation.py [--rounds 200000] [--seed 30] [--counts F.npz]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from controller.cards import Card
from controller.games.blackjack import is_pair
from controller.games.blackjack_dealer import full_shoe, remove
from controller.games.blackjack_exact import PLAIN
from controller.games.two_way_winner.exact import FIRST, evaluate, optimal_decisions, points
from controller.games.two_way_winner.exact_sheet import cached, figures
from controller.games.two_way_winner.round import TwoWayWinnerRound
from controller.games.two_way_winner.showdown_exact import (
    PAIR_INDEX,
    PAIRS,
    SHOWDOWNS,
    Counts,
    showdown_counts,
)
from controller.games.two_way_winner.simulation import ANTE, Player, Tally, play

#: z of a two-sided 99 % normal interval.
Z99 = 2.5758


def load_counts(path: str | None, workers: int) -> Counts:
    """The showdown counts: read from ``path`` when it exists, else computed (and saved there if given)."""
    if path and Path(path).exists():
        data = np.load(path)
        return Counts(data["wins"], data["ties"], data["full_house_wins"])
    counts = showdown_counts(workers)
    if path:
        np.savez(path, wins=counts.wins, ties=counts.ties, full_house_wins=counts.full_house_wins)
    return counts


def optimal_player(counts: Counts) -> Player:
    """A seat that plays the exact sheet's optimal strategy."""
    picks: dict[tuple[int, int], str] = {}
    evaluate(counts, 1.2, "optimal", picks)
    bet = (2 * counts.wins + counts.ties > SHOWDOWNS).reshape(PAIRS, PAIRS)  # P(win) > P(loss)
    decisions = optimal_decisions()
    shoe = full_shoe(1)

    def decide(rnd: TwoWayWinnerRound, seat: int, legal: Sequence[str]) -> tuple[str, int | None]:
        mine = rnd.seat_play(seat)
        up = rnd.dealer[0]
        i = int(PAIR_INDEX[mine.cards[0].index, mine.cards[1].index])
        if rnd.phase == "choose":
            return picks[(i, up.index)], None
        if rnd.phase == "play":
            hand = rnd.hand_in_turn()
            assert hand is not None
            action = _turn(decisions, shoe, mine.hands.index(hand), len(mine.hands) > 1, hand.cards, up,
                           is_pair(mine.cards))
            return (action if action in legal else "stand"), None
        community = rnd.community()
        if not bet[PAIR_INDEX[community[0].index, community[1].index], i]:
            return "check", None
        return "bet", 2 * mine.ante if mine.natural else None

    return decide


def _turn(decisions: dict[object, str], shoe: tuple[int, ...], which: int, split: bool, cards: list[Card],
          up: Card, same_rank: bool) -> str:
    """The engine's decision for a blackjack hand, looked up on the composition the engine valued it on
    (a split hand: the shoe without the up card and both pair cards, and its own cards only)."""
    values = [points(c) for c in cards]
    u = points(up)
    hard, ace = sum(values), 1 in values
    if not split:
        rest = remove(shoe, u, *values)
        if len(values) == 2:
            v1, v2 = sorted(values)
            return decisions[(remove(shoe, u, v1, v2), v1, v2, u, FIRST, False, same_rank)]
        return decisions[(rest, hard, ace, u, FIRST)]
    stakes = FIRST if which == 0 else PLAIN
    rest = remove(shoe, u, values[0], values[0], *values[1:])
    if len(values) == 2:
        return decisions[(rest, values[0], values[1], u, stakes, True, False)]
    return decisions[(rest, hard, ace, u, stakes)]


def report(name: str, tally: Tally, exact: float) -> tuple[float, float, bool]:
    n = tally.rounds
    mean = -tally.house / n / ANTE  # the player's net per round, in antes
    sd = math.sqrt(tally.house_sq / n / ANTE ** 2 - mean * mean)
    half = Z99 * sd / math.sqrt(n)
    held = mean - half <= exact <= mean + half
    print(f"{name:>8}: simulated {mean:+.5f} antes a round (99 % interval {mean - half:+.5f} .. "
          f"{mean + half:+.5f}), exact {exact:+.5f}: {'inside' if held else 'OUTSIDE'}")
    return mean, half, held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--counts", help="an .npz of the showdown counts: read if it exists, else written")
    args = parser.parse_args()
    sheet = cached("6:5")
    assert sheet is not None, "the stored sheet is missing"
    exact = {k: figures(s)["net_per_round_in_antes"] for k, s in sheet.sheets.items()}
    player = optimal_player(load_counts(args.counts, args.workers))
    print(f"2WayWinner, one seat, natural pays 6:5, {args.rounds} rounds each on the same cards, "
          f"seed {args.seed}")
    m0, h0, ok0 = report("policy", play(args.rounds, args.seed, 1, "6:5", False), exact["policy"])
    optimal = play(args.rounds, args.seed, 1, "6:5", False, player=player)
    m1, h1, ok1 = report("optimal", optimal, exact["optimal"])
    margin, half = m1 - m0, math.hypot(h0, h1)
    stated = exact["optimal"] - exact["policy"]
    held = margin - half <= stated <= margin + half
    print(f"  margin: simulated {margin:+.5f} antes a round (interval {margin - half:+.5f} .. "
          f"{margin + half:+.5f}, the two 99 % half-widths combined), exact {stated:+.5f}: "
          f"{'inside' if held else 'OUTSIDE'}")
    print(f"command: python bench/two_way_winner_exact_vs_simulation.py --rounds {args.rounds} "
          f"--seed {args.seed}")
    return 0 if ok0 and ok1 and held else 1


if __name__ == "__main__":
    raise SystemExit(main())
