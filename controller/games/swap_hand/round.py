"""One round of Swap-Hand Blackjack as a state machine: deal, checks, seat turns, dealer, settle.

The round keeps a cursor (seat, hand) and, after every card or decision,
:meth:`SwapHandRound._advance` walks forward through everything the rules
decide on their own (a 21 that wins at once, a bust, a split ace that takes
no decision) until it reaches something only the shoe or a player can
supply. That one place computes :meth:`due`, so what the table is asked for
and what the round accepts can never disagree.
"""

from __future__ import annotations

from typing import Any

from controller.cards import Card
from controller.events import CardDealt, Event, GameNotice
from controller.game_base import CardDue, DecisionDue, Due, GameRound, Refusal, RoundLedger, Settlement
from controller.games.blackjack import (
    Hand,
    SplitRules,
    can_double,
    can_hit,
    can_split,
    dealer_should_hit,
    hand_total,
    is_natural,
    split_spot,
    ten_value,
)
from controller.games.swap_hand.options import SwapHandOptions, Variant
from controller.games.swap_hand.seat import (
    BLACKJACK,
    BUST,
    LOSE,
    MAIN,
    PUSH,
    WIN,
    SeatPlay,
    compare,
)

_DEALER = "dealer"
#: Hard two-card totals that may be swapped.
SWAP_TOTALS = range(14, 19)


