"""Lines by chip: pin maps on MCP23017 expanders, the table file's expander list and its refusals,
the simulated expanders beside the simulated header, and the kernel gpiochip lookup on a Pi."""

from __future__ import annotations

import json
import queue
from pathlib import Path
from typing import Any

import pytest
from panel_support import MOCK, Table
from test_daemon_support import write_table
from test_gpio_control import sim_panel

from controller import inputs as I
from controller.daemon.config import TableFileError, load_table
from controller.limits import TableLimits
from controller.panels.link import PanelLink
from controller.panels.pinmaps import parse_pin_map
from drivers.gpio import GpioZeroBackend, PinMapError, SimulatedPins, make_factory
from drivers.gpio.backend import BackendError
from drivers.gpio.control import ControlError, send
from drivers.gpio.expanders import Expander, gpiochip_of

ROOT = Path(__file__).resolve().parents[1]
PANELS = ROOT / "firmware_configs" / "panels"
SEAT = str(PANELS / "baccarat_seat_mcp23017.yaml")
DEALER = str(PANELS / "dealer.yaml")


def expander(address: int, int_pin: int | None, **more: Any) -> dict[str, Any]:
    return {"kind": "mcp23017", "bus": 1, "address": address, "int": int_pin, **more}


def refusal(tmp_path: Path, panels: list[Any], expanders: list[dict[str, Any]]) -> str:
    path = write_table(tmp_path, panels=panels, gpio={**MOCK, "expanders": expanders})
    with pytest.raises(TableFileError) as err:
        load_table(path)
    text = str(err.value)
    assert str(path) in text
    return text


# ------------------------------------------------------------------ pin maps


def test_a_map_names_its_chip_by_address_and_a_pin_may_name_another() -> None:
    pin_map = parse_pin_map({"game": "swap_hand", "chip": 0x21, "seats": {1: {
        "buttons": {"hit": {"pin": 4, "lamp": {"pin": 4, "chip": "lamps"}}}}}})
    assert pin_map.lines() == [("seats.1.buttons.hit.pin", "0x21", 4),
                               ("seats.1.buttons.hit.lamp", "lamps", 4)]
    assert parse_pin_map({"game": "swap_hand", "chip": "0X21"}).chip == "0x21"
    assert parse_pin_map({"game": "swap_hand"}).chip == "header"


def test_an_expander_has_lines_0_to_15_and_pull_ups_only() -> None:
    with pytest.raises(PinMapError) as err:
        parse_pin_map({"game": "swap_hand", "chip": 0x20, "seats": {1: {"buttons": {
            "hit": {"pin": 16}, "stand": {"pin": 3, "pull": "down", "active": "high"},
            "double": {"pin": 5}, "split": {"pin": 5}}}}}, "m.yaml")
    assert err.value.problems == [
        ("seats.1.buttons.hit.pin", "pin 16 is not a line of expander 0x20 (0..15)"),
        ("seats.1.buttons.split.pin", "pin 5 of 0x20 is already used by seats.1.buttons.double.pin"),
        ("seats.1.buttons.stand.pin", "an MCP23017's lines have pull-ups only: pull: up, or pull: none with "
                                      "an external resistor"),
    ]
    # Line 0 is a line of an expander, not of the header (BCM 2..27).
    parse_pin_map({"game": "swap_hand", "chip": 0x20, "seats": {1: {"buttons": {"hit": {"pin": 0}}}}})


# ------------------------------------------------------------------ the table file


def test_an_address_used_twice_and_a_ninth_expander_on_a_bus_are_refused(tmp_path: Path) -> None:
    text = refusal(tmp_path, [DEALER], [expander(0x20 + i, None) for i in range(8)] + [expander(0x20, None)])
    assert "key 'gpio.expanders.8.address': 0x20 on i2c bus 1 is also gpio.expanders.0" in text
    assert "key 'gpio.expanders.8': more than 8 expanders on i2c bus 1" in text
    # The same address on another bus is another chip, once the two have names of their own.
    path = write_table(tmp_path, name="two", panels=[DEALER], gpio={**MOCK, "expanders": [
        expander(0x20, 23, label="a"), {**expander(0x20, None, label="b"), "bus": 0}]})
    assert [e.name for e in load_table(path).spec.gpio.expanders] == ["a", "b"]  # type: ignore[union-attr]


