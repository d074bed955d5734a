"""2WayWinner computed exactly: the best "poker or blackjack?" choice, each wager's return and the edge.

One seat, one deck shuffled every round (the game's only deck rule). The
seat sees its two cards ``P`` and the up card, then picks:

- **blackjack**: valued by the exact blackjack engine on the 49 cards left
  (composition-dependent play; dealer hits soft 17; one split, no double
  after it; split aces take one card). Hand 1 carries both antes: it wins
  its play and the blackjack ante (+2), loses its play and both antes (-3),
  doubled +3 / -4; the split hand plays for its own stake only; a dealer
  blackjack takes the blackjack ante and play (-2). Ten-value cards of
  different ranks (K-Q) are no pair here, so they may not split.
- **poker**: exact from :mod:`showdown_exact`: for every hole card the
  seat then sees (the hole card and the up card are the first community
  cards), the best of check and bet (a natural may bet twice) from the
  wins, ties and full-house wins over every three-card run-out and dealer
  hand. A win pays the poker ante, play and bet (and the blackjack ante on
  a full house or better), a loss takes all four stakes and the blackjack
  ante; a tie pushes.
- **surrender** (-1, not against an ace), or for a natural **take_natural**
  (``natural_pays`` on the blackjack ante unless the dealer has one too).

Two strategies are valued on the same figures: ``optimal`` (each choice and
bet the larger expectation, each blackjack decision the best for the exact
cards) and ``policy``, the simulator's player (docs/strategy/two_way_winner.md),
which the simulation cross-check measures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np

from controller.cards import DECK, Card
from controller.games.blackjack import is_natural, is_pair
from controller.games.blackjack_dealer import ACE, TEN, best_total, full_shoe, hole_blackjack, remove
from controller.games.blackjack_exact import PLAIN, Evaluator, Rules, Stakes, two_pass
from controller.games.blackjack_strategy import Chart, chart_policy
from controller.games.two_way_winner.policy import choose
from controller.games.two_way_winner.showdown_exact import PAIR_CARDS, PAIR_INDEX, PAIRS, SHOWDOWNS, Counts

RULES: Final = Rules(hits_soft_17=True, double_after_split=False, max_split_hands=2)
#: Hand 1 of a blackjack seat: its play and both antes ride on it.
FIRST: Final = Stakes(2.0, 3.0, 3.0, 4.0)
NOTHING: Final = Stakes(0.0, 0.0, 0.0, 0.0)
WAGERS: Final = ("bj_ante", "poker_ante", "bj_play", "poker_play", "poker_bet")
#: The blackjack wagers' shares: how hand 1 and a split hand count, and a dealer blackjack's net.
BJ_SHARES: Final[dict[str, tuple[dict[Stakes, Stakes], float]]] = {
    "bj_ante": ({FIRST: Stakes(1.0, 1.0, 1.0, 1.0), PLAIN: NOTHING}, -1.0),
    "poker_ante": ({FIRST: Stakes(0.0, 1.0, 0.0, 1.0), PLAIN: NOTHING}, 0.0),
    "bj_play": ({FIRST: PLAIN, PLAIN: PLAIN}, -1.0),
}
#: The round's moments on the blackjack branch: E[net^2] (each hand's net squared: exact without a
#: split, a split's cross term left out and bounded by the sheet) and P(hand 1 wins) (a round wins
#: then; a split round also wins when hand 1 pushes and hand 2 wins: bounded by the split rounds).
BJ_MOMENTS: Final[dict[str, tuple[dict[Stakes, Stakes], float]]] = {
    "second": ({FIRST: Stakes(4.0, -9.0, 9.0, -16.0), PLAIN: Stakes(1.0, -1.0, 4.0, -4.0)}, 4.0),
    "wins": ({FIRST: Stakes(1.0, 0.0, 1.0, 0.0), PLAIN: NOTHING}, 0.0),
}
STRATEGIES: Final = ("policy", "optimal")
CHOICES: Final = ("blackjack", "poker", "surrender", "take_natural")
#: The simulator's blackjack turns: basic strategy for H17 without double after split.
POLICY_CHART: Final = Chart(hits_soft_17=True, double_after_split=False)


def points(card: Card) -> int:
    """A card's blackjack value in the engine's terms (1 ace .. 10)."""
    return ACE if card.rank == "A" else TEN if card.rank in "TJQK" else card.rank_value


#: A blackjack start in the engine's terms: up value, two card values (low first), may split.
Start = tuple[int, int, int, bool]


def start_of(cards: tuple[Card, Card], up: Card) -> Start:
    v1, v2 = sorted((points(cards[0]), points(cards[1])))
    return points(up), v1, v2, is_pair(cards)


def blackjack_values(strategy: str, only: list[Start] | None = None) -> dict[Start, dict[str, float]]:
    """Per start (every one, or ``only`` these): the blackjack choice's net per ante (``total``), each
    blackjack wager's share, the moments of :data:`BJ_MOMENTS` and P(a split round) (``split``)."""
    shoe = full_shoe(1)
    starts = only or all_starts()
    policy = chart_policy(POLICY_CHART) if strategy == "policy" else None

    def deal(ev: Evaluator, s: Start, on_bj: float) -> float:
        up, v1, v2, may_split = s
        rest = remove(shoe, up, v1, v2)
        return on_bj * hole_blackjack(up, rest) + ev.play(rest, v1, v2, up, FIRST, others=PLAIN,
                                                          may_split=may_split)

    def work() -> dict[Start, dict[str, float]]:
        best = Evaluator(RULES, policy)
        out = {s: {"total": deal(best, s, -2.0)} for s in starts}
        for wager, (payoff, on_bj) in {**BJ_SHARES, **BJ_MOMENTS}.items():
            share = Evaluator(RULES, policy, replay=None if policy else best.decisions, payoff=payoff)
            for s in starts:
                out[s][wager] = deal(share, s, on_bj)
        for s in starts:
            up, v1, v2, may_split = s
            rest = remove(shoe, up, v1, v2)
            legal = best.legal(v1, v2, may_split=may_split)
            if policy is not None:
                soft = ACE in (v1, v2) and v1 + v2 <= 11
                first = policy(best_total(v1 + v2, soft), soft, v1 if v1 == v2 else 0, up, legal)
            else:
                first = best.decisions.get((rest, v1, v2, up, FIRST, False, may_split), legal[0])
            out[s]["split"] = (1 - hole_blackjack(up, rest)) if first == "split" else 0.0
        return out

    return two_pass(work, lambda: [deal(Evaluator(RULES), s, -2.0) for s in starts])


