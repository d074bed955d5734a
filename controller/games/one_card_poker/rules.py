"""One Card Poker with a Designated Player (DP): one card each against the DP's card.

Rules: docs/rules/one_card_poker.md. The DP is a seat that banks every other
player's primary wager for the round, so the game state that outlives a
round is only who the DP is (and, with ``dp_rotation: rotate``, where it goes
next). A round is: coverage (which seats the DP's credits can bank), one
card to each covered player from the DP's left and one to the DP, then the
ties: each tied player surrenders or extends, every extension answered at
once by the DP, and finally the Wars, each dealt to its end in deal order.

The DP's seat has no wagers in the ledger: what it banks is reported as a
``bank`` line (and a ``fee`` line) whose net the table credits directly, and
coverage guarantees those credits never go below zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field

from controller.cards import Card
from controller.events import CardDealt, DesignatedPlayerSet, Event, GameNotice
from controller.game_base import (
    CardDue,
    DecisionDue,
    Due,
    Game,
    GameOptions,
    GameRound,
    Refusal,
    RoundLedger,
    Settlement,
)
from controller.limits import TableLimits
from controller.money import EVEN, Currency, Odds, half_lost
from controller.options import OddsText


def _n_to_1(odds: Odds) -> Odds:
    if odds.den != 1:
        raise ValueError(f"the Tie wager pays n:1, not '{odds}'")
    return odds


class OneCardPokerOptions(GameOptions):
    decks: int = Field(default=1, ge=1, le=8)
    tie_pays: Annotated[OddsText, AfterValidator(_n_to_1)] = Odds(10, 1)
    tie_banker: Literal["house", "dp"] = "house"
    tie_requires_extend: bool = Field(default=False, strict=True)
    dp_rotation: Literal["fixed", "rotate"] = "fixed"
    dp_fee: int = Field(default=0, ge=0, strict=True)


PLAYER_ACTIONS = ("extend", "surrender")
DP_ACTIONS = ("dp_extend", "dp_decline")


@dataclass(slots=True)
class Hand:
    """One player's side of the round: wagers, cards, choices and how it ended."""

    seat: int
    primary: int
    tie: int
    action: bool = False
    cards: list[Card] = field(default_factory=list)
    dp_war_cards: list[Card] = field(default_factory=list)
    #: ``extend`` or ``surrender`` once a tied player decided; ``dp_extend``/``dp_decline`` in ``answer``.
    choice: str | None = None
    answer: str | None = None
    outcome: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cards": [c.code for c in self.cards],
            "dp_war_cards": [c.code for c in self.dp_war_cards],
            "outcome": self.outcome,
        }


def deal_order(dp: int, seats: list[int]) -> list[int]:
    """``seats`` from the seat after the DP clockwise (ascending, wrapping past the last seat)."""
    return sorted((s for s in seats if s != dp), key=lambda s: (s < dp, s))