def test_a_line_used_twice_on_one_chip_is_refused_naming_both_keys(tmp_path: Path) -> None:
    text = refusal(tmp_path, [DEALER, {"map": SEAT, "seats": {1: 1}}, {"map": SEAT, "seats": {1: 2}}],
                   [expander(0x20, 23)])
    assert ("panels.2 (baccarat_seat_mcp23017.yaml): seats.2.buttons.bet_up.pin: pin 0 of 0x20 is also "
            "panels.1 (baccarat_seat_mcp23017.yaml): seats.1.buttons.bet_up.pin") in text


def test_chips_no_expander_answers_to_and_header_pins_the_expanders_take_are_refused(tmp_path: Path) -> None:
    baccarat = str(PANELS / "baccarat.yaml")  # the one-header map: BCM 2/3 carry chip keys, BCM 4 bet_up
    text = refusal(tmp_path, [baccarat, {"map": SEAT, "seats": {1: 2}, "chips": {0x20: 0x27}}],
                   [expander(0x20, 4)])
    assert "seats.2.buttons.bet_up.pin: no chip '0x27' (gpio.expanders has: header, 0x20)" in text
    assert "seats.1.buttons.add_5.pin: BCM 2 is also gpio.expanders.0.bus (i2c1)" in text
    assert "seats.1.buttons.bet_up.pin: BCM 4 is also gpio.expanders.0.int" in text


def test_an_input_on_a_chip_without_int_is_refused(tmp_path: Path) -> None:
    text = refusal(tmp_path, [DEALER, {"map": SEAT, "seats": {1: 1}}], [expander(0x20, None)])
    assert "seats.1.buttons.bet_up.pin: an input on 0x20, which has no INT pin" in text


# ------------------------------------------------------------------ the simulated world


def test_the_same_pin_number_on_the_header_and_on_an_expander_are_two_lines() -> None:
    header, chip = make_factory("mock"), make_factory("mock")
    backend = GpioZeroBackend(header, "mock", {"0x20": chip})
    pins = SimulatedPins(header, {"0x20": chip})
    got: queue.SimpleQueue[I.Input] = queue.SimpleQueue()
    seat = parse_pin_map({"game": "swap_hand", "debounce_ms": 0, "chip": 0x20, "seats": {1: {
        "buttons": {"hit": {"pin": 4, "lamp": 5}}}}})
    dealer = parse_pin_map({"debounce_ms": 0, "dealer": {"buttons": {"open_betting": {"pin": 4}}}})
    panels = [PanelLink(m, backend, lambda inp, src: got.put(inp), TableLimits()) for m in (seat, dealer)]
    for panel in panels:
        panel.start()
    try:
        pins.drive(4, False, "0x20")
        pins.drive(4, True, "0x20")
        assert got.get(timeout=30) == I.Decision(1, "hit")
        assert pins.level(4) is True  # the header's BCM 4 never moved
        pins.drive(4, False)
        pins.drive(4, True)
        assert got.get(timeout=30) == I.OpenBetting()
        with pytest.raises(BackendError, match="no expander '0x21'"):
            pins.drive(4, True, "0x21")
    finally:
        for panel in panels:
            panel.stop()