def all_starts() -> list[Start]:
    """Every blackjack start of one deck (a natural never plays blackjack)."""
    return sorted({start_of((a, b), u) for a, b in _pairs() for u in DECK if u not in (a, b)
                   if not is_natural([a, b])})


def optimal_decisions() -> dict[object, str]:
    """The exact engine's best blackjack play for every start of this game, keyed as the engine keys
    them (:class:`Evaluator`.decisions), for a player that follows it (the simulation cross-check)."""
    shoe = full_shoe(1)
    found: dict[object, str] = {}

    def work() -> None:
        ev = Evaluator(RULES)
        for up, v1, v2, may_split in all_starts():
            ev.play(remove(shoe, up, v1, v2), v1, v2, up, FIRST, others=PLAIN, may_split=may_split)
        found.update(ev.decisions)

    two_pass(work)
    return found


def _pairs() -> list[tuple[Card, Card]]:
    return [(DECK[a], DECK[b]) for a, b in PAIR_CARDS.tolist()]


@dataclass
class PokerBranch:
    """Per (seat pair, up card): the poker choice's net per ante, each wager's share, P(win), E[net^2]
    and P(bet), for one strategy's bets (arrays [pair index, up card], NaN where the cards clash)."""

    total: np.ndarray
    shares: dict[str, np.ndarray]
    wins: np.ndarray
    second: np.ndarray
    bets: np.ndarray


def poker_branch(counts: Counts, strategy: str) -> PokerBranch:
    """The poker choice for every two cards and up card, averaged over the hole card the seat then sees."""
    seat = np.arange(PAIRS)[:, None, None]
    up, hole = np.arange(52)[None, :, None], np.arange(52)[None, None, :]
    shown = PAIR_INDEX[up, hole]
    valid = (shown >= 0) & (PAIR_CARDS[seat, 0] != up) & (PAIR_CARDS[seat, 1] != up) \
        & (PAIR_CARDS[seat, 0] != hole) & (PAIR_CARDS[seat, 1] != hole)
    flat = np.where(valid, shown * PAIRS + seat, 0)
    w, t, f = (arr[flat] / SHOWDOWNS for arr in (counts.wins, counts.ties, counts.full_house_wins))
    lose = 1.0 - w - t
    ranks = PAIR_CARDS // 4
    natural = np.array([is_natural([a, b]) for a, b in _pairs()])[:, None, None]
    if strategy == "optimal":
        # Betting one more unit adds w - lose: bet (twice with a natural) exactly when that is positive.
        bet = np.where(w - lose > 0, np.where(natural, 2, 1), 0)
    else:
        bet = policy_bets(ranks, natural)
    edge = w - lose
    total = w * (2 + bet) + f - lose * (3 + bet)
    shares = {"bj_ante": f - lose, "poker_ante": edge, "poker_play": edge, "poker_bet": bet * edge}
    second = (w - f) * (2 + bet) ** 2 + (f + lose) * (3 + bet) ** 2

    def mean(x: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.where(valid, x, 0.0).sum(axis=2) / 49
        out[~valid.any(axis=2)] = np.nan
        return out

    return PokerBranch(mean(total), {k: mean(v) for k, v in shares.items()}, mean(w), mean(second),
                       mean(bet.astype(np.float64)))


def policy_bets(ranks: np.ndarray, natural: np.ndarray) -> np.ndarray:
    """The simulator's bet (policy.check_or_bet, a test holds the two equal) for every seat pair (its
    ranks, whether it is a natural), up card and hole card: 0, 1 or 2 antes."""
    card_rank = np.arange(52) // 4
    mine_0, mine_1 = ranks[:, 0][:, None, None], ranks[:, 1][:, None, None]
    board = (card_rank[None, :, None], card_rank[None, None, :])
    paired = (mine_0 == mine_1) | (mine_0 == board[0]) | (mine_0 == board[1]) | (mine_1 == board[0]) \
        | (mine_1 == board[1])
    ace = (mine_0 == 12) | (mine_1 == 12)
    bets: np.ndarray = np.where(natural, np.where(paired, 2, 1), np.where(paired | ace, 1, 0))
    return bets


@dataclass
class Sheet:
    """One strategy's exact figures, per ante (each round stakes two antes)."""

    net: float = 0.0
    shares: dict[str, float] = field(default_factory=lambda: dict.fromkeys(WAGERS, 0.0))
    second: float = 0.0
    wins: float = 0.0
    choices: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CHOICES, 0.0))
    poker_bets: float = 0.0
    #: P(a split round): the bound on what E[net^2] and P(net > 0) leave out.
    splits: float = 0.0
    #: (seat class, up rank) -> choice -> probability.
    cells: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)


