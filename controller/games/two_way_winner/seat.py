"""A 2WayWinner seat: its two cards, its choice, its blackjack hands, and how its wagers settle.

A seat's fate is decided in two very different ways (a blackjack hand
against the dealer's total, or a Hold'em hand against the dealer's poker
hand) and the antes follow whichever way was chosen. Keeping every
settlement rule of one seat in one function, fed with what the round found
out (:class:`Showdown`), makes the money rules readable next to the rules
text and testable without dealing a round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from controller.cards import Card
from controller.game_base import RoundLedger
from controller.games.blackjack import Hand, SplitRules, is_natural
from controller.games.poker_hands import HandRank, PokerHand
from controller.money import EVEN, Odds

BJ_ANTE: Final = "bj_ante"
POKER_ANTE: Final = "poker_ante"
DEALER_BONUS: Final = "dealer_bonus"
BJ_PLAY: Final = "bj_play"
POKER_PLAY: Final = "poker_play"
POKER_BET: Final = "poker_bet"

#: The choices at "Poker or Blackjack?".
BLACKJACK: Final = "blackjack"
POKER: Final = "poker"
SURRENDER: Final = "surrender"
TAKE_NATURAL: Final = "take_natural"

#: Split once, never double after a split, one card to each split ace (the seed's rules).
SPLIT_RULES: Final = SplitRules(
    double_on="any2", double_after_split=False, max_split_hands=2, resplit_aces=False, hit_split_aces=False
)


@dataclass(slots=True)
class SeatPlay:
    """One seat in a round. ``ante`` is each ante (they are equal)."""

    seat: int
    ante: int
    cards: list[Card] = field(default_factory=list)
    choice: str | None = None
    hands: list[Hand] = field(default_factory=list)
    bet_decided: bool = False
    best: PokerHand | None = None

    @property
    def natural(self) -> bool:
        return is_natural(self.cards)

    def max_bet(self) -> int:
        """A seat that chose poker with a natural may bet twice the ante; others once."""
        return bet_sizes(self.natural, self.ante)[-1]

    def hand_codes(self) -> list[list[str]]:
        """The seat's hands as card codes: the blackjack hands once split, else its two cards."""
        if self.hands:
            return [hand.codes() for hand in self.hands]
        return [[c.code for c in self.cards]]


def bet_sizes(natural: bool, ante: int) -> tuple[int, ...]:
    """What a poker seat may bet at check-or-bet: the ante, and with a natural twice the ante too."""
    return (ante, 2 * ante) if natural else (ante,)


def offered_bets(natural: bool, ante: int, credits: int) -> tuple[int, ...]:
    """The bets a poker seat is offered: those of :func:`bet_sizes` its credits cover (none: it may only
    check). The round offers ``bet`` by it, and the panels light ``bet_2x`` by it
    (:mod:`controller.panels.view`), so the lamp never offers what the round refuses."""
    return tuple(bet for bet in bet_sizes(natural, ante) if bet <= credits)


@dataclass(frozen=True, slots=True)
class Showdown:
    """What the round found out, as far as settling a seat needs it."""

    dealer_blackjack: bool
    dealer_total: int
    dealer_best: PokerHand | None
    natural_pays: Odds


def compare_blackjack(hand: Hand, dealer_total: int) -> int:
    """+1 the hand wins, 0 push, -1 it loses (a bust loses even if the dealer would bust)."""
    if hand.busted:
        return -1
    if dealer_total > 21:
        return 1
    return (hand.total > dealer_total) - (hand.total < dealer_total)


def compare_poker(seat_best: PokerHand, dealer_best: PokerHand) -> int:
    """+1 the seat's best five wins, 0 equal hands, -1 it loses."""
    return (seat_best > dealer_best) - (seat_best < dealer_best)


def seat_nets(play: SeatPlay, ledger: RoundLedger, show: Showdown) -> dict[str, int]:
    """The net of every game wager of the seat (the Dealer Bonus aside), by spot."""
    seat, ante = play.seat, play.ante
    nets: dict[str, int] = {}
    if play.choice == SURRENDER:
        nets[BJ_ANTE], nets[POKER_ANTE] = -ante, 0
    elif play.choice == TAKE_NATURAL:
        # Both have blackjack: a push, whatever natural_pays is.
        nets[BJ_ANTE] = 0 if show.dealer_blackjack else show.natural_pays.win(ante)
        nets[POKER_ANTE] = 0
    elif play.choice == BLACKJACK:
        if show.dealer_blackjack:  # the blackjack play and ante only; the poker ante goes back
            nets[BJ_ANTE], nets[POKER_ANTE] = -ante, 0
            for hand in play.hands:
                nets[hand.spot] = -ledger.stake(seat, hand.spot)
        else:
            for hand in play.hands:
                stake = ledger.stake(seat, hand.spot)
                nets[hand.spot] = compare_blackjack(hand, show.dealer_total) * stake
            first = compare_blackjack(play.hands[0], show.dealer_total)  # both antes follow hand 1
            nets[BJ_ANTE] = first * ante
            nets[POKER_ANTE] = min(first, 0) * ante
    elif play.choice == POKER:
        assert play.best is not None and show.dealer_best is not None
        outcome = compare_poker(play.best, show.dealer_best)
        for spot in (POKER_ANTE, POKER_PLAY, POKER_BET):
            stake = ledger.stake(seat, spot)
            if stake:
                nets[spot] = outcome * EVEN.win(stake)
        if outcome > 0:
            nets[BJ_ANTE] = ante if play.best.rank >= HandRank.FULL_HOUSE else 0
        else:
            nets[BJ_ANTE] = outcome * ante
    else:  # pragma: no cover - a finished round has every seat's choice
        raise AssertionError(f"seat {seat} settles without a choice")
    return nets


def bonus_net(stake: int, pays: Odds | None) -> int:
    """The Dealer Bonus net: the pay table's odds on a paying hand, else the stake is lost."""
    return -stake if pays is None else pays.win(stake)