def test_the_control_socket_presses_a_seat_on_its_expander(tmp_path: Path) -> None:
    path = write_table(tmp_path, panels=[DEALER, {"map": SEAT, "seats": {1: 7}, "chips": {0x20: 0x26}}],
                       gpio={**MOCK, "expanders": [expander(0x26, 23)]})
    t = Table(path)
    try:
        t.call("credit_in", seat=7, amount=100_000)
        t.ctl.call("press dealer new_shoe")
        t.ctl.call("press dealer open_betting")
        t.ctl.call("press 7 add_5")
        assert json.loads(t.ctl.call("selected 7"))["banker"] == 600
        t.ctl.call("chips 7 banker on")
        assert t.status()["wagers"] == [{"seat": 7, "spot": "banker", "amount": 600}]
        assert t.lamps()["seat 7 spot banker"] == {"mode": "on", "lit": True}
        assert t.ctl.call("pin 0x26:14") == "pin 0x26:14 high"  # the banker lamp's line on seat 7's chip
        assert t.ctl.call("pin 14") == "pin 14 low"  # the header's BCM 14: nothing there
        with pytest.raises(ControlError, match="pin 16 is not a line of expander 0x26"):
            t.ctl.call("pin 0x26:16")
    finally:
        t.close()


# ------------------------------------------------------------------ a Pi's gpiochips


def test_the_expanders_gpiochip_is_found_under_its_i2c_device(tmp_path: Path) -> None:
    (tmp_path / "i2c" / "devices" / "1-0021" / "gpiochip5").mkdir(parents=True)
    assert gpiochip_of(Expander(bus=1, address=0x21, int=23), tmp_path) == 5
    with pytest.raises(BackendError, match=r"dtoverlay=mcp23017,addr=0x22,gpiopin=24 in /boot/firmware"):
        gpiochip_of(Expander(bus=1, address=0x22, int=24), tmp_path)


def test_mcp23s17s_on_one_spi_bus_take_their_gpiochips_in_address_order_gaps_and_all(tmp_path: Path) -> None:
    # Chips fitted at 0x21 and 0x22 only: the kernel made gpiochip512 (0x21) and gpiochip528 (0x22).
    for chip in (512, 528):
        (tmp_path / "spi" / "devices" / "spi0.0" / f"gpiochip{chip}").mkdir(parents=True)
    fitted = [0x21, 0x22]
    s17 = {a: Expander(kind="mcp23s17", bus=0, address=a, int=23 + a - 0x21) for a in fitted}
    assert gpiochip_of(s17[0x21], tmp_path, fitted) == 512
    assert gpiochip_of(s17[0x22], tmp_path, fitted) == 528
    # A table file that lists a third chip the overlay did not make: refused, not another seat's chip.
    with pytest.raises(BackendError, match=r"holds 2 MCP23S17 gpiochips but the table file lists 3 .*=14\)"):
        gpiochip_of(s17[0x21], tmp_path, [*fitted, 0x23])


def test_a_stuck_button_on_an_expander_names_its_chip_and_line() -> None:
    header, chip = make_factory("mock"), make_factory("mock")
    pins = SimulatedPins(header, {"0x21": chip})
    got: queue.SimpleQueue[I.Input] = queue.SimpleQueue()
    seat = parse_pin_map({"game": "swap_hand", "debounce_ms": 0, "stuck_after_s": 0.05, "chip": 0x21,
                          "seats": {1: {"buttons": {"hit": {"pin": 5}}}}})
    panel = PanelLink(seat, GpioZeroBackend(header, "mock", {"0x21": chip}), lambda inp, src: got.put(inp),
                      TableLimits())
    panel.start()
    try:
        pins.drive(5, False, "0x21")  # held down
        assert got.get(timeout=30) == I.Decision(1, "hit")
        stuck = got.get(timeout=30)
        assert isinstance(stuck, I.DeviceStatus) and not stuck.online
        assert stuck.detail == "button hit (0x21 line 5) active for over 0.05 s: stuck or shorted"
    finally:
        panel.stop()


def test_sim_panel_simulates_the_expanders_a_map_names() -> None:
    proc, endpoint = sim_panel(SEAT)
    try:
        assert send(endpoint, "press 1 add_25", "selected 1", "pin 0x20:4") == [
            "ok press 1 add_25", 'ok {"player": 2600, "banker": 2600, "tie": 2600}', "ok pin 0x20:4 high"]
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
