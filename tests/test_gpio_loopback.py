"""On a Pi only: two header pins (or two expander lines) jumpered together, one driven as a lamp,
one read as a button.

Set ``CROUPIER_GPIO_LOOPBACK="17,27"`` (output BCM, input BCM; a wire between
them) and optionally ``CROUPIER_GPIO_FACTORY`` (``rpigpio``, the default, or
``lgpio`` on a Pi 5); ``CROUPIER_GPIO_EXPANDER="0x20,1,23,8,0"`` (an MCP23017's
address, I2C bus, INT pin, output line, input line) does the same on an
expander's lines through its kernel gpiochip. Skipped everywhere else. It checks what the mock cannot:
that the real factory's edges reach the panel's debouncer from its own thread.
"""

from __future__ import annotations

import os
import queue

import pytest

from controller import inputs as I
from controller.limits import TableLimits
from controller.panels.link import PanelLink
from controller.panels.pinmaps import parse_pin_map
from drivers.gpio import GpioZeroBackend, PinMap, make_factory
from drivers.gpio.backend import OutputLine

pytestmark = pytest.mark.timeout(30)
LOOPBACK = os.environ.get("CROUPIER_GPIO_LOOPBACK")


@pytest.mark.skipif(not LOOPBACK, reason="set CROUPIER_GPIO_LOOPBACK='OUT,IN' with the two pins jumpered")
def test_a_real_edge_through_a_jumper_is_one_press() -> None:
    assert LOOPBACK is not None
    out_pin, in_pin = (int(p) for p in LOOPBACK.split(","))
    factory = make_factory(os.environ.get("CROUPIER_GPIO_FACTORY", "rpigpio"))
    pin_map = parse_pin_map({"game": "swap_hand", "seats": {1: {"buttons": {
        "hit": {"pin": in_pin, "active": "high", "pull": "down"}}}}})
    backend = GpioZeroBackend(factory, "real")
    one_press(pin_map, backend, backend.output(out_pin, active_high=True))


def one_press(pin_map: PinMap, backend: GpioZeroBackend, drive: OutputLine) -> None:
    """Lighting ``drive`` (jumpered to the map's ``hit``) is one press, and turning it off is none."""
    posted: queue.SimpleQueue[I.Input] = queue.SimpleQueue()
    panel = PanelLink(pin_map, backend, lambda inp, src: posted.put(inp), TableLimits())
    panel.start()
    try:
        drive.set(True)
        assert posted.get(timeout=5) == I.Decision(1, "hit")
        drive.set(False)
        with pytest.raises(queue.Empty):
            posted.get(timeout=0.5)
    finally:
        panel.stop()
        drive.close()


EXPANDER = os.environ.get("CROUPIER_GPIO_EXPANDER")


@pytest.mark.skipif(not EXPANDER, reason="set CROUPIER_GPIO_EXPANDER='ADDRESS,BUS,INT,OUT,IN' (an MCP23017 "
                    "in config.txt, its lines OUT and IN jumpered)")
def test_a_real_edge_on_an_expander_line_is_one_press() -> None:
    """The expander's gpiochip through lgpio: its kernel edge events reach the panel's debouncer."""
    from drivers.gpio.expanders import Expander, open_chips

    assert EXPANDER is not None
    address, bus, int_pin, out_line, in_line = (int(p, 0) for p in EXPANDER.split(","))
    expander = Expander(bus=bus, address=address, int=int_pin)
    chips = open_chips("lgpio", [expander])
    pin_map = parse_pin_map({"game": "swap_hand", "chip": expander.name, "seats": {1: {"buttons": {
        "hit": {"pin": in_line}}}}})
    backend = GpioZeroBackend(make_factory(os.environ.get("CROUPIER_GPIO_FACTORY", "lgpio")), "real", chips)
    one_press(pin_map, backend, backend.output(out_line, active_high=False, chip=expander.name))  # lit: low
