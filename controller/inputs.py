"""Inputs to the table core: everything that can happen at a table.

Every source (the shoe's serial line, the camera, a seat's buttons and bet
sensors, the dealer's panel, an operator command, a scenario file) turns what
it saw into one of these values and hands it to :meth:`Table.apply`. They are
plain, immutable and JSON-serialisable, because the daemon journals each one
before it is applied and rebuilds the table after a power cut by applying the
journal again: an input must mean the same thing when it is replayed.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, fields
from functools import cache
from typing import Any, ClassVar

from controller.cards import Card, CardError, parse_card


class InputError(ValueError):
    """A serialised input that cannot be read back; the message names the field."""


@dataclass(frozen=True, slots=True)
class Input:
    """Base of all inputs. ``kind`` is the name used on the wire and in the journal."""

    kind: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"input": kind, field: value, ...}`` in declaration order (a card as its code)."""
        out: dict[str, Any] = {"input": self.kind}
        names: tuple[str, ...] = self.__match_args__  # the fields in order, without fields()'s cost
        for name in names:
            value = getattr(self, name)
            out[name] = value.code if isinstance(value, Card) else value
        return out

    def to_json(self) -> str:
        """The journal's text of this input: :meth:`to_dict` as JSON (``json.dumps`` defaults)."""
        return json.dumps(self.to_dict())


@dataclass(frozen=True, slots=True)
class NewShoe(Input):
    """A shuffle: the shoe composition starts again from full decks."""

    kind: ClassVar[str] = "new_shoe"


@dataclass(frozen=True, slots=True)
class OpenBetting(Input):
    """Start a round: wagers may be placed."""

    kind: ClassVar[str] = "open_betting"


@dataclass(frozen=True, slots=True)
class CloseBetting(Input):
    """No more bets: the wagers are fixed and the game starts asking for cards."""

    kind: ClassVar[str] = "close_betting"


@dataclass(frozen=True, slots=True)
class PlaceWager(Input):
    """A wager placed before the deal (bet sensor, dealer keypad or command)."""

    kind: ClassVar[str] = "place_wager"
    seat: int
    spot: str
    amount: int


@dataclass(frozen=True, slots=True)
class CancelWager(Input):
    """Take a wager back while betting is open (chips lifted from the spot)."""

    kind: ClassVar[str] = "cancel_wager"
    seat: int
    spot: str


@dataclass(frozen=True, slots=True)
class CardSeen(Input):
    """A card read by the shoe or the camera, in shoe order.

    ``burn`` is true when the device itself reports the card as a burn. ``repeat`` is true when
    the camera finds a card equal to the last one it delivered in its window, never seen gone (after
    a restart, or after empty reads it could not trust: a hand over the window): it cannot tell
    whether it is that card or a new one, so the table holds it in a ``repeat_card`` tilt for the
    dealer to say (docs/vision.md, "Across restarts", "Stable reads"). It is left
    out of the input's form when false, so every other card reads as it always has.
    """

    kind: ClassVar[str] = "card"
    card: Card
    burn: bool = False
    repeat: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"input": self.kind, "card": self.card.code, "burn": self.burn}
        if self.repeat:
            out["repeat"] = True
        return out

    def to_json(self) -> str:
        """As :meth:`Input.to_json`, remembered: most of what a table journals is one of 104 card
        inputs, and encoding one was a tenth of a card's way from the shoe to its event."""
        return _card_json(self.card.code, bool(self.burn), bool(self.repeat))


@cache
def _card_json(code: str, burn: bool, repeat: bool) -> str:
    return json.dumps(CardSeen(parse_card(code), burn, repeat).to_dict())


@dataclass(frozen=True, slots=True)
class DeclareBurn(Input):
    """The dealer declares a burn.

    With a card held by a "card when none is due" tilt, that card becomes a
    burn and play goes on; otherwise the next card seen is taken as a burn.
    """

    kind: ClassVar[str] = "declare_burn"


@dataclass(frozen=True, slots=True)
class Decision(Input):
    """A player's (or the Designated Player's) decision, from a button or a command."""

    kind: ClassVar[str] = "decision"
    seat: int
    action: str
    amount: int | None = None


@dataclass(frozen=True, slots=True)
class VoidRound(Input):
    """Void the round in play: every wager is returned; also clears any tilt."""

    kind: ClassVar[str] = "void"


@dataclass(frozen=True, slots=True)
class ClearTilt(Input):
    """The dealer has removed an impossible card: play resumes without it."""

    kind: ClassVar[str] = "clear_tilt"


