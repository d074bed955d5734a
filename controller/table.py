"""The table: one deterministic state machine over a game.

The table owns what every game shares: seats and their credits, the wagers
of the round and their limits, the round lifecycle (idle -> betting ->
dealing -> settled, or voided), the shoe composition with its
impossible-card check, burns and tilts, and the meters. The game owns the
rules. :meth:`Table.apply` takes one input and returns the events it caused;
an input that does not fit is answered with a single ``refused`` event and
changes nothing, which is what lets the daemon journal inputs blindly and
replay them after a power cut.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, NoReturn

from controller import inputs as I
from controller.cards import Card
from controller.composition import ShoeComposition
from controller.events import (
    BettingClosed,
    BettingOpened,
    BurnDeclared,
    BurnWhy,
    CardBurned,
    CardHeld,
    CreditChanged,
    DecisionDue,
    DecisionMade,
    DeviceChanged,
    Event,
    InputRefused,
    RoundResult,
    RoundSettled,
    RoundVoided,
    ShoeShuffled,
    TiltCleared,
    TiltHow,
    TiltRaised,
    TiltReason,
    WagerPlaced,
    WagerReturned,
)
from controller.games.base import CardDue, Game, GameRound, Refusal, RoundLedger, Settlement
from controller.games.base import DecisionDue as DecisionDueState
from controller.limits import TableLimits


class SeatMeters:
    """Per-seat accounting meters (gaming standards' soft meters)."""

    __slots__ = ("credits_in", "credits_out", "wagered", "won", "lost", "rounds")

    def __init__(self) -> None:
        self.credits_in = self.credits_out = self.wagered = self.won = self.lost = self.rounds = 0

    def to_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


#: Cards a tilt holds at most; a card past them is refused (journaled, listed by the daemon) as a
#: sign that the shoe keeps dealing into a halted table: a real dealer stops long before.
MAX_HELD = 8
#: The tilts whose card is the first held one: the dealer takes or burns it (and clears a repeat_card).
HOLDING = ("held_card", "repeat_card")


class Tilt:
    """A halt of play that only the dealer can resolve.

    ``held``: the cards delivered while it lasts, in order (each as its input, so
    a card the shoe flagged as a burn is still one when taken). They are out of
    the shoe but neither dealt nor burned until the dealer decides their fate.
    """

    __slots__ = ("reason", "card", "detail", "held")

    def __init__(self, reason: TiltReason, card: Card | None, detail: str,
                 held: list[I.CardSeen] | None = None) -> None:
        self.reason: TiltReason = reason
        self.card = card
        self.detail = detail
        self.held: list[I.CardSeen] = [] if held is None else held

    def held_codes(self) -> list[str]:
        return [c.card.code for c in self.held]

    def event(self, round_no: int) -> TiltRaised:
        """The ``tilt`` event announcing this tilt as it stands."""
        return TiltRaised(round_no, self.reason, _code(self.card), self.detail, self.held_codes())

    def view(self) -> dict[str, Any]:
        return {"reason": self.reason, "card": _code(self.card), "detail": self.detail,
                "held": self.held_codes()}


class Table:
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
        }

    def meters_dict(self) -> dict[str, Any]:
        return {
            "table": {
                "rounds_settled": self.rounds_settled,
                "rounds_voided": self.rounds_voided,
                "house_net": self.house_net,
            },
            "seats": {str(s): m.to_dict() for s, m in sorted(self.meters.items())},
        }

    # ------------------------------------------------------------- helpers
    def _check_seat(self, seat: int) -> None:
        if not 1 <= seat <= self.limits.seats:
            raise Refusal(f"no seat {seat}: this table has seats 1..{self.limits.seats}")

    def _check_not_tilted(self) -> None:
        if self.tilt is not None:
            raise Refusal(
                f"table is tilted ({self.tilt.reason}: {_code(self.tilt.card) or self.tilt.detail}); "
                "declare a burn, clear the tilt or void the round first"
            )

    def _credits_view(self) -> dict[str, int]:
        return {_SEAT_KEYS[s]: c for s, c in self.credits.items()}

    # ------------------------------------------------------------ handlers
    def _new_shoe(self, inp: I.NewShoe) -> list[Event]:
        self._check_not_tilted()
        if self.phase == "dealing":
            raise Refusal("cannot start a new shoe while a round is being dealt")
        self.composition.shuffle()
        self.burn_next = False
        self.shoe_results = []
        return [ShoeShuffled(self.composition.decks)]

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

    def _place_wager(self, inp: I.PlaceWager) -> list[Event]:
        seat, spot, amount = inp.seat, inp.spot, inp.amount
        if self.phase != "betting":
            raise Refusal("betting is not open")
        seats, unit, min_bet, max_bet = self._wager_limits
        if not 1 <= seat <= seats:
            self._check_seat(seat)
        if seat not in self.credits:
            raise Refusal(f"seat {seat} is not seated (no credits)")
        game = self.game
        if spot not in game.bet_spots:
            raise Refusal(f"{game.name} has no spot {spot!r}; spots: {', '.join(game.bet_spots)}")
        current = self.chosen.get(seat)
        total = amount if current is None else current.get(spot, 0) + amount
        if amount <= 0 or total % unit or not min_bet <= total <= max_bet:
            self._refuse_amount(spot, amount, total)
        new_bets = {spot: total} if current is None else {**current, spot: total}
        game.check_bets(seat, new_bets, self._limits)
        credits = self.credits
        if not self._derives:  # the wager is staked as chosen: one spot changes, by ``amount``
            if amount > credits[seat]:
                self._refuse_cost(seat, amount)
            left = credits[seat] = credits[seat] - amount
            self.chosen[seat] = new_bets
            self.staked[(seat, spot)] = total
            return [WagerPlaced(self.round_no, seat, spot, total, left)]
        before = game.with_derived(current or {})
        after = game.with_derived(new_bets)
        cost = sum(after.values()) - sum(before.values())
        if cost > credits[seat]:
            self._refuse_cost(seat, cost)
        credits[seat] -= cost
        self.chosen[seat] = new_bets
        events: list[Event] = []
        for name, value in after.items():
            if before.get(name) != value:
                self.staked[(seat, name)] = value
                events.append(WagerPlaced(self.round_no, seat, name, value, credits[seat]))
        return events

    def _refuse_amount(self, spot: str, amount: int, total: int) -> NoReturn:
        """Why a wager's amount (or the spot's new total) is not one the limits take."""
        lim, m = self.limits, self._money.format
        if amount <= 0:
            raise Refusal(f"a wager must be positive, not {m(amount)}")
        if total % lim.unit:
            raise Refusal(f"{spot} wager {m(total)} is not a multiple of the unit {m(lim.unit)}")
        if total < lim.min_bet:
            raise Refusal(f"{spot} wager {m(total)} is below the table minimum {m(lim.min_bet)}")
        raise Refusal(f"{spot} wager {m(total)} is over the table maximum {m(lim.max_bet)}")

    def _refuse_cost(self, seat: int, cost: int) -> NoReturn:
        m = self._money.format
        raise Refusal(f"seat {seat} has {m(self.credits[seat])} credits, the wager needs {m(cost)}")

    def _cancel_wager(self, inp: I.CancelWager) -> list[Event]:
        seat, spot = inp.seat, inp.spot
        if self.phase != "betting":
            raise Refusal("betting is not open: wagers cannot be taken back")
        current = self.chosen.get(seat, {})
        if spot not in current:
            raise Refusal(f"seat {seat} has no wager on {spot!r}")
        new_bets = {k: v for k, v in current.items() if k != spot}
        before = self.game.with_derived(current)
        after = self.game.with_derived(new_bets)
        events: list[Event] = []
        for name, value in before.items():
            back = value - after.get(name, 0)
            if back:
                self.credits[seat] += back
                if name in after:
                    self.staked[(seat, name)] = after[name]
                else:
                    del self.staked[(seat, name)]
                events.append(
                    WagerReturned(self.round_no, seat, name, back, self.credits[seat], "cancelled")
                )
        if new_bets:
            self.chosen[seat] = new_bets
        else:
            del self.chosen[seat]
        return events

    def _close_betting(self, inp: I.CloseBetting) -> list[Event]:
        if self.tilt is not None:
            self._check_not_tilted()
        if self.phase != "betting":
            raise Refusal("betting is not open")
        if self.offline:
            device, detail = next(iter(sorted(self.offline.items())))
            raise Refusal(f"cannot deal: {device} is offline ({detail})")
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

    def _return_seat(self, seat: int, why: str) -> list[Event]:
        events: list[Event] = []
        for name in sorted(self.game.with_derived(self.chosen[seat])):
            amount = self.staked.pop((seat, name))
            self.credits[seat] += amount
            events.append(WagerReturned(self.round_no, seat, name, amount, self.credits[seat], why))
        del self.chosen[seat]
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

    def _impossible(self, card: Card) -> list[Event]:
        """A card the shoe cannot hold another copy of: an ``impossible_card`` tilt."""
        comp = self.composition
        detail = f"{card.code} seen {comp.seen(card) + 1} times in a {comp.decks}-deck shoe"
        self.tilt = Tilt("impossible_card", card, detail)
        return [self.tilt.event(self.round_no)]

    def _hold(self, inp: I.CardSeen) -> list[Event]:
        """A card while tilted: held, in order, until the dealer decides (refused past :data:`MAX_HELD`)."""
        tilt = self.tilt
        assert tilt is not None
        what = f"{tilt.reason}: {_code(tilt.card) or tilt.detail}"
        if len(tilt.held) >= MAX_HELD:
            raise Refusal(f"card {inp.card.code} refused: table is tilted ({what}) and already holds "
                          f"{MAX_HELD} cards ({' '.join(tilt.held_codes())}); resolve the tilt first")
        tilt.held.append(inp)
        return [CardHeld(self.round_no, inp.card.code, tilt.held_codes())]

    def _resolved(self, how: TiltHow, held: list[I.CardSeen]) -> list[Event]:
        """The tilt's cause is resolved: play resumes, or, with cards held meanwhile, a ``held_card`` tilt."""
        return [TiltCleared(self.round_no, how), *self._resume(held)]

    def _resume(self, held: list[I.CardSeen]) -> list[Event]:
        """After a tilt ends: play goes on, or the cards still ``held`` raise a ``held_card`` tilt (a
        ``repeat_card`` one if the first is a camera's card it cannot tell from the last it delivered)."""
        self._last_due = None
        if held:
            first = held[0].card
            if held[0].repeat:
                detail = (f"{first.code} is still in the camera's window after a restart: the {first.code} "
                          "already dealt (clear the tilt) or a new one (take or burn it)")
                self.tilt = Tilt("repeat_card", first, detail, held)
            else:
                self.tilt = Tilt("held_card", first, f"{len(held)} card(s) arrived during the tilt: take or "
                                 f"burn {first.code}", held)
            return [self.tilt.event(self.round_no)]
        self.tilt = None
        return self._after_step()

    def _take_held(self, inp: I.TakeHeld) -> list[Event]:
        """The first held card, applied as if it were delivered now; the others stay held."""
        tilt = self.tilt
        if tilt is None or not tilt.held:
            raise Refusal("no card is held by a tilt")
        if tilt.reason not in HOLDING:
            raise Refusal(f"cards are held ({' '.join(tilt.held_codes())}), but the {tilt.reason} tilt "
                          "comes first: resolve it, then take or burn them in order")
        first, rest, last_due = tilt.held[0], tilt.held[1:], self._last_due
        self.tilt = None
        self._last_due = None
        events: list[Event] = [TiltCleared(self.round_no, "taken")]
        try:
            applied = self._card(I.CardSeen(first.card, first.burn))  # a repeat taken is a new card
        except Refusal:  # nothing changed: the tilt and its cards stand as they were
            self.tilt, self._last_due = tilt, last_due
            raise
        if self.tilt is not None:  # it raised its own tilt: the others are held by that one
            self.tilt.held = rest
            applied = [self.tilt.event(self.round_no) if e.event == "tilt" else e for e in applied]
            return events + applied
        events.extend(applied)
        if rest:
            events.extend(self._resume(rest))
        return events

    def _burn_held(self, tilt: Tilt) -> list[Event]:
        """``declare_burn`` during a ``held_card`` (or ``repeat_card``) tilt: the first held card is burned
        (counted)."""
        card = tilt.held[0].card
        if not self.composition.is_possible(card):
            raise Refusal(f"{card.code} cannot be in the shoe ({self.composition.seen(card)} seen in a "
                          f"{self.composition.decks}-deck shoe): take it (an impossible-card tilt) or void")
        self.composition.see(card, burn=True)
        return [CardBurned(self.round_no, card.code, "dealer"), *self._resolved("burn", tilt.held[1:])]

    def _declare_burn(self, inp: I.DeclareBurn) -> list[Event]:
        if self.tilt is not None:
            if self.tilt.reason in HOLDING:
                return self._burn_held(self.tilt)
            if self.tilt.reason != "card_not_due":
                raise Refusal(f"an {self.tilt.reason} cannot be burned: clear the tilt or void the round")
            card = self.tilt.card
            assert card is not None
            self.composition.see(card, burn=True)
            return [CardBurned(self.round_no, card.code, "dealer"), *self._resolved("burn", self.tilt.held)]
        if self.burn_next:
            raise Refusal("a burn is already declared for the next card")
        self.burn_next = True
        return [BurnDeclared(self.round_no)]

    def _clear_tilt(self, inp: I.ClearTilt) -> list[Event]:
        if self.tilt is None:
            raise Refusal("the table is not tilted")
        if self.tilt.reason == "device_offline":
            raise Refusal(f"{self.tilt.detail}: play resumes when it is back, or void the round")
        if self.tilt.reason == "repeat_card":  # the card already dealt: nothing to take, nothing to count
            return self._resolved("cleared", self.tilt.held[1:])
        if self.tilt.reason == "held_card":
            raise Refusal(f"cards are held ({' '.join(self.tilt.held_codes())}): take or burn each "
                          "in order, or void the round")
        if self.tilt.reason != "impossible_card":
            raise Refusal("a card that was not due must be declared a burn, or the round voided")
        return self._resolved("cleared", self.tilt.held)

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

    def _settle(self, lines: list[Settlement], result: dict[str, Any]) -> list[Event]:
        """Pay every line, meter it, and check that each staked wager has exactly one line."""
        staked, credits, all_meters = self.staked, self.credits, self.meters
        unsettled = dict(staked)
        lines.sort(key=_by_seat_spot)
        wire: list[dict[str, Any]] = []
        total = 0
        counted = 0  # the last seat whose round was metered: a seat's lines are together
        for line in lines:
            seat, net = line.seat, line.net
            total += net
            meters = all_meters[seat]
            stake = unsettled.pop((seat, line.spot), None)
            if stake is not None:
                if stake != line.stake:
                    raise AssertionError(f"settlement of {(seat, line.spot)} has stake {line.stake}, "
                                         f"staked {stake}")
                credits[seat] += stake + net
                meters.wagered += stake
                if seat != counted:
                    meters.rounds += 1
                    counted = seat
            elif (seat, line.spot) in staked:
                raise AssertionError(f"wager {(seat, line.spot)} has more than one settlement line")
            else:  # a line with no stake of its own (a banking seat's result)
                credits[seat] += net
            if net > 0:
                meters.won += net
            elif net < 0:
                meters.lost -= net
            wire.append(line.to_dict())
        if unsettled:
            raise AssertionError(f"wagers without a settlement line: {sorted(unsettled)}")
        house = -total
        self.house_net += house
        self.rounds_settled += 1
        events: list[Event] = []
        if result:
            events.append(RoundResult(self.round_no, self.game.name, result))
            self.shoe_results.append({"round": self.round_no, "result": result})
        events.append(
            RoundSettled(
                self.round_no,
                self.game.name,
                wire,
                house,
                self._credits_view(),
            )
        )
        self._end_round()
        if self._after_round:
            events.extend(self.game.after_round(self.seated()))
        return events

    def _end_round(self) -> None:
        self.phase = "idle"
        self.round = None
        self.chosen = {}
        self.staked = {}
        self._last_due = None

    def _void(self, inp: I.VoidRound) -> list[Event]:
        events: list[Event] = []
        if self.tilt is not None:
            # The cards are out of the shoe: count them as burned so the composition stays true.
            # Held cards are counted too, except one that cannot be in the shoe (an impossible card)
            # and a camera's repeat (most likely the card already dealt, and counted).
            out = [self.tilt.card] if self.tilt.reason == "card_not_due" and self.tilt.card else []
            for card in out + [c.card for c in self.tilt.held if not c.repeat]:
                if self.composition.is_possible(card):
                    self.composition.see(card, burn=True)
                    events.append(CardBurned(self.round_no, card.code, "dealer"))
            self.tilt = None
            events.append(TiltCleared(self.round_no, "void"))
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

    def _credit_in(self, inp: I.CreditIn) -> list[Event]:
        self._check_seat(inp.seat)
        if inp.amount < 0:
            raise Refusal(f"credit in must not be negative, not {self._money.format(inp.amount)}")
        credits = self.credits
        if inp.seat in credits:
            credits[inp.seat] += inp.amount
        else:  # a new seat, sorted in place: a round in play shares this dict
            seats = sorted([*credits.items(), (inp.seat, inp.amount)])
            credits.clear()
            credits.update(seats)
        meters = self.meters.setdefault(inp.seat, SeatMeters())
        meters.credits_in += inp.amount
        return [CreditChanged(inp.seat, "in", inp.amount, self.credits[inp.seat])]

    def _credit_out(self, inp: I.CreditOut) -> list[Event]:
        self._check_seat(inp.seat)
        have = self.credits.get(inp.seat)
        if have is None:
            raise Refusal(f"seat {inp.seat} is not seated")
        if inp.amount <= 0:
            raise Refusal(f"credit out must be positive, not {self._money.format(inp.amount)}")
        if inp.amount > have:
            m = self._money.format
            raise Refusal(f"seat {inp.seat} has {m(have)} credits, cannot pay out {m(inp.amount)}")
        if self.phase == "dealing":
            raise Refusal("credits cannot be paid out while a round is being dealt")
        self.credits[inp.seat] = have - inp.amount
        self.meters[inp.seat].credits_out += inp.amount
        return [CreditChanged(inp.seat, "out", inp.amount, self.credits[inp.seat])]

    def _device(self, inp: I.DeviceStatus) -> list[Event]:
        """A device offline halts a round being dealt (a tilt) until it is back or the round is voided."""
        events: list[Event] = [DeviceChanged(inp.device, inp.online, inp.detail)]
        if not inp.online:
            self.offline[inp.device] = inp.detail or "offline"
            held_tilt = self.tilt is not None and self.tilt.reason in HOLDING
            if self.phase == "dealing" and (self.tilt is None or held_tilt):
                # A device lost while held cards wait pre-empts them: they stay held by the new tilt.
                held = [] if self.tilt is None else self.tilt.held
                self.tilt = Tilt("device_offline", None, f"{inp.device} offline", held)
                events.append(self.tilt.event(self.round_no))
            return events
        self.offline.pop(inp.device, None)
        if self.tilt is not None and self.tilt.reason == "device_offline" and not self.offline:
            events.extend(self._resolved("device_back", self.tilt.held))
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


#: The wire's key of each seat number (seats are 1..12): views are built every round.
_SEAT_KEYS = tuple(str(seat) for seat in range(13))

#: Settlement lines in seat order, then spot name.
_by_seat_spot = attrgetter("seat", "spot")


def _code(card: Card | None) -> str:
    return "" if card is None else card.code


def _due_dict(due: CardDue | DecisionDueState | None) -> dict[str, Any] | None:
    if isinstance(due, CardDue):
        return {"card": due.hand}
    if isinstance(due, DecisionDueState):
        return {"decision": {str(s): list(a) for s, a in sorted(due.choices.items())}}
    return None
