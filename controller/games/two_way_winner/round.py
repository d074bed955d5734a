"""One 2WayWinner round as a state machine: deal, choose, peek, blackjack, community, poker.

The round moves through phases in the order of the rules file (deal,
choice, dealer peek, blackjack turns, the dealer's blackjack hand, burn,
check or bet, completion, dealer poker cards). After every card or decision
:meth:`TwoWayWinnerRound._advance` walks forward through everything the
rules decide on their own (a hand at 21, split aces, a dealer with nothing
to play for) until it reaches something only the shoe or a player can
supply, and stores it as :meth:`due`. That single place is why what the
table is asked for and what the round accepts cannot disagree.
"""

from __future__ import annotations

from typing import Any

from controller.cards import Card
from controller.events import CardBurned, CardDealt, Event, GameNotice
from controller.game_base import CardDue, DecisionDue, Due, GameRound, Refusal, RoundLedger
from controller.games.blackjack import (
    Hand,
    can_double,
    can_hit,
    can_split,
    dealer_should_hit,
    is_natural,
    split_spot,
    ten_value,
)
from controller.games.poker_hands import best_hand
from controller.games.two_way_winner.options import TwoWayWinnerOptions
from controller.games.two_way_winner.report import COMMUNITY, RoundReport
from controller.games.two_way_winner.seat import (
    BJ_ANTE,
    BJ_PLAY,
    BLACKJACK,
    DEALER_BONUS,
    POKER,
    POKER_BET,
    POKER_PLAY,
    SPLIT_RULES,
    SURRENDER,
    TAKE_NATURAL,
    SeatPlay,
    bet_sizes,
    offered_bets,
)
from controller.money import Currency

_DEALER = CardDue("dealer")
_BURN = CardDue("burn")
_COMMUNITY = CardDue("community")
_DEALER_POKER = CardDue("dealer poker")