class SwapHandRound(GameRound):
    """A round over the wagers fixed at close of betting (every seat in the ledger bet ``main``)."""

    __slots__ = ("options", "rules", "variant", "seats", "dealer", "phase", "_deal", "_cursor", "_draw",
                 "_due", "dealer_blackjack")

    def __init__(self, options: SwapHandOptions, rules: SplitRules, variant: Variant, ledger: RoundLedger):
        super().__init__(ledger)
        self.options = options
        self.rules = rules
        self.variant = variant
        self.seats = [SeatPlay(seat, ledger.stake(seat, MAIN)) for seat in ledger.seats()]
        self.dealer: list[Card] = []
        self.phase = "deal"  # deal | play | dealer | done
        # Deal order: a card to each seat, the up card, a second card to each seat, the hole card.
        order: list[SeatPlay | None] = [*self.seats, None, *self.seats, None]
        self._deal = order
        self._cursor = (0, 0)  # (seat index, hand index) during play
        self._draw = False  # the current hand asked for a card (hit or double)
        self._due: Due = None
        self.dealer_blackjack = False

    # ------------------------------------------------------------ contract
    def start(self) -> list[Event]:
        return self._advance()

    def due(self) -> Due:
        return self._due

    def on_card(self, card: Card) -> list[Event]:
        due = self._due
        if not isinstance(due, CardDue):
            raise Refusal("no card is due")
        if self.phase == "deal":
            target = self._deal.pop(0)
            if target is None:
                self.dealer.append(card)
            else:
                target.first.cards.append(card)
        elif self.phase == "play":
            self._current_hand().cards.append(card)
            self._draw = False
        else:
            self.dealer.append(card)
        events: list[Event] = [CardDealt(self.ledger.round, card.code, due.hand)]
        events.extend(self._advance())
        return events

    def on_decision(self, seat: int, action: str, amount: int | None) -> list[Event]:
        due = self._due
        if not isinstance(due, DecisionDue) or action not in due.choices.get(seat, ()):
            raise Refusal(f"{action!r} is not legal for seat {seat} now")
        play = self.seats[self._cursor[0]]
        hand = self._current_hand()
        cost = play.base if action in ("double", "split") else None
        if amount is not None and amount != cost:
            if cost is None:
                raise Refusal(f"{action} takes no amount (got {amount})")
            m = self.ledger.money.format
            raise Refusal(f"{action} costs exactly {m(cost)}, not {m(amount)}")
        events: list[Event] = []
        if action == "swap":
            play.discarded, hand.cards = hand.cards, []
            play.swapped = play.swap_decided = True
            events.append(self._notice("swap", seat=seat, discarded=[c.code for c in play.discarded]))
        elif action == "keep":
            play.swap_decided = True
        elif action == "hit":
            self._draw = True
        elif action == "stand":
            hand.finished = True
        elif action == "double":
            events.append(self.ledger.add(seat, hand.spot, play.base))
            hand.doubled = True
            self._draw = True
        else:  # split
            spot = split_spot(MAIN, len(play.hands) + 1)
            events.append(self.ledger.add(seat, spot, play.base))
            aces = hand.cards[0].rank == "A"
            moved = hand.cards.pop()
            hand.split_from = hand.split_from or hand.spot
            hand.split_aces = aces
            play.hands.append(Hand(spot, [moved], split_from=hand.spot, split_aces=aces))
        events.extend(self._advance())
        return events

    def turn(self) -> tuple[SeatPlay, Hand] | None:
        """The seat and hand whose turn it is (for displays and player tools), ``None`` outside play."""
        if self.phase != "play":
            return None
        return self.seats[self._cursor[0]], self._current_hand()

    # ------------------------------------------------------------ stepping
    def _current_hand(self) -> Hand:
        si, hi = self._cursor
        return self.seats[si].hands[hi]

    def _notice(self, what: str, **detail: Any) -> GameNotice:
        return GameNotice(self.ledger.round, what, detail)

    def _advance(self) -> list[Event]:
        """Do everything the rules decide alone; stop at the next card or decision, or finish."""
        events: list[Event] = []
        while True:
            if self.phase == "deal":
                if self._deal:
                    target = self._deal[0]
                    hand = _DEALER if target is None else target.label(target.first)
                    self._due = CardDue(hand)
                    return events
                events.extend(self._after_deal())
                continue
            if self.phase == "play":
                due = self._play_step(events)
                if due is not None:
                    self._due = due
                    return events
                continue
            if self.phase == "dealer":
                if any(h.outcome is None for p in self.seats for h in p.hands) and dealer_should_hit(
                    self.dealer, self.options.dealer_hits_soft_17
                ):
                    self._due = CardDue(_DEALER)
                    return events
                self._settle_standing()
            self.phase = "done"
            self._due = None
            self.finished = True
            return events

    def _after_deal(self) -> list[Event]:
        """The Odds-Win parity check, then the dealer's peek (which may end the round)."""
        events: list[Event] = []
        for play in self.seats:
            total, _ = hand_total(play.first.cards)
            play.parity = "even" if total % 2 == 0 else "odd"
            if play.parity == "even" and self.variant.odds_win:
                events.append(self._notice("odds_win_lost", seat=play.seat, total=total, parity="even"))
        up = self.dealer[0]
        self.phase = "play"
        if up.rank == "A" or ten_value(up):
            self.dealer_blackjack = is_natural(self.dealer)
            events.append(self._notice("dealer_peek", up=up.code, blackjack=self.dealer_blackjack))
            if self.dealer_blackjack:
                natural = BLACKJACK if self.variant.auto_win_21 else PUSH
                for play in self.seats:
                    hand = play.first
                    hand.outcome = natural if hand.natural() else LOSE
                    hand.finished = True
                self.phase = "done"
        return events

    def _play_step(self, events: list[Event]) -> Due:
        """One step of the seats' turns: a due card or decision, or ``None`` after moving on."""
        si, hi = self._cursor
        if si >= len(self.seats):
            self.phase = "dealer"
            return None
        play = self.seats[si]
        if hi >= len(play.hands):
            self._cursor = (si + 1, 0)
            return None
        hand = play.hands[hi]
        if hand.finished:
            self._cursor = (si, hi + 1)
            return None
        if len(hand.cards) < 2 or self._draw:
            return CardDue(play.label(hand))
        total, soft = hand_total(hand.cards)
        if total >= 21:
            self._end_hand(play, hand, total, events)
            return None
        if hand.doubled:
            hand.finished = True
            return None
        if self._swap_open(play, hand, total, soft):
            return DecisionDue({play.seat: ("swap", "keep")})
        actions = self._actions(play, hand)
        if not actions:
            hand.finished = True
            return None
        return DecisionDue({play.seat: actions})

    def _end_hand(self, play: SeatPlay, hand: Hand, total: int, events: list[Event]) -> None:
        """A hand at 21 or over takes no more cards; a 21 wins at once when the variant says so."""
        hand.finished = True
        if total > 21:
            hand.outcome = BUST
        elif hand.natural():
            hand.outcome = BLACKJACK
        elif self.variant.auto_win_21:
            hand.outcome = WIN
        else:
            return  # classic blackjack: a 21 stands and meets the dealer
        events.append(self._notice("hand_decided", seat=play.seat, spot=hand.spot, total=total,
                                   outcome=hand.outcome))

    def _swap_open(self, play: SeatPlay, hand: Hand, total: int, soft: bool) -> bool:
        return (
            self.variant.swap
            and not play.swap_decided
            and hand is play.first
            and len(play.hands) == 1
            and len(hand.cards) == 2
            and not soft
            and total in SWAP_TOTALS
        )

    def _actions(self, play: SeatPlay, hand: Hand) -> tuple[str, ...]:
        """The legal, fundable actions of a two-or-more-card hand under 21 (empty: it just stands)."""
        ledger, rules = self.ledger, self.rules
        splittable = can_split(hand, len(play.hands), rules) and ledger.can_fund(play.seat, play.base)
        if not can_hit(hand, rules):
            # A split ace that may not be hit: no decision unless it may be split again.
            return ("stand", "split") if splittable else ()
        actions = ["hit", "stand"]
        if can_double(hand, rules) and ledger.can_fund(play.seat, play.base):
            actions.append("double")
        if splittable:
            actions.append("split")
        return tuple(actions)

    def _settle_standing(self) -> None:
        """The dealer has finished (or had no need to draw): decide every hand still standing."""
        dealer_total, _ = hand_total(self.dealer)
        for play in self.seats:
            for hand in play.hands:
                if hand.outcome is None:
                    hand.outcome = compare(hand.total, dealer_total)
                    hand.finished = True

    # ------------------------------------------------------------ records
    def settlements(self) -> list[Settlement]:
        lines: list[Settlement] = []
        for play in self.seats:
            lines.extend(play.settle(self.ledger.stakes, self.options.blackjack_pays))
        return lines

    def result(self) -> dict[str, Any]:
        total, _ = hand_total(self.dealer)
        return {
            "dealer_cards": [c.code for c in self.dealer],
            "dealer_total": total,
            "dealer_blackjack": self.dealer_blackjack,
            "seats": {str(p.seat): p.record() for p in self.seats},
        }

    def view(self) -> dict[str, Any]:
        """The round so far; the hole card stays hidden until the dealer's turn."""
        hidden = self.phase in ("deal", "play") and len(self.dealer) == 2
        dealer = [c.code for c in self.dealer[:1]] + (["??"] if hidden else [c.code for c in self.dealer[1:]])
        seats = {str(p.seat): p.record() for p in self.seats}
        return {"phase": self.phase, "dealer_cards": dealer, "seats": seats}
