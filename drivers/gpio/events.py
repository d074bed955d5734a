"""What the panel driver tells its owner: :class:`PinEvent`, and the lamp modes it is told to show.

Why a module of its own: the driver (:mod:`drivers.gpio.panel`), the line check
(:mod:`drivers.gpio.line_check`), the simulated panel's control socket and the
controller's panel logic all speak these words; none of them needs the driver
to name them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final, Literal

from drivers.gpio.debounce import Change
from drivers.gpio.pinmap import HEADER


class LampMode(Enum):
    OFF = "off"
    ON = "on"
    BLINK = "blink"  # your turn: the legal actions of a seat that is to act
    FAULT = "fault"  # faster, in phase across the table: a tilt


InputKind = Literal["button", "sensor", "presence", "canary"]
#: What an event is about: an input, or the panel's lines as a whole. ``lamps``: ``failed`` when a lamp's
#: line cannot be written (an I2C expander that stops answering), ``written`` when writes work again.
#: ``inputs``: ``failed`` when an input's line cannot be read or reads what no edge said
#: (:mod:`drivers.gpio.line_check`), ``read`` when every input line reads as its edges say again.
EventKind = InputKind | Literal["lamps", "inputs"]
Edge = Literal["active", "inactive", "stuck", "unstuck", "repeat", "failed", "written", "read"]
EDGES: Final[dict[Change, Edge]] = {Change.ACTIVE: "active", Change.INACTIVE: "inactive",
                                    Change.STUCK: "stuck", Change.UNSTUCK: "unstuck"}


@dataclass(frozen=True, slots=True)
class PinEvent:
    """One settled change of one input, named as the pin map names it (what the controller is told)."""

    kind: EventKind
    seat: int | None  # None: the dealer panel, or the map as a whole (``lamps``, ``inputs``)
    name: str  # the button's word, the spot, "presence", "lamps" or "inputs"
    pin: int
    #: ``active``/``inactive`` (pressed/released, chips on/off, panel present/missing), ``stuck``/``unstuck``
    #: (a button held past the map's ``stuck_after_s``), ``repeat`` (a held bet_up/bet_down steps again), or
    #: for ``lamps`` and ``inputs``, ``failed`` (a line could not be written or read: :attr:`detail`) and
    #: ``written`` or ``read`` (every such line works again).
    change: Edge
    #: ``repeat`` only: the table units this step moves (the map's ``bet_hold.steps``).
    units: int = 0
    #: The chip of ``pin``: ``header`` or the expander's name (a line's address is (chip, pin)).
    chip: str = HEADER
    #: ``failed`` only: which line, and the error its write or read raised.
    detail: str = ""
