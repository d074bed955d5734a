"""Events: what the table tells the world.

Every change of the table is reported as one of these immutable records
(immutable to the type checker: see :func:`record`), in order. The daemon
numbers them (``seq``), journals their inputs and publishes them over
ZeroMQ; displays, floor systems and tests read nothing else. Field values
are JSON-native already (cards as their canonical text) so that an event
serialises the same way everywhere. The reference for every event and
field is docs/events.md: change both together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, dataclass_transform

EVENTS_VERSION = 1

#: The closed sets of values some fields take; docs/schema/ publishes them as enumerations.
BurnWhy = Literal["shoe", "dealer", "rules"]
TiltReason = Literal["card_not_due", "impossible_card", "device_offline", "held_card", "repeat_card"]
TiltHow = Literal["burn", "cleared", "void", "device_back", "taken"]
Direction = Literal["in", "out"]

_E = TypeVar("_E")


@dataclass_transform(frozen_default=True)
def record(cls: type[_E]) -> type[_E]:
    """An event class: a slotted dataclass, frozen to the type checker and plain at run time.

    Why not ``frozen=True``: a frozen dataclass sets each field in ``__init__``
    through ``object.__setattr__``, three to four times the cost of a plain
    one, and the engine builds about a dozen events per round (its speed is
    measured by bench/engine_rounds.py). The events stay immutable in every
    way that matters: mypy --strict refuses an assignment to an event's field
    in all checked code (tests/test_events_records.py proves it), and an event
    stays hashable by its fields as before (``unsafe_hash``).
    """
    return dataclass(slots=True, unsafe_hash=True)(cls)


@record
class Event:
    """Base of all events; ``event`` is the type name used on the wire."""

    event: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"event": name, field: value, ...}`` in declaration order."""
        out: dict[str, Any] = {"event": self.event}
        names: tuple[str, ...] = self.__match_args__  # the fields, in declaration order
        for name in names:
            out[name] = getattr(self, name)
        return out


@record
class ShoeShuffled(Event):
    """A shuffle; ``shoe_number`` counts the table's shoes from 1 (a scoreboard names each by it)."""

    event: ClassVar[str] = "new_shoe"
    decks: int
    shoe_number: int


@record
class BettingOpened(Event):
    event: ClassVar[str] = "betting_opened"
    round: int


@record
class WagerPlaced(Event):
    """A wager on a spot; ``amount`` is the spot's new total stake."""

    event: ClassVar[str] = "wager_placed"
    round: int
    seat: int
    spot: str
    amount: int
    credits: int


@record
class WagerReturned(Event):
    """A wager taken back before the deal (cancelled, or not valid when betting closed)."""

    event: ClassVar[str] = "wager_returned"
    round: int
    seat: int
    spot: str
    amount: int
    credits: int
    reason: str


@record
class BettingClosed(Event):
    event: ClassVar[str] = "betting_closed"
    round: int
    seats: list[int]


@record
class CardDealt(Event):
    """A card assigned to a hand (``player``, ``banker``, ``seat 3``, ``dealer``, ...)."""

    event: ClassVar[str] = "card_dealt"
    round: int
    card: str
    hand: str


@record
class CardBurned(Event):
    """A card counted in the shoe and assigned to no hand.

    ``why``: ``shoe`` (the device said burn), ``dealer`` (declared), ``rules``
    (the game burns it, e.g. a 2WayWinner dealer card past the fifth).
    """

    event: ClassVar[str] = "card_burned"
    round: int
    card: str
    why: BurnWhy


@record
class BurnDeclared(Event):
    """The dealer declared that the next card is a burn."""

    event: ClassVar[str] = "burn_declared"
    round: int


@record
class DecisionDue(Event):
    """Seats that may decide now, each with its legal actions (seat numbers as strings)."""

    event: ClassVar[str] = "decision_due"
    round: int
    choices: dict[str, list[str]]


@record
class DecisionMade(Event):
    event: ClassVar[str] = "decision"
    round: int
    seat: int
    action: str
    amount: int | None


@record
class GameNotice(Event):
    """A game-specific step worth showing (Odds-Win lost on parity, dealer peek, War, ...)."""

    event: ClassVar[str] = "notice"
    round: int
    what: str
    detail: dict[str, Any]


@record
class RoundResult(Event):
    """The round's result record (the game's rules file lists its keys)."""

    event: ClassVar[str] = "round_result"
    round: int
    game: str
    result: dict[str, Any]


@record
class RoundSettled(Event):
    """The settlement line: exactly one per round, the round's last event."""

    event: ClassVar[str] = "round_settled"
    round: int
    game: str
    settlements: list[dict[str, Any]]
    house_net: int
    credits: dict[str, int]


@record
class RoundVoided(Event):
    """The round was voided: every wager is returned (all nets 0)."""

    event: ClassVar[str] = "round_voided"
    round: int
    game: str
    settlements: list[dict[str, Any]]
    credits: dict[str, int]


@record
class TiltRaised(Event):
    """Play is halted until the dealer resolves it (declare a burn, clear, take, or void).

    ``reason``: ``card_not_due``, ``impossible_card``, ``device_offline``
    (``card`` is then empty and ``detail`` names the device) or ``held_card``
    (the cause is resolved but cards arrived meanwhile: ``card`` is the first
    of them, which the dealer takes or burns) or ``repeat_card`` (the
    camera found a card equal to the last one it delivered in its window, never seen gone, after a
    restart or a hand over the window:
    ``card``, held first, is that card again, cleared, or a new one, taken or
    burned; docs/vision.md). ``held``: the cards delivered
    during the tilt, in order, that no hand holds yet (docs/rules/common.md).
    """

    event: ClassVar[str] = "tilt"
    round: int
    reason: TiltReason
    card: str
    detail: str
    held: list[str]


@record
class TiltCleared(Event):
    """``how``: ``burn`` (the held card became a burn), ``cleared``, ``void``, ``device_back`` or
    ``taken`` (the dealer took the first held card: it is applied as if delivered now)."""

    event: ClassVar[str] = "tilt_cleared"
    round: int
    how: TiltHow


@record
class CardHeld(Event):
    """A card delivered while the table is tilted: journaled and held, in order, by the tilt.

    Why held and not refused: the card is out of the shoe; the dealer's resolution
    (take it, burn it, or void) decides its fate. Until then it is neither dealt
    nor burned (not counted in the shoe). ``held``: every held card, in order.
    """

    event: ClassVar[str] = "card_held"
    round: int
    card: str
    held: list[str]


@record
class InputRefused(Event):
    """An input that does not fit the state; nothing changed."""

    event: ClassVar[str] = "refused"
    input: dict[str, Any]
    reason: str


@record
class CreditChanged(Event):
    """Credits in or out of a seat (``direction``: ``in`` or ``out``)."""

    event: ClassVar[str] = "credit"
    seat: int
    direction: Direction
    amount: int
    credits: int


@record
class DesignatedPlayerSet(Event):
    """One Card Poker: the seat that banks from the next round on."""

    event: ClassVar[str] = "dp_set"
    seat: int


@record
class DeviceChanged(Event):
    """A device went offline or came back (``device``: ``shoe``, ``camera``, ``panel 3``...)."""

    event: ClassVar[str] = "device"
    device: str
    online: bool
    detail: str


@record
class DealerChanged(Event):
    """A dealer tapped in (``dealer``: the name) or out (``dealer``: null); controller.dealers."""

    event: ClassVar[str] = "dealer"
    dealer: str | None