class OneCardPokerRound(GameRound):
    """One round: coverage, the deal, the ties' decisions, then each War to its end."""

    __slots__ = ("game", "dp", "hands", "order", "dp_card", "phase", "_dealt", "_waiting_dp", "_wars", "_war")

    def __init__(self, game: OneCardPoker, ledger: RoundLedger, dp: int) -> None:
        super().__init__(ledger)
        self.game = game
        self.dp = dp
        seats = deal_order(dp, ledger.seats())
        self.hands = {s: Hand(s, ledger.stake(s, "primary"), ledger.stake(s, "tie")) for s in seats}
        #: Seats with action, in deal order (fixed by coverage in :meth:`start`).
        self.order: list[int] = []
        self.dp_card: Card | None = None
        self.phase: Literal["deal", "decide", "war", "done"] = "deal"
        self._dealt = 0
        #: The seat whose ``extend`` the DP must answer next.
        self._waiting_dp: int | None = None
        self._wars: list[int] = []
        self._war = 0

    # ------------------------------------------------------------ coverage
    def coverage_need(self, hand: Hand) -> int:
        """The DP's worst case for one hand: primary plus a matched extension, plus a Tie payout it banks."""
        opts = self.game.options
        need = 2 * hand.primary
        if opts.tie_banker == "dp":
            need += opts.tie_pays.win(hand.tie)
        return need

    def start(self) -> list[Event]:
        opts = self.game.options
        left = self.ledger.credits.get(self.dp, 0) - opts.dp_fee
        for seat, hand in self.hands.items():
            need = self.coverage_need(hand)
            if need > left:
                break
            left -= need
            hand.action = True
            self.order.append(seat)
        for hand in self.hands.values():
            if not hand.action:
                hand.outcome = "no_action"
        events: list[Event] = []
        uncovered = [s for s, h in self.hands.items() if not h.action]
        if uncovered:
            events.append(
                GameNotice(
                    self.ledger.round,
                    "no_action",
                    {"dp_seat": self.dp, "seats": uncovered, "reason": "not covered by the DP's credits"},
                )
            )
        if not self.order:
            self._finish()
            why = {"reason": "no primary wager is covered"}
            events.append(GameNotice(self.ledger.round, "not_dealt", why))
        return events

    # --------------------------------------------------------------- state
    def due(self) -> Due:
        if self.phase == "deal":
            if self._dealt < len(self.order):
                return CardDue(f"seat {self.order[self._dealt]}")
            return CardDue("dp")
        if self.phase == "decide":
            if self._waiting_dp is not None:
                return DecisionDue({self.dp: DP_ACTIONS})
            return DecisionDue({s: self._legal(self.hands[s]) for s in self._undecided()})
        if self.phase == "war":
            seat = self._wars[self._war]
            hand = self.hands[seat]
            if len(hand.cards) == len(hand.dp_war_cards) + 1:
                return CardDue(f"seat {seat} war")
            return CardDue(f"dp war seat {seat}")
        return None

    def _legal(self, hand: Hand) -> tuple[str, ...]:
        """A tied player may always surrender; ``extend`` only if it can fund the extension."""
        return PLAYER_ACTIONS if self.ledger.can_fund(hand.seat, hand.primary) else ("surrender",)

    def _undecided(self) -> list[int]:
        return [s for s in self.order if self.hands[s].outcome == "tie" and self.hands[s].choice is None]

    def _finish(self) -> None:
        self.phase = "done"
        self.finished = True

    # --------------------------------------------------------------- cards
    def on_card(self, card: Card) -> list[Event]:
        rnd = self.ledger.round
        if self.phase == "deal":
            if self._dealt < len(self.order):
                seat = self.order[self._dealt]
                self.hands[seat].cards.append(card)
                self._dealt += 1
                return [CardDealt(rnd, card.code, f"seat {seat}")]
            self.dp_card = card
            return [CardDealt(rnd, card.code, "dp"), *self._compare_first_cards(card)]
        if self.phase == "war":
            return self._war_card(card)
        raise Refusal("no card is due")

    def _compare_first_cards(self, dp_card: Card) -> list[Event]:
        tied = []
        for seat in self.order:
            hand = self.hands[seat]
            mine = hand.cards[0].rank_value
            if mine == dp_card.rank_value:
                hand.outcome = "tie"
                tied.append(seat)
            else:
                hand.outcome = "win" if mine > dp_card.rank_value else "lose"
        if not tied:
            self._finish()
            return []
        self.phase = "decide"
        return [GameNotice(self.ledger.round, "tie", {"seats": tied, "rank": dp_card.rank})]

    def _war_card(self, card: Card) -> list[Event]:
        rnd = self.ledger.round
        seat = self._wars[self._war]
        hand = self.hands[seat]
        if len(hand.cards) == len(hand.dp_war_cards) + 1:
            hand.cards.append(card)
            return [CardDealt(rnd, card.code, f"seat {seat} war")]
        hand.dp_war_cards.append(card)
        events: list[Event] = [CardDealt(rnd, card.code, f"dp war seat {seat}")]
        mine, dps = hand.cards[-1].rank_value, card.rank_value
        if mine == dps:
            events.append(GameNotice(rnd, "war_tie", {"seat": seat, "rank": card.rank}))
            return events
        hand.outcome = "win" if mine > dps else "lose"
        self._war += 1
        if self._war == len(self._wars):
            self._finish()
        return events

    # ----------------------------------------------------------- decisions
    def on_decision(self, seat: int, action: str, amount: int | None) -> list[Event]:
        due = self.due()
        if not isinstance(due, DecisionDue):
            raise Refusal("no decision is due")
        legal = due.choices.get(seat)
        if legal is None:
            raise Refusal(f"seat {seat} is not to act; waiting for seat {', '.join(map(str, due.choices))}")
        if action not in legal:
            raise Refusal(f"{action!r} is not legal for seat {seat} now; legal: {', '.join(legal)}")
        if action in DP_ACTIONS:
            assert self._waiting_dp is not None
            hand = self.hands[self._waiting_dp]
            fixed = hand.primary if action == "dp_extend" else None
            self._check_amount(self.ledger.money, action, amount, fixed)
            hand.answer = action
            if action == "dp_decline":
                hand.outcome = "dp_decline"
            self._waiting_dp = None
            events: list[Event] = []
        else:
            hand = self.hands[seat]
            fixed = hand.primary if action == "extend" else None
            self._check_amount(self.ledger.money, action, amount, fixed)
            if action == "extend":
                events = [self.ledger.add(seat, "extension", hand.primary)]
                self._waiting_dp = seat
            else:
                hand.outcome = "surrender"
                events = []
            hand.choice = action
        if self._waiting_dp is None and not self._undecided():
            self._wars = [s for s in self.order if self.hands[s].answer == "dp_extend"]
            if self._wars:
                self.phase = "war"
                events.append(GameNotice(self.ledger.round, "war", {"seats": list(self._wars)}))
            else:
                self._finish()
        return events

    @staticmethod
    def _check_amount(money: Currency, action: str, amount: int | None, fixed: int | None) -> None:
        """The rules fix every amount here: one given must equal it (none for surrender/decline)."""
        if amount is None:
            return
        if fixed is None:
            raise Refusal(f"{action} takes no amount (given {money.format(amount)})")
        if amount != fixed:
            m = money.format
            raise Refusal(f"{action} must be {m(fixed)}, the primary wager, not {m(amount)}")

    # ---------------------------------------------------------- settlement
    def _nets(self, hand: Hand) -> dict[str, int]:
        """The net of each of one player's wagers (the DP's and the house's side is their negation)."""
        p = hand.primary
        nets = {"primary": 0, "extension": 0, "tie": 0}
        if hand.outcome == "no_action":
            return nets
        if hand.outcome == "win":
            nets["primary"] = EVEN.win(p)
            nets["extension"] = EVEN.win(p) if hand.answer == "dp_extend" else 0
        elif hand.outcome == "lose":
            nets["primary"] = -p
            nets["extension"] = -p if hand.answer == "dp_extend" else 0
        elif hand.outcome == "surrender":
            nets["primary"] = half_lost(p)
        elif hand.outcome == "dp_decline":
            nets["primary"] = p // 2
        opts = self.game.options
        tie_won = hand.choice is not None and not (opts.tie_requires_extend and hand.choice == "surrender")
        nets["tie"] = opts.tie_pays.win(hand.tie) if tie_won else -hand.tie
        return nets

    def settlements(self) -> list[Settlement]:
        lines: list[Settlement] = []
        bank_stake = bank_net = 0
        dp_banks_tie = self.game.options.tie_banker == "dp"
        for seat, hand in self.hands.items():
            nets = self._nets(hand)
            for spot in ("primary", "extension", "tie"):
                stake = self.ledger.stake(seat, spot)
                if not stake:
                    continue
                lines.append(Settlement(seat, spot, stake, nets[spot]))
                if not hand.action:
                    continue
                banked = spot == "primary" or (spot == "extension" and hand.answer == "dp_extend")
                if banked or (spot == "tie" and dp_banks_tie):
                    bank_stake += stake
                    bank_net -= nets[spot]
        if self.order:
            lines.append(Settlement(self.dp, "bank", bank_stake, bank_net))
            fee = self.game.options.dp_fee
            if fee:
                lines.append(Settlement(self.dp, "fee", fee, -fee))
        return lines

    def result(self) -> dict[str, Any]:
        return {
            "dp_seat": self.dp,
            "dp_card": None if self.dp_card is None else self.dp_card.code,
            "players": {str(s): h.to_dict() for s, h in self.hands.items()},
        }

    def view(self) -> dict[str, Any]:
        return {
            **self.result(),
            "phase": self.phase,
            "action": list(self.order),
            "choices": {str(s): [h.choice, h.answer] for s, h in self.hands.items() if h.choice},
            "waiting_dp": self._waiting_dp,
        }


