"""WARNING log lines for what a floor supervisor must see in the daemon's log: tilts, refused cards and
devices gone offline.

Why: a tilt halts the table, a card the table refused is a card out of the
shoe that no hand holds, and a device offline stops betting from closing (a
shoe unplugged between rounds, a stuck button, a panel unplugged): each must
be in the log (journalctl) at WARNING even when nobody watches a display,
with the table, the round and the card or device. A device is journaled
offline once per change, so this is one line per fault, not one per frame.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from controller.events import CardHeld, DeviceChanged, Event, InputRefused, TiltRaised
from controller.inputs import CardSeen, Input

log = logging.getLogger("croupier.daemon")


def log_alerts(table_id: str, source: str, inp: Input, events: Sequence[Event]) -> None:
    """One WARNING per tilt raised, card held by a tilt, card refused by ``inp`` (from ``source``) and device
    gone offline; an INFO line when a device is back."""
    for event in events:
        if isinstance(event, TiltRaised):
            card = f" card {event.card}" if event.card else ""
            held = f"; held {' '.join(event.held)}" if event.held else ""
            log.warning("table %s round %d TILT %s%s: %s%s (from %s)", table_id, event.round, event.reason,
                        card, event.detail, held, source)
        elif isinstance(event, CardHeld):
            log.warning("table %s round %d: card %s held by the tilt (from %s); held: %s", table_id,
                        event.round, event.card, source, " ".join(event.held))
        elif isinstance(event, InputRefused) and isinstance(inp, CardSeen):
            log.warning("table %s: card %s refused (from %s): %s", table_id, inp.card.code, source,
                        event.reason)
        elif isinstance(event, DeviceChanged):
            if event.online:
                log.info("table %s: %s back online: %s (from %s)", table_id, event.device, event.detail,
                         source)
            else:
                log.warning("table %s: %s OFFLINE: %s (from %s); betting cannot close, a deal tilts",
                            table_id, event.device, event.detail, source)
