"""Tilts and held cards: the halts of play only the dealer resolves, beside the table's state machine.

A tilt (a card not due, an impossible card, a device offline, cards held meanwhile) stops the round
until the dealer burns, takes, clears or voids; the cards that arrive while it lasts are held in
order, out of the shoe but neither dealt nor burned. Kept apart from :mod:`controller.table` so the
round's lifecycle reads without them; :class:`TiltRules` is part of :class:`~controller.table.Table`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller import inputs as I
from controller.cards import Card
from controller.composition import ShoeComposition
from controller.events import (
    BurnDeclared,
    CardBurned,
    CardHeld,
    DeviceChanged,
    Event,
    TiltCleared,
    TiltHow,
    TiltRaised,
    TiltReason,
)
from controller.game_base import Refusal

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


def _code(card: Card | None) -> str:
    return "" if card is None else card.code


class TiltRules:
    """The table's handlers for tilts and held cards (a mixin of :class:`~controller.table.Table`)."""

    round_no: int
    phase: str
    tilt: Tilt | None
    burn_next: bool
    offline: dict[str, str]
    composition: ShoeComposition
    _last_due: object

    if TYPE_CHECKING:  # the table's own steps, which a resolved tilt hands play back to
        def _card(self, inp: I.CardSeen) -> list[Event]: ...
        def _after_step(self) -> list[Event]: ...

    def _check_not_tilted(self) -> None:
        if self.tilt is not None:
            raise Refusal(
                f"table is tilted ({self.tilt.reason}: {_code(self.tilt.card) or self.tilt.detail}); "
                "declare a burn, clear the tilt or void the round first"
            )

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
        ``repeat_card`` one if the first is a camera's card it cannot tell from the last it delivered).
        A device that went offline while the tilt stood (a lid opened during an impossible-card tilt)
        halts the deal first: a ``device_offline`` tilt, holding the cards, until it is back."""
        self._last_due = None
        if self.offline and self.phase == "dealing":
            device = next(iter(self.offline))
            self.tilt = Tilt("device_offline", None, f"{device} offline", held)
            return [self.tilt.event(self.round_no)]
        if held:
            first = held[0].card
            if held[0].repeat:
                code = first.code
                detail = (f"{code} is in the camera's window again, never seen gone (after a restart, or a "
                          f"hand over the window): the {code} already dealt (clear the tilt) or a new one "
                          "(take or burn it)")
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

    def _void_tilt(self) -> list[Event]:
        """A void ends the tilt: its cards are out of the shoe, so they count as burned (the composition
        stays true). Held cards are counted too, except one that cannot be in the shoe (an impossible
        card) and a camera's repeat (most likely the card already dealt, and counted)."""
        tilt = self.tilt
        assert tilt is not None
        events: list[Event] = []
        out = [tilt.card] if tilt.reason == "card_not_due" and tilt.card else []
        for card in out + [c.card for c in tilt.held if not c.repeat]:
            if self.composition.is_possible(card):
                self.composition.see(card, burn=True)
                events.append(CardBurned(self.round_no, card.code, "dealer"))
        self.tilt = None
        events.append(TiltCleared(self.round_no, "void"))
        return events
