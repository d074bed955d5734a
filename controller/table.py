"""The table: one deterministic state machine over a game.

The table owns what every game shares: seats and their credits, the wagers
of the round and their limits, the round lifecycle (idle -> betting ->
dealing -> settled, or voided), the shoe composition with its
impossible-card check, burns and tilts, and the meters. The game owns the
rules. Three parts of the table live beside this module, as mixins: tilts
and held cards (:mod:`controller.tilts`), the seats' money, wagers and
settlement (:mod:`controller.wagers`), and the dealer in
(:mod:`controller.dealers`). :meth:`Table.apply` takes one input and
returns the events it caused; an input that does not fit is answered with
a single ``refused`` event and changes nothing, which is what lets the
daemon journal inputs blindly and replay them after a power cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controller import inputs as I
from controller.composition import ShoeComposition
from controller.dealers import DealerRules
from controller.events import (
    BettingClosed,
    BettingOpened,
    BurnWhy,
    CardBurned,
    DecisionDue,
    DecisionMade,
    Event,
    InputRefused,
    RoundVoided,
    ShoeShuffled,
)
from controller.game_base import CardDue, Game, GameRound, Refusal, RoundLedger, Settlement
from controller.game_base import DecisionDue as DecisionDueState
from controller.limits import TableLimits
from controller.tilts import Tilt, TiltRules
from controller.wagers import SeatMeters, WagerRules


class Table(TiltRules, WagerRules, DealerRules):
    """One table: seats, credits, the round in play, the shoe, the game."""

    def __init__(self, game: Game, limits: TableLimits | None = None) -> None:
        self.game = game
        self.limits = limits or TableLimits(seats=game.default_seats)
        self.round_no = 0
        self.phase = "idle"  # idle | betting | dealing
        #: Kept in seat order (a new seat is sorted in), so views need not sort it.
        self.credits: dict[int, int] = {}
        self.meters: dict[int, SeatMeters] = {}
        self.house_net = 0
        self.rounds_settled = 0
        self.rounds_voided = 0
        #: The round the meters' period began after (0: the first): a change of decimals starts one.
        self.meters_after = 0
        self.chosen: dict[int, dict[str, int]] = {}  # pre-deal wagers as chosen, per seat
        self.staked: dict[tuple[int, str], int] = {}  # what is debited this round
        self.round: GameRound | None = None
        self.composition = ShoeComposition(game.decks)
        self.tilt: Tilt | None = None
        self.burn_next = False
        self.offline: dict[str, str] = {}  # devices offline now, with why
        #: The result records of the current shoe's rounds (``{"round", "result"}``), oldest first:
        #: a display that joins late draws the shoe's scoreboard from the snapshot alone.
        self.shoe_results: list[dict[str, Any]] = []
        #: How many ``new_shoe`` inputs the table has applied (0 before the first): the shoe's number,
        #: derived from the journaled inputs alone, so a restart or a replay gives the same number.
        self.shoe_number = 0
        self.dealer = None  # who deals now (controller.dealers)
        self._last_due: object = None
        # Most games stake exactly what is chosen; only those that add wagers pay for the general path.
        self._derives = type(game).with_derived is not Game.with_derived
        self._after_round = type(game).after_round is not Game.after_round
        self._screens = type(game).playable is not Game.playable
        self._checks_close = type(game).check_close is not Game.check_close
        #: Whether the round in play can take decisions (set at each deal): a round that cannot
        #: never has a decision due, so a card needs no look for one after it.
        self._decides = False
        self._handlers: dict[str, Callable[[Any], list[Event]]] = {
            "new_shoe": self._new_shoe,
            "open_betting": self._open_betting,
            "close_betting": self._close_betting,
            "place_wager": self._place_wager,
            "cancel_wager": self._cancel_wager,
            "card": self._card,
            "declare_burn": self._declare_burn,
            "decision": self._decision,
            "void": self._void,
            "clear_tilt": self._clear_tilt,
            "take_held": self._take_held,
            "credit_in": self._credit_in,
            "credit_out": self._credit_out,
            "set_dp": self._set_dp,
            "device": self._device,
            "dealer_in": self._dealer_in,
            "dealer_out": self._dealer_out,
            "limits": self._set_limits,
        }

    @property
    def limits(self) -> TableLimits:
        return self._limits

    @limits.setter
    def limits(self, limits: TableLimits) -> None:
        self._limits = limits
        #: How refusals show amounts; built once (a Currency per wager was a tenth of a round's time).
        self._money = limits.money
        #: What every wager is checked against, as plain ints (seats, unit, minimum, maximum): a
        #: pydantic model's field reads through its ``__getattr__`` hook, four times a plain one.
        self._wager_limits = (limits.seats, limits.unit, limits.min_bet, limits.max_bet)

    # ----------------------------------------------------------------- API
    def apply(self, inp: I.Input) -> list[Event]:
        """Apply one input; a refused input yields one ``refused`` event and changes nothing."""
        try:
            return self._handlers[inp.kind](inp)
        except Refusal as refusal:
            return [InputRefused(inp.to_dict(), str(refusal))]

    def due(self) -> CardDue | DecisionDueState | None:
        """What the round in play waits for (``None`` outside dealing or when tilted)."""
        if self.phase != "dealing" or self.round is None or self.tilt is not None:
            return None
        return self.round.due()

    def seated(self) -> list[int]:
        return list(self.credits)

    def snapshot(self) -> dict[str, Any]:
        """The whole table state as JSON-able data (for late-joining displays)."""
        due = self.due()
        return {
            "game": self.game.name,
            "round": self.round_no,
            "phase": self.phase,
            "limits": self.limits.model_dump(),
            "credits": self._credits_view(),
            "wagers": [
                {"seat": s, "spot": p, "amount": a} for (s, p), a in sorted(self.staked.items())
            ],
            "due": _due_dict(due),
            "tilt": None if self.tilt is None else self.tilt.view(),
            "offline": dict(sorted(self.offline.items())),
            "burn_next": self.burn_next,
            "shoe": self.composition.to_dict(),
            "round_view": self.round.view() if self.round is not None else {},
            "game_state": self.game.view(),
            "meters": self.meters_dict(),
            "shoe_results": list(self.shoe_results),
            "shoe_number": self.shoe_number,
            "dealer": self.dealer,
        }

    # ------------------------------------------------------------ handlers
    def _new_shoe(self, inp: I.NewShoe) -> list[Event]:
        self._check_not_tilted()
        if self.phase == "dealing":
            raise Refusal("cannot start a new shoe while a round is being dealt")
        self.composition.shuffle()
        self.burn_next = False
        self.shoe_results = []
        self.shoe_number += 1
        return [ShoeShuffled(self.composition.decks, self.shoe_number)]

    def _open_betting(self, inp: I.OpenBetting) -> list[Event]:
        if self.tilt is not None:
            self._check_not_tilted()
        if self.phase != "idle":
            raise Refusal(f"betting cannot open: the table is {self.phase}")
        self.round_no += 1
        self.phase = "betting"
        self.chosen = {}
        self.staked = {}
        return [BettingOpened(self.round_no)]

    def _close_betting(self, inp: I.CloseBetting) -> list[Event]:
        if self.tilt is not None:
            self._check_not_tilted()
        if self.phase != "betting":
            raise Refusal("betting is not open")
        if self.offline:
            device, detail = next(iter(sorted(self.offline.items())))
            raise Refusal(f"cannot deal: {device} is offline ({detail})")
        seen = self.composition.dealt + self.composition.burned
        if self.game.fresh_shoe_every_round and seen and self.staked:
            raise Refusal(f"every round is dealt from a freshly shuffled deck, and {seen} cards were seen "
                          "since the last new shoe: shuffle the deck, then new_shoe")
        events: list[Event] = []
        playing = sorted(self.chosen)
        if self._checks_close:
            self.game.check_close(playing)
        if self._screens:
            for seat in list(playing):
                why = self.game.playable(seat, self.chosen[seat])
                if why is not None:
                    playing.remove(seat)
                    events.extend(self._return_seat(seat, why))
        self.phase = "dealing"
        events.append(BettingClosed(self.round_no, playing))
        ledger = RoundLedger(self.round_no, self.staked, self.credits, self._money)
        if not self.staked and not self.game.deals_without_wagers:
            self.round = None
            events.extend(self._settle([], {}))
            return events
        self.round = rnd = self.game.new_round(ledger)
        self._decides = type(rnd).on_decision is not GameRound.on_decision
        if type(rnd).start is not GameRound.start:
            events.extend(rnd.start())
        if rnd.finished or self._decides:
            events.extend(self._after_step())
        return events

    def _card(self, inp: I.CardSeen) -> list[Event]:
        card = inp.card
        if self.tilt is not None:
            return self._hold(inp)
        if inp.repeat:  # maybe the card already dealt: only the dealer can say (docs/vision.md)
            return self._resume([inp])
        rnd = self.round
        due = rnd.due() if self.phase == "dealing" and rnd is not None else None  # self.due(), untilted
        if isinstance(due, CardDue) and not (inp.burn or self.burn_next):
            # The card every round is made of: checked against the shoe and counted in one call.
            if not self.composition.take(card):
                return self._impossible(card)
            assert rnd is not None
            events = rnd.on_card(card)
            if rnd.finished:
                events.extend(self._settle(rnd.settlements(), rnd.result()))
            elif self._decides:
                events.extend(self._after_step())
            return events
        # In this order: an impossible card tilts, a burn is burned, any other card was not due.
        if not self.composition.is_possible(card):
            return self._impossible(card)
        if inp.burn or self.burn_next:
            self.composition.see(card, burn=True)
            why: BurnWhy = "shoe" if inp.burn else "dealer"
            self.burn_next = False
            return [CardBurned(self.round_no, card.code, why)]
        waiting = "no round is being dealt" if due is None else "a decision is due"
        self.tilt = Tilt("card_not_due", card, f"{card.code} arrived when no card was due ({waiting})")
        return [self.tilt.event(self.round_no)]

    def _decision(self, inp: I.Decision) -> list[Event]:
        self._check_not_tilted()
        if self.phase != "dealing" or self.round is None:
            raise Refusal("no round is in play")
        due = self.round.due()
        if not isinstance(due, DecisionDueState):
            raise Refusal("no decision is due: the round waits for a card" if due else "the round is over")
        legal = due.choices.get(inp.seat)
        if legal is None:
            seats = ", ".join(str(s) for s in due.choices)
            raise Refusal(f"seat {inp.seat} is not to act; waiting for seat {seats}")
        if inp.action not in legal:
            raise Refusal(f"{inp.action!r} is not legal for seat {inp.seat} now; legal: {', '.join(legal)}")
        events: list[Event] = [DecisionMade(self.round_no, inp.seat, inp.action, inp.amount)]
        events.extend(self.round.on_decision(inp.seat, inp.action, inp.amount))
        events.extend(self._after_step())
        return events

    def _after_step(self) -> list[Event]:
        """After a card or decision: announce a new decision, or settle a finished round."""
        rnd = self.round
        if rnd is None:
            return []
        if rnd.finished:
            return self._settle(rnd.settlements(), rnd.result())
        due = rnd.due()
        if isinstance(due, DecisionDueState):
            if due != self._last_due:
                self._last_due = due
                return [
                    DecisionDue(
                        self.round_no, {str(s): list(acts) for s, acts in sorted(due.choices.items())}
                    )
                ]
        else:
            self._last_due = None
        return []

    def _end_round(self) -> None:
        self.phase = "idle"
        self.round = None
        self.chosen = {}
        self.staked = {}
        self._last_due = None

    def _void(self, inp: I.VoidRound) -> list[Event]:
        events: list[Event] = [] if self.tilt is None else self._void_tilt()
        if self.phase == "idle":
            if not events:
                raise Refusal("there is no round to void")
            return events
        lines = []
        for (seat, spot), amount in sorted(self.staked.items()):
            self.credits[seat] += amount
            lines.append(Settlement(seat, spot, amount, 0).to_dict())
        self.rounds_voided += 1
        events.append(RoundVoided(self.round_no, self.game.name, lines, self._credits_view()))
        self._end_round()
        return events

    def _set_dp(self, inp: I.SetDesignatedPlayer) -> list[Event]:
        self._check_seat(inp.seat)
        if inp.seat not in self.credits:
            raise Refusal(f"seat {inp.seat} is not seated")
        if self.phase == "dealing":
            raise Refusal("the Designated Player cannot change while a round is being dealt")
        if inp.seat in self.chosen:
            raise Refusal(f"seat {inp.seat} has wagers this round and cannot be the Designated Player")
        return self.game.set_designated_player(inp.seat, self.seated())


def _due_dict(due: CardDue | DecisionDueState | None) -> dict[str, Any] | None:
    if isinstance(due, CardDue):
        return {"card": due.hand}
    if isinstance(due, DecisionDueState):
        return {"decision": {str(s): list(a) for s, a in sorted(due.choices.items())}}
    return None
