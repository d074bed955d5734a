"""What the shoe driver tells the daemon: a card, or a change of the shoe's status.

The daemon sees only these values, never frames or bytes, so the protocol
can change under it (v1, plain lines, a future v2) without touching it. A
card becomes the engine's :class:`~controller.inputs.CardSeen` on the
daemon's side (a driver knows cards, not the engine's inputs); everything
else is status for the operator and the journal, with a ``to_dict`` ready
for the event bus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from controller.cards import Card
from drivers.shoe.messages import (
    CardMsg,
    Fault,
    Hello,
    Lid,
    Message,
    ShoeEmpty,
    ShuffleComplete,
    ShuffleStarted,
)

#: Every ``ShoeStatus.status`` the driver emits.
STATUSES: Final = frozenset({
    "connected", "disconnected", "hello", "lid_open", "lid_closed", "shuffle_started",
    "shuffle_complete", "shoe_empty", "fault", "framing_error", "protocol_error", "unknown_message",
})


@dataclass(frozen=True, slots=True)
class ShoeCard:
    """A card the shoe read (``burn`` when the device itself reported it as a burn)."""

    card: Card
    burn: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"event": "shoe_card", "card": self.card.code, "burn": self.burn}


@dataclass(frozen=True, slots=True)
class ShoeStatus:
    """Anything else: ``status`` is one of :data:`STATUSES`; ``detail`` holds JSON-able fields."""

    status: str
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown shoe status {self.status!r}; known: {', '.join(sorted(STATUSES))}")

    def to_dict(self) -> dict[str, Any]:
        return {"event": f"shoe_{self.status}", **self.detail}


ShoeEvent = ShoeCard | ShoeStatus


def event_for(message: Message) -> ShoeEvent | None:
    """The event a shoe-to-host message stands for; ``None`` for HEARTBEAT (liveness only)."""
    if isinstance(message, CardMsg):
        return ShoeCard(message.card, message.burn)
    if isinstance(message, Hello):
        return ShoeStatus("hello", {"protocol": message.protocol, "model": message.model,
                                    "firmware": message.firmware, "serial": message.serial})
    if isinstance(message, Lid):
        return ShoeStatus("lid_open" if message.open else "lid_closed")
    if isinstance(message, ShuffleStarted):
        return ShoeStatus("shuffle_started")
    if isinstance(message, ShuffleComplete):
        return ShoeStatus("shuffle_complete", {"decks": message.decks})
    if isinstance(message, ShoeEmpty):
        return ShoeStatus("shoe_empty")
    if isinstance(message, Fault):
        return ShoeStatus("fault", {"code": message.code, "fault": message.name, "text": message.text})
    return None
