"""What a 2WayWinner round reports: its settlement lines, its result record and its view for players.

Read-only over the round's cards and choices, so apart from the state machine in
:mod:`~controller.games.two_way_winner.round`; :class:`RoundReport` is part of
:class:`~controller.games.two_way_winner.round.TwoWayWinnerRound`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.cards import Card
from controller.game_base import RoundLedger, Settlement
from controller.games.blackjack import hand_total
from controller.games.poker_hands import PokerHand, best_hand
from controller.games.two_way_winner.options import TwoWayWinnerOptions, bonus_view, community_bonus
from controller.games.two_way_winner.seat import DEALER_BONUS, POKER, SeatPlay, Showdown, bonus_net, seat_nets

#: Community cards: five at most; a dealer card past the fifth is burned.
COMMUNITY = 5


class RoundReport:
    """The results and views of a 2WayWinner round (a mixin of its round)."""

    __slots__ = ()

    ledger: RoundLedger
    options: TwoWayWinnerOptions
    seats: list[SeatPlay]
    dealer: list[Card]
    burned: list[Card]
    dealer_poker: list[Card]
    phase: str
    dealer_blackjack: bool

    if TYPE_CHECKING:  # the round's own queries
        def community(self) -> list[Card]: ...
        def _bonus_staked(self) -> bool: ...

    def dealer_total(self) -> int:
        return hand_total(self.dealer)[0]

    def dealer_best(self) -> PokerHand | None:
        """The dealer's best five of its two poker cards and the community (once drawn)."""
        if len(self.dealer_poker) < 2:
            return None
        return best_hand([*self.dealer_poker, *self.community()])

    def settlements(self) -> list[Settlement]:
        opts = self.options
        show = Showdown(self.dealer_blackjack, self.dealer_total(), self.dealer_best(), opts.natural_pays)
        nets: dict[tuple[int, str], int] = {}
        for play in self.seats:
            for spot, net in seat_nets(play, self.ledger, show).items():
                nets[(play.seat, spot)] = net
        if self._bonus_staked():
            _, key = community_bonus(self.community())
            pays = self.options.dealer_bonus_paytable.pays(key)
            for play in self.seats:
                stake = self.ledger.stake(play.seat, DEALER_BONUS)
                if stake:
                    nets[(play.seat, DEALER_BONUS)] = bonus_net(stake, pays)
        return [Settlement(seat, spot, stake, nets[(seat, spot)])
                for (seat, spot), stake in self.ledger.stakes.items()]

    def result(self) -> dict[str, Any]:
        community = self.community()
        dealer_best = self.dealer_best()
        bonus = bonus_view(*community_bonus(community)) if len(community) == COMMUNITY else None
        seats: dict[str, Any] = {}
        for play in self.seats:
            entry: dict[str, Any] = {"choice": play.choice, "hands": play.hand_codes()}
            if play.choice == POKER and play.best is not None:
                entry["best_hand"] = play.best.to_dict()
            seats[str(play.seat)] = entry
        return {
            "dealer_cards": [c.code for c in self.dealer],
            "community": [c.code for c in community],
            "burned": [c.code for c in self.burned],
            "dealer_poker_cards": [c.code for c in self.dealer_poker],
            "dealer_bj_total": self.dealer_total(),
            "dealer_blackjack": self.dealer_blackjack,
            "dealer_best_hand": None if dealer_best is None else dealer_best.to_dict(),
            "bonus_hand": bonus,
            "seats": seats,
        }

    def view(self) -> dict[str, Any]:
        """The round so far as players see it: the hole card stays face down until the dealer's turn."""
        dealer = [c.code for c in self.dealer]
        if len(dealer) == 2 and self.phase in ("choose", "play") and not self.dealer_blackjack:
            dealer[1] = "??"
        return {
            "phase": self.phase,
            "dealer_cards": dealer,
            "community": [c.code for c in self.community()],
            "burned": [c.code for c in self.burned],
            "dealer_poker_cards": [c.code for c in self.dealer_poker],
            "seats": {str(p.seat): {"choice": p.choice, "hands": p.hand_codes(),
                                    "bet_decided": p.bet_decided} for p in self.seats},
        }
