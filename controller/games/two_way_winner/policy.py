"""The default 2WayWinner player of the simulator (docs/strategy/two_way_winner.md).

A simple, explainable policy, not an optimum: it is what a sensible regular
does, and the simulator reports the house edge *for this player*. The
reasoning behind each rule is in the strategy document. In short:

- a natural is always taken (6:5 on the ante now beats playing it for a pot);
- strong blackjack totals play blackjack, and so do 12-17 against a dealer
  bust card; pairs below 9-9 and soft hands (an ace) play poker;
- every other hand plays poker: at these antes a blackjack hand wins 2
  units and loses 3, a poker hand that checks wins 2 and loses 3 too, but
  the poker hand is an even fight on average while a weak blackjack total
  against a 7 or better is not; surrender (lose 1 of the 2 units for sure)
  measured no better than poker, so the policy never surrenders by choice;
- blackjack turns follow basic strategy for one deck with the dealer hitting
  soft 17 and no double after split;
- at check or bet, the seat bets when one of its own cards makes a pair or
  better with the community so far, or it holds an ace; a natural bets
  twice the ante when it has such a pair.

Tools only: the engine never decides for a player.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.cards import Card
from controller.games.blackjack import hand_total, is_pair
from controller.games.blackjack_strategy import Chart, basic_action, up_value
from controller.games.two_way_winner.round import TwoWayWinnerRound
from controller.games.two_way_winner.seat import offered_bets

#: Basic strategy of this table: the dealer hits soft 17, no double after a split.
CHART = Chart(hits_soft_17=True, double_after_split=False)


def choose(cards: Sequence[Card], up: Card, legal: Sequence[str]) -> str:
    """The answer to "Poker or Blackjack?" for two ``cards`` against the dealer's ``up`` card."""
    if "take_natural" in legal:
        return "take_natural"
    if list(legal) == ["surrender"]:  # a seat that cannot fund a play
        return "surrender"
    total, soft = hand_total(cards)
    up_v = up_value(up)
    if (not soft and total >= 17) or (soft and total >= 18):
        pick = "blackjack"
    elif is_pair(cards) or soft:
        pick = "poker"
    elif total in (10, 11) and up_v <= 9 or total >= 12 and up_v <= 6:
        pick = "blackjack"
    else:
        pick = "poker"
    return pick if pick in legal else next(a for a in ("poker", "blackjack", "surrender") if a in legal)


def turn(cards: Sequence[Card], up: Card, legal: Sequence[str]) -> str:
    """A blackjack turn: basic strategy among the legal actions."""
    return basic_action(cards, up_value(up), legal, CHART)


def check_or_bet(cards: Sequence[Card], community: Sequence[Card], natural: bool, ante: int,
                 legal: Sequence[str], credits: int) -> tuple[str, int | None]:
    """Bet with a pair or better made with one of our own cards, or with an ace; else check. A paired
    natural bets twice the ante only when ``credits`` cover it (the round offers it then alone)."""
    if "bet" not in legal:
        return "check", None
    board = {c.rank for c in community}
    paired = cards[0].rank == cards[1].rank or any(c.rank in board for c in cards)
    if natural:
        return "bet", 2 * ante if paired and 2 * ante in offered_bets(natural, ante, credits) else ante
    if paired or any(c.rank == "A" for c in cards):
        return "bet", None
    return "check", None


def decide(rnd: TwoWayWinnerRound, seat: int, legal: Sequence[str]) -> tuple[str, int | None]:
    """The policy's decision for ``seat`` in the round as it stands (what the seat can see)."""
    play = rnd.seat_play(seat)
    up = rnd.dealer[0]
    if rnd.phase == "choose":
        return choose(play.cards, up, legal), None
    if rnd.phase == "play":
        hand = rnd.hand_in_turn()
        assert hand is not None
        return turn(hand.cards, up, legal), None
    return check_or_bet(play.cards, rnd.community(), play.natural, play.ante, legal,
                        rnd.ledger.credits.get(seat, 0))