class TwoWayWinnerRound(RoundReport, GameRound):
    """A round over the wagers fixed at close (every seat holds both antes, equal)."""

    __slots__ = ("options", "seats", "dealer", "burned", "extra", "dealer_poker", "phase",
                 "_deal", "_turn", "_draw", "_due", "dealer_blackjack", "peeked")

    def __init__(self, options: TwoWayWinnerOptions, ledger: RoundLedger) -> None:
        super().__init__(ledger)
        self.options = options
        self.seats = [SeatPlay(seat, ledger.stake(seat, BJ_ANTE)) for seat in ledger.seats()]
        self.dealer: list[Card] = []  # the dealer's blackjack hand, in the order dealt
        self.burned: list[Card] = []
        self.extra: list[Card] = []  # community cards drawn after the dealer's
        self.dealer_poker: list[Card] = []
        # deal | choose | play | dealer | burn | bet | complete | dealer_poker | done
        self.phase = "deal"
        self._deal: list[SeatPlay | None] = [*self.seats, None, *self.seats, None]
        self._turn = (0, 0)  # (index in blackjack_seats(), hand index) during blackjack turns
        self._draw = False  # the hand in turn asked for a card (hit or double)
        self._due: Due = None
        self.dealer_blackjack = False
        self.peeked = False

    # ------------------------------------------------------------ contract
    def start(self) -> list[Event]:
        return self._advance()

    def due(self) -> Due:
        return self._due

    def on_card(self, card: Card) -> list[Event]:
        due = self._due
        if not isinstance(due, CardDue):
            raise Refusal("no card is due")
        rnd = self.ledger.round
        events: list[Event] = []
        if self.phase == "deal":
            target = self._deal.pop(0)
            (self.dealer if target is None else target.cards).append(card)
            events.append(CardDealt(rnd, card.code, due.hand))
        elif self.phase == "play":
            self._hand_in_turn().cards.append(card)
            self._draw = False
            events.append(CardDealt(rnd, card.code, due.hand))
        elif self.phase == "dealer":
            self.dealer.append(card)
            events.append(CardDealt(rnd, card.code, due.hand))
            if len(self.dealer) > COMMUNITY:  # counts for the dealer's total, never a community card
                self.burned.append(card)
                events.append(CardBurned(rnd, card.code, "rules"))
        elif self.phase == "burn":
            self.burned.append(card)
            events.append(CardBurned(rnd, card.code, "rules"))
        elif self.phase == "complete":
            self.extra.append(card)
            events.append(CardDealt(rnd, card.code, due.hand))
        else:
            self.dealer_poker.append(card)
            events.append(CardDealt(rnd, card.code, due.hand))
        events.extend(self._advance())
        return events

    def on_decision(self, seat: int, action: str, amount: int | None) -> list[Event]:
        due = self._due
        if not isinstance(due, DecisionDue) or action not in due.choices.get(seat, ()):
            raise Refusal(f"{action!r} is not legal for seat {seat} now")
        play = self._play(seat)
        if self.phase == "choose":
            events = self._choose(play, action, amount)
        elif self.phase == "play":
            events = self._turn_action(play, action, amount)
        else:
            events = self._check_or_bet(play, action, amount)
        events.extend(self._advance())
        return events

    # ------------------------------------------------------------ decisions
    def _choose(self, play: SeatPlay, action: str, amount: int | None) -> list[Event]:
        if action in (BLACKJACK, POKER):
            _exact(self.ledger.money, action, amount, play.ante)
        else:
            _exact(self.ledger.money, action, amount, None)
        events: list[Event] = []
        if action == BLACKJACK:
            events.append(self.ledger.add(play.seat, BJ_PLAY, play.ante))
            play.hands = [Hand(BJ_PLAY, list(play.cards))]
        elif action == POKER:
            events.append(self.ledger.add(play.seat, POKER_PLAY, play.ante))
        play.choice = action
        return events

    def _turn_action(self, play: SeatPlay, action: str, amount: int | None) -> list[Event]:
        hand = self._hand_in_turn()
        stake = self.ledger.stake(play.seat, hand.spot)
        _exact(self.ledger.money, action, amount, stake if action in ("double", "split") else None)
        events: list[Event] = []
        if action == "hit":
            self._draw = True
        elif action == "stand":
            hand.finished = True
        elif action == "double":
            events.append(self.ledger.add(play.seat, hand.spot, stake))
            hand.doubled = True
            self._draw = True
        else:  # split: the second card starts hand 2; each hand then takes its second card
            spot2 = split_spot(BJ_PLAY, 2)
            events.append(self.ledger.add(play.seat, spot2, stake))
            aces = hand.cards[0].rank == "A"
            moved = hand.cards.pop()
            hand.split_from = hand.spot  # hand 1 is a split hand too (its 21 is no natural)
            hand.split_aces = aces
            play.hands.append(Hand(spot2, [moved], split_from=hand.spot, split_aces=aces))
            self._draw = True
        return events

    def _check_or_bet(self, play: SeatPlay, action: str, amount: int | None) -> list[Event]:
        events: list[Event] = []
        if action == "check":
            _exact(self.ledger.money, action, amount, None)
        else:
            bet = play.ante if amount is None else amount
            allowed = bet_sizes(play.natural, play.ante)  # then the ledger refuses what credits cannot fund
            if bet not in allowed:
                what = " or ".join(str(a) for a in allowed)
                raise Refusal(f"seat {play.seat} may bet {what}, not {bet}")
            events.append(self.ledger.add(play.seat, POKER_BET, bet))
        play.bet_decided = True
        return events

    # ------------------------------------------------------------ the walk
    def _advance(self) -> list[Event]:
        """Walk forward to the next thing only the shoe or a player can supply; set :attr:`_due`."""
        events: list[Event] = []
        while True:
            due = self._step(events)
            if due is not None or self.finished:
                self._due = due
                return events

    def _step(self, events: list[Event]) -> Due:
        """One step of the walk: what is due now, or ``None`` having moved the phase on."""
        phase = self.phase
        if phase == "deal":
            if self._deal:
                target = self._deal[0]
                return _DEALER if target is None else CardDue(f"seat {target.seat}")
            self.phase = "choose"
        elif phase == "choose":
            choices = {p.seat: self._choices(p) for p in self.seats if p.choice is None}
            if choices:
                return DecisionDue(choices)
            self._peek(events)
        elif phase == "play":
            return self._play_step()
        elif phase == "dealer":
            if self._dealer_draws():
                return _DEALER
            self._to_community(events)
        elif phase == "burn":
            if len(self.burned) == 0:
                return _BURN
            self.phase = "bet"
        elif phase == "bet":
            waiting = [p for p in self._poker_seats() if not p.bet_decided]
            if waiting:
                p = waiting[0]
                bets = offered_bets(p.natural, p.ante, self.ledger.credits.get(p.seat, 0))
                return DecisionDue({p.seat: ("check", "bet") if bets else ("check",)})
            self.phase = "complete"
        elif phase == "complete":
            if len(self.community()) < COMMUNITY:
                return _COMMUNITY
            self.phase = "dealer_poker"
            if self._poker_seats():
                events.append(self._notice("community", cards=[c.code for c in self.community()]))
        elif phase == "dealer_poker":
            if self._poker_seats() and len(self.dealer_poker) < 2:
                return _DEALER_POKER
            self._finish()
        return None

    def _choices(self, play: SeatPlay) -> tuple[str, ...]:
        """The legal answers of a seat to "Poker or Blackjack?" (only what it can fund)."""
        can_play = self.ledger.can_fund(play.seat, play.ante)
        if play.natural:
            return (POKER, TAKE_NATURAL) if can_play else (TAKE_NATURAL,)
        if not can_play:
            # Nothing else is open to a seat that cannot fund a play: it folds as a surrender,
            # even against an ace (docs/rules/two_way_winner.md, decisions not in the rules file).
            return (SURRENDER,)
        if self.dealer[0].rank == "A":
            return (BLACKJACK, POKER)
        return (BLACKJACK, POKER, SURRENDER)

    def _peek(self, events: list[Event]) -> None:
        """Every seat has decided: the dealer checks for blackjack under an ace or a ten-value up card."""
        up = self.dealer[0]
        if up.rank == "A" or ten_value(up):
            self.peeked = True
            self.dealer_blackjack = is_natural(self.dealer)
            events.append(self._notice("dealer_peek", up=up.code, blackjack=self.dealer_blackjack))
        if self.dealer_blackjack:
            # Blackjack seats have lost; poker seats and the Dealer Bonus go on after a burn.
            self.phase = "burn" if self._poker_seats() or self._bonus_staked() else "done"
            if self.phase == "done":
                self._finish()
        else:
            self.phase = "play"
            self._turn = (0, 0)

    def _play_step(self) -> Due:
        """Blackjack turns in seat order, hand by hand."""
        players = self._blackjack_seats()
        si, hi = self._turn
        if si >= len(players):
            self.phase = "dealer"
            return None
        play = players[si]
        if hi >= len(play.hands):
            self._turn = (si + 1, 0)
            return None
        hand = play.hands[hi]
        label = f"seat {play.seat}" if hi == 0 else f"seat {play.seat} hand {hi + 1}"
        if self._draw or len(hand.cards) < 2:
            return CardDue(label)
        if hand.busted or hand.total >= 21 or hand.doubled or (hand.split_aces and len(hand.cards) == 2):
            hand.finished = True
        if hand.finished:
            self._turn = (si, hi + 1)
            return None
        stake = self.ledger.stake(play.seat, hand.spot)
        funded = self.ledger.can_fund(play.seat, stake)
        legal = ["hit", "stand"] if can_hit(hand, SPLIT_RULES) else ["stand"]
        if funded and can_double(hand, SPLIT_RULES):
            legal.append("double")
        if funded and can_split(hand, len(play.hands), SPLIT_RULES):
            legal.append("split")
        return DecisionDue({play.seat: tuple(legal)})

    def _dealer_draws(self) -> bool:
        """The dealer plays out the blackjack hand (hitting soft 17) only for a live blackjack hand."""
        live = any(not h.busted for p in self._blackjack_seats() for h in p.hands)
        return live and dealer_should_hit(self.dealer, True)

    def _to_community(self, events: list[Event]) -> None:
        """The dealer's cards become the community; the round ends here if nothing needs it."""
        if self._poker_seats() or self._bonus_staked():
            self.phase = "bet"
        else:
            self._finish()

    def _finish(self) -> None:
        self.phase = "done"
        for play in self._poker_seats():
            play.best = best_hand([*play.cards, *self.community()])
        self.finished = True

    # ------------------------------------------------------------ queries
    def community(self) -> list[Card]:
        """The community cards so far: the dealer's first five blackjack cards, then the drawn ones."""
        return [*self.dealer[:COMMUNITY], *self.extra]

    def _play(self, seat: int) -> SeatPlay:
        return next(p for p in self.seats if p.seat == seat)

    def _blackjack_seats(self) -> list[SeatPlay]:
        return [p for p in self.seats if p.choice == BLACKJACK]

    def _poker_seats(self) -> list[SeatPlay]:
        return [p for p in self.seats if p.choice == POKER]

    def _bonus_staked(self) -> bool:
        return any(self.ledger.stake(p.seat, DEALER_BONUS) for p in self.seats)

    def _hand_in_turn(self) -> Hand:
        si, hi = self._turn
        return self._blackjack_seats()[si].hands[hi]

    def hand_in_turn(self) -> Hand | None:
        """The blackjack hand whose turn it is (``None`` outside blackjack turns), for players' tools."""
        return self._hand_in_turn() if self.phase == "play" and isinstance(self._due, DecisionDue) else None

    def seat_play(self, seat: int) -> SeatPlay:
        """A seat's cards and choices so far (read-only use by tools and displays)."""
        return self._play(seat)

    def _notice(self, what: str, **detail: Any) -> GameNotice:
        return GameNotice(self.ledger.round, what, detail)

def _exact(money: Currency, action: str, amount: int | None, cost: int | None) -> None:
    """Refuse an amount that differs from what the rules fix for ``action`` (``None``: no amount)."""
    if amount is None or amount == cost:
        return
    if cost is None:
        raise Refusal(f"{action} takes no amount (got {money.format(amount)})")
    raise Refusal(f"{action} stakes exactly {money.format(cost)}, not {money.format(amount)}")
