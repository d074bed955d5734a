"""Seat panels, bet sensors, the dealer panel and the tower light over GPIO.

* :mod:`drivers.gpio.pinmap` - pin maps, validated before a pin is opened.
* :mod:`drivers.gpio.backend` - the pin backend (gpiozero over an injected pin factory).
* :mod:`drivers.gpio.debounce` - settle-time debounce and stuck detection, time passed in.
* :mod:`drivers.gpio.logic` - pure: presses and chips to inputs, table state to lamp states.
* :mod:`drivers.gpio.panel` - the driver the daemon hosts (``Panel``).
* :mod:`drivers.gpio.control` - the simulated panel's control socket.
"""

from drivers.gpio.backend import BackendError, GpioZeroBackend, PinBackend, SimulatedPins, make_factory
from drivers.gpio.logic import LampMode, LampView, PanelLogic
from drivers.gpio.panel import Panel
from drivers.gpio.pinmap import PinMap, PinMapError, check_disjoint, load_pin_map, parse_pin_map

__all__ = [
    "BackendError", "GpioZeroBackend", "LampMode", "LampView", "Panel", "PanelLogic", "PinBackend",
    "PinMap", "PinMapError", "SimulatedPins", "check_disjoint", "load_pin_map", "make_factory",
    "parse_pin_map",
]
