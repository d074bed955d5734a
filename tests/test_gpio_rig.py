"""A test rig for the GPIO panel: a real Table, gpiozero's MockFactory pins, the real Panel, a stepped clock.

The test plays the daemon: it applies what the panel posts to the table and
calls ``update`` with the table's state, then reads the lamps off the mock
pins. Nothing of ours is mocked; the MockFactory is the simulated hardware.
"""

from __future__ import annotations

from typing import Any

from controller import inputs as I
from controller.events import Event
from controller.games import GAMES
from controller.limits import TableLimits
from controller.panels.link import PanelLink
from controller.panels.pinmaps import parse_pin_map
from controller.panels.view import LampView
from controller.table import Table
from drivers.gpio import GpioZeroBackend, SimulatedPins, make_factory
from drivers.gpio.pinmap import InputPin, PinMap

#: Free GPIOs handed out in this order by :func:`build_map`.
PINS = [4, 17, 27, 22, 5, 6, 13, 19, 26, 21, 20, 16, 12, 7, 8, 25, 24, 23, 18, 11, 10, 9, 2, 3, 14, 15]


class Clock:
    """A clock the test steps by hand (so debounce and stuck times are exact, never slept)."""

    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def build_map(game: str | None, seats: dict[int, dict[str, Any]], *, dealer: bool = False,
              tower: bool = False, **top: Any) -> PinMap:
    """A map from ``{seat: {"buttons": [...], "spots": [...], "presence": bool, "lamps": bool}}``."""
    free = iter(PINS)
    data: dict[str, Any] = {"game": game, "seats": {}, **top}
    for seat, spec in seats.items():
        lamps = spec.get("lamps", True)
        spot_lamps = spec.get("spot_lamps", lamps)
        panel: dict[str, Any] = {
            "buttons": {w: {"pin": next(free), **({"lamp": next(free)} if lamps else {})}
                        for w in spec.get("buttons", ())},
            "spots": {s: {"sensor": next(free), **({"lamp": next(free)} if spot_lamps else {})}
                      for s in spec.get("spots", ())},
        }
        if spec.get("presence"):
            panel["presence"] = next(free)
        data["seats"][seat] = panel
    if dealer:
        words = ("open_betting", "close_betting", "confirm", "burn", "void", "new_shoe")
        data["dealer"] = {"buttons": {w: {"pin": next(free)} for w in words}}
    if tower:
        data["tower"] = {name: next(free) for name in ("idle", "betting", "in_play", "fault")}
    return parse_pin_map(data, "<test map>")


class Rig:
    def __init__(self, pin_map: PinMap, game: str | None = None, credits: dict[int, int] | None = None,
                 limits: TableLimits | None = None, **options: Any) -> None:
        name = game or pin_map.game
        assert name is not None
        cls = GAMES[name]
        self.table = Table(cls(cls.options_model.model_validate(options)),
                           limits or TableLimits(seats=cls.default_seats))
        for seat, amount in (credits or {s: 100_000 for s in pin_map.seats}).items():
            self.table.apply(I.CreditIn(seat, amount))
        self.table.apply(I.NewShoe())
        self.clock = Clock()
        self.factory = make_factory("mock")
        self.pins = SimulatedPins(self.factory)
        self.map = pin_map
        self.posted: list[tuple[I.Input, str]] = []
        self.events: list[Event] = []
        self.panel = PanelLink(pin_map, GpioZeroBackend(self.factory, "mock"),
                               lambda inp, src: self.posted.append((inp, src)), self.table.limits,
                               clock=self.clock)
        self.panel.start(thread=False)
        self.sync()

    # ----------------------------------------------------------- the "daemon"
    def sync(self) -> list[Event]:
        """Apply what was posted, in order, updating the panel after each input (as the daemon does)."""
        events: list[Event] = []
        while self.posted:
            inp, _ = self.posted.pop(0)
            events.extend(self.table.apply(inp))
            self.panel.update(LampView.from_table(self.table))
        self.panel.update(LampView.from_table(self.table))
        self.events.extend(events)
        return events

    def step(self, seconds: float = 0.05) -> None:
        self.clock.t += seconds
        self.panel.pump()

    # -------------------------------------------------------------- fingers
    def _drive(self, spec: InputPin, active: bool) -> None:
        self.pins.drive(spec.pin, active == (spec.active == "high"))

    def button_spec(self, seat: int | None, word: str) -> InputPin:
        if seat is None:
            assert self.map.dealer is not None
            return self.map.dealer.buttons[word]
        return self.map.seats[seat].buttons[word]

    def press(self, seat: int | None, word: str) -> None:
        spec = self.button_spec(seat, word)
        self._drive(spec, True)
        self.step()
        self._drive(spec, False)
        self.step()

    def chips(self, seat: int, spot: str, on: bool) -> None:
        self._drive(self.map.seats[seat].spots[spot].sensor, on)
        self.step()

    def stake_and_close(self, seat: int, spot: str) -> None:
        """The dealer opens betting, chips go on one spot, the dealer closes: a round in play on that stake.

        Every step goes through the dealer panel and the chip sensor, as a shift would, so the panel's
        view of the stake is the one it formed itself (the map needs a dealer panel).
        """
        self.press(None, "open_betting")
        self.sync()
        self.chips(seat, spot, True)
        self.sync()
        self.press(None, "close_betting")
        self.sync()

    def at_whole_second(self) -> None:
        """Move to the next whole second, where every blink and fault blink is in its lit half."""
        self.clock.t = float(int(self.clock.t) + 1)
        self.panel.pump()

    # ---------------------------------------------------------------- lamps
    def lamp_level(self, lamp_pin: int) -> bool:
        return self.pins.level(lamp_pin)