@dataclass(frozen=True, slots=True)
class TakeHeld(Input):
    """The dealer takes the first card held by a ``held_card`` tilt: applied as if delivered now.

    Taken as the due card if one is due and it is possible; otherwise it raises
    the tilt it would raise (``card_not_due``, ``impossible_card``), the other
    held cards still held.
    """

    kind: ClassVar[str] = "take_held"


@dataclass(frozen=True, slots=True)
class CreditIn(Input):
    """Credits added to a seat (cash or ticket in); seats the player if new."""

    kind: ClassVar[str] = "credit_in"
    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class CreditOut(Input):
    """Credits paid out of a seat (cash or ticket out)."""

    kind: ClassVar[str] = "credit_out"
    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class SetDesignatedPlayer(Input):
    """One Card Poker: the seat that banks the next rounds."""

    kind: ClassVar[str] = "set_dp"
    seat: int


@dataclass(frozen=True, slots=True)
class DeviceStatus(Input):
    """A device (``shoe``, ``camera``, a seat panel) went offline or came back.

    Journaled like any input so that a tilt it caused is still there after a
    restart, and so that event numbers replay identically.
    """

    kind: ClassVar[str] = "device"
    device: str
    online: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class DealerIn(Input):
    """A dealer taps in (by name): the table's rounds are theirs from the next seq (controller.dealers)."""

    kind: ClassVar[str] = "dealer_in"
    name: str


@dataclass(frozen=True, slots=True)
class DealerOut(Input):
    """The dealer in taps out: no dealer until the next ``dealer_in``."""

    kind: ClassVar[str] = "dealer_out"


@dataclass(frozen=True, slots=True)
class SetLimits(Input):
    """The table's limits from now on (controller.limits.TableLimits, every field).

    Journaled by the daemon, from the table file, when the file's limits differ from the ones the
    journal last recorded (controller.daemon.journal_limits): a change takes effect when it is made
    and never reaches back, so a replay plays every earlier row under the limits it was played under.
    Only between rounds: refused while a round is in play, so every round is played under one set.
    """

    kind: ClassVar[str] = "limits"
    seats: int
    unit: int
    min_bet: int
    max_bet: int
    max_credit: int
    minor_units: int

    def limits(self) -> dict[str, int]:
        """The new limits' fields, as controller.limits.TableLimits takes them (and status shows them)."""
        return {name: getattr(self, name) for name in _LIMIT_FIELDS}


INPUT_TYPES: dict[str, type[Input]] = {
    cls.kind: cls
    for cls in (
        NewShoe, OpenBetting, CloseBetting, PlaceWager, CancelWager, CardSeen, DeclareBurn,
        Decision, VoidRound, ClearTilt, TakeHeld, CreditIn, CreditOut, SetDesignatedPlayer, DeviceStatus,
        DealerIn, DealerOut, SetLimits,
    )
}


#: The integer fields of a ``limits`` input.
_LIMIT_FIELDS = tuple(f.name for f in fields(SetLimits))


def input_from_dict(data: dict[str, Any]) -> Input:
    """Rebuild an input from :meth:`Input.to_dict` output; :class:`InputError` names the bad field."""
    if not isinstance(data, dict):
        raise InputError(f"an input must be a JSON object, not {type(data).__name__}")
    kind = data.get("input")
    cls = INPUT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise InputError(f"unknown input {kind!r}; known: {', '.join(sorted(INPUT_TYPES))}")
    kwargs: dict[str, Any] = {}
    names = {f.name: f for f in fields(cls)}
    for key in data:
        if key != "input" and key not in names:
            raise InputError(f"{kind}: unknown field {key!r}")
    for name, f in names.items():
        if name not in data:
            if f.default is not MISSING:
                continue
            raise InputError(f"{kind}: missing field {name!r}")
        value = data[name]
        if name == "card":
            try:
                value = parse_card(value) if isinstance(value, str) else parse_card(repr(value))
            except CardError as exc:
                raise InputError(f"{kind}: field 'card': {exc}") from None
        elif name in ("seat", "amount", *_LIMIT_FIELDS):
            if value is None and name == "amount" and cls is Decision:
                pass
            elif not isinstance(value, int) or isinstance(value, bool):
                raise InputError(f"{kind}: field {name!r} must be an integer, not {value!r}")
        elif name in ("spot", "action", "device", "detail", "name"):
            if not isinstance(value, str):
                raise InputError(f"{kind}: field {name!r} must be a string, not {value!r}")
        elif name in ("burn", "online", "repeat") and not isinstance(value, bool):
            raise InputError(f"{kind}: field {name!r} must be true or false, not {value!r}")
        kwargs[name] = value
    return cls(**kwargs)
