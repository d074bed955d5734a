"""Exact Baccarat par sheet: Banker, Player and Tie probabilities and every bet's house edge.

Computed by enumerating every sequence of card *values* the shoe can deal
(weighted by how many cards of that value remain), never by simulation, so
the figures are exact fractions for the given number of decks. The deal
order (PPBB or PBPB) does not change the probabilities: the same four
cards are dealt either way, only to different hands.
"""

from __future__ import annotations

import argparse
from fractions import Fraction

from controller.cards import decks_text
from controller.games.baccarat.rules import BANKER_DRAWS
from controller.money import Odds, OddsError


def outcome_weights(decks: int) -> tuple[int, int, int, int]:
    """(banker wins, player wins, ties, total) as integer counts of six-card deal sequences.

    A coup uses four to six cards; shorter coups are scaled by the number of
    ways to deal the unused cards so that every count shares one
    denominator, the number of ordered six-card sequences.
    """
    counts = [16 * decks] + [4 * decks] * 9  # value 0 (T, J, Q, K), then 1 (A) .. 9
    n = 52 * decks
    scale4 = (n - 4) * (n - 5)
    scale5 = n - 5
    wins = [0, 0, 0]  # banker, player, tie

    def tally(ps: int, bs: int, weight: int) -> None:
        wins[0 if bs > ps else 1 if ps > bs else 2] += weight

    for p1 in range(10):
        w1 = counts[p1]
        counts[p1] -= 1
        for p2 in range(10):
            w2 = w1 * counts[p2]
            counts[p2] -= 1
            for b1 in range(10):
                w3 = w2 * counts[b1]
                counts[b1] -= 1
                for b2 in range(10):
                    w4 = w3 * counts[b2]
                    if not w4:
                        continue
                    counts[b2] -= 1
                    ps, bs = (p1 + p2) % 10, (b1 + b2) % 10
                    if ps >= 8 or bs >= 8:
                        tally(ps, bs, w4 * scale4)
                    elif ps >= 6:  # the Player stands; the Banker draws on 0-5
                        if bs <= 5:
                            for b3 in range(10):
                                if counts[b3]:
                                    tally(ps, (bs + b3) % 10, w4 * counts[b3] * scale5)
                        else:
                            tally(ps, bs, w4 * scale4)
                    else:
                        for p3 in range(10):
                            w5 = w4 * counts[p3]
                            if not w5:
                                continue
                            ps3 = (ps + p3) % 10
                            if BANKER_DRAWS[bs][p3]:
                                counts[p3] -= 1
                                for b3 in range(10):
                                    if counts[b3]:
                                        tally(ps3, (bs + b3) % 10, w5 * counts[b3])
                                counts[p3] += 1
                            else:
                                tally(ps3, bs, w5 * scale5)
                    counts[b2] += 1
                counts[b1] += 1
            counts[p2] += 1
        counts[p1] += 1
    total = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    assert sum(wins) == total
    return wins[0], wins[1], wins[2], total


def par_sheet(decks: int, tie_pays: Odds, banker_pays: Odds) -> dict[str, Fraction]:
    """Exact probabilities and expected returns per unit staked (ties push Player and Banker)."""
    b, p, t, total = outcome_weights(decks)
    pb, pp, pt = Fraction(b, total), Fraction(p, total), Fraction(t, total)
    return {
        "banker": pb,
        "player": pp,
        "tie": pt,
        "ev_banker": pb * Fraction(banker_pays.num, banker_pays.den) - pp,
        "ev_player": pp - pb,
        "ev_tie": par_sheet_tie(pt, tie_pays),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--decks", type=int, default=8, help="decks in the shoe (1..8, default 8)")
    parser.add_argument("--tie-pays", default="9:1", help="Tie odds, '9:1' (default) or '8:1'")


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.decks <= 8:
        print(f"croupier math baccarat: --decks must be 1..8, not {args.decks}")
        return 2
    try:
        tie = Odds.parse(args.tie_pays)
    except OddsError as exc:
        print(f"croupier math baccarat: --tie-pays: {exc}")
        return 2
    if tie not in (Odds(9, 1), Odds(8, 1)):
        print(f"croupier math baccarat: --tie-pays must be '9:1' or '8:1', not '{tie}'")
        return 2
    sheet = par_sheet(args.decks, tie, Odds(19, 20))
    print(f"Baccarat, {decks_text(args.decks)}, exact (all deal sequences)")
    print(f"  Banker wins  {float(sheet['banker']):.6f}")
    print(f"  Player wins  {float(sheet['player']):.6f}")
    print(f"  Tie          {float(sheet['tie']):.6f}")
    print("House edge per unit bet (ties push Player and Banker):")
    print(f"  Banker 19:20 {-100 * float(sheet['ev_banker']):.4f} %")
    print(f"  Player 1:1   {-100 * float(sheet['ev_player']):.4f} %")
    for odds in (Odds(9, 1), Odds(8, 1)):
        ev = par_sheet_tie(sheet["tie"], odds)
        mark = "  (this table)" if odds == tie else ""
        print(f"  Tie {str(odds):<8} {-100 * float(ev):.4f} %{mark}")
    return 0


def par_sheet_tie(p_tie: Fraction, odds: Odds) -> Fraction:
    """Expected return of a unit Tie bet at ``odds``."""
    return p_tie * Fraction(odds.num, odds.den) - (1 - p_tie)
