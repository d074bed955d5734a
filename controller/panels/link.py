"""One GPIO panel driver joined to what its presses mean: pin events in, inputs out, lamps from the table.

The driver (:class:`drivers.gpio.panel.Panel`) knows pins: it debounces them
and reports :class:`PinEvent` values, and lights the lamps it is told to.
:class:`PanelLink` turns those events into the table's inputs through
:class:`controller.panels.logic.PanelLogic` and hands each to ``post(input,
source)``; after every applied input, :meth:`PanelLink.update` gives the logic
the table's state and the driver the lamp states that follow from it.

Both happen under the driver's lock (:attr:`Panel.lock`): the driver holds it
around every event, and :meth:`update` takes it, so the logic sees presses and
table states in one total order, and ``post`` is called in that order. ``post``
must not block and must not call back into the link: the daemon marshals it
into its loop and journals it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from controller.inputs import Input
from controller.limits import TableLimits
from controller.panels.logic import PanelLogic
from controller.panels.view import DEALER_DEVICE, JOIN, MISSING, MOVED, RESTORED, LampView, Post, seat_device
from drivers.gpio.backend import PinBackend
from drivers.gpio.events import LampMode, PinEvent
from drivers.gpio.panel import Panel
from drivers.gpio.pinmap import PinMap, line_name

log = logging.getLogger(__name__)

PostFn = Callable[[Input, str], None]


class PanelLink:
    """The panels of one pin map: the driver on its pins, the logic of their presses, the lamps they show."""

    def __init__(self, pin_map: PinMap, backend: PinBackend, post: PostFn, limits: TableLimits,
                 *, clock: Callable[[], float] = time.monotonic) -> None:
        self.map = pin_map
        self.logic = PanelLogic(pin_map, limits)
        self._post = post
        self.panel = Panel(pin_map, backend, self._event, clock=clock)
        self.logic.covered.update(self.panel.sensors())
        self._first = True
        #: The journal's "inputs" fault kept at start until the driver's input check (:meth:`_standing`).
        self._inputs_unconfirmed = False
        self.panel.show(self.logic.lamps())

    # --------------------------------------------------------------- the API
    def resample(self) -> None:
        """Every input's level now is its starting level (before :meth:`start`): :meth:`Panel.resample`."""
        with self.panel.lock:
            self.panel.resample()
            self.logic.covered.update(self.panel.sensors())

    def start(self, *, thread: bool = True) -> None:
        """Report panels already missing, then (with ``thread``) run the driver's worker. Call once.

        The driver checks the map's input lines as it starts: a journal's "inputs" fault kept standing
        (:meth:`_standing`) ends here when the lines read fine, and stands (the same words) when not."""
        self.panel.start(thread=thread)
        with self.panel.lock:
            if self._inputs_unconfirmed:  # the check raised nothing: the lines read fine
                self._inputs_unconfirmed = False
                for one in self._devices():
                    self._emit(self.logic.fault(one, "inputs", None))

    def stop(self) -> None:
        """Stop the worker, turn the lamps off and release every pin."""
        self.panel.stop()

    def update(self, view: LampView | Mapping[str, Any]) -> None:
        """The table's state after an applied input: lamps follow; chips already down are placed at open."""
        if not isinstance(view, LampView):
            view = LampView.from_snapshot(view)
        with self.panel.lock:
            if self._first:
                self._first = False
                self._standing()
            self._emit(self.logic.update(view))
            self.panel.show(self.logic.lamps())

    def selected(self, seat: int, spot: str) -> int:
        """The amount chips on ``spot`` of seat ``seat`` would wager now."""
        with self.panel.lock:
            return self.logic.selected(seat, spot)

    def lamp_modes(self) -> dict[str, LampMode]:
        return self.panel.lamp_modes()

    def lamp_levels(self) -> dict[str, bool]:
        """Whether each lamp is lit right now (a blinking lamp is caught mid-blink)."""
        return self.panel.lamp_levels()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every edge reported so far has been taken and posted: :meth:`Panel.flush`."""
        return self.panel.flush(timeout)

    def pump(self, now: float | None = None) -> None:
        """Process every edge and deadline up to ``now`` without the worker: :meth:`Panel.pump`."""
        self.panel.pump(now)

    # -------------------------------------------------------------- internals
    def _standing(self) -> None:
        """Before the first view: the faults the pins already show stand as they are, an open presence loop
        and a button still held whose stuck fault the journal holds. Left to the driver's first reports,
        the start dropped them and the driver raised them again: the halt ended between the two, so a card
        could be dealt with a panel unplugged, and a stuck button's came back only after ``stuck_after_s``
        (a review, 2026-12-07)."""
        m, faults = self.map, self.logic.faults
        for (seat, _), plugged in self.panel.settled("presence").items():
            panel = m.seats[seat] if seat is not None else m.dealer
            loop = None if panel is None else panel.presence
            if not plugged and loop is not None:
                words = _unplugged(line_name(m.chip_of(loop), loop.pin))
                faults.setdefault(_device(seat), {})["presence"] = words
        for (seat, name), held in self.panel.settled("button").items():
            journal = faults.get(_device(seat), {}).get(RESTORED, "").split(JOIN)
            stuck = next((part for part in journal if part.startswith(f"{_BUTTON}{name} (")), None)
            if held and stuck is not None:
                faults[_device(seat)][f"stuck {name}"] = stuck
        # The map's lines that could not be read or written: kept until the driver's input check at start,
        # or until every lamp line is written (dropped, the halt lifted until then: a review, 2026-12-07).
        kept: set[str] = set()
        for keys in faults.values():
            for part in keys.get(RESTORED, "").split(JOIN):
                if (kind := _map_wide(part)) is not None and kind not in keys:  # not said again already
                    keys[kind] = part
                    kept.add(kind)
        self._inputs_unconfirmed = "inputs" in kept  # ended in :meth:`start`, unless the check says so
        if "lamps" in kept:
            self.panel.unconfirmed_lamps()  # ended by the driver's "written", once every lamp line is

    def _event(self, event: PinEvent) -> None:
        """The driver's report (its lock held): what it means for the table, posted."""
        seat, logic = event.seat, self.logic
        device = _device(seat)
        if event.kind in ("lamps", "inputs"):  # the map's lines cannot be written or read: every panel
            if event.kind == "inputs":
                self._inputs_unconfirmed = False  # the driver says so itself now
            detail = event.detail if event.change == "failed" else None  # on it is at fault (logged by the
            for one in self._devices():  # table's alerts)
                self._emit(logic.fault(one, event.kind, detail))
            if event.kind == "inputs" and event.change == "failed":
                logic.choose_again()  # keys on a dead chip may have stepped the keyed amounts
                self.panel.show(logic.lamps())
        elif event.kind == "presence":
            if event.change in ("active", "inactive"):
                detail = None if event.change == "active" else _unplugged(line_name(event.chip, event.pin))
                self._emit(logic.fault(device, "presence", detail))
        elif event.kind == "sensor":
            if seat is not None and event.change in ("active", "inactive"):
                self._emit(logic.sensor(seat, event.name, event.change == "active"))
        elif event.change == "repeat":
            if seat is not None:
                logic.step(seat, event.units if event.name == "bet_up" else -event.units)
        elif event.change == "active":
            blinking = seat in logic.restarted
            posts = logic.button(seat, event.name)
            if blinking and seat not in logic.restarted:
                self.panel.show(logic.lamps())  # keyed after a restart: its bet keys stop blinking
            self._emit(posts)
        elif event.change == "stuck":
            held = self.map.stuck_after_s
            line = line_name(event.chip, event.pin)
            detail = f"{_BUTTON}{event.name} ({line}) active for over {held:g} s: stuck or shorted"
            self._emit(logic.fault(device, f"stuck {event.name}", detail))
        elif event.change in ("unstuck", "inactive"):  # released: a stuck fault the start kept ends too
            self._emit(logic.fault(device, f"stuck {event.name}", None))

    def _devices(self) -> list[str]:
        """The devices (panels) this pin map drives: its seats' and the dealer's."""
        dealer = [DEALER_DEVICE] if self.map.dealer else []
        return [seat_device(seat) for seat in sorted(self.map.seats)] + dealer

    def _emit(self, posts: list[Post]) -> None:
        for inp, source in posts:
            log.debug("post %s from %s", inp.to_dict(), source)
            self._post(inp, source)


def _device(seat: int | None) -> str:
    """The device a seat's panel (None: the dealer's) reports as."""
    return DEALER_DEVICE if seat is None else seat_device(seat)


#: How the words of a panel's own faults begin (an open presence loop; a stuck button, by its name): one
#: place for the driver's reports that write them and the restart that reads the journal's back.
_UNPLUGGED, _BUTTON = "panel unplugged: ", "button "


def _unplugged(line: str) -> str:
    """The fault's words for a panel whose presence loop on ``line`` is open."""
    return f"{_UNPLUGGED}presence loop ({line}) open"


def _map_wide(part: str) -> str | None:
    """Which fault of the whole map a journaled fault's words are: ``lamps`` (a line that cannot be written),
    ``inputs`` (lines that cannot be read: line_check's words), or None (a chips fault, an open presence loop,
    a stuck button: each a panel's own, :meth:`PanelLink._standing`)."""
    if part.startswith("lamp ") or part == "a lamp cannot be written":
        return "lamps"
    own = (MOVED, MISSING, _UNPLUGGED, _BUTTON)
    return "inputs" if part and not part.startswith(own) else None