def evaluate(counts: Counts, natural_pays: float, strategy: str,
             picks: dict[tuple[int, int], str] | None = None) -> Sheet:
    """Every (two cards, up card) of one deck, with the strategy's choice, into one :class:`Sheet`;
    ``picks`` gets each choice, by (pair index, up card index)."""
    bj = blackjack_values(strategy)
    poker = poker_branch(counts, strategy)
    sheet = Sheet()
    weight = 1.0 / (PAIRS * 50)
    shoe = full_shoe(1)
    for i, (a, b) in enumerate(_pairs()):
        for up in DECK:
            if up in (a, b):
                continue
            options = _options(a, b, up, i, bj, poker, shoe, natural_pays)
            if strategy == "optimal":
                pick = max(options, key=lambda k: options[k][0])
            else:
                pick = choose([a, b], up, tuple(options))
            net, shares, win, second, split = options[pick]
            sheet.net += weight * net
            sheet.splits += weight * split
            sheet.second += weight * second
            sheet.wins += weight * win
            sheet.choices[pick] += weight
            for k, v in shares.items():
                sheet.shares[k] += weight * v
            if pick == "poker":
                sheet.poker_bets += weight * float(poker.bets[i, up.index])
            cell = sheet.cells.setdefault((seat_class(a, b), up.rank), {})
            cell[pick] = cell.get(pick, 0.0) + weight
            if picks is not None:
                picks[(i, up.index)] = pick
    return sheet


#: An answer's net, wager shares, P(net > 0), E[net^2] and P(a split round).
Option = tuple[float, dict[str, float], float, float, float]


def _options(a: Card, b: Card, up: Card, i: int, bj: dict[Start, dict[str, float]], poker: PokerBranch,
             shoe: tuple[int, ...], natural_pays: float) -> dict[str, Option]:
    """Each legal answer's :data:`Option`."""
    j = up.index
    options: dict[str, Option] = {
        "poker": (float(poker.total[i, j]), {k: float(v[i, j]) for k, v in poker.shares.items()},
                  float(poker.wins[i, j]), float(poker.second[i, j]), 0.0)}
    if is_natural([a, b]):
        p_bj = hole_blackjack(points(up), remove(shoe, points(up), ACE, TEN))
        take = natural_pays * (1 - p_bj)
        options["take_natural"] = (take, {"bj_ante": take}, 1 - p_bj, natural_pays ** 2 * (1 - p_bj), 0.0)
        return options
    values = bj[start_of((a, b), up)]
    shares = {k: values[k] for k in BJ_SHARES}
    options["blackjack"] = (values["total"], shares, values["wins"], values["second"], values["split"])
    if up.rank != "A":
        options["surrender"] = (-1.0, {"bj_ante": -1.0}, 0.0, 1.0, 0.0)
    return options


def seat_class(a: Card, b: Card) -> str:
    """The Hold'em class of two cards: ``AA``, ``AKs``, ``T9o`` (higher rank first)."""
    hi, lo = (a, b) if a.rank_value >= b.rank_value else (b, a)
    if hi.rank == lo.rank:
        return hi.rank + lo.rank
    return hi.rank + lo.rank + ("s" if hi.suit == lo.suit else "o")
