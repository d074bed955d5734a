"""Seat panels, bet sensors, the dealer panel and the tower light over GPIO: pins, not games.

* :mod:`drivers.gpio.pinmap` - pin maps, validated before a pin is opened.
* :mod:`drivers.gpio.backend` - the pin backend (gpiozero over an injected pin factory per chip).
* :mod:`drivers.gpio.expanders` - MCP23017/MCP23S17 expanders: the table file's list, checks, factories.
* :mod:`drivers.gpio.debounce` - settle-time debounce and stuck detection, time passed in.
* :mod:`drivers.gpio.betkeys` - press-and-hold repeat, and the key presses that reach an amount.
* :mod:`drivers.gpio.events` - what the driver says (``PinEvent``) and the lamp modes it shows.
* :mod:`drivers.gpio.panel` - the driver (``Panel``): pin events out, lamp states in.
* :mod:`drivers.gpio.line_check` - every input line read again: a dead line, or one reading what no edge
  said, is a fault.
* :mod:`drivers.gpio.control` - the simulated panel's control socket.

What presses mean and which lamps the table's state lights is the
controller's: :mod:`controller.panels`.
"""

from drivers.gpio.backend import BackendError, GpioZeroBackend, PinBackend, SimulatedPins, make_factory
from drivers.gpio.events import LampMode, PinEvent
from drivers.gpio.panel import Panel
from drivers.gpio.pinmap import GameWords, PinMap, PinMapError
from drivers.gpio.table_maps import check_disjoint

__all__ = [
    "BackendError", "GameWords", "GpioZeroBackend", "LampMode", "Panel", "PinBackend", "PinEvent",
    "PinMap", "PinMapError", "SimulatedPins", "check_disjoint", "make_factory",
]