class OneCardPoker(Game):
    name: ClassVar[str] = "one_card_poker"
    bet_spots: ClassVar[tuple[str, ...]] = ("primary", "tie")
    actions: ClassVar[tuple[str, ...]] = PLAYER_ACTIONS + DP_ACTIONS
    options_model: ClassVar[type[GameOptions]] = OneCardPokerOptions
    options: OneCardPokerOptions

    def __init__(self, options: GameOptions) -> None:
        assert isinstance(options, OneCardPokerOptions)
        super().__init__(options)
        #: The seat that banks the next round; ``None`` until set by command.
        self.dp_seat: int | None = None

    def check_bets(self, seat: int, bets: Mapping[str, int], limits: TableLimits) -> None:
        if seat == self.dp_seat:
            raise Refusal(f"seat {seat} is the Designated Player and places no wager")

    def playable(self, seat: int, bets: Mapping[str, int]) -> str | None:
        if "primary" not in bets:
            return "a Tie wager needs a primary wager"
        return None

    def check_close(self, seats: list[int]) -> None:
        if self.dp_seat is None:
            raise Refusal("no Designated Player is set: set the DP seat before closing betting")
        if self.dp_seat in seats:  # pragma: no cover - check_bets and the table prevent it
            raise Refusal(f"the Designated Player seat {self.dp_seat} holds wagers")

    def new_round(self, ledger: RoundLedger) -> OneCardPokerRound:
        assert self.dp_seat is not None  # check_close refused closing without one
        return OneCardPokerRound(self, ledger, self.dp_seat)

    def set_designated_player(self, seat: int, seated: list[int]) -> list[Event]:
        if seat not in seated:
            raise Refusal(f"seat {seat} is not seated and cannot be the Designated Player")
        self.dp_seat = seat
        return [DesignatedPlayerSet(seat)]

    def after_round(self, seated: list[int]) -> list[Event]:
        """With ``rotate`` the DP passes clockwise to the next seated player, dealt or not."""
        if self.options.dp_rotation != "rotate" or self.dp_seat is None:
            return []
        following = deal_order(self.dp_seat, seated)
        if not following:
            return []
        self.dp_seat = following[0]
        return [DesignatedPlayerSet(self.dp_seat)]

    def view(self) -> dict[str, Any]:
        return {"dp_seat": self.dp_seat, "dp_rotation": self.options.dp_rotation}
